"""The expert in the valid-action list's words, followed through AdmissibleDiscrete's slots;
candidates from public information only; lists and rejected commands change nothing."""

from __future__ import annotations

import re
from collections.abc import Iterator

import gymnasium as gym
import pytest

from sdgym.envs.scienceworld.goal import is_choice
from sdgym.wrappers import AdmissibleDiscrete, HidePrivileged
from sdgym.wrappers.admissible_discrete import candidate_commands

RENAMED = {  # (task, train variation): gold words -> the listed words the expert now uses
    # ({wire}: the wire the gold path connects the battery anode to; upstream's path generator
    # draws it at random, black or blue on test-conductivity/0)
    ("use-thermometer", 0): {
        "focus on thermometer in inventory": "focus on thermometer",  # object with its place
        "open door to bathroom": "open bathroom door",  # a door named by its room
        "use thermometer in inventory on unknown substance B in inventory":
            "use thermometer on unknown substance",
    },
    ("test-conductivity", 0): {  # (gold generated afresh: the tests' cache starts empty)
        "connect battery anode to {wire} wire terminal 1":  # terminals named the other way
            "connect anode in battery to {wire} wire terminal 1",
        "drop aluminum foil": "put down aluminum foil",
    },
}


@pytest.fixture(scope="module")
def list_env() -> Iterator[gym.Env]:
    """An env whose expert speaks the valid-action list's words (``expert_words="list"``)."""
    env = gym.make("sdgym/ScienceWorld-v0", max_episode_steps=1000, expert_words="list")
    yield env
    env.close()


def test_the_default_expert_keeps_upstream_words(sw_env: gym.Env) -> None:
    core = sw_env.unwrapped
    _, info = sw_env.reset(options={"split": "train",
                                    "task_index": core.task_index_of("use-thermometer", 0)})
    plan = info["privileged"]["gold_plan_from_start"]
    assert "focus on thermometer in inventory" in plan and "focus on thermometer" not in plan
    with pytest.raises(ValueError, match="expert_words must be one of"):
        gym.make("sdgym/ScienceWorld-v0", expert_words="gold")


def test_gold_aliases_become_listed_commands_that_still_win(list_env: gym.Env) -> None:
    """Each alias kind met in these plans is replaced by the listed command the simulator
    answers identically; no-ops (opening an open door) are left out or become a listed ``look
    at``; every action of the plan is on the valid-action list when it is due, and the plan
    wins."""
    core = list_env.unwrapped
    for (task, variation), renamed in RENAMED.items():
        _, info = list_env.reset(options={"split": "train",
                                          "task_index": core.task_index_of(task, variation)})
        plan = info["privileged"]["gold_plan_from_start"]
        found = {alias: action for action, alias in zip(plan, core._expert.aliases) if alias}
        wire = next((m[1] for alias in found
                     if (m := re.search(r"battery anode to (\w+) wire", alias))), "(none)")
        expected = {gold.format(wire=wire): listed.format(wire=wire)
                    for gold, listed in renamed.items()}
        assert expected.items() <= found.items(), found
        for action in plan:
            assert action in core.get_admissible_actions(), (task, action)
            _, _, terminated, _, info = list_env.step(action)
            assert info["action_valid"] and info["privileged"]["on_expert_path"]
        assert terminated and info["won"], task


def test_expert_followed_through_the_slots_wins_with_public_candidates() -> None:
    """A MaskablePPO agent's view: the expert's action is in AdmissibleDiscrete's 32 slots at
    every step of use-thermometer/0 and playing that slot wins; the slots are the same for an
    env that computes no privileged information at all (HidePrivileged, privileged=False)."""
    teacher = AdmissibleDiscrete(gym.make("sdgym/ScienceWorld-v0", expert_words="list"),
                                 max_actions=32)
    student = AdmissibleDiscrete(HidePrivileged(gym.make("sdgym/ScienceWorld-v0",
                                                         privileged=False)), max_actions=32)
    try:
        options = {"split": "train",
                   "task_index": teacher.unwrapped.task_index_of("use-thermometer", 0)}
        _, info = teacher.reset(options=options)
        _, public = student.reset(options=options)
        assert "privileged" not in public
        for _ in range(30):
            assert teacher.candidates == student.candidates
            slot = teacher.candidates.index(info["privileged"]["expert_action"])
            assert teacher.action_masks()[slot]
            _, reward, terminated, truncated, info = teacher.step(slot)
            student.step(slot)
            assert info["action_valid"] and info["privileged"]["on_expert_path"]
            if terminated or truncated:
                break
        assert info["won"]
    finally:
        teacher.close()
        student.close()


