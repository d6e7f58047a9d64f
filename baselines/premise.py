"""The teacher premise at step 0: does the student with a teacher context act better than alone?

A self-distillation head trains the student towards its teacher: the same network (or a frozen /
EMA copy of it) reading a richer prompt. That only helps if the teacher, so prompted, knows more.
:func:`measure_premise` measures it for the warm start before any RL, per context kind of
:data:`baselines.teacher.CONTEXT_KINDS`, on the validation panel:

1. the **student** acts on every (panel task, rollout seed) with the student prompt (which
   never shows privileged info);
2. a **pool** of ``pool_seeds`` further student attempts per task gives the contexts that need
   finished episodes: ``sibling`` (one of the pool's successes, as another group member's success
   is for the heads) and ``hindsight`` (notes from one pool success and one pool failure);
3. the **teacher** for each context acts on the same (task, rollout seed) pairs with the same
   sampling seeds (common random numbers), reading the teacher prompt the heads build
   (:func:`baselines.teacher.turn_teacher_messages`, :func:`agents.prompts.teacher_messages`).
   Tasks where a context does not exist (no pool success for ``sibling``) are not run: a head
   gives those rows no teacher; the record says how many tasks each context covered.

The record keeps every outcome; :mod:`benchmarks.protocol.premise` turns it into the paired
table (teacher − student with 95% intervals) and the "premise not met" marks.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from agents.backends.base import SamplingParams
from agents.panel import PanelSlot, evaluate_on_panel, task_panel
from agents.prompts import CONTEXT_BUDGET_CHARS, PublicTurn, student_messages, teacher_messages
from agents.rollout import MessageBuilder, RolloutBatch, student_turn_messages
from baselines.seed_layout import PREMISE_OFFSET, PREMISE_POOL_ROLLOUT_SEED
from baselines.teacher import (
    CONTEXT_KINDS,
    TURN_CONTEXTS,
    hindsight_context,
    sibling_context,
    trajectory_text,
    turn_teacher_messages,
)

if TYPE_CHECKING:
    from baselines.trainer import Trainer



def measure_premise(trainer: Trainer, contexts: Sequence[str] = CONTEXT_KINDS,
                    rollout_seeds: Sequence[int] = (0, 1), pool_seeds: int = 3,
                    episodes: int | None = None) -> dict[str, Any]:
    """Student and teacher-with-context outcomes on the validation panel (see module docstring).

    ``trainer`` supplies the (untrained) policy, its backend, prompt rendering and config;
    ``episodes`` is the panel size (default: the config's ``val_episodes``).
    """
    unknown = sorted(set(contexts) - set(CONTEXT_KINDS))
    if unknown:
        raise ValueError(f"unknown teacher contexts {unknown}; use some of {list(CONTEXT_KINDS)}")
    config = trainer.config
    split = config.evaluation.val_split
    size = episodes or config.evaluation.val_episodes
    budget = CONTEXT_BUDGET_CHARS

    def sampling(rollout_seed: int) -> SamplingParams:
        return SamplingParams(max_new_tokens=config.rollout.max_new_tokens,
                              temperature=config.evaluation.val_temperature,
                              seed=PREMISE_OFFSET + rollout_seed)

    record: dict[str, Any] = {"split": split, "rollout_seeds": [int(s) for s in rollout_seeds],
                              "pool_seeds": pool_seeds, "contexts": {}}
    # one engine (its envs, JVMs included, made once) for every panel; the student prompt never
    # shows the privileged info the teacher contexts read, so one engine serves both
    engine = trainer.rollout_engine(trainer.panel_width(size))
    try:
        tasks = task_panel(engine.task_count(split), size)
        record["tasks"] = tasks
        with trainer.generating():
            engine.messages = student_turn_messages
            record["student"] = evaluate_on_panel(engine, split, tasks, list(rollout_seeds),
                                                  sampling).to_record()
            attempts: dict[int, list[tuple[str, bool]]] = defaultdict(list)
            if {"sibling", "hindsight"} & set(contexts) and pool_seeds > 0:
                pool = [PREMISE_POOL_ROLLOUT_SEED + k for k in range(pool_seeds)]
                evaluate_on_panel(engine, split, tasks, pool, sampling,
                                  on_batch=lambda batch, slots: _keep_attempts(batch, slots, attempts))
            task_ids = {int(o["task_index"]): str(o["task_id"])
                        for o in record["student"]["outcomes"]}
            finished = _finished_contexts(attempts)
            for context in contexts:
                covered, engine.messages = _teacher_prompts(context, tasks, task_ids, finished,
                                                            config.env_id, budget)
                entry: dict[str, Any] = {"covered_tasks": covered}
                if covered:
                    entry.update(evaluate_on_panel(engine, split, covered, list(rollout_seeds),
                                                   sampling).to_record())
                record["contexts"][context] = entry
    finally:
        engine.close()
    return record


def _teacher_prompts(context: str, tasks: list[int], task_ids: dict[int, str],
                     finished: dict[str, dict[int, str]], env_id: str, budget: int
                     ) -> tuple[list[int], MessageBuilder]:
    """The tasks ``context`` exists for, and the teacher's message builder with it."""
    if context in TURN_CONTEXTS:
        def per_turn(turn: PublicTurn, info: dict[str, Any]) -> list[dict[str, str]]:
            return turn_teacher_messages(turn, context, info.get("privileged"),
                                         str(info.get("task_type", "")), env_id, budget)
        return list(tasks), per_turn
    by_task = finished[context]
    covered = [t for t in tasks if by_task.get(t)]
    texts = {task_ids[t]: by_task[t] for t in covered}

    def from_episodes(turn: PublicTurn, info: dict[str, Any]) -> list[dict[str, str]]:
        text = texts.get(str(info.get("task_id")))
        return teacher_messages(turn, text, budget) if text else student_messages(turn)
    return covered, from_episodes


def _keep_attempts(batch: RolloutBatch, slots: list[PanelSlot | None],
                   attempts: dict[int, list[tuple[str, bool]]]) -> None:
    """Each pool episode of ``batch`` as ``(trajectory text, won)`` under its task index."""
    episodes: dict[int, list[Any]] = defaultdict(list)
    for row in batch.rows:
        episodes[row.group_id].append(row)
    for group, rows in sorted(episodes.items()):
        slot = slots[group]
        if slot is None or not rows:
            continue
        rows.sort(key=lambda row: row.turn)
        text = trajectory_text([row.response_text for row in rows], rows[-1].score)
        attempts[slot[0]].append((text, bool(rows[-1].won)))


def _finished_contexts(attempts: dict[int, list[tuple[str, bool]]]) -> dict[str, dict[int, str]]:
    """``sibling`` and ``hindsight`` texts per task index from the pool's attempts."""
    sibling: dict[int, str] = {}
    hindsight: dict[int, str] = {}
    for task, tries in attempts.items():
        good = [text for text, won in tries if won]
        bad = [text for text, won in tries if not won]
        if good:
            sibling[task] = sibling_context(good[0])
        notes = hindsight_context(good, bad)
        if notes:
            hindsight[task] = notes
    return {"sibling": sibling, "hindsight": hindsight}
