"""The training episodes a run keeps for people to read: ``episodes.jsonl`` in its run folder.

Each training step appends its first ``infra.episodes_per_step`` episodes (in group order, so the
same episodes whatever the machine), one JSON line each: the step, task, outcome, and per turn
what the student saw (its prompt messages), what it answered, the command the env received and
what the env answered, the reward, and for a teacher head the context its teacher read and the
teacher's whole prompt. ``sdgym view`` shows them; the privileged part of a teacher prompt is
exactly its ``context`` (the teacher prompt is the student prompt with the context added,
:func:`agents.prompts.teacher_messages`).

A resumed run drops the records of steps after its checkpoint (:meth:`EpisodeLog.truncate_after`),
as it does with ``metrics.jsonl``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agents.prompts import student_messages, teacher_messages
from agents.rollout import TurnRow
from baselines.teacher import teacher_contexts
from sdgym.cache import append_whole, atomic_write_text

EPISODES_FILE = "episodes.jsonl"


def episode_records(rows: Sequence[TurnRow], step: int, count: int, context: str | None,
                    env_id: str, budget_chars: int) -> list[dict[str, Any]]:
    """The records of the first ``count`` episodes (by trajectory id) among ``rows``.

    ``context``: the teacher head's context kind (``None`` for a head without a teacher); the
    contexts are computed over all ``rows``, since ``sibling`` and ``hindsight`` read the other
    episodes of a group."""
    if count <= 0 or not rows:
        return []
    contexts: list[str | None] = (teacher_contexts(rows, context, env_id) if context
                                  else [None] * len(rows))
    episodes: dict[int, list[tuple[TurnRow, str | None]]] = {}
    for row, text in zip(rows, contexts, strict=True):
        episodes.setdefault(row.traj_id, []).append((row, text))
    records = []
    for traj_id in sorted(episodes)[:count]:
        turns = sorted(episodes[traj_id], key=lambda pair: pair[0].turn)
        first = turns[0][0]
        records.append({
            "step": step, "traj_id": traj_id, "group_id": first.group_id,
            "task_id": first.task_id, "task_type": first.task_type, "won": first.won,
            "score": first.score, "context_kind": context,
            "turns": [_turn(row, text, budget_chars) for row, text in turns],
        })
    return records


def _turn(row: TurnRow, context: str | None, budget_chars: int) -> dict[str, Any]:
    return {
        "turn": row.turn,
        "observation": row.public.observation,
        "prompt": student_messages(row.public),
        "response": row.response_text,
        "action": row.action,
        "action_valid": row.action_valid,
        "parse_error": row.parse_error,
        "next_observation": row.next_observation,
        "reward": row.reward,
        "context": context,
        "teacher_prompt": (teacher_messages(row.public, context, budget_chars)
                           if context is not None else None),
    }


class EpisodeLog:
    """Appends episode records to ``<run_dir>/episodes.jsonl`` (each line whole or not at all)."""

    def __init__(self, run_dir: Path) -> None:
        self.path = Path(run_dir) / EPISODES_FILE

    def write(self, records: Sequence[dict[str, Any]]) -> None:
        """Append ``records``, one JSON line each."""
        if records:
            text = "".join(json.dumps(r, ensure_ascii=False, default=str) + "\n" for r in records)
            append_whole(self.path, text.encode("utf-8"))

    def truncate_after(self, step: int) -> None:
        """Drop the records of steps after ``step`` (a resumed run writes them again), and a
        torn last line."""
        if not self.path.exists():
            return
        kept = [json.dumps(record, ensure_ascii=False) for record in read_episodes(self.path.parent)
                if record.get("step", -1) <= step]
        atomic_write_text(self.path, "".join(line + "\n" for line in kept))


def read_episodes(run_dir: str | Path) -> list[dict[str, Any]]:
    """The episode records of a run folder (none if it has no ``episodes.jsonl``); a torn last
    line (a run still writing) is skipped."""
    path = Path(run_dir) / EPISODES_FILE
    if not path.exists():
        return []
    records = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            records.append(json.loads(line))
        except ValueError:
            continue
    return records
