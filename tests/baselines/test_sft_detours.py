"""SFT detours (``sft.detour_rate``): expert episodes that recover from a wrong command."""

from __future__ import annotations

import random

import gymnasium as gym
import pytest

pytest.importorskip("torch")

from agents.prompts import PromptLimits, PublicTurn  # noqa: E402
from baselines.config import load_preset  # noqa: E402
from baselines.sft import Demonstration, _episodes, detour_command, expert_demonstrations  # noqa: E402
from baselines.warm_start import sft_cache_key  # noqa: E402

ENV, KWARGS = "sdgym/WebShop-v0", {"size": "tiny"}


def _info(expert: str, plan: list[str], admissible: list[str] | None) -> dict:
    return {"privileged": {"expert_action": expert, "expert_plan": plan},
            "admissible_actions": admissible}


def test_a_detour_is_never_the_experts_command_and_covers_each_kind() -> None:
    rng = random.Random(0)
    info = _info("go to shelf 1", ["go to shelf 1", "take apple 1 from shelf 1"],
                 ["go to shelf 1", "go to desk 1", "look"])
    drawn = {detour_command([("obs", "go to sofa 1")], info, rng) for _ in range(200)}
    assert drawn == {"go to sofa 1", "take apple 1 from shelf 1", "go to desk 1", "look"}
    # nothing but the expert's own command available: no detour
    assert detour_command([("obs", "go to shelf 1")], _info("go to shelf 1", ["go to shelf 1"],
                                                             ["go to shelf 1"]), rng) is None
    assert detour_command([], _info("search[x]", ["search[x]"], None), rng) is None


def test_detoured_episodes_train_only_the_experts_commands_after_a_wrong_one() -> None:
    plain = expert_demonstrations(ENV, KWARGS, "train", 12, seed=0)
    detoured = expert_demonstrations(ENV, KWARGS, "train", 12, seed=0, detour_rate=0.4)
    recoveries = 0
    for episode in _episodes(detoured):
        assert len({d.episode for d in episode}) == 1
        for previous, demo in zip(episode, episode[1:], strict=False):
            assert demo.turn.step > previous.turn.step
            if demo.turn.step > previous.turn.step + 1:  # a wrong command was played in between
                recoveries += 1
        for demo in episode:  # every target is the expert's command in that turn's state
            assert demo.privileged["expert_action"].lower() in demo.response.lower()
    assert recoveries > 0
    # a wrong "buy now" ends a WebShop episode lost (dropped); the expert recovers from the rest
    assert len(_episodes(plain)) // 2 <= len(_episodes(detoured)) <= len(_episodes(plain))


def test_without_detours_no_wrong_command_is_drawn(monkeypatch) -> None:
    def refuse(*args: object) -> None:
        raise AssertionError("detour_command called with detour_rate=0")

    monkeypatch.setattr("baselines.sft.detour_command", refuse)
    assert expert_demonstrations(ENV, KWARGS, "train", 3, seed=0)


class _ShortcutEnv(gym.Env):
    """Three commands a, b, c win in order, and c wins from anywhere: the plan's second command
    played early (``c`` after ``a``) ends the episode won, two turns short."""

    action_space = gym.spaces.Text(8)
    observation_space = gym.spaces.Text(8)

    def task_count(self, split: str) -> int:
        return 4

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.plan = ["a", "b", "c"]
        return "task", self._info(False)

    def step(self, action):
        if action == "c" or (self.plan and action == self.plan[0]):
            self.plan = [] if action == "c" else self.plan[1:]
        won = not self.plan
        return "ok", float(won), won, False, self._info(won)

    def _info(self, won: bool) -> dict:
        return {"won": won, "admissible_actions": None,
                "privileged": {"expert_action": self.plan[0] if self.plan else None,
                               "expert_plan": list(self.plan)}}


def test_an_episode_a_wrong_command_ends_is_dropped() -> None:
    gym.register("sdgym-test/Shortcut-v0", entry_point=_ShortcutEnv)
    limits = PromptLimits(history=2)
    plain = expert_demonstrations("sdgym-test/Shortcut-v0", {}, "train", 4, limits=limits)
    assert [len(e) for e in _episodes(plain)] == [3, 3, 3, 3]
    detoured = expert_demonstrations("sdgym-test/Shortcut-v0", {}, "train", 4, limits=limits,
                                     detour_rate=0.9)
    # every kept episode was won by the expert's own last command, none cut short by a detour
    assert all(e[-1].privileged["expert_action"] == "c" for e in _episodes(detoured))
    assert len(_episodes(detoured)) < 4


def test_episodes_split_on_the_episode_index_when_a_detour_took_the_first_turn() -> None:
    def demo(step: int, episode: int) -> Demonstration:
        return Demonstration(PublicTurn(ENV, "task", step, observation="o"), "r", episode=episode)

    groups = _episodes([demo(1, 0), demo(2, 0), demo(2, 1), demo(3, 1), demo(1, 2)])
    assert [[d.turn.step for d in g] for g in groups] == [[1, 2], [2, 3], [1]]


def test_detour_rate_enters_the_recipe_hash_only_when_set() -> None:
    base = load_preset("alfworld-warm-start")
    assert sft_cache_key(base) == sft_cache_key(load_preset("alfworld-warm-start",
                                                            sft={"detour_rate": 0.0}))
    assert sft_cache_key(base) != sft_cache_key(load_preset("alfworld-recovery-warm-start"))
    with pytest.raises(ValueError, match="sft.detour_rate"):
        load_preset("alfworld-warm-start", sft={"detour_rate": 1.0})
