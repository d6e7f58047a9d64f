"""sdgym/ALFWorld-v0: contract, invalid actions, expert re-planning, loader, memoisation."""

from __future__ import annotations

import json
import random

import pytest

pytest.importorskip("alfworld")
pytest.importorskip("textworld")

from gymnasium.utils.env_checker import check_env  # noqa: E402

import sdgym  # noqa: E402, F401
from sdgym.envs.alfworld import expert as expert_module  # noqa: E402
from sdgym.envs.alfworld.env import ALFWorldEnv  # noqa: E402

FUZZ = [
    "",
    "   ",
    "x" * 5000,
    "\x00\x1b[31m",
    "go to",
    "go to nowhere 9",
    "take",
    "🦄",
    None,
    7,
    "GO TO DRESSER 1",
    "look look",
    "move keychain 1 to",
]


@pytest.fixture
def env():
    env = ALFWorldEnv(size="small")  # check_env resets on seeded tasks of the default split
    yield env
    env.close()


def _world(env: ALFWorldEnv) -> frozenset[str]:
    return frozenset(str(f) for f in env._game.unwrapped._pddl_state.facts)


@pytest.mark.slow
def test_check_env(env: ALFWorldEnv) -> None:
    env.reset(options={"split": "easy", "task_index": 0})
    check_env(env, skip_render_check=True)


@pytest.mark.slow
def test_expert_solves_and_reward_is_one(env: ALFWorldEnv) -> None:
    obs, info = env.reset(options={"split": "easy", "task_index": 0})
    assert obs.startswith("-= Welcome to TextWorld, ALFRED! =-")
    assert (
        info["task_id"].startswith("alfworld/easy/0-")
        and info["task_type"] == "pick_and_place_simple"
    )
    assert info["privileged"]["goal"]["pddl_params"]["object_target"]
    total = 0.0
    for action in info["privileged"]["expert_plan"]:
        assert action == info["privileged"]["expert_action"]
        obs, reward, terminated, truncated, info = env.step(action)
        total += reward
    assert info["won"] and terminated and total == 1.0


@pytest.mark.slow
def test_invalid_and_fuzzed_actions_never_change_the_world(env: ALFWorldEnv) -> None:
    _, info = env.reset(options={"split": "easy", "task_index": 1})
    before, admissible = _world(env), info["admissible_actions"]
    for action in FUZZ:
        obs, reward, terminated, truncated, info = env.step(action)
        assert info["action_valid"] is False and reward == 0.0 and not terminated
        assert _world(env) == before and info["admissible_actions"] == admissible


@pytest.mark.slow
def test_expert_replans_after_deviation(env: ALFWorldEnv) -> None:
    _, info = env.reset(options={"split": "easy", "task_index": 2})
    wrong = next(a for a in info["admissible_actions"] if a != info["privileged"]["expert_action"])
    _, _, _, _, info = env.step(wrong)
    plan = info["privileged"]["expert_plan"]
    assert plan and info["privileged"]["expert_action"] == plan[0]
    for action in plan:
        _, _, terminated, _, info = env.step(action)
    assert info["won"] and terminated


@pytest.mark.slow
def test_memoised_engine_gives_identical_trajectories() -> None:
    traces = []
    for fast in (False, True):
        env = ALFWorldEnv(fast=fast, privileged=False)
        obs, info = env.reset(options={"split": "easy", "task_index": 3})
        trace = [(obs, info["admissible_actions"])]
        for step in range(8):
            actions = info["admissible_actions"]
            obs, _, terminated, _, info = env.step(actions[(7 * step + 3) % len(actions)])
            trace.append((obs, info["admissible_actions"]))
            if terminated:
                break
        env.close()
        traces.append(json.dumps(trace))
    assert traces[0] == traces[1]


def _deviate_then_follow_expert(env: ALFWorldEnv, split: str, index: int, seed: int) -> dict:
    """Random admissible commands, then the expert's action each step; the final info."""
    rng = random.Random(seed)
    _, info = env.reset(options={"split": split, "task_index": index})
    terminated, steps = False, 0
    for _ in range(rng.randint(2, 8)):
        _, _, terminated, _, info = env.step(rng.choice(info["admissible_actions"]))
        steps += 1
        if terminated:
            return info
    while not terminated and steps < 50 and info["privileged"]["expert_action"]:
        assert info["privileged"]["expert_action"] in info["admissible_actions"]
        _, _, terminated, _, info = env.step(info["privileged"]["expert_action"])
        steps += 1
    return info


@pytest.mark.slow
def test_handcoded_expert_recovers_from_deviations_in_every_task_type(monkeypatch) -> None:
    """After random detours, the handcoded expert alone (no planner call) wins every task type."""
    planner_calls = []
    monkeypatch.setattr(expert_module, "run_capped", lambda *a: planner_calls.append(a) or [])
    env = ALFWorldEnv(size="small")
    try:
        for index in range(6):
            for seed in range(2):
                info = _deviate_then_follow_expert(env, "test", index, 100 * index + seed)
                assert info["won"], (index, seed, info["task_type"])
    finally:
        env.close()
    assert planner_calls == []


@pytest.mark.slow
def test_planner_fallback_when_the_handcoded_expert_cannot_plan(monkeypatch) -> None:
    monkeypatch.setattr(expert_module, "handcoded_plan", lambda *args: None)
    env = ALFWorldEnv(size="small")
    try:
        assert _deviate_then_follow_expert(env, "test", 3, seed=7)["won"]
    finally:
        env.close()


def test_unknown_room_size_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="room size"):
        ALFWorldEnv(size="huge")


@pytest.mark.slow
def test_switching_tasks_reuses_one_engine_with_fresh_state() -> None:
    """One TextWorld env (one libdownward copy) serves every task; a task played after another
    gives the same trajectory as in a fresh env."""
    traces = []
    for warm_up in (False, True):
        env = ALFWorldEnv(size="small")
        try:
            if warm_up:
                _, info = env.reset(options={"split": "test", "task_index": 1})
                env.step(info["admissible_actions"][0])
                engine = env._game
            obs, info = env.reset(options={"split": "test", "task_index": 2})
            if warm_up:
                assert env._game is engine
            trace = [obs]
            for action in info["privileged"]["expert_plan"]:
                obs, _, _, _, info = env.step(action)
                trace.append(obs)
            traces.append((trace, info["won"]))
        finally:
            env.close()
        assert env._game is None
    assert traces[0] == traces[1] and traces[0][1]


def test_commands_are_accepted_in_any_casing(env: ALFWorldEnv) -> None:
    _, info = env.reset(options={"split": "easy", "task_index": 0})
    twin = ALFWorldEnv(size="small")
    try:
        twin.reset(options={"split": "easy", "task_index": 0})
        for command in ("look", info["privileged"]["expert_action"]):
            shouted = command.upper() if command != "look" else "Look"
            a, b = env.step(command), twin.step(shouted)
            assert b[4]["action_valid"] is True
            assert a[:4] == b[:4] and _world(env) == _world(twin)
    finally:
        twin.close()
