"""Every env the same way: a step after a failed first reset or after close() returns an
invalid-action observation (never raises, touches no engine); render_mode="human" prints each
observation; pickle and deepcopy give an env that continues exactly where the original is."""

from __future__ import annotations

import copy
import pickle

import pytest
from test_contract import expert_action

from sdgym import PUBLIC_INFO_KEYS


def assert_inert(result, problem: str) -> None:
    observation, reward, terminated, truncated, info = result
    assert observation.startswith("Invalid action") and problem in observation
    assert reward == 0.0 and terminated is True and truncated is False
    assert info["action_valid"] is False and set(PUBLIC_INFO_KEYS) <= set(info)


def test_step_after_a_failed_first_reset_returns_an_observation(make_env) -> None:
    env = make_env()
    with pytest.raises(ValueError, match="unknown split 'nope'"):
        env.reset(options={"split": "nope"})
    for _ in range(2):  # the passive checker's first step and a plain one
        assert_inert(env.step("look"), "call reset()")
    observation, info = env.reset(seed=0, options={"split": "train"})
    assert observation and info["action_valid"] is True  # a later reset works


def test_reset_options_that_are_not_a_dict_are_named(make_env) -> None:
    env = make_env()
    with pytest.raises(TypeError, match="reset options must be a dict.*got str 'train'"):
        env.reset(options="train")
    observation, _ = env.reset(seed=0, options={"split": "train"})
    assert observation  # the env is still usable


def test_step_after_close_is_the_same_in_every_env(make_env) -> None:
    env = make_env()
    _, info = env.reset(seed=0)
    env.close()
    for action in ("look", expert_action(info)):
        result = env.step(action)
        assert_inert(result, "closed")
        assert result[4]["task_id"] == info["task_id"]
    with pytest.raises(RuntimeError, match="closed"):
        env.reset(seed=0)


def test_human_render_mode_prints_every_observation(make_env, capsys) -> None:
    env = make_env(render_mode="human")
    observation, info = env.reset(seed=0)
    stepped = env.step(expert_action(info))[0]
    printed = capsys.readouterr().out
    assert observation.strip()[:40] in printed and stepped.strip()[:40] in printed


@pytest.mark.parametrize("how", ["pickle", "deepcopy"])
def test_pickle_and_deepcopy_continue_where_the_original_is(make_env, how) -> None:
    env = make_env()
    _, info = env.reset(seed=3, options={"split": "train"})
    for _ in range(2):
        _, _, terminated, _, info = env.step(expert_action(info))
        if terminated:
            break
    clone = pickle.loads(pickle.dumps(env)) if how == "pickle" else copy.deepcopy(env)
    try:
        assert clone.unwrapped is not env.unwrapped
        for _ in range(3):
            action = expert_action(info)
            a, b = env.step(action), clone.step(action)
            assert a[:4] == b[:4]
            assert {k: a[4][k] for k in PUBLIC_INFO_KEYS} == {k: b[4][k] for k in PUBLIC_INFO_KEYS}
            info = a[4]
            if a[2]:
                break
        assert env.unwrapped.np_random.random() == clone.unwrapped.np_random.random()
    finally:
        clone.close()
