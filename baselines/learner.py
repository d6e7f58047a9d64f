"""The policy update in two phases: one no-grad pass over the whole batch, then micro-batch losses.

Phase 1, :meth:`Learner.prepare` (once per rollout batch, no grad):

1. training returns and group advantages (:mod:`baselines.grpo`);
2. the quantities the references compute once per batch, chunked by ``micro_batch_size`` only to
   bound memory: old log-probs where they are re-scored (tempered policy), the frozen reference's
   log-probs (KL term), the teacher's log-probs (and logits for logit heads) on the teacher
   prompts — a ``current`` teacher is therefore the pre-update policy, as at rollout time;
3. heads of scope ``"batch"`` (advantage reshaping: ``rlsd``, ``agentopsd``, ``opid``) run once
   on the whole batch, so whole episodes are always together;
4. whole-batch denominators (:class:`~baselines.heads.base.LossTotals`) and the teacher
   diagnostics (share of rows with a teacher context, mean teacher − old log-prob gap).

Phase 2, :meth:`Learner.train_epoch` (per PPO epoch): per micro-batch, the student forward with
grad, the GRPO clipped loss ``L0`` on the (reshaped) advantages, the entropy bonus and the KL
term — each a token-mean weighted by the micro-batch's share of the batch's tokens — plus the
loss terms of ``"micro_batch"`` heads, which are already normalised by the whole batch. So the
summed gradient is that of one loss over the whole batch, whatever ``micro_batch_size``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from agents.backends.scoring import response_logprobs
from agents.rollout import TurnRow
from baselines.config import TrainConfig
from baselines.cost import PhaseTimer
from baselines.distributed import DataParallel
from baselines.grpo import compose_loss, group_advantages, row_returns
from baselines.heads import Head, HeadBatch, HeadOutput
from baselines.heads.base import LossTotals, categorical_kl
from baselines.precision import Precision
from baselines.sharding import clip_grad_norm_ as sharded_clip_grad_norm_
from baselines.sharding import gathered, is_sharded
from baselines.teacher import TeacherWeights

UPDATE_BUCKET_COST = 200.0
"""An extra forward + backward's price in padded positions: measured 1.18× (1.14–1.23) faster
than one pass at the cpu-mini update shape (16 groups × 4 first turns + 16 later turns, 150–250
prompt tokens), 1.13× at 800, 1.03× at 2000 (2026-12-01, A/B, loaded 2-core machine). Every
policy forward of the learner runs with it and ``share_prompts=True``
(:func:`~agents.backends.scoring.response_logprobs`)."""


def kl_coefficient(head: Head, config: TrainConfig) -> float:
    """The KL-to-reference coefficient a run with ``head`` uses (the head's, else the config's)."""
    return config.grpo.kl_coef if head.kl_coef is None else float(head.kl_coef)


def teacher_weight_modes(head: Head, config: TrainConfig) -> list[str]:
    """The :class:`TeacherWeights` copies a run needs: the frozen reference for the KL term and
    the head's teacher weights."""
    modes = ["frozen"] if kl_coefficient(head, config) > 0 else []
    return modes + ([head.teacher_weights] if head.needs_teacher else [])


@dataclass
class PreparedBatch:
    """Phase 1's result: whole-batch tensors ``[rows, width]`` padded to the longest response.

    ``rows`` are the rollout's rows ordered by (group, turn, episode): a group's first turns are
    neighbours, so a micro-batch runs their shared prompt once; the update is independent of
    the order (tested by the micro-batch invariance test)."""

    rows: list[TurnRow]
    mask: torch.Tensor
    old_logprobs: torch.Tensor
    row_advantages: torch.Tensor
    """``[rows]`` GRPO advantage before any head."""
    advantages: torch.Tensor
    """``[rows, width]`` the advantages the loss uses (reshaped by a ``"batch"`` head)."""
    totals: LossTotals
    reference_logprobs: torch.Tensor | None = None
    teacher_logprobs: torch.Tensor | None = None
    teacher_logits: torch.Tensor | None = None
    has_teacher: torch.Tensor | None = None
    group_success_rate: list[float] = field(default_factory=list)
    group_mean_return: list[float] = field(default_factory=list)
    metrics: dict[str, float] = field(default_factory=dict)


