"""ScienceWorld env contract: info keys, privileged channel, invalid actions, determinism, JVM."""

from __future__ import annotations

import random
import time
from collections.abc import Iterator

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env

from sdgym.core import PRIVILEGED_KEYS, PUBLIC_INFO_KEYS
from sdgym.envs.scienceworld.tasks import TASK_NAMES, TASK_VARIATIONS, upstream_splits

TASKS = ["find-non-living-thing", "boil"]


@pytest.fixture(scope="module")
def env() -> Iterator[gym.Env]:
    """A small env (two tasks) shared by this module: one JVM."""
    env = gym.make("sdgym/ScienceWorld-v0", task_names=TASKS, max_episode_steps=200)
    yield env
    env.close()


def reset_to(env: gym.Env, task: str, variation: int, split: str = "train") -> tuple[str, dict]:
    index = env.unwrapped.task_index_of(task, variation, split)
    return env.reset(options={"split": split, "task_index": index})


def test_jvm_starts_lazily_and_reset_info(env: gym.Env) -> None:
    assert env.unwrapped.jvm_pid() is None  # gym.make starts no Java
    obs, info = reset_to(env, "boil", 0)
    assert env.unwrapped.jvm_pid() is not None
    assert obs.startswith("Your task is to boil water")
    assert "This room is called" in obs
    assert set(PUBLIC_INFO_KEYS) <= set(info)
    assert info["task_id"] == "boil/0" and info["task_type"] == "boil"
    assert info["admissible_actions"] is None
    assert info["score"] == 0.0 and info["won"] is False and info["action_valid"] is True
    privileged = info["privileged"]
    assert set(PRIVILEGED_KEYS) <= set(privileged)
    goal = privileged["goal"]
    assert goal["task_name"] == "boil" and goal["variation"] == 0
    assert goal["subgoals_pending"][0] == "focus on substance" and goal["subgoals_done"] == []
    plan = privileged["expert_plan"]
    assert plan and privileged["expert_action"] == plan[0]
    assert "boil" in privileged["text"] and plan[0] in privileged["text"]


def test_expert_path_suffix_then_deviation(env: gym.Env) -> None:
    _, info = reset_to(env, "boil", 0)
    gold = info["privileged"]["gold_plan_from_start"]
    for k in range(3):
        _, _, _, _, info = env.step(gold[k])
        assert info["action_valid"]
        assert info["privileged"]["expert_plan"] == gold[k + 1 :]
    _, _, _, _, info = env.step("asdfgh")  # rejected commands are not deviations
    assert info["privileged"]["expert_plan"] == gold[3:]
    _, _, _, _, info = env.step("inventory")
    assert info["privileged"]["expert_plan"] is None
    assert info["privileged"]["expert_action"] is None
    assert info["privileged"]["on_expert_path"] is False
    assert info["privileged"]["gold_plan_from_start"] == gold


@pytest.mark.parametrize(
    "action",
    ["asdf", "", "   ", "take", "look at", "0", "pick up the unicorn", "é" * 40, "x" * 5000, 42],
)
def test_invalid_actions_change_nothing(env: gym.Env, action: object) -> None:
    reset_to(env, "boil", 1)
    env.step("open door to kitchen")
    simulator = env.unwrapped.simulator
    moves, history = simulator.last.moves, simulator.history()
    obs, reward, terminated, truncated, info = env.step(action)
    assert info["action_valid"] is False and reward == 0.0 and not terminated
    assert obs.startswith("Invalid action")
    assert simulator.history() == history
    assert int(simulator._interface().getNumMoves()) == moves


def test_fuzzed_actions_never_raise(env: gym.Env) -> None:
    reset_to(env, "find-non-living-thing", 0)
    space = env.action_space
    space.seed(0)
    words = ["open", "door", "to", "go", "kitchen", "focus", "on", "look", "at", "0", "wait"]
    rng = random.Random(0)
    for _ in range(25):
        action = " ".join(rng.choice(words) for _ in range(rng.randint(1, 4)))
        obs, _, _, _, info = env.step(action if rng.random() < 0.8 else space.sample())
        assert isinstance(obs, str) and env.observation_space.contains(obs)
        assert 0.0 <= info["score"] <= 1.0


