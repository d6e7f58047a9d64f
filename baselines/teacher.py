"""Teacher side of self-distillation: teacher weights (current / frozen / EMA) and contexts.

Contexts (``head.context``):

* ``privileged`` — ``info["privileged"]["text"]`` seen at that turn;
* ``demonstration`` — the expert plan from that turn's state;
* ``skills`` — the project's guidance text for the row's task type (:mod:`baselines.skills`);
* ``sibling`` — the actions of a successful episode of another group member (same task); rows
  whose group has no other success get no teacher (``has_teacher`` False);
* ``hindsight`` — notes summarised from the group's finished episodes by the policy's own
  outcomes (what successful attempts did, what failed ones did), without an external LLM.
"""

from __future__ import annotations

import copy
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch

from agents.prompts import CONTEXT_BUDGET_CHARS, PublicTurn, student_messages, teacher_messages
from agents.rollout import TurnRow
from baselines.skills import skill_text


class TeacherWeights:
    """Holds the frozen initial policy and an EMA of the policy, created only when needed.

    One frozen copy serves every ``"frozen"`` use: the KL reference and a frozen teacher are the
    same weights (the initial policy), so they share it. ``frozen_dtype`` stores that copy in the
    compute dtype (e.g. bfloat16: half the bytes of the float32 policy); ``load_frozen`` builds it
    from disk instead of copying the policy (no transient float32 copy). The EMA copy keeps the
    policy's dtype: an update of ``α·(θ − θ_ema)`` is far below bfloat16's resolution.
    """

    def __init__(self, policy: torch.nn.Module, modes: Sequence[str], ema_decay: float, *,
                 frozen_dtype: torch.dtype | None = None,
                 load_frozen: Callable[[], torch.nn.Module] | None = None) -> None:
        self.ema_decay = ema_decay
        self.frozen: torch.nn.Module | None = None
        if "frozen" in modes:
            network = load_frozen() if load_frozen is not None else copy.deepcopy(policy)
            self.frozen = _freeze(network, frozen_dtype)
        self.ema = _freeze(copy.deepcopy(policy), None) if "ema" in modes else None

    def networks(self) -> dict[str, torch.nn.Module]:
        """The copies held, by name (``frozen``, ``ema``)."""
        return {name: network for name, network in (("frozen", self.frozen), ("ema", self.ema))
                if network is not None}

    def model(self, mode: str, policy: torch.nn.Module) -> torch.nn.Module:
        """The network that plays the teacher in ``mode``."""
        if mode == "current":
            return policy
        network = self.frozen if mode == "frozen" else self.ema
        if network is None:
            raise ValueError(f"teacher weights {mode!r} were not prepared")
        return network

    @torch.no_grad()
    def update_ema(self, policy: torch.nn.Module) -> None:
        """``θ_ema ← (1 − α)·θ_ema + α·θ`` with ``α = ema_decay`` (SDPO/SDFT: 0.05)."""
        if self.ema is None:
            return
        for ema_param, param in zip(self.ema.parameters(), policy.parameters()):
            ema_param.mul_(1.0 - self.ema_decay).add_(param.detach(), alpha=self.ema_decay)

    def state_dict(self) -> dict:
        """Frozen and EMA weights, for checkpoints."""
        return {
            "frozen": self.frozen.state_dict() if self.frozen is not None else None,
            "ema": self.ema.state_dict() if self.ema is not None else None,
        }

    def load_state_dict(self, state: dict) -> None:
        """Restore :meth:`state_dict`."""
        for name in ("frozen", "ema"):
            network = getattr(self, name)
            if network is not None and state.get(name) is not None:
                network.load_state_dict(state[name])


def _freeze(network: torch.nn.Module, dtype: torch.dtype | None) -> torch.nn.Module:
    if dtype is not None:
        network = network.to(dtype)
    network.eval()
    for param in network.parameters():
        param.requires_grad_(False)
    return network


def trajectory_text(responses: Sequence[str], score: float) -> str:
    """One episode as its actions (each response after ``</think>``) and final score."""
    steps = " -> ".join(response.split("</think>")[-1].strip() for response in responses)
    return f"{steps} (score {score:.2f})"


def sibling_context(trajectory: str) -> str:
    """The ``sibling`` context: a successful attempt at the same task."""
    return "A successful attempt at this task: " + trajectory


def hindsight_context(good: Sequence[str], bad: Sequence[str]) -> str | None:
    """The ``hindsight`` context from at most one success and one failure (None: neither)."""
    notes = [f"Do as this success did: {g}" for g in good[:1]]
    notes += [f"Avoid what this failure did: {b}" for b in bad[:1]]
    return "Hindsight notes: " + " | ".join(notes) if notes else None


def _trajectory_text(rows: list[TurnRow]) -> str:
    return trajectory_text([row.response_text for row in rows], rows[-1].score)


@dataclass(frozen=True)
class ContextKind:
    """One kind of teacher context: what it shows, and how it is made.

    A per-turn kind (``from_turn``) is known from that turn's own info; an episode kind
    (``from_group``) needs the finished episodes of the row's group."""

    name: str
    description: str
    from_turn: Callable[[dict | None, str, str], str | None] | None = None
    """``(privileged, task_type, env_id) -> text`` (None: no context at this turn)."""
    from_group: Callable[[TurnRow, dict[int, list[TurnRow]], list[int]], str | None] | None = None
    """``(row, episodes by trajectory id, the trajectory ids of the row's group) -> text``."""

    @property
    def per_turn(self) -> bool:
        """Known at each turn from that turn's info alone (the teacher can act with it)."""
        return self.from_turn is not None


