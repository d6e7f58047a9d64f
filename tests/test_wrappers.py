"""Wrappers: TaggedActions parsing, AdmissibleDiscrete masks, episode recording."""

from __future__ import annotations

import json

import gymnasium as gym
import numpy as np
import pytest

from sdgym.wrappers import AdmissibleDiscrete, RecordEpisodes, TaggedActions, extract_tagged
from sdgym.wrappers.admissible_discrete import (
    command_argument,
    command_verb,
    context_in,
    hashed_bag_of_words,
    split_features,
)


@pytest.mark.parametrize(
    ("response", "expected"),
    [
        ("<think>x</think><action>go to desk 1</action>", ("action", "go to desk 1")),
        ("<ACTION> open drawer </ACTION> trailing", ("action", "open drawer")),
        ("<action>first</action><action>second</action>", ("action", "first")),
        ("<action>unclosed", (None, None)),
        ("no tags at all", (None, None)),
        ("", (None, None)),
        (None, (None, None)),
    ],
)
def test_extract_tagged(response, expected) -> None:
    assert extract_tagged(response, ["action"]) == expected


def test_tagged_actions_forwards_native_tags_and_reports_parse_errors() -> None:
    env = TaggedActions(gym.make("sdgym/SearchQA-v0", size="tiny"))
    assert env.tags == ("search", "answer")
    _, info = env.reset(seed=0, options={"split": "test"})
    query = info["privileged"]["expert_action"]
    _, _, _, _, info = env.step(f"<think>let me look</think>{query} then more text")
    assert info["parse_error"] is None and info["parsed_action"] == query
    assert info["action_valid"] is True
    _, _, _, _, info = env.step("I think the answer is obvious")
    assert "no complete" in info["parse_error"] and info["action_valid"] is False
    env.close()


def test_tagged_actions_default_tag_is_action() -> None:
    env = TaggedActions(gym.make("sdgym/SearchQA-v0", size="tiny"), tags=["action"])
    env.reset(seed=0)
    _, _, _, _, info = env.step("<action><search>Republic</search></action>")
    assert info["parsed_action"] == "<search>Republic</search>" and info["action_valid"]
    env.close()


def test_hashed_bag_of_words_is_stable_and_normalised() -> None:
    a, b = hashed_bag_of_words("Go to the desk", 64), hashed_bag_of_words("go to the DESK", 64)
    assert np.allclose(a, b) and np.isclose(np.linalg.norm(a), 1.0)
    assert not np.any(hashed_bag_of_words("", 64))


def test_admissible_discrete_masks_and_out_of_mask_actions() -> None:
    env = AdmissibleDiscrete(gym.make("sdgym/SearchQA-v0", size="tiny"), max_actions=8)
    observation, _ = env.reset(seed=0, options={"split": "test"})
    assert env.observation_space.contains(observation)
    mask = env.action_masks()
    assert mask.dtype == bool and mask.sum() == len(env.candidates) >= 1
    observation, _, _, _, info = env.step(0)  # search the question
    assert info["action_valid"] and env.action_masks().sum() > 1
    _, _, terminated, _, info = env.step(7 if not env.action_masks()[7] else 100)
    assert info["action_valid"] is False and not terminated
    env.close()


def test_command_argument_and_its_context_in_the_observation() -> None:
    assert command_argument("<answer>Port Thounio</answer>") == "Port Thounio"
    assert command_argument("click[b05duy2fqg]") == "b05duy2fqg"
    assert command_argument("go to desk 1") == "go to desk 1"
    observation = "Republic of Staethiost. Its capital is Port Thounio. The official language"
    assert context_in(observation, "<answer>port thounio</answer>", window=2) == [
        "<capital", "<is", ">the", ">official"]
    assert context_in(observation, "<answer>Veasuss</answer>") == []
    assert context_in(observation, "<answer></answer>") == []


