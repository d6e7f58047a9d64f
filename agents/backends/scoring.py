"""Training-time scoring: one forward over ``[left-padded prompt | right-padded response]`` rows.

:func:`response_logprobs` is the one log-prob function of the repo: the per-token log-probs,
logits and mask of each response given its prompt (:class:`ResponseScores`), for the GRPO
update (with gradients), the old-policy, reference and teacher forwards (without), SFT and
:meth:`agents.backends.hf.HFBackend.score`. :func:`response_logits` is its forward. The layout
is the one :class:`~agents.backends.hf.HFBackend` samples with — prompts left-padded and
``position_ids = cumsum(attention_mask) - 1`` (:mod:`agents.backends.padding`) — so the
log-probs recorded while sampling equal the ones recomputed here (up to float round-off).

Faster forwards that give the same logits (and gradients) up to float rounding:
``share_prompts`` (each distinct prompt, and the prefix all prompts start with, runs once and
its KV cache is reused by the rows that repeat it), ``bucket_cost`` (rows in length buckets)
and, without gradients, the lean scorer of plain Qwen3 models
(:func:`~agents.backends.lean_scoring.lean_response_logits`).
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from typing import Any, NamedTuple

import torch

from agents.backends.lean_decode import LeanDecoder, can_lean_decode
from agents.backends.lean_scoring import lean_response_logits
from agents.backends.length_buckets import length_buckets
from agents.backends.padding import left_pad, model_device, position_ids_from_mask, right_pad


class ResponseScores(NamedTuple):
    """What :func:`response_logprobs` returns for ``B`` rows, ``R`` = the longest response."""

    logprobs: torch.Tensor
    """Float32 ``[B, R]``: log-prob of each response token under ``softmax(logits)``; 0 at
    padding."""
    logits: torch.Tensor
    """Float32 ``[B, R, V]``: the logits that predict each response token (divided by the
    temperature when it is not 1); values at padding are arbitrary (mask them)."""
    mask: torch.Tensor
    """Bool ``[B, R]``: True at real response tokens."""


def response_logprobs(
    model: torch.nn.Module,
    prompt_ids: Sequence[Sequence[int]],
    response_ids: Sequence[Sequence[int]],
    *,
    pad_token_id: int = 0,
    temperature: float = 1.0,
    share_prompts: bool = False,
    bucket_cost: float | None = None,
) -> ResponseScores:
    """Log-probs, logits and mask of each response token given its prompt, in one forward.

    The batch is laid out as ``[left-padded prompt | right-padded response]`` with
    ``position_ids = cumsum(mask) - 1``, the layout :class:`~agents.backends.hf.HFBackend`
    samples with (:func:`response_logits`).

    Args:
        model: A causal LM (transformers or peft-wrapped); it is called as is, so the caller
            controls ``train()``/``eval()``, ``torch.no_grad()`` and autocast.
        prompt_ids: Prompt token ids per sample (at least one token each).
        response_ids: Response token ids per sample (may differ in length, may be empty).
        pad_token_id: Id used for padding (its value never affects the result).
        temperature: Divide logits by this before the log-softmax: both outputs are then those
            of the tempered policy ``softmax(logits / T)`` (1.0 = raw model, which is the
            convention of :class:`~agents.backends.base.Generation`).
        share_prompts: Rows that repeat a prompt (a GRPO group's first turn) share one forward
            of it, and the prefix every prompt starts with runs once (:func:`response_logits`).
        bucket_cost: Run rows in length buckets where the padding saved outweighs this many
            positions per extra forward (``None``: one pass).

    Returns:
        :class:`ResponseScores` ``(logprobs [B, R], logits [B, R, V], mask [B, R])``; the
        sharing and bucketing options change them only by float rounding.
    """
    if len(prompt_ids) != len(response_ids):
        raise ValueError("prompt_ids and response_ids must have the same length")
    if any(len(p) == 0 for p in prompt_ids):
        raise ValueError("every prompt needs at least one token")
    logits, ids, mask = response_logits(model, prompt_ids, response_ids, pad_token_id,
                                        share_prompts=share_prompts, bucket_cost=bucket_cost)
    if temperature != 1.0:
        logits = logits / temperature
    picked = logits.gather(-1, ids.unsqueeze(-1)).squeeze(-1)
    logprobs = picked - torch.logsumexp(logits, dim=-1)
    return ResponseScores(logprobs.masked_fill(~mask, 0.0), logits, mask)


def response_logits(
    model: torch.nn.Module,
    prompt_ids: Sequence[Sequence[int]],
    response_ids: Sequence[Sequence[int]],
    pad_token_id: int = 0,
    share_prompts: bool = False,
    bucket_cost: float | None = None,
    prefix: tuple[Any, int] | None = None,
    share_prefix: bool = True,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Float32 logits ``[B, R, V]`` that predict each response token, its ids and mask ``[B, R]``.

    One forward pass over ``[left-padded prompt | right-padded response]`` with
    ``position_ids = cumsum(mask) - 1``, the layout :class:`~agents.backends.hf.HFBackend`
    samples with.

    ``share_prompts``: when prompts repeat (a GRPO group's first turn), run the forward of each
    distinct prompt once, copy its KV cache to the rows that repeat it, and run the responses on
    top. Same logits up to float rounding; gradients flow through the shared prompt once per
    distinct prompt, summed over its rows (the chain rule's sum), so they equal the plain pass's.
    With gradients on, only attention-only models share (see :func:`_attention_only`).

    ``bucket_cost``: run the rows in buckets of similar length (rows repeating a prompt stay
    together), one forward each, where the padding saved outweighs ``bucket_cost`` positions per
    extra forward (:func:`~agents.backends.length_buckets.length_buckets`); ``None``: one pass.
    Same logits and gradients up to float rounding.

    With ``share_prompts`` and ``share_prefix`` the tokens every prompt starts with (the system
    prompt and task header) also run once, when that saves more than ``bucket_cost`` (default
    128) positions: the rest of each prompt and its response then run on their KV cache
    (``prefix``: that cache and its length; the prompts given are what follows it).
    """
    device = model_device(model)
    if share_prompts and prefix is None and (lean := _lean_scorer(model)) is not None:
        shared = (common_prefix_length(prompt_ids, 128.0 if bucket_cost is None else bucket_cost)
                  if share_prefix else 0)
        r_ids, r_mask = right_pad(response_ids, pad_token_id, device)
        return lean_response_logits(lean, prompt_ids, response_ids, shared), r_ids, r_mask.bool()
    checkpointing = model.training and getattr(model, "is_gradient_checkpointing", False)
    can_share = (any(response_ids) and not checkpointing  # checkpointing turns the KV cache off
                 and (not torch.is_grad_enabled() or _attention_only(model)))
    if share_prompts and share_prefix and can_share and prefix is None:
        length = common_prefix_length(prompt_ids, 128.0 if bucket_cost is None else bucket_cost)
        if length:
            return response_logits(model, [p[length:] for p in prompt_ids], response_ids,
                                   pad_token_id, share_prompts, bucket_cost,
                                   prefix=_prefix_cache(model, prompt_ids[0][:length], device))
    if bucket_cost is not None and len(prompt_ids) > 1:
        groups = _row_buckets(prompt_ids, response_ids, bucket_cost)
        if len(groups) > 1:
            parts = [response_logits(model, [prompt_ids[i] for i in group],
                                     [response_ids[i] for i in group], pad_token_id,
                                     share_prompts, prefix=prefix, share_prefix=share_prefix)
                     for group in groups]
            return _merge_row_buckets(parts, groups, pad_token_id)
    distinct: dict[tuple[int, ...], int] = {}
    rows = [distinct.setdefault(tuple(p), len(distinct)) for p in prompt_ids]
    if share_prompts and can_share and len(distinct) < len(prompt_ids):
        return _shared_prompt_logits(model, [list(p) for p in distinct], rows, response_ids,
                                     pad_token_id, device, prefix)
    p_ids, p_mask = left_pad(prompt_ids, pad_token_id, device)
    r_ids, r_mask = right_pad(response_ids, pad_token_id, device)
    n_resp = r_ids.shape[1]
    if n_resp == 0:
        empty = torch.zeros((len(prompt_ids), 0), device=device)
        return empty.unsqueeze(-1), r_ids, empty.bool()
    input_ids = torch.cat([p_ids, r_ids], dim=1)
    attention_mask = torch.cat([p_mask, r_mask], dim=1)
    cache, attention_mask, offset = _on_prefix(prefix, attention_mask, model)
    out = model(
        input_ids=input_ids,
        attention_mask=attention_mask,
        position_ids=position_ids_from_mask(attention_mask)[:, offset:],
        past_key_values=cache,
        use_cache=cache is not None,
        logits_to_keep=n_resp + 1,  # logits at the last prompt token and each response token
    )
    return out.logits[:, :-1, :].float(), r_ids, r_mask.bool()


_LEAN_SCORERS: weakref.WeakKeyDictionary[torch.nn.Module, LeanDecoder] = (
    weakref.WeakKeyDictionary())
"""One decoder per scored model, so its reused KV buffers outlive a call (it re-reads the
weights at every call: :meth:`LeanDecoder.bind`)."""


def _lean_scorer(model: torch.nn.Module) -> LeanDecoder | None:
    """A :class:`LeanDecoder` bound to ``model``'s current weights, for a forward without
    gradients (:func:`~agents.backends.lean_scoring.lean_response_logits`), where it computes
    the same: a plain Qwen3 model (:func:`can_lean_decode`), no autocast, no active dropout."""
    if torch.is_grad_enabled() or not can_lean_decode(model):
        return None
    device = model_device(model)
    if torch.is_autocast_enabled(device.type) or (
            model.training and getattr(model.config, "attention_dropout", 0.0)):
        return None
    lean = _LEAN_SCORERS.get(model)
    if lean is None:
        lean = _LEAN_SCORERS[model] = LeanDecoder(model)  # holds the model weakly
    lean.bind()
    return lean


def common_prefix_length(prompts: Sequence[Sequence[int]], extra_forward_cost: float) -> int:
    """Tokens every prompt starts with (each keeps one of its own), when running them once
    saves more than ``extra_forward_cost`` positions over running them in every distinct
    prompt; else 0."""
    distinct = list(dict.fromkeys(tuple(p) for p in prompts))
    if len(distinct) < 2:
        return 0
    first, longest = distinct[0], min(len(p) for p in distinct) - 1
    length = 0
    while length < longest and all(p[length] == first[length] for p in distinct):
        length += 1
    return length if (len(distinct) - 1) * length > extra_forward_cost else 0


def _prefix_cache(model: torch.nn.Module, prefix: Sequence[int],
                  device: torch.device) -> tuple[Any, int]:
    """The KV cache of ``prefix`` (one row, positions from 0) and its length."""
    ids = torch.tensor([list(prefix)], device=device)
    out = model(input_ids=ids, attention_mask=torch.ones_like(ids), use_cache=True,
                position_ids=torch.arange(len(prefix), device=device)[None], logits_to_keep=1)
    return out.past_key_values, len(prefix)


def _on_prefix(prefix: tuple[Any, int] | None, attention_mask: torch.Tensor,
               model: torch.nn.Module) -> tuple[Any, torch.Tensor, int]:
    """For rows that continue ``prefix``: a cache holding a broadcast view of its keys and
    values for every row, the mask with the prefix's columns in front, and the prefix length
    (``(None, mask, 0)`` without one). Gradients through the views sum into the prefix's one
    forward."""
    if prefix is None:
        return None, attention_mask, 0
    from transformers import DynamicCache

    cache, length = prefix
    rows = attention_mask.shape[0]
    copy = DynamicCache(config=model.config)
    for index, layer in enumerate(cache.layers):  # broadcast views: the forward's append copies
        copy.update(layer.keys.expand(rows, -1, -1, -1), layer.values.expand(rows, -1, -1, -1),
                    index)
    ones = attention_mask.new_ones(rows, length)
    return copy, torch.cat([ones, attention_mask], dim=1), length


def _row_buckets(prompt_ids: Sequence[Sequence[int]], response_ids: Sequence[Sequence[int]],
                 bucket_cost: float) -> list[list[int]]:
    """Rows grouped by the length of ``prompt + longest response`` of their prompt."""
    distinct: dict[tuple[int, ...], list[int]] = {}
    for row, prompt in enumerate(prompt_ids):
        distinct.setdefault(tuple(prompt), []).append(row)
    owners = list(distinct.values())
    lengths = [len(prompt_ids[rows[0]]) + max(len(response_ids[r]) for r in rows)
               for rows in owners]
    return [[row for index in bucket for row in owners[index]]
            for bucket in length_buckets(lengths, bucket_cost)]


def _merge_row_buckets(parts: list[tuple[torch.Tensor, torch.Tensor, torch.Tensor]],
                       groups: list[list[int]], pad_token_id: int,
                       ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Concatenate the buckets' ``(logits, ids, mask)``, padded to the longest response, back
    into row order."""
    width = max(ids.shape[1] for _, ids, _ in parts)
    logits = torch.cat([torch.nn.functional.pad(x, (0, 0, 0, width - x.shape[1]))
                        for x, _, _ in parts])
    ids = torch.cat([torch.nn.functional.pad(i, (0, width - i.shape[1]), value=pad_token_id)
                     for _, i, _ in parts])
    mask = torch.cat([torch.nn.functional.pad(m, (0, width - m.shape[1])) for _, _, m in parts])
    order = [row for group in groups for row in group]
    inverse = torch.empty(len(order), dtype=torch.long, device=ids.device)
    inverse[torch.tensor(order, device=ids.device)] = torch.arange(len(order), device=ids.device)
    return logits[inverse], ids[inverse], mask[inverse]


def _attention_only(model: torch.nn.Module) -> bool:
    """Whether every layer is (full or sliding-window) attention. Hybrid models (e.g. Qwen3.5's
    linear-attention layers) keep conv/recurrent state in the cache that the response pass updates
    in place, which breaks backward through a shared prompt: those run the plain pass."""
    config = getattr(model, "config", None)
    config = getattr(config, "text_config", None) or config
    layer_types = getattr(config, "layer_types", None)
    return layer_types is None or set(layer_types) <= {"full_attention", "sliding_attention"}


def _shared_prompt_logits(
    model: torch.nn.Module, prompts: list[list[int]], rows: list[int],
    response_ids: Sequence[Sequence[int]], pad_token_id: int, device: torch.device,
    prefix: tuple[Any, int] | None = None,
    share_prefix: bool = True,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """:func:`response_logits` with each distinct prompt's forward run once (``rows[i]``: the
    distinct prompt of row ``i``)."""
    p_ids, p_mask = left_pad(prompts, pad_token_id, device)
    cache, p_mask, offset = _on_prefix(prefix, p_mask, model)
    positions = position_ids_from_mask(p_mask)
    prefill = model(input_ids=p_ids, attention_mask=p_mask, position_ids=positions[:, offset:],
                    past_key_values=cache, use_cache=True, logits_to_keep=1)
    index = torch.tensor(rows, device=device)
    cache = prefill.past_key_values
    cache.reorder_cache(index)
    r_ids, r_mask = right_pad(response_ids, pad_token_id, device)
    attention_mask = torch.cat([p_mask[index], r_mask], dim=1)
    r_positions = positions[index, -1:] + torch.cumsum(r_mask, dim=1)
    out = model(input_ids=r_ids, attention_mask=attention_mask, position_ids=r_positions,
                past_key_values=cache, use_cache=True)
    logits = torch.cat([prefill.logits[index, -1:, :], out.logits[:, :-1, :]], dim=1)
    return logits.float(), r_ids, r_mask.bool()