def test_ambiguous_request_is_a_valid_step(env: gym.Env) -> None:
    reset_to(env, "boil", 0)
    obs, _, _, _, info = env.step("open door")
    assert info["action_valid"] and obs.startswith("Ambiguous request")
    obs, _, _, _, info = env.step("0")
    assert info["action_valid"] and "door" in obs


def test_admissible_actions_equal_upstream_list(env: gym.Env) -> None:
    """The JSON-based fetch returns exactly upstream's (sorted, py4j-read) list, state by state."""
    _, info = reset_to(env, "boil", 0)
    gold = info["privileged"]["gold_plan_from_start"]
    simulator = env.unwrapped.simulator
    for command in [None, *gold[:3]]:
        if command is not None:
            env.step(command)
        upstream = [str(a) for a in simulator._interface().getValidActionObjectCombinations()]
        assert simulator.valid_actions() == upstream
        assert len(upstream) > 10


def test_admissible_actions_on_request(env: gym.Env) -> None:
    _, info = reset_to(env, "boil", 0)
    assert info["admissible_actions"] is None
    actions = env.unwrapped.get_admissible_actions()
    assert "look around" in actions and "open door to kitchen" in actions
    assert env.unwrapped.get_admissible_actions() == actions  # cached until the next step
    _, _, _, _, info = env.step("open door to kitchen")
    assert info["admissible_actions"] is None
    assert "go to kitchen" in env.unwrapped.get_admissible_actions()


def test_determinism_same_task_same_trajectory(env: gym.Env) -> None:
    def rollout() -> list[str]:
        obs, _ = env.reset(seed=7, options={"split": "val"})
        out = [obs]
        for action in ["look around", "open door", "1", "inventory", "objects"]:
            out.append(env.step(action)[0])
        return out

    first = rollout()
    reset_to(env, "boil", 3)  # something else in between
    assert rollout() == first


def test_check_env(env: gym.Env) -> None:
    check_env(env.unwrapped, skip_render_check=True)
    env.unwrapped.render_mode = "ansi"
    obs, _ = reset_to(env, "find-non-living-thing", 0)
    assert env.unwrapped.render() == obs
    env.unwrapped.render_mode = None


@pytest.mark.slow
def test_catalogue_matches_simulator(env: gym.Env) -> None:
    reset_to(env, "boil", 0)
    server = env.unwrapped.simulator._interface()
    assert tuple(str(name) for name in server.getTaskNames()) == TASK_NAMES
    for name in TASK_NAMES:
        server.load(name, 0, "", False)
        assert server.getTaskMaxVariations(name) == TASK_VARIATIONS[name]
        expected = upstream_splits(TASK_VARIATIONS[name])
        assert list(server.getVariationsTrain()) == expected["train"]
        assert list(server.getVariationsDev()) == expected["dev"]
        assert list(server.getVariationsTest()) == expected["test"]


def test_killed_jvm_is_restarted_and_episode_replayed(env: gym.Env) -> None:
    _, info = reset_to(env, "find-non-living-thing", 0)
    gold = info["privileged"]["gold_plan_from_start"]
    for action in gold[:2]:
        env.step(action)
    old = env.unwrapped.simulator.jvm
    old.process.kill()
    old.process.wait(timeout=10)
    with pytest.warns(RuntimeWarning, match="died mid-episode"):
        _, _, _, _, info = env.step(gold[2])
    assert info["engine_restarted"] is True and info["action_valid"]
    assert env.unwrapped.jvm_pid() != old.pid
    for action in gold[3:]:
        _, _, terminated, _, info = env.step(action)
    assert terminated and info["won"] and info["score"] == 1.0
    assert info["engine_restarted"] is False


