"""DESIGN.md §2, checked on every registered env whose extra is installed."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from sdgym_test_params import FAST_KWARGS

from sdgym import PRIVILEGED_KEYS, PUBLIC_INFO_KEYS
from sdgym.wrappers import HidePrivileged

FUZZ_ACTIONS = [
    "",
    "   ",
    "x" * 10_000,
    "\x00\x01\x1b[31m\x7f",
    "go to 🦄 ünïcödé ниже 中文",
    "<action></action>",
    "<search><answer>nested</answer></search>",
    "<script>alert(1)</script>",
    "click[",
    "]]]][[[[",
    "\n\n\t",
    None,
    12345,
    b"bytes action",
]


def expert_action(info: dict) -> str:
    """The privileged next action, or the first admissible one, or a no-op string."""
    action = info.get("privileged", {}).get("expert_action")
    if action is None and info.get("admissible_actions"):
        action = info["admissible_actions"][0]
    return action if action is not None else "look"


def run_expert(env: gym.Env, options: dict, seed: int = 0, max_steps: int = 60) -> list:
    """Follow the expert from reset; return the (observation, reward, score) trace."""
    observation, info = env.reset(seed=seed, options=options)
    trace = [(observation, 0.0, info["score"])]
    for _ in range(max_steps):
        observation, reward, terminated, truncated, info = env.step(expert_action(info))
        trace.append((observation, float(reward), info["score"]))
        if terminated or truncated:
            break
    return trace


def test_check_env_passes(make_env) -> None:
    env = make_env()
    check_env(env.unwrapped, skip_render_check=True)


def test_info_contract_on_reset_and_step(make_env) -> None:
    env = make_env()
    observation, info = env.reset(seed=3, options={"split": "test"})
    assert isinstance(observation, str) and observation
    assert env.observation_space.contains(observation)
    for key in PUBLIC_INFO_KEYS:
        assert key in info, key
    assert info["split"] == "test" and info["action_valid"] is True and info["won"] is False
    assert set(PRIVILEGED_KEYS) <= set(info["privileged"])
    assert isinstance(info["privileged"]["text"], str) and info["privileged"]["text"]
    observation, reward, terminated, truncated, info = env.step(expert_action(info))
    assert env.observation_space.contains(observation)
    assert 0.0 <= info["score"] <= 1.0 and isinstance(reward, float)
    for key in PUBLIC_INFO_KEYS:
        assert key in info, key


def test_task_choice_is_a_function_of_split_and_index_or_seed(make_env) -> None:
    env = make_env()
    _, by_index = env.reset(options={"split": "val", "task_index": 1})
    _, again = env.reset(seed=99, options={"split": "val", "task_index": 1})
    assert by_index["task_id"] == again["task_id"]
    ids_by_seed = [env.reset(seed=s, options={"split": "train"})[1]["task_id"] for s in range(6)]
    assert ids_by_seed == [env.reset(seed=s, options={"split": "train"})[1]["task_id"] for s in range(6)]
    assert len(set(ids_by_seed)) > 1


def test_a_split_slice_is_those_tasks_of_its_split(make_env) -> None:
    env = make_env().unwrapped
    whole = env.task_count("val")
    odd = env.task_count("val[1::2]")
    assert odd == whole // 2 and env.task_count("val[0::2]") == whole - odd
    whole_ids = [env.reset(options={"split": "val", "task_index": i})[1]["task_id"]
                 for i in range(min(whole, 6))]
    for i in range(min(odd, 3)):
        _, info = env.reset(options={"split": "val[1::2]", "task_index": i})
        assert info["task_id"] == whole_ids[2 * i + 1]
        assert info["split"] == "val" and env.task_index == 2 * i + 1
    by_seed = {env.reset(seed=s, options={"split": "val[1::2]"})[1]["task_id"] for s in range(8)}
    assert by_seed <= {env.reset(options={"split": "val", "task_index": i})[1]["task_id"]
                       for i in range(1, whole, 2)}
    with pytest.raises(ValueError, match=r"task_index must be an int in \[0, "):
        env.reset(options={"split": "val[1::2]", "task_index": odd})
    assert env.task_count("val[:1]+val[1::2]") == odd + 1
    _, info = env.reset(options={"split": "val[:1]+val[1::2]", "task_index": 1})
    assert info["task_id"] == whole_ids[1]
    with pytest.raises(ValueError, match="unknown split 'nope'"):
        env.task_count("nope[::2]")


def test_same_seed_and_options_give_same_trajectory(make_env) -> None:
    first = run_expert(make_env(), {"split": "test"}, seed=7)
    second = run_expert(make_env(), {"split": "test"}, seed=7)
    assert first == second


def test_expert_return_equals_final_score(make_env) -> None:
    env = make_env()
    trace = run_expert(env, {"split": "test", "task_index": 0}, max_steps=200)
    total = sum(reward for _, reward, _ in trace)
    assert total == pytest.approx(trace[-1][2])
    assert all(reward >= 0.0 for _, reward, _ in trace)
    if len(trace) - 1 < (env.spec.max_episode_steps or 10**6):  # finished within the step limit
        assert trace[-1][2] == pytest.approx(1.0)


def test_fuzzed_actions_never_raise_nor_change_the_world(make_env) -> None:
    clean_env, fuzzed_env = make_env(), make_env()
    options = {"split": "test", "task_index": 0}
    clean = run_expert(clean_env, options, max_steps=4)
    for bad in FUZZ_ACTIONS:
        observation, info = fuzzed_env.reset(seed=0, options=options)
        observation, reward, terminated, truncated, fuzz_info = fuzzed_env.step(bad)
        assert isinstance(observation, str) and observation, repr(bad)
        assert fuzzed_env.observation_space.contains(observation)
        if fuzz_info["action_valid"]:
            continue
        assert reward == 0.0 and not terminated, repr(bad)
        assert fuzz_info["score"] == info["score"]
        trace = [clean[0]]
        for _ in range(len(clean) - 1):
            observation, reward, terminated, truncated, info = fuzzed_env.step(expert_action(info))
            trace.append((observation, float(reward), info["score"]))
            if terminated or truncated:
                break
        if not truncated:  # the fuzzed turn counted against the time limit
            assert trace[1:] == clean[1 : len(trace)], repr(bad)


def test_empty_and_oversized_actions_are_invalid(make_env) -> None:
    env = make_env()
    env.reset(seed=0)
    for bad in ("", "y" * 10_000):
        _, _, _, _, info = env.step(bad)
        assert info["action_valid"] is False


def _no_privileged_keys(value) -> bool:
    if isinstance(value, dict):
        return all(
            key not in ("privileged", "_privileged", *PRIVILEGED_KEYS) and _no_privileged_keys(v)
            for key, v in value.items()
        )
    if isinstance(value, (list, tuple)):
        return all(_no_privileged_keys(v) for v in value)
    return True


def test_hide_privileged_leaves_no_privileged_key(make_env) -> None:
    env = HidePrivileged(make_env())
    observation, info = env.reset(seed=1)
    assert _no_privileged_keys(info)
    for action in ("", "look", "<search>anything</search>", "click[buy now]"):
        observation, _, terminated, truncated, info = env.step(action)
        assert _no_privileged_keys(info)
        if terminated or truncated:
            break


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_vector_env_groups_match_single_env(env_id, mode) -> None:
    kwargs = FAST_KWARGS.get(env_id, {})
    seeds = [11, 11, 12, 12]
    single = gym.make(env_id, **kwargs)
    try:
        expected = [run_expert(single, {"split": "test"}, seed=s, max_steps=3) for s in seeds]
    finally:
        single.close()
    vector = gym.make_vec(env_id, num_envs=4, vectorization_mode=mode, **kwargs)
    try:
        observations, infos = vector.reset(seed=seeds, options={"split": "test"})
        assert list(observations) == [trace[0][0] for trace in expected]
        assert observations[0] == observations[1]
        for step in range(1, 4):
            actions = tuple(expert_action(_pick(infos, i)) for i in range(4))
            observations, _, terminated, truncated, infos = vector.step(actions)
            for i in range(4):
                if step < len(expected[i]):
                    assert observations[i] == expected[i][step][0]
            if np.any(terminated | truncated):
                break
    finally:
        vector.close()


def _pick(value, index):
    """Element ``index`` of a vector-env info entry (nested dicts of arrays)."""
    if isinstance(value, dict):
        return {k: _pick(v, index) for k, v in value.items()}
    return value[index]
