"""SFT warm start: behaviour cloning on expert demonstrations from each env's privileged expert.

:func:`expert_demonstrations` runs the expert (``info["privileged"]["expert_action"]``) on train
tasks and records, per turn, the *student* prompt (public info only), the privileged text a
teacher prompt would carry, and the response that carries the expert's command.
:func:`behaviour_clone` minimises the response tokens' cross-entropy, optionally also on teacher
prompts so that the model learns to read the privileged block its self-distillation teacher sees.
"""

from __future__ import annotations

import dataclasses
import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import torch

import sdgym  # noqa: F401  (registers the env ids)
from agents.backends.padding import right_pad
from agents.backends.scoring import response_logprobs
from agents.prompts import (
    PromptLimits,
    PublicTurn,
    public_turn,
    response_for_command,
    student_messages,
    teacher_messages,
)
from baselines.teacher import (
    CONTEXT_KINDS,
    TURN_CONTEXTS,
    hindsight_context,
    sibling_context,
    trajectory_text,
    turn_context,
)


@dataclass
class Demonstration:
    """One expert turn: the student's view and the target response."""

    turn: PublicTurn
    response: str
    guidance: str | None = None
    """The teacher context shown with this turn in teacher prompts (by default the turn's
    privileged text, ``info["privileged"]["text"]``)."""
    privileged: dict[str, Any] | None = None
    """The turn's whole ``info["privileged"]`` (to build other teacher contexts)."""
    task_type: str = ""
    episode: int = 0
    """Which expert episode the turn belongs to (its index in the task draw)."""


def expert_demonstrations(
    env_id: str, env_kwargs: dict[str, Any], split: str, tasks: int, seed: int = 0,
    limits: PromptLimits | None = None, detour_rate: float = 0.0,
) -> list[Demonstration]:
    """Expert turns on up to ``tasks`` tasks of ``split`` (successful episodes only).

    ``detour_rate > 0``: before each expert turn, with that chance, a wrong command is played
    first (:func:`detour_command`) and kept in the history, then, with the same chance, another,
    and so on (``rate / (1 - rate)`` wrong commands per expert turn on average: 1/3 at 0.25); the
    expert then acts from the state they left. This is DART-style noise injection (Laskey et al.,
    2017, "DART: Noise Injection for Robust Imitation Learning"): behaviour cloning on plain
    expert episodes never shows a state after a mistake, so a cloned policy that errs, e.g.
    repeats a refused command, has never seen what to do next. The wrong commands are not
    demonstrations (nothing is trained on them). They count toward the env's step limit, and an
    episode that a wrong command ends (won or lost) or that runs out of steps is dropped. It
    needs an expert that acts from any state (ALFWorld's planner, WebShop's, Search-QA's); where
    the expert only replays a fixed gold sequence and stops after a deviation (ScienceWorld), the
    detoured episodes are dropped.
    """
    env = gym.make(env_id, **env_kwargs)
    demos: list[Demonstration] = []
    detours = random.Random(f"detours-{seed}")  # its own stream: detour_rate=0 draws nothing
    try:
        core = env.unwrapped
        native = tuple(getattr(core, "native_action_tags", ()))
        count = min(tasks, core.task_count(split))
        order = list(range(core.task_count(split)))
        random.Random(seed).shuffle(order)
        for episode_index, index in enumerate(order[:count]):
            observation, info = env.reset(seed=seed, options={"split": split, "task_index": index})
            task, history, episode = observation, [], []
            ended_by_detour = False
            for step in range(1, 200):
                command = info["privileged"]["expert_action"]
                if not command:
                    break
                wrong = (detour_command(history, info, detours)
                         if detour_rate > 0 and detours.random() < detour_rate else None)
                if wrong is not None:
                    history.append((observation, wrong))
                    observation, _, terminated, truncated, info = env.step(wrong)
                    if terminated or truncated:
                        ended_by_detour = True
                        break
                    continue
                turn = public_turn(env_id, task, step, history, observation, info, limits)
                episode.append(Demonstration(turn, response_for_command(env_id, command, native),
                                             info["privileged"].get("text"), info["privileged"],
                                             str(info.get("task_type", "")), episode_index))
                history.append((observation, command))
                observation, _, terminated, truncated, info = env.step(command)
                if terminated or truncated:
                    break
            if info["won"] and not ended_by_detour:
                demos.extend(episode)
    finally:
        env.close()
    return demos