def test_features_hold_the_task_the_observation_and_each_slot() -> None:
    env = AdmissibleDiscrete(gym.make("sdgym/SearchQA-v0", size="tiny"), max_actions=8,
                             obs_dim=64, action_dim=16)
    env.reset(seed=0, options={"split": "test"})
    task = env.task_text
    assert "Question:" in task
    features, _, _, _, _ = env.step(0)
    context, slots = split_features(features, 64, 8, 16)
    assert np.allclose(context[:64], hashed_bag_of_words(task, 64))  # the task stays
    assert not np.allclose(context[64:], context[:64])  # the observation changed
    assert slots.shape == (8, 32)
    for slot, command in enumerate(env.candidates):
        assert np.allclose(slots[slot, :16], hashed_bag_of_words(command, 16))
    assert not slots[len(env.candidates):].any()
    answers = [i for i, c in enumerate(env.candidates) if c.startswith("<answer>")]
    assert any(slots[i, 16:].any() for i in answers)  # mentioned in the results: has a context
    env.close()


def test_record_episodes_writes_public_json_lines(tmp_path) -> None:
    path = tmp_path / "episodes.jsonl"
    env = RecordEpisodes(gym.make("sdgym/SearchQA-v0", size="tiny"), path)
    for seed in (0, 1):
        _, info = env.reset(seed=seed, options={"split": "test"})
        done = False
        while not done:
            _, _, terminated, truncated, info = env.step(info["privileged"]["expert_action"])
            done = terminated or truncated
    env.close()
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert len(records) == 2
    assert all(r["won"] and r["return"] == pytest.approx(1.0) for r in records)
    assert "privileged" not in path.read_text()


class _ManyCommands(gym.Env):
    """A stub with 120 admissible commands in sorted order; the useful one sorts late."""

    observation_space = gym.spaces.Text(1000)
    action_space = gym.spaces.Text(1000)

    def __init__(self, privileged: dict | None = None) -> None:
        self.commands = sorted(
            [f"activate thing {i:03d}" for i in range(110)]
            + ["wait", "look around", "pour water into pot", "move pot to stove"]
            + [f"open box {i}" for i in range(6)]
        )
        self.privileged = privileged

    def _info(self) -> dict:
        info = {"admissible_actions": list(self.commands)}
        if self.privileged is not None:
            info["privileged"] = self.privileged
        return info

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return "Your task is to boil water. Use the pot on the stove.", self._info()

    def step(self, action):
        return "You see a pot, a stove and some water.", 0.0, False, False, self._info()


def test_admissible_discrete_keeps_the_commands_relevant_to_task_and_observation() -> None:
    env = AdmissibleDiscrete(_ManyCommands(), max_actions=32)
    env.reset()
    assert env.env.commands.index("pour water into pot") >= 32  # first-32 would drop it
    assert {"pour water into pot", "move pot to stove"} <= set(env.candidates)
    assert len(env.candidates) == 32 and env.action_masks().all()
    verbs = {command_verb(c) for c in env.env.commands}
    assert verbs == {"activate", "wait", "look around", "pour", "move", "open"}
    assert {command_verb(c) for c in env.candidates[: len(verbs)]} == verbs  # verbs take turns
    # chosen from public text only: privileged info (a decoy plan here) changes nothing
    decoy = AdmissibleDiscrete(_ManyCommands({"expert_action": "open box 5"}), max_actions=32)
    decoy.reset()
    assert decoy.candidates == env.candidates


def test_admissible_discrete_keeps_the_env_order_when_everything_fits() -> None:
    env = AdmissibleDiscrete(_ManyCommands(), max_actions=200)
    env.reset()
    assert env.candidates == env.env.commands


class _RankedCommands(_ManyCommands):
    """A stub env that ranks its candidates itself (as ScienceWorld does)."""

    ranked_candidates = True


def test_admissible_discrete_keeps_the_first_k_of_an_env_that_ranks_its_candidates() -> None:
    env = AdmissibleDiscrete(_RankedCommands(), max_actions=32)
    env.reset()
    assert env.candidates == env.env.commands[:32]