class Learner:
    """Owns the update of ``model`` by ``optimizer`` under ``head`` (see the module docstring)."""

    def __init__(self, model: torch.nn.Module, optimizer: torch.optim.Optimizer,
                 head: Head, teachers: TeacherWeights, config: TrainConfig, pad_id: int,
                 timer: PhaseTimer | None = None, parallel: DataParallel | None = None,
                 precision: Precision | None = None,
                 teacher_prompts: Callable[[list[TurnRow]], list[list[int] | None]] | None = None
                 ) -> None:
        self.model = model
        self.optimizer = optimizer
        self.head = head
        self.teachers = teachers
        self.config = config
        self.pad_id = pad_id
        self.timer = timer or PhaseTimer()
        self.parallel = parallel or DataParallel()
        self.precision = precision or Precision.for_run(config.model.dtype, config.infra.device,
                                                        config.infra.sharding)
        self.teacher_prompts = teacher_prompts
        """Builds each row's teacher prompt ids (None: no context), inside the timed teacher
        phase of :meth:`prepare` when the caller gives no ids."""
        self.sharded = is_sharded(model)
        if head.scope not in ("batch", "micro_batch"):
            raise ValueError(f"head {head.name!r} has unknown scope {head.scope!r}")

    # ------------------------------------------------------------------ settings
    @property
    def policy_temperature(self) -> float:
        """Temperature of the policy the loss trains (1.0 unless ``tempered_logprobs``)."""
        return self.config.rollout.temperature if self.config.grpo.tempered_logprobs else 1.0

    @property
    def entropy_coef(self) -> float:
        """The head's entropy coefficient where it sets one, else the GRPO config's."""
        coef = self.head.entropy_coef
        return self.config.grpo.entropy_coef if coef is None else float(coef)

    @property
    def kl_coef(self) -> float:
        """The head's KL-to-reference coefficient where it sets one, else the GRPO config's."""
        return kl_coefficient(self.head, self.config)

    # ------------------------------------------------------------------ phase 1
    @torch.no_grad()
    def prepare(self, rows: list[TurnRow],
                teacher_prompt_ids: Sequence[list[int] | None] | None = None,
                step: int = 0) -> PreparedBatch:
        """Phase 1 on this rank's rows; ``teacher_prompt_ids[i]`` None: row i has no context.
        Without ``teacher_prompt_ids``, a head that needs a teacher gets them from
        :attr:`teacher_prompts`, built in the ``teacher_forward`` phase (their cost is the
        teacher's)."""
        if not rows:
            raise ValueError("cannot update on an empty rollout batch")
        if teacher_prompt_ids is None and self.head.needs_teacher and self.teacher_prompts:
            with self.timer.phase("teacher_forward"):
                teacher_prompt_ids = self.teacher_prompts(rows)
        if teacher_prompt_ids is not None and len(teacher_prompt_ids) != len(rows):
            raise ValueError(f"head {self.head.name!r} needs one teacher prompt (or None) per row")
        # group members' same-turn rows side by side, so a micro-batch shares their prompt forward
        order = sorted(range(len(rows)), key=lambda i: (rows[i].group_id, rows[i].turn,
                                                        rows[i].traj_id))
        rows = [rows[i] for i in order]
        if teacher_prompt_ids is not None:
            teacher_prompt_ids = [teacher_prompt_ids[i] for i in order]
        config = self.config
        width = max(1, max(len(r.response_ids) for r in rows))
        mask = torch.zeros(len(rows), width, dtype=torch.bool)
        for i, row in enumerate(rows):
            mask[i, : len(row.response_ids)] = True
        episode_return, row_return = row_returns(
            [r.won for r in rows], [r.score for r in rows], [not r.action_valid for r in rows],
            config.grpo)
        row_adv = group_advantages(episode_return, row_return, [r.group_id for r in rows],
                                   [r.traj_id for r in rows], config.grpo.advantage_scope,
                                   config.grpo.eps)
        prompts = [r.prompt_ids for r in rows]
        if self.policy_temperature == 1.0:
            old = _pad([r.old_logprobs for r in rows], width)
        else:
            with self.timer.phase("update"):
                old, _ = self._score(self.model, prompts, rows, width, logits=False,
                                     kind="old_context")
        reference = None
        if self.kl_coef > 0:
            with self.timer.phase("reference_forward"):
                reference, _ = self._score(self.teachers.model("frozen", self.model), prompts,
                                           rows, width, logits=False, kind="reference_context")
            self.timer.count_tokens("reference", int(mask.sum()))
        prepared = PreparedBatch(
            rows=rows, mask=mask, old_logprobs=old, row_advantages=row_adv,
            advantages=row_adv.unsqueeze(1).expand(len(rows), width).clone(),
            totals=LossTotals(0.0, 0.0, 0.0), reference_logprobs=reference,
            group_success_rate=_group_mean(rows, [float(r.won) for r in rows], per_episode=True),
            group_mean_return=_group_mean(rows, row_return.tolist(), per_episode=False))
        if self.head.needs_teacher:
            self._prepare_teacher(prepared, teacher_prompt_ids, width)
        term = self.head.term_mask(mask, prepared.has_teacher)
        prepared.totals = LossTotals(
            tokens=self.parallel.global_sum(float(mask.sum())),
            term_tokens=self.parallel.global_sum(float(term.sum())),
            term_rows=self.parallel.global_sum(float((term.sum(-1) > 0).sum())))
        if self.head.scope == "batch":
            output = self.head.apply(self._head_batch(prepared, slice(None), old, None, step))
            if output.replace_loss is not None or output.aux_loss is not None:
                raise ValueError(f"head {self.head.name!r} has scope 'batch' but returned a "
                                 "loss; batch-scope heads may only reshape advantages")
            if output.advantages is not None:
                prepared.advantages = output.advantages.detach()
            prepared.metrics.update({f"head/{k}": v for k, v in output.metrics.items()})
        return prepared

    def _prepare_teacher(self, prepared: PreparedBatch,
                         prompt_ids: Sequence[list[int] | None] | None, width: int) -> None:
        rows = prepared.rows
        if prompt_ids is None:  # prepare() checked the length of a given list
            raise ValueError(f"head {self.head.name!r} needs one teacher prompt (or None) per row")
        live = [i for i, p in enumerate(prompt_ids) if p is not None]
        has = torch.zeros(len(rows), dtype=torch.bool)
        has[live] = True
        teacher_lp = torch.zeros(len(rows), width)
        teacher_logits = None
        if live or self.sharded:  # a sharded teacher is gathered by every rank, rows or not
            network = self.teachers.model(self.head.teacher_weights, self.model)
            with self.timer.phase("teacher_forward"):
                lp, logits = self._score(network, [prompt_ids[i] for i in live],
                                         [rows[i] for i in live], width,
                                         logits=self.head.wants_logits(), kind="teacher_context")
            teacher_lp[live] = lp
            if logits is not None:
                teacher_logits = torch.zeros(len(rows), width, logits.shape[-1])
                teacher_logits[live] = logits
            self.timer.count_tokens("teacher", sum(len(rows[i].response_ids) for i in live))
        prepared.teacher_logprobs = teacher_lp
        prepared.teacher_logits = teacher_logits
        prepared.has_teacher = has
        teacher_mask = prepared.mask & has.unsqueeze(-1)
        gap = ((teacher_lp - prepared.old_logprobs) * teacher_mask).sum()
        totals = self.parallel.sum_metrics({
            "rows": float(len(rows)), "teacher_rows": float(len(live)),
            "gap": float(gap), "teacher_tokens": float(teacher_mask.sum())})
        prepared.metrics["teacher/context_fraction"] = totals["teacher_rows"] / max(totals["rows"], 1)
        prepared.metrics["teacher/gap_mean"] = totals["gap"] / max(totals["teacher_tokens"], 1)

    def _score(self, network: torch.nn.Module, prompts: Sequence[Sequence[int]],
               rows: Sequence[TurnRow], width: int, logits: bool,
               kind: str) -> tuple[torch.Tensor, torch.Tensor | None]:
        """No-grad log-probs ``[n, width]`` (and logits ``[n, width, V]``) of ``rows``' responses
        after ``prompts``, in chunks of ``micro_batch_size``."""
        out_lp = torch.zeros(len(rows), width)
        out_logits: torch.Tensor | None = None
        self.timer.count_tokens(kind, sum(len(p) for p in prompts)
                                + sum(len(r.response_ids) for r in rows))
        size = self.config.grpo.micro_batch_size
        with gathered(network):  # sharded: whole weights for these local forwards
            for start in range(0, len(rows), size):
                part = rows[start:start + size]
                with self.precision.autocast():
                    lp, lg, _ = response_logprobs(
                        network, prompts[start:start + size], [r.response_ids for r in part],
                        pad_token_id=self.pad_id, temperature=self.policy_temperature,
                        share_prompts=True, bucket_cost=UPDATE_BUCKET_COST)
                w = min(width, lp.shape[1])
                out_lp[start:start + len(part), :w] = lp[:, :w].float().cpu()
                if logits:
                    if out_logits is None:
                        out_logits = torch.zeros(len(rows), width, lg.shape[-1])
                    out_logits[start:start + len(part), :w] = lg[:, :w].float().cpu()
        return out_lp, out_logits

    # ------------------------------------------------------------------ phase 2
    def train_epoch(self, prepared: PreparedBatch, step: int) -> dict[str, Any]:
        """One pass of micro-batch gradient steps over ``prepared``; one optimizer step."""
        config = self.config
        rows = prepared.rows
        self.optimizer.zero_grad()
        sums: dict[str, float] = defaultdict(float)
        kl_sum, kl_tokens = 0.0, 0.0
        starts = range(0, len(rows), config.grpo.micro_batch_size)
        # sharded: every rank runs as many backward passes (FSDP's collectives), so one with
        # fewer micro-batches adds zero-gradient ones at the end
        idle = int(self.parallel.global_max(len(starts))) - len(starts) if self.sharded else 0
        for start in starts:
            part = rows[start:start + config.grpo.micro_batch_size]
            index = slice(start, start + len(part))
            with self.timer.phase("update"):
                with self.precision.autocast():
                    logprobs, logits, mask = response_logprobs(
                        self.model, [r.prompt_ids for r in part], [r.response_ids for r in part],
                        pad_token_id=self.pad_id, temperature=self.policy_temperature,
                        share_prompts=True, bucket_cost=UPDATE_BUCKET_COST)
                width = mask.shape[1]
                device = logprobs.device
                old = prepared.old_logprobs[index, :width].to(device)
                advantages = prepared.advantages[index, :width].to(device)
                output = HeadOutput()
                if self.head.scope == "micro_batch":
                    output = self.head.apply(
                        self._head_batch(prepared, index, logprobs, logits, step, width, device))
                reference = (None if prepared.reference_logprobs is None
                             else prepared.reference_logprobs[index, :width].to(device))
                weight = float(mask.sum()) / max(prepared.totals.tokens, 1.0)  # token share
                terms = compose_loss(
                    logprobs, logits, old,
                    output.advantages if output.advantages is not None else advantages, mask,
                    weight, config.grpo, self.entropy_coef, self.kl_coef, reference,
                    output.replace_loss, output.aux_loss)
                loss = terms.loss
                loss.backward()
            if prepared.teacher_logits is not None:
                part_kl, part_tokens = _teacher_student_kl(prepared, index, logits, mask)
                kl_sum, kl_tokens = kl_sum + part_kl, kl_tokens + part_tokens
            self.timer.count_tokens("trained", int(mask.sum()))
            self.timer.count_tokens("trained_context", int(mask.sum())
                                    + sum(len(r.prompt_ids) for r in part))
            sums["loss"] += float(loss.detach())
            for name, value in {"policy_loss": terms.policy_loss.item(),
                                "entropy": terms.entropy.item(), "kl": terms.kl.item(),
                                **terms.stats,
                                **{f"head/{k}": v for k, v in output.metrics.items()}}.items():
                sums[name] += value * weight
        with self.timer.phase("update"):
            for _ in range(idle):
                self._idle_backward(rows[0])
            if not self.sharded:  # FSDP's reduce-scatter already summed the gradients
                self.parallel.sum_gradients(self.model)
            clip = sharded_clip_grad_norm_ if self.sharded else torch.nn.utils.clip_grad_norm_
            grad_norm = clip(list(self.model.parameters()), config.grpo.max_grad_norm)
            self.optimizer.step()
        metrics: dict[str, Any] = {**self.parallel.sum_metrics(dict(sums)),
                                   "grad_norm": float(grad_norm), **prepared.metrics}
        if self.head.needs_teacher and self.head.wants_logits():  # every rank joins the sum
            totals = self.parallel.sum_metrics({"kl": kl_sum, "tokens": kl_tokens})
            if totals["tokens"] > 0:
                metrics["teacher/kl_full"] = totals["kl"] / totals["tokens"]
        return metrics

    def _idle_backward(self, row: TurnRow) -> None:
        """A forward and backward that adds nothing to the gradients (a sharded rank with fewer
        micro-batches than another joins its collectives)."""
        with self.precision.autocast():
            logprobs, _, _ = response_logprobs(
                self.model, [row.prompt_ids], [row.response_ids], pad_token_id=self.pad_id,
                temperature=self.policy_temperature, share_prompts=True,
                bucket_cost=UPDATE_BUCKET_COST)
        (logprobs.sum() * 0.0).backward()

    def _head_batch(self, prepared: PreparedBatch, index: slice, student: torch.Tensor,
                    logits: torch.Tensor | None, step: int, width: int | None = None,
                    device: torch.device | None = None) -> HeadBatch:
        """The :class:`HeadBatch` of rows ``index`` (``student`` already cut to ``width``)."""
        width = width or prepared.mask.shape[1]
        rows = prepared.rows[index]
        picked = range(len(prepared.rows))[index]

        def cut(tensor: torch.Tensor | None) -> torch.Tensor | None:
            return None if tensor is None else tensor[index, :width].to(device or student.device)

        teacher_logits = cut(prepared.teacher_logits)
        if teacher_logits is None and logits is not None and self.head.wants_logits():
            teacher_logits = torch.zeros_like(logits.detach())  # no row has a teacher context
        return HeadBatch(
            student_logprobs=student, old_logprobs=cut(prepared.old_logprobs),
            advantages=cut(prepared.advantages), mask=cut(prepared.mask),
            teacher_logprobs=cut(prepared.teacher_logprobs),
            has_teacher=None if prepared.has_teacher is None else prepared.has_teacher[index],
            student_logits=logits if self.head.wants_logits() else None,
            teacher_logits=teacher_logits,
            group_ids=[r.group_id for r in rows], traj_ids=[r.traj_id for r in rows],
            turn_ids=[r.turn for r in rows], won=[r.won for r in rows],
            group_success_rate=[prepared.group_success_rate[i] for i in picked],
            group_mean_return=[prepared.group_mean_return[i] for i in picked],
            step=step, totals=prepared.totals)