def detour_command(history: Sequence[tuple[str, str]], info: dict[str, Any],
                   rng: random.Random) -> str | None:
    """A wrong command for this state, drawn uniformly from the kinds that exist here.

    The kinds mirror how a cloned policy errs: the previous command repeated (usually refused:
    the loop of a model that does not read the feedback), the expert plan's second command played
    early (``take apple 1 from shelf 1`` before walking there: a hallucinated step), and
    another admissible command (a wasted move, e.g. the wrong receptacle). None when no kind
    gives a command other than the expert's.
    """
    expert = info["privileged"]["expert_action"]
    plan = list(info["privileged"].get("expert_plan") or [])
    kinds: list[list[str]] = []
    if history and history[-1][1] != expert:
        kinds.append([history[-1][1]])
    if len(plan) > 1 and plan[1] != expert:
        kinds.append([plan[1]])
    others = [a for a in info.get("admissible_actions") or [] if a != expert]
    if others:
        kinds.append(others)
    if not kinds:
        return None
    choices = kinds[rng.randrange(len(kinds))]
    return choices[rng.randrange(len(choices))]


def with_swapped_words(demos: list[Demonstration],
                       groups: Sequence[Sequence[str]]) -> list[Demonstration]:
    """``demos`` and, for each turn whose task text names exactly one word of a group (as a whole
    word), one copy per other word of that group with the word replaced by it everywhere in the
    turn (task, history, observation, admissible actions) and its response: the
    ``sft.swap_words`` augmentation. The copies are student turns only (no teacher context)."""
    out = list(demos)
    for group in groups:
        patterns = {word: re.compile(rf"\b{re.escape(word)}\b") for word in group}
        for demo in demos:
            named = [word for word, pattern in patterns.items() if pattern.search(demo.turn.task)]
            if len(named) != 1:
                continue
            pattern = patterns[named[0]]
            for other in group:
                if other != named[0]:
                    out.append(_swapped(demo, pattern, other))
    return out


def _swapped(demo: Demonstration, pattern: re.Pattern[str], word: str) -> Demonstration:
    def swap(text: str) -> str:
        return pattern.sub(word, text)

    turn = demo.turn
    admissible = turn.admissible_actions
    return Demonstration(
        dataclasses.replace(turn, task=swap(turn.task), observation=swap(turn.observation),
                            history=[(swap(o), swap(a)) for o, a in turn.history],
                            admissible_actions=None if admissible is None else [
                                swap(a) for a in admissible]),
        swap(demo.response), None, None, demo.task_type, demo.episode)


def _episodes(demos: list[Demonstration]) -> list[list[Demonstration]]:
    """Runs of consecutive demonstrations of one episode: each starts at step 1 or a new
    ``episode`` index (an episode whose first turn was a detour starts later)."""
    episodes: list[list[Demonstration]] = []
    for demo in demos:
        if demo.turn.step == 1 or not episodes or demo.episode != episodes[-1][-1].episode:
            episodes.append([])
        episodes[-1].append(demo)
    return episodes