def test_jvm_killed_between_episodes_is_restarted_on_reset(env: gym.Env) -> None:
    reset_to(env, "boil", 0)
    env.unwrapped.simulator.jvm.process.kill()
    with pytest.warns(RuntimeWarning, match="died"):
        obs, info = reset_to(env, "boil", 2)
    assert info["task_id"] == "boil/2" and "boil" in obs


def _wait_exit(process) -> None:
    deadline = time.monotonic() + 10
    while process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)


def test_close_stops_an_own_jvm() -> None:
    env = gym.make("sdgym/ScienceWorld-v0", task_names=["find-plant"], privileged=False, jvm="own")
    env.reset(seed=0)
    process = env.unwrapped.simulator.jvm.process
    assert process.poll() is None
    env.close()
    env.close()  # idempotent
    _wait_exit(process)
    assert process.poll() is not None
    with pytest.raises(RuntimeError, match="closed"):
        env.reset()


def test_envs_share_one_warm_jvm_that_outlives_their_close() -> None:
    """Envs made at once share one JVM; closing them ends their sessions, and the next env runs
    in the same JVM; close_shared_jvms() stops it."""
    from sdgym.envs.scienceworld.shared_jvm import close_shared_jvms, shared_jvm_pids

    first = [gym.make("sdgym/ScienceWorld-v0", task_names=["find-plant"], privileged=False)
             for _ in range(3)]
    for index, env in enumerate(first):
        env.reset(options={"split": "train", "task_index": index})
    pids = {env.unwrapped.jvm_pid() for env in first}
    assert len(pids) == 1 and pids <= set(shared_jvm_pids())
    process = first[0].unwrapped.simulator.jvm.process
    for env in first:
        env.close()
    assert process.poll() is None  # still up, warm for the next panel
    later = gym.make("sdgym/ScienceWorld-v0", task_names=["find-plant"], privileged=False)
    later.reset(seed=0)
    assert later.unwrapped.jvm_pid() in pids
    later.close()
    assert close_shared_jvms() >= 1
    _wait_exit(process)
    assert process.poll() is not None and process.pid not in shared_jvm_pids()


def test_sessions_of_one_jvm_play_like_jvms_of_their_own() -> None:
    """Two envs stepped in turn on the shared JVM see exactly what envs with their own JVMs see
    (observations, rewards, ends and the privileged plan), on the gold path and off it."""

    def play(mode: str) -> list:
        envs = [gym.make("sdgym/ScienceWorld-v0", simplifications="easy", max_episode_steps=8,
                         jvm=mode) for _ in range(2)]
        trace: list = []
        try:
            for episode in range(2):
                plans = []
                for k, env in enumerate(envs):
                    obs, info = env.reset(options={"split": "easy_train",
                                                   "task_index": 2 * episode + k})
                    plans.append(info["privileged"]["gold_plan_from_start"])
                    trace.append(obs)
                for step in range(8):
                    for k, env in enumerate(envs):
                        on_gold = (episode + k) % 2 == 0 and step < len(plans[k])
                        action = plans[k][step] if on_gold else ["look around", "inventory",
                                                                   "teleport to kitchen"][step % 3]
                        obs, reward, terminated, truncated, info = env.step(action)
                        trace.append((obs, reward, terminated, truncated,
                                      info["privileged"]["expert_plan"]))
        finally:
            for env in envs:
                env.close()
        return trace

    assert play("shared") == play("own")


def test_bad_kwargs() -> None:
    with pytest.raises(ValueError, match="admissible_actions"):
        gym.make("sdgym/ScienceWorld-v0", admissible_actions="sometimes")
    with pytest.raises(ValueError, match="simplification"):
        gym.make("sdgym/ScienceWorld-v0", simplifications="fly")
    with pytest.raises(ValueError, match="jvm must be one of"):
        gym.make("sdgym/ScienceWorld-v0", jvm="pooled")


def stop_jvm(pid: int) -> None:
    """SIGSTOP the JVM and wait until the kernel reports it stopped (fails clearly otherwise)."""
    import os
    import signal
    import time

    import psutil

    os.kill(pid, signal.SIGSTOP)
    deadline = time.monotonic() + 10
    while psutil.Process(pid).status() != psutil.STATUS_STOPPED:
        assert time.monotonic() < deadline, f"the JVM (pid {pid}) did not stop on SIGSTOP"
        time.sleep(0.01)


