"""A third-party package as a user would write it: one head and one env, added to sdgym only
through the ``sdgym.heads`` / ``sdgym.envs`` entry points (tests/test_plugins.py installs it)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from baselines.heads.base import Head, HeadBatch, HeadOutput
from sdgym.core import EngineStep, InvalidAction, TextEnv
from sdgym.registration import EnvEntry


@dataclass(kw_only=True)
class HalfAdvantageHead(Head):
    """GRPO with every advantage halved (a head with no teacher, for the plugin test)."""

    name: ClassVar[str] = "demo_half"
    source: ClassVar[str] = "sdgym plugin test"

    factor: float = 0.5
    """Multiplier of the GRPO advantages (>= 0; ``--head.factor``, ``[head] factor``)."""

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.factor < 0:
            raise ValueError(f"demo_half factor must be >= 0, got {self.factor}")

    def apply(self, batch: HeadBatch) -> HeadOutput:
        return HeadOutput(advantages=batch.advantages * self.factor, metrics={"halved": 1.0})


WORDS = ("apple", "river", "stone", "cloud", "maple", "tiger", "piano", "ocean")


class EchoEnv(TextEnv):
    """Say the word you are shown, in at most two turns."""

    splits: ClassVar[tuple[str, ...]] = ("train", "val", "test", "easy_train", "easy_val")
    easy_splits: ClassVar[dict[str, str]] = {"easy_train": "train", "easy_val": "val"}
    agent_role: ClassVar[str] = "You repeat words."
    skills: ClassVar[dict[str, str]] = {"default": "Repeat the word exactly."}

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**{k: v for k, v in kwargs.items()
                            if k in ("privileged", "render_mode")})
        self._word = ""
        self._index = 0

    def _task_count(self, split: str) -> int:
        return len(WORDS)

    def _start_task(self, split: str, task_index: int) -> str:
        self._index, self._word = task_index, WORDS[task_index % len(WORDS)]
        return f"Say the word: {self._word}"

    def _engine_step(self, command: str) -> EngineStep:
        if command not in WORDS:
            raise InvalidAction(f"'{command}' is not a word here")
        won = command == self._word
        return EngineStep("correct" if won else "wrong", score=1.0 if won else 0.0, done=True,
                          won=won)

    def _task_id(self) -> str:
        return f"echo/{self._index}"

    def _task_type(self) -> str:
        return "echo"

    def _admissible_actions(self) -> list[str] | None:
        return list(WORDS)

    def _privileged_info(self) -> dict[str, Any]:
        return {"expert_plan": [self._word], "expert_action": self._word,
                "goal": {"word": self._word}, "text": f"The word is {self._word}."}

    def _release(self) -> None:
        pass


ECHO = EnvEntry(env_id="demo/Echo-v0", entry_point="sdgym_demo_plugin:EchoEnv",
                max_episode_steps=2, extra="", requires=(), description="say the word shown")
