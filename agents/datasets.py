"""An env split as a Hugging Face ``datasets.Dataset`` of tasks, prompts in sdgym's format.

One row per task of the split, in task-index order::

    >>> from agents.datasets import task_dataset
    >>> tasks = task_dataset("sdgym/SearchQA-v0", "easy_train", env_kwargs={"size": "tiny"},
    ...                      model="searchqa-hasty-sft")
    >>> tasks.column_names
    ['prompt', 'env_id', 'split', 'task_index', 'task_id', 'task_type']

``prompt`` is the student prompt of the first turn as chat messages (system + user), exactly what
:func:`agents.prompts.student_messages` builds from the env's reset (what TRL calls a
conversational prompt); ``model`` (a shipped warm start or a model folder with
``sdgym_prompt.json``) picks the prompt limits it was trained with, ``limits`` sets them directly.
The privileged channel is left out unless asked for: ``privileged=True`` adds a ``privileged``
column, the env's ``info["privileged"]`` at reset as a JSON string (its ``goal`` differs in shape
between envs and task types, which an Arrow column cannot hold).

The ``datasets`` package is imported only when a dataset is built (``pip install 'sdgym[datasets]'``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import gymnasium as gym

from agents.prompts import PromptLimits, public_turn, student_messages

if TYPE_CHECKING:
    from datasets import Dataset

COLUMNS = ("prompt", "env_id", "split", "task_index", "task_id", "task_type")
"""The columns of every task dataset (``privileged`` is added only on request)."""


def prompt_limits_for(model: str | None = None,
                      limits: PromptLimits | Mapping[str, Any] | None = None) -> PromptLimits:
    """The student prompt limits to use: ``limits`` when given, else those recorded with
    ``model`` (a shipped warm start name or a model folder), else the defaults."""
    if limits is not None:
        return limits if isinstance(limits, PromptLimits) else PromptLimits.from_dict(dict(limits))
    if model is not None:
        from agents.prompt_format import recorded_prompt_limits
        from agents.warm_starts import resolve_model

        recorded = recorded_prompt_limits(resolve_model(model))
        if recorded is not None:
            return recorded
    return PromptLimits()


def first_turn_messages(env_id: str, observation: str, info: Mapping[str, Any],
                        limits: PromptLimits) -> list[dict[str, str]]:
    """The student prompt of a task's first turn, from the env's reset (public info only)."""
    return student_messages(public_turn(env_id, observation, 1, [], observation, dict(info), limits))


def task_rows(env: gym.Env, env_id: str, split: str, task_indices: Iterable[int],
              limits: PromptLimits, privileged: bool = False) -> list[dict[str, Any]]:
    """One row per task index: reset ``env`` on it and build the first-turn prompt."""
    rows = []
    for task_index in task_indices:
        observation, info = env.reset(options={"split": split, "task_index": int(task_index)})
        row = {"prompt": first_turn_messages(env_id, observation, info, limits), "env_id": env_id,
               "split": split, "task_index": int(task_index), "task_id": str(info["task_id"]),
               "task_type": str(info["task_type"])}
        if privileged:
            row["privileged"] = json.dumps(info.get("privileged"), ensure_ascii=False, default=str)
        rows.append(row)
    return rows


def task_dataset(
    env_id: str,
    split: str = "train",
    *,
    env_kwargs: Mapping[str, Any] | None = None,
    model: str | None = None,
    limits: PromptLimits | Mapping[str, Any] | None = None,
    task_indices: Iterable[int] | None = None,
    privileged: bool = False,
) -> Dataset:
    """The tasks of ``split`` of ``env_id`` as a ``datasets.Dataset`` (see the module docstring).

    Args:
        env_id: A registered sdgym id, e.g. ``"sdgym/SearchQA-v0"``.
        split: Any split the env has (``env.unwrapped.splits``), or a slice or union of them
            (``"val[:50%]"``, :mod:`sdgym.splits`); ``task_indices`` count within it.
        env_kwargs: ``gym.make`` keyword arguments (e.g. ``{"size": "tiny"}``); they decide the
            tasks, so pass the same ones to whatever resets the env later.
        model: A shipped warm start or model folder whose recorded prompt limits to use.
        limits: Student prompt limits (win over ``model``'s).
        task_indices: Only these tasks (default: the whole split).
        privileged: Add the ``privileged`` column (training-time information; off by default).
    """
    try:
        from datasets import Dataset
    except ImportError as error:
        raise ImportError("task_dataset needs the datasets package: "
                          "pip install 'sdgym[datasets]'") from error
    import sdgym  # noqa: F401  (registers the env ids)

    chosen = prompt_limits_for(model, limits)
    env = gym.make(env_id, **{**dict(env_kwargs or {}), "privileged": privileged})
    try:
        core = env.unwrapped
        try:
            core.check_split(split)
        except ValueError as error:
            raise ValueError(f"{env_id}: {error}") from None
        indices = range(core.task_count(split)) if task_indices is None else list(task_indices)
        rows = task_rows(env, env_id, split, indices, chosen, privileged=privileged)
    finally:
        env.close()
    columns = [*COLUMNS, "privileged"] if privileged else list(COLUMNS)
    return Dataset.from_dict({name: [row[name] for row in rows] for name in columns})
