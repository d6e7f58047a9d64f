"""``grpo``: plain GRPO, no teacher: the head that changes nothing (``L0`` as it is).

Source: DeepSeekMath (arXiv 2402.03300); ref verl ``core_algos`` (the GRPO math itself is
:mod:`baselines.grpo`). Not inferred.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from baselines.heads.base import Head, HeadBatch, HeadOutput


@dataclass(kw_only=True)
class GRPOHead(Head):
    """No teacher, no output: the learner uses the GRPO loss ``L0`` with the group advantages."""

    name: ClassVar[str] = "grpo"
    row: ClassVar[int | None] = 0
    source: ClassVar[str] = "DeepSeekMath (GRPO); verl `core_algos`"

    def apply(self, batch: HeadBatch) -> HeadOutput:
        del batch
        return HeadOutput()