def test_candidates_never_read_info(sw_env: gym.Env) -> None:
    core = sw_env.unwrapped
    observation, info = sw_env.reset(options={"split": "test", "task_index": 0})
    ranked = candidate_commands(sw_env, observation, info)
    assert ranked == core.candidate_actions(observation, {})
    assert set(ranked) <= set(core.get_admissible_actions())
    assert not any(c.startswith(("connect ", "reset task", "dunk ")) for c in ranked)  # boil


@pytest.mark.slow
def test_lists_and_rejected_commands_change_nothing_on_a_random_task() -> None:
    """grow-fruit's bees fly at random, and the valid-action list draws from the same random
    numbers: fetching the list at every step, or sending a command the parser rejects, must
    leave the world as it was (the gold plan still wins, with identical observations)."""

    def play(disturb: bool) -> list[str]:
        env = gym.make("sdgym/ScienceWorld-v0", max_episode_steps=200)
        try:
            _, info = env.reset(options={"split": "train", "task_index":
                                         env.unwrapped.task_index_of("grow-fruit", 0)})
            seen = []
            for action in info["privileged"]["gold_plan_from_start"]:
                if disturb and not is_choice(action):  # (not while a prompt awaits its answer)
                    env.unwrapped.get_admissible_actions()
                    assert not env.step("xyzzy")[4]["action_valid"]
                observation, _, terminated, _, info = env.step(action)
                seen.append(observation)
                if terminated:
                    break
            assert info["won"]
            return seen
        finally:
            env.close()

    assert play(disturb=True) == play(disturb=False)


def test_a_new_session_leaves_the_generator_state_of_the_session_holding_it() -> None:
    """Creating a session runs upstream's task makers, which draw from the JVM's one generator:
    the env that held it must get back the state it had, not one moved by another env's start."""
    first = gym.make("sdgym/ScienceWorld-v0")
    second = gym.make("sdgym/ScienceWorld-v0")
    try:
        first.reset(options={"split": "train", "task_index": 0})
        simulator = first.unwrapped.simulator
        random = simulator.jvm.random
        if random is None:
            pytest.skip("this JVM does not open its generator (no determinism options)")
        before = random.get()
        second.reset(options={"split": "train", "task_index": 1})  # a new session, then its turn
        assert simulator._random_state == before
    finally:
        first.close()
        second.close()


def test_a_forked_child_leaves_the_parents_java_objects_alone() -> None:
    """A forked child (a vector env's worker) drops its copy of the parent's shared JVM; its
    py4j finalizers must not delete the parent's Java objects (the generator handles, the
    sessions), so the parent's next env still starts and steps."""
    import gc
    import os

    first = gym.make("sdgym/ScienceWorld-v0")
    second = gym.make("sdgym/ScienceWorld-v0")
    try:
        first.reset(options={"split": "train", "task_index": 0})
        pid = os.fork()
        if pid == 0:  # the child: drop everything inherited, collect, leave
            try:
                first.unwrapped.simulator._jvm = None
                first.unwrapped.simulator._session = None
                first.unwrapped.simulator._host = None
                gc.collect()
            finally:
                os._exit(0)
        os.waitpid(pid, 0)
        second.reset(options={"split": "train", "task_index": 1})  # a new session, then its turn
        assert first.step("look around")[4]["action_valid"]
    finally:
        first.close()
        second.close()