def _privileged_text(privileged: dict | None, task_type: str, env_id: str) -> str | None:
    return (privileged or {}).get("text")


def _expert_plan(privileged: dict | None, task_type: str, env_id: str) -> str | None:
    plan = (privileged or {}).get("expert_plan") or []
    return "Expert plan from here: " + " ; ".join(plan) if plan else None


def _skills(privileged: dict | None, task_type: str, env_id: str) -> str | None:
    return skill_text(env_id, task_type)


def _sibling(row: TurnRow, episodes: dict[int, list[TurnRow]], group: list[int]) -> str | None:
    winners = [t for t in group if t != row.traj_id and episodes[t][-1].won]
    return sibling_context(_trajectory_text(episodes[winners[0]])) if winners else None


def _hindsight(row: TurnRow, episodes: dict[int, list[TurnRow]], group: list[int]) -> str | None:
    finished = [episodes[t] for t in group]
    return hindsight_context([_trajectory_text(e) for e in finished if e[-1].won],
                             [_trajectory_text(e) for e in finished if not e[-1].won])


CONTEXTS: dict[str, ContextKind] = {kind.name: kind for kind in (
    ContextKind("privileged", "the privileged info's text at that turn", from_turn=_privileged_text),
    ContextKind("demonstration", "the expert plan from that turn's state", from_turn=_expert_plan),
    ContextKind("skills", "the guidance text for the task type (baselines.skills)",
                from_turn=_skills),
    ContextKind("sibling", "a successful episode of another group member (same task)",
                from_group=_sibling),
    ContextKind("hindsight", "notes from the group's finished successes and failures",
                from_group=_hindsight),
)}
"""The context registry: every teacher context a head, the SFT recipe or the premise may name."""
CONTEXT_KINDS: tuple[str, ...] = tuple(CONTEXTS)
TURN_CONTEXTS: tuple[str, ...] = tuple(name for name, kind in CONTEXTS.items() if kind.per_turn)
"""Contexts known at each turn from that turn's info alone (no finished episodes needed)."""


def context_kind(name: str) -> ContextKind:
    """The registered context ``name`` (ValueError naming the known ones)."""
    if name not in CONTEXTS:
        raise ValueError(f"unknown teacher context {name!r}; use one of {list(CONTEXT_KINDS)}")
    return CONTEXTS[name]


def turn_context(context: str, privileged: dict | None, task_type: str,
                 env_id: str) -> str | None:
    """The teacher context of one turn for a :data:`TURN_CONTEXTS` kind (None: none here)."""
    kind = context_kind(context)
    if kind.from_turn is None:
        raise ValueError(f"teacher context {context!r} is not known per turn; "
                         f"per-turn contexts: {TURN_CONTEXTS}")
    return kind.from_turn(privileged, task_type, env_id)


def turn_teacher_messages(turn: PublicTurn, context: str, privileged: dict | None, task_type: str,
                          env_id: str, budget_chars: int = CONTEXT_BUDGET_CHARS,
                          ) -> list[dict[str, str]]:
    """The prompt a teacher with a per-turn ``context`` reads at ``turn`` (the student prompt
    where the turn has no such context). The SFT warm start's teacher turns and the trainer's
    acting teacher both render it here, so a warm start is trained on the prompt it is read with."""
    text = turn_context(context, privileged, task_type, env_id)
    return student_messages(turn) if text is None else teacher_messages(turn, text, budget_chars)


def teacher_contexts(rows: Sequence[TurnRow], context: str, env_id: str) -> list[str | None]:
    """The teacher context of each row (``None`` where the row has none)."""
    episodes: dict[int, list[TurnRow]] = defaultdict(list)
    for row in rows:
        episodes[row.traj_id].append(row)
    by_group: dict[int, list[int]] = defaultdict(list)
    for traj, episode_rows in episodes.items():
        by_group[episode_rows[0].group_id].append(traj)
    kind = context_kind(context)
    if kind.from_turn is not None:
        return [kind.from_turn(row.privileged, row.task_type, env_id) for row in rows]
    assert kind.from_group is not None
    return [kind.from_group(row, episodes, by_group[row.group_id]) for row in rows]


def teacher_prompt_ids(rows: Sequence[TurnRow], context: str, env_id: str, budget_chars: int,
                       render: Callable[[list[dict[str, str]]], str],
                       tokenizer: Callable[..., dict]) -> list[list[int] | None]:
    """The teacher prompt of each row as token ids: the row's student prompt with its
    ``context`` (:func:`teacher_contexts`) added, rendered with the policy's chat template
    (``render``) and tokenized; ``None`` where the row has no context."""
    prompt_ids: list[list[int] | None] = []
    for row, text in zip(rows, teacher_contexts(rows, context, env_id), strict=True):
        if text is None:
            prompt_ids.append(None)
            continue
        rendered = render(teacher_messages(row.public, text, budget_chars))
        prompt_ids.append(tokenizer(rendered, add_special_tokens=False)["input_ids"])
    return prompt_ids