def test_a_stopped_jvm_misses_the_deadline_and_is_replaced(caplog) -> None:
    """SIGSTOP hangs the JVM: the step returns after the call deadline on a new JVM with the
    episode replayed, in one warning (py4j's tracebacks silenced)."""
    import logging
    import threading

    env = gym.make("sdgym/ScienceWorld-v0", task_names=["find-non-living-thing"],
                   call_timeout_s=15.0)
    try:
        _, info = reset_to(env, "find-non-living-thing", 0)
        gold = info["privileged"]["gold_plan_from_start"]
        env.step(gold[0])
        old = env.unwrapped.simulator.jvm
        stop_jvm(old.pid)
        result: list = []
        with caplog.at_level(logging.DEBUG), pytest.warns(RuntimeWarning) as warned:
            worker = threading.Thread(target=lambda: result.append(env.step(gold[1])))
            worker.start()
            worker.join(120)  # a generous bound on the test, not a timed assertion
        assert result, "step() blocked past its deadline"
        _, _, _, _, info = result[0]
        assert info["engine_restarted"] is True and info["action_valid"]
        assert [str(w.message) for w in warned if "did not answer within 15 s" in str(w.message)]
        assert not [r for r in caplog.records if "py4j" in r.pathname and r.exc_info]
        assert old.process.poll() is not None and env.unwrapped.jvm_pid() != old.pid
        for action in gold[2:]:
            _, _, terminated, _, info = env.step(action)
        assert terminated and info["won"]
    finally:
        env.close()


def test_close_during_a_blocked_step_starts_no_new_jvm() -> None:
    import threading

    env = gym.make("sdgym/ScienceWorld-v0", task_names=["find-non-living-thing"],
                   call_timeout_s=30.0, jvm="own")
    _, info = reset_to(env, "find-non-living-thing", 0)
    simulator = env.unwrapped.simulator
    old = simulator.jvm
    stop_jvm(old.pid)
    in_call = threading.Event()
    raw_step = simulator._raw_step

    def signalling_step(server, command):
        in_call.set()  # the step got past the env's checks: it is calling the (stopped) JVM
        return raw_step(server, command)

    simulator._raw_step = signalling_step
    result: list = []
    worker = threading.Thread(target=lambda: result.append(env.step("look around")))
    worker.start()
    # close only once the step is calling the JVM (a loaded machine may start the thread late;
    # closing first would answer the closed env's step, which is not what this tests)
    assert in_call.wait(60), "the step never called the simulator"
    env.close()  # kills the stopped JVM: the blocked call breaks now, not after 30 s
    worker.join(60)
    assert result, "the blocked step did not end when the env closed"
    observation, _, terminated, _, _ = result[0]
    assert terminated and "crashed" in observation
    assert env.unwrapped.simulator.jvm is None and old.process.poll() is not None


def test_a_forked_child_neither_stops_nor_uses_its_parents_jvm() -> None:
    """A vector env's forked worker inherits the parent's shared JVM object: in the child it is
    not alive (its connections are the parent's) and dropping it does nothing, instead of
    blocking on a process that is not the child's (this hung async vector envs)."""
    import os

    env = gym.make("sdgym/ScienceWorld-v0", task_names=["find-plant"], privileged=False)
    try:
        env.reset(seed=0)
        jvm = env.unwrapped.simulator.jvm
        child = os.fork()
        if child == 0:
            code = 0
            try:
                code = 3 if jvm.alive() else 0
                jvm.close()
            except BaseException:
                code = 4
            os._exit(code)
        _, status = os.waitpid(child, 0)
        assert os.waitstatus_to_exitcode(status) == 0
        assert jvm.alive()
        _, _, _, _, info = env.step("look around")
        assert info["action_valid"] and not info["engine_restarted"]
    finally:
        env.close()