def _teacher_student_kl(prepared: PreparedBatch, index: slice, logits: torch.Tensor,
                        mask: torch.Tensor) -> tuple[float, float]:
    """Sum over this micro-batch's teacher-row tokens of full-vocabulary KL(teacher‖student)."""
    assert prepared.teacher_logits is not None and prepared.has_teacher is not None
    width = mask.shape[1]
    teacher = torch.log_softmax(prepared.teacher_logits[index, :width].to(logits.device), -1)
    student = torch.log_softmax(logits.detach().float(), -1)
    kl = categorical_kl(teacher, student)
    where = mask & prepared.has_teacher[index].to(mask.device).unsqueeze(-1)
    return float((kl * where).sum()), float(where.sum())


def _pad(values: list[list[float]], width: int) -> torch.Tensor:
    out = torch.zeros((len(values), width))
    for i, row in enumerate(values):
        out[i, : min(len(row), width)] = torch.tensor(row[:width], dtype=torch.float32)
    return out


def _group_mean(rows: list[TurnRow], values: list[float], per_episode: bool) -> list[float]:
    """Per row, the mean of ``values`` over its group (one value per episode if ``per_episode``)."""
    members: dict[int, dict[Any, float]] = defaultdict(dict)
    for i, (row, value) in enumerate(zip(rows, values)):
        members[row.group_id][row.traj_id if per_episode else i] = value
    means = {g: float(np.mean(list(v.values()))) for g, v in members.items()}
    return [means[row.group_id] for row in rows]
