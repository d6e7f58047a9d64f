"""Ray env pool: same rows as the local pool for the same seeds, dead actors replaced and replayed."""

from __future__ import annotations

import time

import pytest

pytest.importorskip("transformers")
ray = pytest.importorskip("ray")

from agent_fixtures import shared_hf_backend  # noqa: E402

from agents.backends.base import SamplingParams, render_chat  # noqa: E402
from agents.pools import EnvPoolSpec, VectorEnvPool, make_env_pool  # noqa: E402
from agents.pools.ray import RayEnvPool, split_sizes  # noqa: E402
from agents.ray_runtime import ray_session  # noqa: E402
from agents.rollout import RolloutBatch, RolloutEngine, RolloutEngineConfig  # noqa: E402

SEARCHQA = "sdgym/SearchQA-v0"
TINY = {"size": "tiny"}
SAMPLING = SamplingParams(max_new_tokens=16, temperature=1.0, seed=3)


def kill_and_wait(worker) -> None:
    """``ray.kill`` is asynchronous: wait until the worker is gone, so that the pool's next call
    meets a dead worker (otherwise a quick call can still finish before the kill lands)."""
    ray.kill(worker)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            ray.get(worker.ready.remote(), timeout=10)
        except ray.exceptions.RayActorError:
            return
        time.sleep(0.05)
    raise AssertionError("the killed Ray worker still answers")


def _rollout(rollout_backend: str, workers: int = 3, on_step=None) -> tuple[RolloutBatch, int]:
    """Two groups of two on tiny Search-QA; ``on_step(pool, call_number)`` runs before each step."""
    backend = shared_hf_backend()
    config = RolloutEngineConfig(SEARCHQA, dict(TINY), num_groups=2, group_size=2, max_turns=3,
                           rollout_backend=rollout_backend, ray_num_workers=workers)
    with RolloutEngine(config, backend, lambda m: render_chat(backend.tokenizer, m)) as engine:
        if on_step is not None:
            step, calls = engine.pool.step, []

            def hooked(actions):
                calls.append(actions)
                on_step(engine.pool, len(calls))
                return step(actions)

            engine.pool.step = hooked
        batch = engine.collect([5, 6], SAMPLING)
        return batch, getattr(engine.pool, "replacements", 0)


@pytest.fixture(scope="module")
def local_batch() -> RolloutBatch:
    return _rollout("local")[0]


@pytest.fixture(scope="module")
def ray_cluster():
    """A local two-CPU Ray instance for this module, always shut down afterwards."""
    with ray_session(num_cpus=2) as session:
        yield session


def test_split_sizes_cover_every_env_once() -> None:
    assert split_sizes(4, 3) == [2, 1, 1]
    assert split_sizes(8, 2) == [4, 4]
    assert sum(split_sizes(7, 4)) == 7


def test_unknown_rollout_backend_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="rollout_backend"):
        make_env_pool(EnvPoolSpec(SEARCHQA, dict(TINY)), 2, rollout_backend="spark")
    with pytest.raises(ValueError, match="at least one"):
        VectorEnvPool(EnvPoolSpec(SEARCHQA, dict(TINY)), 0)


@pytest.mark.slow
def test_pool_that_started_ray_shuts_it_down() -> None:
    if ray.is_initialized():
        pytest.skip("Ray already running in this process")
    with RayEnvPool(EnvPoolSpec(SEARCHQA, dict(TINY)), 2, num_workers=1, num_cpus=1) as pool:
        observations, infos = pool.reset([1, 2], {"split": "train"})
        assert len(observations) == len(infos) == 2
    assert not ray.is_initialized()


@pytest.mark.slow
def test_ray_rollout_gives_the_local_rows(ray_cluster, local_batch) -> None:
    batch, replacements = _rollout("ray", workers=3)  # uneven slices: 2 + 1 + 1 sub-envs
    assert replacements == 0
    assert len(batch.rows) == len(local_batch.rows) > 4
    assert batch.rows == local_batch.rows  # ids, log-probs, rewards, done flags, privileged info
    assert batch.episodes == local_batch.episodes


@pytest.mark.slow
def test_killed_actor_is_replaced_and_its_episodes_replayed(ray_cluster, local_batch) -> None:
    def kill_first_worker(pool, call):
        if call == 2:
            kill_and_wait(pool.workers[0])

    batch, replacements = _rollout("ray", workers=2, on_step=kill_first_worker)
    assert replacements == 1
    assert batch.rows == local_batch.rows  # nothing lost, nothing duplicated
    assert sorted(e.traj_id for e in batch.episodes) == [0, 1, 2, 3]


@pytest.mark.slow
def test_ray_pool_rejects_bad_input(ray_cluster) -> None:
    with RayEnvPool(EnvPoolSpec(SEARCHQA, dict(TINY)), 2, num_workers=2) as pool:
        with pytest.raises(RuntimeError, match="reset"):
            pool.step(["a", "b"])
        with pytest.raises(ValueError, match="seeds"):
            pool.reset([1])
        pool.reset([1, 2])
        with pytest.raises(ValueError, match="actions"):
            pool.step(["only one"])
    with pytest.raises(RuntimeError, match="could not start Ray env workers"):
        RayEnvPool(EnvPoolSpec(SEARCHQA, {"size": "gigantic"}), 2, num_workers=1)
    assert ray_cluster.is_initialized()  # a failed pool does not shut down the caller's Ray


@pytest.mark.slow
def test_backend_in_a_ray_actor_samples_like_the_local_one(ray_cluster) -> None:
    import functools

    from agent_fixtures import rendered_prompts, shared_tiny_model_dir

    from agents.backends.hf import HFBackend
    from agents.backends.ray_actor import RayActorBackend

    local = shared_hf_backend()
    prompts = rendered_prompts(local.tokenizer)
    remote = RayActorBackend(functools.partial(HFBackend, shared_tiny_model_dir()), num_cpus=0)
    try:
        for params in (SAMPLING, SamplingParams(max_new_tokens=8, temperature=0.0)):
            assert remote.generate(prompts, params) == local.generate(prompts, params)
        ids = [g.prompt_ids for g in local.generate(prompts[:2], SAMPLING)]
        responses = [g.response_ids for g in local.generate(prompts[:2], SAMPLING)]
        for got, want in zip(remote.score(ids, responses), local.score(ids, responses), strict=True):
            assert got == pytest.approx(want, abs=1e-5)
    finally:
        remote.close()
    assert ray_cluster.is_initialized()


@pytest.mark.slow
def test_pool_replays_after_kills_at_reset_and_mid_episode(ray_cluster) -> None:
    spec = EnvPoolSpec(SEARCHQA, dict(TINY))
    commands = [["<search>river town</search>"] * 3, ["<answer>nobody</answer>"] * 3]
    local = VectorEnvPool(spec, 3)
    try:
        expected = [local.reset([7, 8, 9], {"split": "train"})] + [local.step(c) for c in commands]
    finally:
        local.close()
    with RayEnvPool(spec, 3, num_workers=2) as pool:
        kill_and_wait(pool.workers[1])
        got = [pool.reset([7, 8, 9], {"split": "train"}), pool.step(commands[0])]
        for worker in pool.workers:  # both die: both are replaced and replayed
            kill_and_wait(worker)
        got.append(pool.step(commands[1]))
        assert pool.replacements == 3
    assert got == expected