def with_teacher_contexts(demos: list[Demonstration], contexts: Sequence[str], env_id: str,
                          seed: int = 0) -> list[Demonstration]:
    """Expert turns whose ``guidance`` is a teacher context drawn per episode from ``contexts``.

    Each head's teacher reads its own context (:mod:`baselines.teacher`): the privileged text,
    the expert plan from that turn (``demonstration``), the task type's ``skills``, a successful
    attempt at the task (``sibling``: here the expert episode itself) or ``hindsight`` notes made
    from it. SFT on these teacher prompts teaches a tiny model to read each of them; a context the
    warm start never saw leaves the teacher no better than the student.
    """
    unknown = sorted(set(contexts) - set(CONTEXT_KINDS))
    if unknown or not contexts:
        raise ValueError(f"teacher contexts must be a non-empty subset of {CONTEXT_KINDS}, "
                         f"got {list(contexts)}")
    rng = random.Random(seed)
    out: list[Demonstration] = []
    for episode in _episodes(demos):
        kind = contexts[rng.randrange(len(contexts))]
        whole = trajectory_text([d.response for d in episode], 1.0)
        for demo in episode:
            if kind in TURN_CONTEXTS:
                text = turn_context(kind, demo.privileged, demo.task_type, env_id)
            elif kind == "sibling":
                text = sibling_context(whole)
            else:
                text = hindsight_context([whole], [])
            out.append(Demonstration(demo.turn, demo.response, text, demo.privileged,
                                     demo.task_type, demo.episode))
    return out


def teacher_prompt(demo: Demonstration) -> list[dict[str, str]]:
    """The teacher prompt :func:`behaviour_clone` trains ``demo`` under: its student prompt plus
    its ``guidance`` block, as :func:`baselines.teacher.turn_teacher_messages` renders a
    per-turn context for the heads."""
    return teacher_messages(demo.turn, demo.guidance or "")


def hasty_demonstrations(
    demos: list[Demonstration], fraction: float, seed: int = 0, turn: int = 1
) -> list[Demonstration]:
    """An imperfect demonstrator: ``fraction`` of the expert episodes finish early, wrongly.

    Episodes are the runs of consecutive demonstrations of one expert episode
    (:func:`_episodes`). A hasty episode keeps the expert's first ``turn - 1`` demonstrated turns
    and answers turn ``turn`` with the next episode's final response (another task's answer, or
    WebShop's ``click[buy now]``) instead of the expert's step; an episode with fewer turns stays
    whole. ``turn=1`` (Search-QA): answer at once. ``turn=3`` (WebShop): search, open a product,
    buy it without choosing its options. Behaviour cloning on the mix gives a policy that often
    skips the work, a realistic SFT start with room for RL.
    """
    if not 0.0 <= fraction <= 1.0:
        raise ValueError(f"fraction must be in [0, 1], got {fraction}")
    if turn < 1:
        raise ValueError(f"hasty turn must be at least 1, got {turn}")
    episodes = _episodes(demos)
    rng = random.Random(seed)
    mixed: list[Demonstration] = []
    for index, episode in enumerate(episodes):
        if rng.random() < fraction and len(episode) >= turn:
            other = episodes[(index + 1) % len(episodes)]
            mixed.extend(episode[:turn - 1])
            mixed.append(Demonstration(episode[turn - 1].turn, other[-1].response,
                                       episode=episode[turn - 1].episode))
        else:
            mixed.extend(episode)
    return mixed


