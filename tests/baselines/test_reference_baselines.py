"""Random, expert and MaskablePPO reference baselines, and the ``sdgym baseline`` command."""

from __future__ import annotations

import json

import pytest
from sdgym_test_params import AVAILABLE_IDS, FAST_KWARGS

from baselines.evaluation import evaluate_policy
from baselines.reference.policies import ExpertPolicy, RandomPolicy
from baselines.reference.run import evaluation_split, ppo_train_split, run_baseline
from sdgym.cli import main

SLOW_ENGINES = {"sdgym/ScienceWorld-v0", "sdgym/ALFWorld-v0"}


def test_expert_solves_and_random_does_not_on_searchqa() -> None:
    kwargs = {"size": "tiny"}
    expert = evaluate_policy("sdgym/SearchQA-v0", ExpertPolicy(), episodes=10, seeds=[0, 1],
                             env_kwargs=kwargs)
    random = evaluate_policy("sdgym/SearchQA-v0", RandomPolicy(), episodes=10, seeds=[0, 1],
                             env_kwargs=kwargs)
    assert expert.success_per_seed == [1.0, 1.0] and expert.success_std == 0.0
    assert random.success_mean < 0.5
    assert random.to_record()["success_mean"] == pytest.approx(random.success_mean)


def test_random_policy_is_reproducible_per_seed() -> None:
    runs = [evaluate_policy("sdgym/SearchQA-v0", RandomPolicy(), episodes=12, seeds=[3],
                            env_kwargs={"size": "tiny"}).score_per_seed for _ in range(2)]
    assert runs[0] == runs[1]


def test_expert_refuses_hidden_privileged_info() -> None:
    with pytest.raises(ValueError, match="privileged"):
        ExpertPolicy().act("obs", {}, None)


def test_baseline_command_writes_results(tmp_path) -> None:
    out = tmp_path / "report"
    code = main(["baseline", "--env", "sdgym/SearchQA-v0", "--episodes", "4", "--seeds", "2",
                 "--env-kwarg", "SearchQA-v0:size=tiny", "--out", str(out)])
    assert code == 0
    records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert [r["policy"] for r in records] == ["random", "expert"]
    assert records[1]["success_mean"] == 1.0 and len(records[1]["success_per_seed"]) == 2


def test_baseline_command_rejects_unknown_algo(tmp_path, capsys) -> None:
    assert main(["baseline", "--algo", "nope", "--out", str(tmp_path)]) == 2
    assert "unknown --algo" in capsys.readouterr().err


def test_easy_splits_per_env() -> None:
    assert evaluation_split("easy", "sdgym/SearchQA-v0") == "easy_val"
    assert evaluation_split("easy", "sdgym/WebShop-v0") == "easy_val"
    assert evaluation_split("val", "sdgym/WebShop-v0") == "val"
    assert ppo_train_split("sdgym/WebShop-v0") == "easy_train"
    if "sdgym/ALFWorld-v0" in AVAILABLE_IDS:
        assert evaluation_split("easy", "sdgym/ALFWorld-v0") == "easy_val"
        assert ppo_train_split("sdgym/ALFWorld-v0") == "easy_train"
    if "sdgym/ScienceWorld-v0" in AVAILABLE_IDS:
        assert evaluation_split("easy", "sdgym/ScienceWorld-v0") == "easy_val"
        assert ppo_train_split("sdgym/ScienceWorld-v0") == "easy_train"
        # cpu-mini's PPO baseline runs on chemistry-mix only, which has no easy_train tasks
        assert ppo_train_split("sdgym/ScienceWorld-v0", {"task_names": ["chemistry-mix"]}) == "train"
        assert ppo_train_split("sdgym/ScienceWorld-v0", {"task_names": ["find-plant"]}) == "easy_train"


@pytest.mark.parametrize("env_id", [
    pytest.param(e, marks=[pytest.mark.slow] if e in SLOW_ENGINES else []) for e in AVAILABLE_IDS])
def test_sb3_check_env_passes_on_the_wrapped_env(env_id: str) -> None:
    from stable_baselines3.common.env_checker import check_env

    from baselines.reference.maskable_ppo import make_discrete_env

    kwargs = dict(FAST_KWARGS[env_id])
    if env_id == "sdgym/ScienceWorld-v0":  # its easy train split holds the find tasks only
        kwargs["task_names"] = ["find-non-living-thing"]
    env = make_discrete_env(env_id, kwargs, ppo_train_split(env_id))
    try:
        check_env(env, warn=False)
        env.reset(seed=0)
        assert env.action_masks().any()
    finally:
        env.close()


def test_run_baseline_record_has_the_benchmark_fields() -> None:
    record = run_baseline("sdgym/WebShop-v0", "random", {"size": "tiny"}, split="easy",
                          episodes=3, seeds=[0, 1])
    assert record["kind"] == "baseline" and record["method"] == "random"
    assert record["split"] == "easy_val" and len(record["success_per_seed"]) == 2
    assert record["validation"] == [] and record["auc"] is None
    with pytest.raises(ValueError, match="unknown algo"):
        run_baseline("sdgym/WebShop-v0", "nope", {"size": "tiny"})


def _ppo_vs_random(env_id: str, kwargs: dict, timesteps: int, episodes: int) -> tuple[dict, dict]:
    common = {"split": "easy", "episodes": episodes, "seeds": [0, 1]}
    ppo = run_baseline(env_id, "maskable_ppo", kwargs, ppo_timesteps=timesteps, **common)
    random = run_baseline(env_id, "random", kwargs, **common)
    return ppo, random


@pytest.mark.slow
def test_maskable_ppo_beats_random_on_webshop_easy() -> None:
    """6,000 steps on easy_train (about a minute), evaluated on the 23 unseen easy_val goals."""
    ppo, random = _ppo_vs_random("sdgym/WebShop-v0", {"size": "small"}, 6000, 23)
    assert ppo["split"] == "easy_val" and ppo["episodes_per_seed"] == 23
    assert ppo["success_mean"] >= random["success_mean"] + 0.25, (ppo, random)


@pytest.mark.slow
def test_maskable_ppo_beats_random_on_searchqa_easy() -> None:
    """4,000 steps on easy_train (about a minute), evaluated on 32 unseen easy_val questions."""
    ppo, random = _ppo_vs_random("sdgym/SearchQA-v0", {"size": "tiny"}, 4000, 32)
    assert ppo["split"] == "easy_val" and ppo["episodes_per_seed"] == 32
    assert ppo["success_mean"] >= random["success_mean"] + 0.2, (ppo, random)


def test_maskable_ppo_training_leaves_no_sb3_folder(tmp_path, monkeypatch) -> None:
    import tempfile

    from baselines.reference.maskable_ppo import train_maskable_ppo

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.delenv("SB3_LOGDIR", raising=False)
    model = train_maskable_ppo("sdgym/SearchQA-v0", {"size": "tiny"}, "easy_train", 256)
    assert model.num_timesteps >= 256
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith("SB3-")] == []
