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

The final test panel writes its episodes the same way to ``test_episodes.jsonl``
(:class:`PanelEpisodeLog`): whole tasks (every rollout seed) in panel order, until the next task
would take the file past ``infra.test_episodes_mb``; each record is marked ``"panel": "test"``
with its split, task index and rollout seed. Privileged info is hidden on a test panel, so these
records have no teacher field at all (no ``context_kind``, ``context`` nor ``teacher_prompt``:
:data:`TEACHER_FIELDS`). The test starts by removing the file, so a test run again (a resumed or
retried cell) rewrites it rather than adding to it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agents.prompts import student_messages, teacher_messages
from agents.rollout import RolloutBatch, TurnRow
from baselines.teacher import teacher_contexts
from sdgym.cache import append_whole, atomic_write_text

EPISODES_FILE = "episodes.jsonl"
TEST_EPISODES_FILE = "test_episodes.jsonl"
TEACHER_FIELDS = ("context_kind", "context", "teacher_prompt")
"""The fields of a training record that hold a teacher's (privileged) context; a test-panel
record has none of them."""


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
            "panel": "train", "step": step, "traj_id": traj_id, "group_id": first.group_id,
            "task_id": first.task_id, "task_type": first.task_type, "won": first.won,
            "score": first.score, "context_kind": context,
            "turns": [_turn(row, text, budget_chars) for row, text in turns],
        })
    return records


def panel_episode_records(rows: Sequence[TurnRow], slots: Sequence[tuple[int, int] | None],
                          split: str, step: int, panel: str = "test") -> list[dict[str, Any]]:
    """The records of the episodes among ``rows`` (one panel call of
    :func:`agents.panel.evaluate_on_panel`), by trajectory id.

    ``slots[group_id]`` is the ``(task_index, rollout_seed)`` of each group (``None``: padding,
    never recorded). The student's side only: a panel's privileged info is hidden."""
    episodes: dict[int, list[TurnRow]] = {}
    for row in rows:
        episodes.setdefault(row.traj_id, []).append(row)
    records = []
    for traj_id in sorted(episodes):
        turns = sorted(episodes[traj_id], key=lambda row: row.turn)
        first = turns[0]
        slot = slots[first.group_id]
        if slot is None:
            continue
        records.append({
            "panel": panel, "split": split, "step": step, "task_index": int(slot[0]),
            "rollout_seed": int(slot[1]), "traj_id": traj_id, "group_id": first.group_id,
            "task_id": first.task_id, "task_type": first.task_type, "won": first.won,
            "score": first.score, "turns": [_student_turn(row) for row in turns],
        })
    return records


def _student_turn(row: TurnRow) -> dict[str, Any]:
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
    }


def _turn(row: TurnRow, context: str | None, budget_chars: int) -> dict[str, Any]:
    return {
        **_student_turn(row),
        "context": context,
        "teacher_prompt": (teacher_messages(row.public, context, budget_chars)
                           if context is not None else None),
    }


class EpisodeLog:
    """Appends episode records to ``<run_dir>/<name>`` (``episodes.jsonl`` or
    ``test_episodes.jsonl``; each line whole or not at all)."""

    def __init__(self, run_dir: Path, name: str = EPISODES_FILE) -> None:
        self.path = Path(run_dir) / name

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
        kept = [json.dumps(record, ensure_ascii=False)
                for record in read_episodes(self.path.parent, self.path.name)
                if record.get("step", -1) <= step]
        atomic_write_text(self.path, "".join(line + "\n" for line in kept))

    def clear(self) -> None:
        """Remove the file (a test panel run again writes all its episodes again)."""
        self.path.unlink(missing_ok=True)


class PanelEpisodeLog:
    """Writes a panel's episodes to ``<run_dir>/test_episodes.jsonl`` as the panel runs: whole
    tasks (all ``seeds`` rollout seeds of each) in panel order, until the next task would take
    the file past ``max_bytes``; no task after it is written (the file holds a prefix of the
    panel). The file is removed first (a panel run again rewrites it).

    Called as ``on_batch`` of :func:`agents.panel.evaluate_on_panel`, whose episodes go
    task-major, so tasks complete in panel order (a task's seeds may span two calls)."""

    def __init__(self, run_dir: Path, split: str, step: int, seeds: int, max_bytes: int,
                 name: str = TEST_EPISODES_FILE) -> None:
        self.log = EpisodeLog(run_dir, name)
        self.log.clear()
        self.split, self.step, self.seeds = split, step, seeds
        self.room = max_bytes
        self.full = max_bytes <= 0
        self.tasks = 0
        """Tasks written so far."""
        self._pending: dict[int, list[dict[str, Any]]] = {}

    def __call__(self, batch: RolloutBatch, slots: Sequence[tuple[int, int] | None]) -> None:
        """Take the episodes of one panel call; write the tasks it completes while they fit."""
        if self.full:
            return
        for record in panel_episode_records(batch.rows, slots, self.split, self.step):
            self._pending.setdefault(record["task_index"], []).append(record)
        text = []
        for task in [t for t, records in self._pending.items() if len(records) >= self.seeds]:
            records = sorted(self._pending.pop(task), key=lambda record: record["rollout_seed"])
            lines = "".join(json.dumps(r, ensure_ascii=False, default=str) + "\n"
                            for r in records).encode("utf-8")
            if len(lines) > self.room:
                self.full = True
                self._pending.clear()
                break
            self.room -= len(lines)
            self.tasks += 1
            text.append(lines)
        if text:
            append_whole(self.log.path, b"".join(text))


def read_episodes(run_dir: str | Path, name: str = EPISODES_FILE) -> list[dict[str, Any]]:
    """The episode records of a run folder's ``name`` (none if it has no such file); a torn
    last line (a run still writing) is skipped."""
    path = Path(run_dir) / name
    if not path.exists():
        return []
    records = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            records.append(json.loads(line))
        except ValueError:
            continue
    return records