def token_nll(
    model: torch.nn.Module, prompt_ids: list[list[int]], response_ids: list[list[int]], pad_token_id: int,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Next-token NLL over whole ``prompt + response`` sequences (right-padded, grad-enabled).

    Returns ``(nll, response_mask, context_mask)``, each ``[B, T-1]``: ``nll[b, t]`` is the loss of
    token ``t+1``; the masks pick the response tokens and the prompt tokens (padding in neither).
    """
    device = next(model.parameters()).device
    sequences = [p + r for p, r in zip(prompt_ids, response_ids, strict=True)]
    input_ids, attention = right_pad(sequences, pad_token_id, device)
    is_response = torch.zeros_like(attention, dtype=torch.bool)
    for row, (prompt, response) in enumerate(zip(prompt_ids, response_ids, strict=True)):
        is_response[row, len(prompt):len(prompt) + len(response)] = True
    logits = model(input_ids=input_ids, attention_mask=attention, use_cache=False).logits[:, :-1]
    targets = input_ids[:, 1:]
    nll = torch.nn.functional.cross_entropy(
        logits.float().reshape(-1, logits.shape[-1]), targets.reshape(-1), reduction="none",
    ).view_as(targets)
    response_mask = is_response[:, 1:]
    return nll, response_mask, attention[:, 1:].bool() & ~response_mask


def behaviour_clone(
    model: torch.nn.Module,
    tokenizer: Any,
    demos: list[Demonstration],
    *,
    steps: int,
    lr: float,
    batch_size: int,
    seed: int = 0,
    render: Callable[[list[dict[str, str]]], str],
    context_loss_weight: float = 0.0,
    warmup_steps: int = 0,
    teacher_demos: list[Demonstration] | None = None,
    teacher_fraction: float = 0.0,
    log: Callable[[int, float], None] | None = None,
) -> list[float]:
    """Train ``model`` on ``demos`` for ``steps`` AdamW steps; return the response loss per step.

    The loss is the mean NLL of the response tokens plus ``context_loss_weight`` times the mean
    NLL of the prompt tokens. A tiny model trained from scratch needs that second term: answers
    are copied out of retrieved passages and observations, and the copying circuit forms from
    modelling the (name-repeating) prompt text; the response tokens alone (about 15 per turn)
    are too little signal. ``warmup_steps > 0`` ramps the learning rate up linearly over that
    many steps and then decays it linearly to 5% at ``steps``; 0 keeps it constant.

    ``teacher_fraction > 0`` draws that share of each batch from ``teacher_demos`` shown with
    their teacher prompt (the student prompt plus the privileged ``guidance`` block, as
    :func:`agents.prompts.teacher_messages` renders it for the heads). A tiny model never trained
    on that block cannot read it, and its self-distillation teacher is then worse than the student.
    """
    if not demos:
        raise ValueError("no expert demonstrations to clone")
    if not 0.0 <= teacher_fraction <= 1.0:
        raise ValueError(f"teacher_fraction must be in [0, 1], got {teacher_fraction}")
    teacher_demos = [d for d in teacher_demos or [] if d.guidance]
    if teacher_fraction > 0 and not teacher_demos:
        raise ValueError("teacher_fraction > 0 needs teacher_demos with privileged guidance")
    end = tokenizer.convert_tokens_to_ids("<|im_end|>")

    def encode(messages: list[dict[str, str]], response: str) -> tuple[list[int], list[int]]:
        return (tokenizer(render(messages), add_special_tokens=False)["input_ids"],
                tokenizer(response, add_special_tokens=False)["input_ids"] + [end])

    encoded = [encode(student_messages(d.turn), d.response) for d in demos]
    teacher_encoded = [encode(teacher_prompt(d), d.response)
                       for d in teacher_demos] if teacher_fraction > 0 else []
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.0)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: _lr_factor(step, steps, warmup_steps))
    rng = random.Random(seed)
    losses = []
    model.train()
    for step in range(steps):
        if teacher_encoded:
            batch = [teacher_encoded[rng.randrange(len(teacher_encoded))]
                     if rng.random() < teacher_fraction else encoded[rng.randrange(len(encoded))]
                     for _ in range(batch_size)]
        else:  # the original draw, so recipes without teacher prompts rebuild bit for bit
            batch = [encoded[rng.randrange(len(encoded))] for _ in range(batch_size)]
        prompts, responses = [p for p, _ in batch], [r for _, r in batch]
        if context_loss_weight > 0:
            nll, response_mask, context_mask = token_nll(model, prompts, responses, tokenizer.pad_token_id)
            response_loss = (nll * response_mask).sum() / response_mask.sum()
            loss = response_loss + context_loss_weight * (nll * context_mask).sum() / context_mask.sum()
        else:
            logprobs, _, mask = response_logprobs(model, prompts, responses, pad_token_id=tokenizer.pad_token_id)
            response_loss = loss = -(logprobs * mask).sum() / mask.sum()
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        scheduler.step()
        losses.append(response_loss.item())
        if log is not None:
            log(step, losses[-1])
    model.eval()
    return losses


def _lr_factor(step: int, steps: int, warmup_steps: int) -> float:
    """Linear warm-up over ``warmup_steps``, then linear decay to 5% at ``steps`` (1.0 without warm-up)."""
    if warmup_steps <= 0:
        return 1.0
    return min(1.0, (step + 1) / warmup_steps) * max(0.05, 1.0 - step / max(steps, 1))
