"""sdgym/WebShop-v0 against the env contract (DESIGN.md §2) and its expert."""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env
from webshop_upstream_files import write_upstream_files

import sdgym  # noqa: F401  (registers the ids)
from sdgym.core import PRIVILEGED_KEYS, PUBLIC_INFO_KEYS
from sdgym.envs.webshop.env import WebShopEnv


@pytest.fixture
def env() -> WebShopEnv:
    env = WebShopEnv(size="tiny")
    yield env
    env.close()


def _run_expert(env: WebShopEnv, split: str, index: int) -> dict:
    obs, info = env.reset(options={"split": split, "task_index": index})
    total = 0.0
    for action in info["privileged"]["expert_plan"]:
        obs, reward, terminated, truncated, info = env.step(action)
        total += reward
    assert terminated and total == pytest.approx(info["score"])
    return info


def test_check_env_passes(env: WebShopEnv) -> None:
    check_env(env.unwrapped, skip_render_check=True)


def test_gym_make_and_info_contract() -> None:
    env = gym.make("sdgym/WebShop-v0", size="tiny", observation_mode="text_rich")
    obs, info = env.reset(seed=3, options={"split": "val"})
    assert env.observation_space.contains(obs)
    assert set(PUBLIC_INFO_KEYS) <= set(info) and set(PRIVILEGED_KEYS) <= set(info["privileged"])
    assert info["task_id"].startswith("webshop/B0") and info["split"] == "val"
    assert info["task_type"] in {"beauty", "electronics", "fashion", "food", "furniture"}
    assert info["admissible_actions"] == ["search[<query>]"]
    goal = info["privileged"]["goal"]
    assert goal["instruction"] in obs and info["privileged"]["expert_action"].startswith("search[")
    assert goal["asin"] in info["privileged"]["text"]
    assert env.spec.max_episode_steps == 15
    env.close()


def test_expert_solves_every_tiny_goal(env: WebShopEnv) -> None:
    results = [
        _run_expert(env, split, index)["won"]
        for split in env.splits
        for index in range(env.task_count(split))
    ]
    assert len(results) >= 150
    assert sum(results) / len(results) >= 0.99


@pytest.mark.slow
def test_expert_solves_the_full_test_split() -> None:
    env = WebShopEnv(size="full")
    count = env.task_count("test")
    assert count >= 500
    wins = [_run_expert(env, "test", index)["won"] for index in range(count)]
    print(f"\nWebShop full/test: expert won {sum(wins)}/{count}")
    assert sum(wins) / count >= 0.99


def test_expert_replans_from_detours(env: WebShopEnv) -> None:
    obs, info = env.reset(options={"split": "test", "task_index": 0})
    env.step("search[something completely different]")
    _, _, _, _, info = env.step("click[next >]")
    plan = info["privileged"]["expert_plan"]
    assert plan[0] in ("click[back to search]", "click[< prev]") or plan[0].startswith("click[b")
    for action in plan:
        _, _, terminated, _, info = env.step(action)
    assert terminated and info["won"]


def test_invalid_actions_never_raise_and_change_nothing(env: WebShopEnv) -> None:
    obs, info = env.reset(options={"split": "train", "task_index": 5})
    env.step(info["privileged"]["expert_plan"][0])
    before_state, before_obs = env.state, env.render() if env.render_mode else None
    for action in [
        "",
        "   ",
        "click[not there]",
        "search[again]",
        "dance",
        42,
        None,
        b"\xff",
        "x" * 5000,
        "click[search]",
    ]:
        obs, reward, terminated, truncated, info = env.step(action)
        assert info["action_valid"] is False and reward == 0.0 and not terminated
        assert obs.startswith("Invalid action:")
        assert env.state == before_state
    assert before_obs is None


def test_episode_end_and_after(env: WebShopEnv) -> None:
    obs, info = env.reset(options={"split": "test", "task_index": 1})
    env.step(info["privileged"]["expert_plan"][0])
    hits = [a for a in env.engine.available_actions(env.state) if a.startswith("click[b")]
    env.step(hits[-1])
    obs, reward, terminated, truncated, info = env.step("click[buy now]")
    assert terminated and 0.0 <= reward <= 1.0 and "reward_info" in info
    assert info["admissible_actions"] == [] and info["privileged"]["expert_plan"] == []
    obs, reward, terminated, _, info = env.step("click[back to search]")
    assert not info["action_valid"] and terminated and reward == 0.0


def test_determinism_same_seed_same_episode() -> None:
    def episode() -> list[str]:
        env = WebShopEnv(size="tiny", observation_mode="html")
        obs, info = env.reset(seed=11, options={"split": "train"})
        observations = [obs]
        for action in info["privileged"]["expert_plan"]:
            observations.append(env.step(action)[0])
        return observations

    assert episode() == episode()


def test_render_modes() -> None:
    env = WebShopEnv(size="tiny", render_mode="ansi")
    obs, _ = env.reset(seed=0)
    assert env.render() == obs
    with pytest.raises(ValueError):
        WebShopEnv(size="tiny", observation_mode="url")
    with pytest.raises(ValueError):
        WebShopEnv(size="huge")


def test_sync_vector_env() -> None:
    envs = gym.make_vec("sdgym/WebShop-v0", num_envs=2, vectorization_mode="sync", size="tiny")
    obs, infos = envs.reset(seed=[1, 2])
    assert len(obs) == 2 and all(o.startswith("WebShop") for o in obs)
    obs, rewards, terminated, truncated, infos = envs.step(["search[shampoo]", "nonsense"])
    assert list(infos["action_valid"]) == [True, False]
    envs.close()


def test_env_on_upstream_files(tmp_path: Path) -> None:
    product_file, instruction_file, attribute_file = write_upstream_files(tmp_path)
    env = WebShopEnv(
        product_file=str(product_file),
        instruction_file=str(instruction_file),
        attribute_file=str(attribute_file),
    )
    standard = ("train", "val", "test")
    assert sum(env.task_count(split) for split in standard) == 2
    split = next(s for s in standard if env.task_count(s))
    info = _run_expert(env, split, 0)
    assert info["won"]
