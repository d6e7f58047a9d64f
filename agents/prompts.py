"""Prompt templates: student prompts from public info only, teacher prompts with privileged context.

The student prompt builder takes a :class:`PublicTurn` — task, recent history, observation and
admissible actions — which :func:`public_turn` builds from an env ``info`` dict without ever
reading ``info["privileged"]``. A student prompt therefore cannot contain privileged text by
construction. :func:`teacher_messages` adds a context block (privileged text, skills, a sibling's
trajectory, hindsight notes) to the same prompt, cut to a character budget.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from typing import Any

ACTION_FORMAT = (
    "First reason inside <think> </think>, then give exactly one command inside "
    "<action> </action>."
)
SEARCH_FORMAT = (
    "First reason inside <think> </think>. Then either search with <search> query </search> "
    "(results come back inside <information> </information>) or give the final answer with "
    "<answer> text </answer>."
)


def _env(env_id: str) -> type:
    from sdgym.registration import env_class

    return env_class(env_id)


def history_window(env_id: str) -> int:
    """Observation/action pairs a student prompt keeps for ``env_id`` (the env's
    ``history_window``, :class:`sdgym.core.TextEnv`)."""
    return int(_env(env_id).history_window)


def task_statement_line(env_id: str) -> int:
    """Which line of ``env_id``'s first observation states the task (the env's
    ``task_statement_line``, :class:`sdgym.core.TextEnv`); ValueError where the env declares
    none."""
    line = _env(env_id).task_statement_line
    if line is None:
        raise ValueError(f"rollout.prompt.repeat_task: {env_id} declares no task statement line "
                         "(its class attribute task_statement_line), so there is nothing to repeat")
    return int(line)


def system_prompt(env_id: str) -> str:
    """The student's system prompt: the env's ``agent_role`` and the answer format (search/answer
    tags for an env that parses ``search`` itself, else think/action)."""
    env = _env(env_id)
    if not env.agent_role:
        raise ValueError(f"{env_id} declares no agent_role (sdgym.core.TextEnv): its system "
                         "prompt cannot be written")
    answer_format = SEARCH_FORMAT if "search" in env.native_action_tags else ACTION_FORMAT
    return f"{env.agent_role} {answer_format}"


@dataclass(frozen=True)
class PromptLimits:
    """How much of the public state a student prompt shows (prompt length drives CPU cost:
    attention is quadratic in it, so tiny-model presets keep prompts short)."""

    history: int | None = None
    """Observation/action pairs kept (``None``: the env's :func:`history_window`)."""
    observation_chars: int = 1500
    """The task text and the current observation are cut to this many characters."""
    history_chars: int = 400
    """Each history observation is cut to this many characters."""
    max_admissible: int = 40
    """At most this many admissible actions are listed."""
    repeat_task: bool = False
    """Repeat the task statement (the line of the task text the env names in its
    ``task_statement_line``: ScienceWorld's task description without the room it starts in,
    Search-QA's question) as the prompt's last line (``Task, again: ...``), right before the
    answer, for a small model that does not copy a detail (ScienceWorld's box colour) from the
    top of a long prompt. An error for an env that names no such line. A warm start must be
    trained with the setting it is run with."""

    @classmethod
    def from_dict(cls, values: dict[str, Any] | None) -> PromptLimits:
        """Limits from plain data (a preset's ``[prompt]`` table); unknown keys are an error."""
        values = dict(values or {})
        known = {f.name for f in fields(cls)}
        if set(values) - known:
            raise ValueError(f"unknown prompt limits {sorted(set(values) - known)}; use {sorted(known)}")
        return cls(**values)


@dataclass
class PublicTurn:
    """Everything a student may see at one turn (no privileged field exists here)."""

    env_id: str
    task: str
    step: int
    history: list[tuple[str, str]] = field(default_factory=list)
    observation: str = ""
    admissible_actions: list[str] | None = None
    limits: PromptLimits = field(default_factory=PromptLimits)


def public_turn(
    env_id: str,
    task: str,
    step: int,
    history: Sequence[tuple[str, str]],
    observation: str,
    info: dict[str, Any],
    limits: PromptLimits | None = None,
) -> PublicTurn:
    """Build a :class:`PublicTurn`; reads only ``info["admissible_actions"]``."""
    limits = limits or PromptLimits()
    window = history_window(env_id) if limits.history is None else limits.history
    admissible = info.get("admissible_actions")
    return PublicTurn(
        env_id=env_id,
        task=task,
        step=step,
        history=list(history)[-window:] if window else [],
        observation=observation,
        admissible_actions=list(admissible) if admissible is not None else None,
        limits=limits,
    )


def clip_text(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters (an ellipsis marks the cut)."""
    return text if len(text) <= limit else text[: max(0, limit - 3)] + "..."


TASK_AGAIN = "Task, again:"
"""Heads the last line of a prompt with :attr:`PromptLimits.repeat_task`."""

SAME_AS_TASK = "(the task text above)"
"""Stands in for an observation that repeats the task text (the first observation), which keeps
prompts short without hiding anything."""


def _user_text(turn: PublicTurn) -> str:
    limits = turn.limits
    observation_chars, history_chars = limits.observation_chars, limits.history_chars
    parts = [f"Task: {clip_text(turn.task, observation_chars)}", f"Step {turn.step}."]
    if turn.history:
        parts.append("Recent history:")
        for observation, action in turn.history:
            shown = SAME_AS_TASK if observation == turn.task else clip_text(observation, history_chars)
            parts.append(f"Observation: {shown}\nAction: {action}")
    current = SAME_AS_TASK if turn.observation == turn.task else clip_text(
        turn.observation, observation_chars)
    parts.append(f"Current observation: {current}")
    if turn.admissible_actions:
        shown = turn.admissible_actions[: limits.max_admissible]
        parts.append("Admissible actions: " + " | ".join(shown))
    if limits.repeat_task:
        statement = turn.task.split("\n")[task_statement_line(turn.env_id)]
        parts.append(f"{TASK_AGAIN} {clip_text(statement, observation_chars)}")
    return "\n".join(parts)


def student_messages(turn: PublicTurn) -> list[dict[str, str]]:
    """Chat messages of the student prompt for one turn."""
    system = system_prompt(turn.env_id)
    return [{"role": "system", "content": system}, {"role": "user", "content": _user_text(turn)}]


CONTEXT_BUDGET_CHARS = 2000
"""Default character budget of a teacher prompt's context block (heads' ``context_budget_chars``)."""


def teacher_messages(turn: PublicTurn, context: str,
                     budget_chars: int = CONTEXT_BUDGET_CHARS) -> list[dict[str, str]]:
    """The student prompt plus a privileged context block (cut to ``budget_chars``)."""
    messages = student_messages(turn)
    block = clip_text(context, budget_chars)
    messages[1] = {
        "role": "user",
        "content": f"{messages[1]['content']}\n\nPrivileged guidance (for the teacher):\n{block}",
    }
    return messages


THOUGHT = "<think>I choose the next step.</think>"
"""The short reasoning used in expert demonstrations (SFT targets)."""


def response_for_command(env_id: str, command: str, native_tags: Sequence[str] = ()) -> str:
    """The model response that carries ``command`` in the env's protocol (SFT targets).

    Commands already written in the env's own tags (e.g. ``<search>…</search>``) keep their tag;
    others are wrapped in ``<action>…</action>``. The content always starts with a space after the
    opening tag, so a byte-level BPE splits a copied word (`` Veasuss``) exactly as it is split in
    the observation it was copied from — copying is then token-for-token, which small models
    learn far faster than re-segmenting a word.
    """
    del env_id
    stripped = command.strip()
    for tag in native_tags:
        opening, closing = f"<{tag}>", f"</{tag}>"
        if stripped.startswith(opening) and stripped.endswith(closing):
            inner = stripped[len(opening):-len(closing)]
            return f"{THOUGHT}{opening} {inner.strip()}{closing}"
        if stripped.startswith(opening):
            return f"{THOUGHT}{stripped}"
    return f"{THOUGHT}<action> {stripped}</action>"
