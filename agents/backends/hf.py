"""transformers backend: batched KV-cache sampling and training-time log-prob recomputation.

Prompts are left-padded and ``position_ids = cumsum(attention_mask) - 1`` (clamped at 0), both
when sampling and in :func:`response_logprobs`, so the log-probs recorded while sampling equal
the ones a trainer recomputes in one full forward pass (up to float round-off).
"""

from __future__ import annotations

import dataclasses
import weakref
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch

from agents.backends.base import FinishReason, Generation, PolicyBackend, SamplingParams
from agents.backends.decode_attention import grouped_decoding
from agents.backends.kv_buffers import ReusedKVCache
from agents.backends.lean_decode import LeanDecoder, can_lean_decode
from agents.backends.lean_scoring import lean_response_logits
from agents.backends.length_buckets import length_buckets
from agents.backends.row_streams import uniforms

if TYPE_CHECKING:
    from peft import LoraConfig
    from transformers import PreTrainedModel, PreTrainedTokenizerBase


def pad_sequences(
    seqs: Sequence[Sequence[int]],
    pad_token_id: int,
    side: str,
    device: torch.device | str = "cpu",
) -> tuple[torch.Tensor, torch.Tensor]:
    """Pad token id lists on ``side`` (``"left"``/``"right"``) into ``(ids, mask)`` ``[B, L]``."""
    width = max((len(s) for s in seqs), default=0)
    ids = torch.full((len(seqs), width), pad_token_id, dtype=torch.long)
    mask = torch.zeros((len(seqs), width), dtype=torch.long)
    for row, seq in enumerate(seqs):
        if seq:
            span = slice(width - len(seq), width) if side == "left" else slice(0, len(seq))
            ids[row, span] = torch.tensor(list(seq), dtype=torch.long)
            mask[row, span] = 1
    return ids.to(device), mask.to(device)


def left_pad(
    seqs: Sequence[Sequence[int]], pad_token_id: int, device: torch.device | str = "cpu"
) -> tuple[torch.Tensor, torch.Tensor]:
    """Left-pad token id lists into ``(input_ids, attention_mask)`` long tensors ``[B, L]``."""
    return pad_sequences(seqs, pad_token_id, "left", device)


def right_pad(
    seqs: Sequence[Sequence[int]], pad_token_id: int, device: torch.device | str = "cpu"
) -> tuple[torch.Tensor, torch.Tensor]:
    """Right-pad token id lists into ``(input_ids, attention_mask)`` long tensors ``[B, L]``."""
    return pad_sequences(seqs, pad_token_id, "right", device)


def position_ids_from_mask(attention_mask: torch.Tensor) -> torch.Tensor:
    """Positions that skip left padding: ``cumsum(mask) - 1`` clamped at 0."""
    return (attention_mask.long().cumsum(-1) - 1).clamp(min=0)


def _model_device(model: torch.nn.Module) -> torch.device:
    return next(model.parameters()).device


def response_logprobs(
    model: torch.nn.Module,
    prompt_ids: Sequence[Sequence[int]],
    response_ids: Sequence[Sequence[int]],
    *,
    pad_token_id: int = 0,
    temperature: float = 1.0,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Log-probs of each response token given its prompt, in one forward pass (grad-enabled).

    The batch is laid out as ``[left-padded prompt | right-padded response]`` with
    ``position_ids = cumsum(mask) - 1``, the same layout :class:`HFBackend` samples with.

    Args:
        model: A causal LM (transformers or peft-wrapped); it is called as is, so the caller
            controls ``train()``/``eval()`` and ``torch.no_grad()``.
        prompt_ids: Prompt token ids per sample.
        response_ids: Response token ids per sample (may differ in length, may be empty).
        pad_token_id: Id used for padding (its value never affects the result).
        temperature: Divide logits by this before the log-softmax (1.0 = raw model, which
            is the convention of :class:`~agents.backends.base.Generation`).

    Returns:
        ``(logprobs, mask)``: float32 tensor ``[B, R]`` (``R`` = longest response) and a
        bool tensor ``[B, R]`` that is True at real response tokens. Padded entries are 0.
    """
    if len(prompt_ids) != len(response_ids):
        raise ValueError("prompt_ids and response_ids must have the same length")
    if any(len(p) == 0 for p in prompt_ids):
        raise ValueError("every prompt needs at least one token")
    logits, r_ids, mask = response_logits(model, prompt_ids, response_ids, pad_token_id)
    if temperature != 1.0:
        logits = logits / temperature
    picked = logits.gather(-1, r_ids.unsqueeze(-1)).squeeze(-1)
    logprobs = picked - torch.logsumexp(logits, dim=-1)
    return logprobs.masked_fill(~mask, 0.0), mask


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
    ``position_ids = cumsum(mask) - 1``, the layout :class:`HFBackend` samples with.

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
    128) positions: the
    rest of each prompt and its response then run on their KV cache (``prefix``: that cache and
    its length; the prompts given are what follows it).
    """
    device = _model_device(model)
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
    device = _model_device(model)
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


def _full_attention_only(model: torch.nn.Module) -> bool:
    """Whether every layer attends to the whole context (no sliding window, no linear or
    recurrent state): then prefill caches can be merged and preallocated."""
    config = getattr(model, "config", None)
    config = getattr(config, "text_config", None) or config
    layer_types = getattr(config, "layer_types", None)
    return ((layer_types is None or set(layer_types) <= {"full_attention"})
            and not getattr(config, "use_sliding_window", False))


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


def sample_next(
    logits: torch.Tensor, params: SamplingParams, generator: torch.Generator | None,
    row_uniforms: torch.Tensor | None = None,
) -> torch.Tensor:
    """Pick the next token per row from ``logits [B, V]`` (greedy, temperature, top-p).

    Inverse-CDF sampling: row ``b`` takes the token where a uniform draw falls in its
    cumulative distribution (about 10× cheaper on CPU than ``torch.multinomial`` at a 2k
    vocabulary). The uniforms are ``row_uniforms [B]`` (float64 in [0, 1),
    :mod:`agents.backends.row_streams`: each row's draw depends on its own row only), else one
    ``generator`` stream's draws for the whole batch."""
    if params.temperature == 0:
        return logits.argmax(dim=-1)
    scaled = logits.float() / params.temperature
    if params.top_p < 1.0:
        sorted_logits, order = scaled.sort(dim=-1, descending=True)
        probs = sorted_logits.softmax(dim=-1)
        drop = probs.cumsum(dim=-1) - probs > params.top_p  # always keeps the top token
        sorted_logits = sorted_logits.masked_fill(drop, float("-inf"))
        scaled = torch.full_like(scaled, float("-inf")).scatter(-1, order, sorted_logits)
    probs = scaled.softmax(dim=-1)
    cdf = probs.double().cumsum(dim=-1)
    if row_uniforms is None:
        row_uniforms = torch.rand(len(cdf), generator=generator, dtype=torch.float64,
                                  device=cdf.device)
    target = (row_uniforms.to(cdf.device) * cdf[:, -1])[:, None]
    picked = torch.searchsorted(cdf, target, right=True).squeeze(-1)
    return picked.clamp(max=probs.shape[-1] - 1)  # zero-probability tokens are never picked


def find_stop(text: str, stops: Sequence[str]) -> tuple[int, str] | None:
    """Earliest occurrence of any stop string in ``text`` as ``(index, stop)``, else None."""
    hits = [(i, s) for s in stops if s and (i := text.find(s)) >= 0]
    return min(hits, key=lambda h: (h[0], -len(h[1]))) if hits else None


def cut_at_stop(text: str, stops: Sequence[str], include: bool) -> str:
    """Truncate ``text`` at the earliest stop string (keeping it when ``include``)."""
    hit = find_stop(text, stops)
    if hit is None:
        return text
    index, stop = hit
    return text[: index + len(stop)] if include else text[:index]


def _pad_columns(x: torch.Tensor, width: int, front: int, dim: int) -> torch.Tensor:
    """``x`` widened to ``width`` along ``dim`` with zeros inserted after its first ``front``
    entries (``front = 0``: left padding)."""
    missing = width - x.shape[dim]
    if missing == 0:
        return x
    shape = list(x.shape)
    shape[dim] = missing
    head, tail = x.narrow(dim, 0, front), x.narrow(dim, front, x.shape[dim] - front)
    return torch.cat([head, x.new_zeros(shape), tail], dim=dim)


def _merged_cache(target: Any, caches: list[Any], width: int, config: Any,
                  front: int = 0) -> Any:
    """One cache holding the prefill caches ``caches`` row after row, each widened to ``width``
    with zeros after its first ``front`` columns (``front = 0``: left padding; a shared prefix's
    length: the prefix stays in columns ``[0, front)`` of every row), written into ``target`` (a
    preallocated cache) or a new dynamic cache through the cache's own ``update``."""
    if target is None:
        from transformers import DynamicCache

        target = DynamicCache(config=config)
    for layer in range(len(caches[0].layers)):
        keys = [_pad_columns(cache.layers[layer].keys, width, front, 2) for cache in caches]
        values = [_pad_columns(cache.layers[layer].values, width, front, 2) for cache in caches]
        target.update(torch.cat(keys), torch.cat(values), layer)
    return target


class _DecodeState:
    """The batch being decoded: its KV cache, attention mask and next positions, the rows the
    forward still runs (in cache order), and the logits of their last prefill position."""

    def __init__(self, rows: list[int], cache: Any, attention_mask: torch.Tensor,
                 next_pos: torch.Tensor, logits: torch.Tensor, shared_columns: int = 0) -> None:
        self.running, self.cache, self.logits = rows, cache, logits
        self.attention_mask, self.next_pos = attention_mask, next_pos
        self.shared_columns = shared_columns
        """Leading cache columns that hold the same prefix in every row."""
        self.rows_tensor = torch.tensor(rows, device=logits.device)

    def _keep(self, rows: list[int]) -> None:
        """Keep the per-row state of ``rows`` (indices into the current rows), in that order:
        the order the cache now holds them in."""
        keep = torch.tensor(rows, device=self.next_pos.device)
        self.attention_mask, self.next_pos = self.attention_mask[keep], self.next_pos[keep]
        self.running = [self.running[i] for i in rows]
        self.rows_tensor = self.rows_tensor[keep]

    def decode(self, model: torch.nn.Module, tokens: torch.Tensor,
               reasons: Sequence[FinishReason | None], logits: torch.Tensor,
               drop_finished: bool, lean: LeanDecoder | None = None) -> None:
        """Feed this step's ``tokens`` of the still-running rows; write their next ``logits``.
        With ``drop_finished``, rows that finished leave the forward: a reused cache
        (:class:`ReusedKVCache`) drops them at once, moving live rows into their slots
        (:meth:`ReusedKVCache.keep_rows`); any other cache once an eighth of the batch has
        finished since the last cut (it copies every row kept). With ``lean`` (a preallocated
        cache only), the step runs through :class:`LeanDecoder`."""
        live = [i for i, row in enumerate(self.running) if reasons[row] is None]
        if not live:
            return
        reused = isinstance(self.cache, ReusedKVCache)
        if drop_finished and reused and len(live) < len(self.running):
            self._keep(self.cache.keep_rows(live))  # moves only the rows beyond the live count
        elif drop_finished and len(live) <= len(self.running) * 7 // 8:
            self.cache.reorder_cache(torch.tensor(live, device=self.next_pos.device))
            self._keep(live)
        self.attention_mask = torch.cat(
            [self.attention_mask, self.attention_mask.new_ones(len(self.running), 1)], 1)
        if lean is not None:
            logits[self.rows_tensor] = lean.step(tokens[self.rows_tensor], self.next_pos,
                                                 self.cache, self.attention_mask,
                                                 self.shared_columns)
            self.next_pos = self.next_pos + 1
            return
        out = model(input_ids=tokens[self.rows_tensor][:, None],
                    attention_mask=self.attention_mask, position_ids=self.next_pos,
                    past_key_values=self.cache, use_cache=True)
        self.cache = out.past_key_values
        logits[self.rows_tensor] = out.logits[:, -1, :].float()
        self.next_pos = self.next_pos + 1


class HFBackend(PolicyBackend):
    """Sample from a transformers causal LM on one device, with an optional LoRA adapter.

    Args:
        model: A model folder/hub id (loaded with ``AutoModelForCausalLM``) or a model.
        tokenizer: Tokenizer; loaded from ``model`` when it is a path and this is None.
        device: Torch device for the model.
        dtype: Weight dtype when loading from a path (default float32); when a model object
            is given it is converted only if ``dtype`` is set.
        lora: A ``peft.LoraConfig``; the model is wrapped with ``peft.get_peft_model``.
        eos_token_ids: Ids that end a response; default: tokenizer EOS, the model's
            generation-config EOS ids and ``<|im_end|>`` when the vocabulary has it.
        max_batch_size: Split larger calls into micro-batches of this size.
        attn_implementation: Passed to ``from_pretrained`` (e.g. ``"eager"``, ``"sdpa"``).
        share_prompt_prefill: Run the prompt forward once per *distinct* prompt of a call and
            copy its KV cache to every row that repeats it (a GRPO group's G members share their
            first prompt). The rows still sample independently (one generator stream, or their
            own row streams when ``SamplingParams.row_seeds`` is given).
        drop_finished_rows: Stop running the forward for rows that have finished (the lean
            decoder's reused cache drops their KV-cache rows at the step they finish, moving
            live rows into their slots; a transformers cache once an eighth of the batch has
            finished since the last cut).
            Sampling still draws for the whole batch, so every row gets the tokens it would get
            without the cut (up to float rounding of the smaller batch's matmuls).
        length_buckets: Prefill the (distinct) prompts in buckets of similar length where the
            padding saved outweighs an extra forward (:mod:`agents.backends.length_buckets`);
            their caches are then laid side by side as one left-padded cache, so decoding stays
            one forward per step (attention-only models).
        bucket_cost: An extra prefill forward's price in prompt positions.
        grouped_decode_attention: Decode steps attend with the query heads grouped onto their
            key/value heads instead of copying the cache for every head
            (:mod:`agents.backends.decode_attention`; models on transformers' sdpa only).
        static_cache: Preallocate the KV cache for prompt + ``max_new_tokens`` (no copy per
            step); attention-only models only (hybrid models keep the dynamic cache).
        shared_prefix: Run the tokens that every (distinct) prompt of a call starts with (a
            system prompt and task header) once and prefill only the rest of each prompt on
            top of their KV cache, where that saves more than an extra forward costs;
            attention-only models only.
        lean_decode: Run the prefill and decode steps of a plain float32 Qwen3 model through
            :class:`~agents.backends.lean_decode.LeanDecoder` (the same math in plain tensor
            ops, prompts packed, without transformers' per-call work) on a preallocated cache;
            other models, or ``static_cache=False``, run through the model's forward.
    """

    def __init__(
        self,
        model: str | Path | PreTrainedModel,
        tokenizer: PreTrainedTokenizerBase | None = None,
        *,
        device: str | torch.device = "cpu",
        dtype: torch.dtype | None = None,
        lora: LoraConfig | None = None,
        eos_token_ids: Sequence[int] | None = None,
        max_batch_size: int | None = None,
        attn_implementation: str | None = None,
        share_prompt_prefill: bool = True,
        drop_finished_rows: bool = True,
        length_buckets: bool = True,
        bucket_cost: float = 128.0,
        grouped_decode_attention: bool = True,
        static_cache: bool = True,
        shared_prefix: bool = True,
        lean_decode: bool = True,
    ) -> None:
        if isinstance(model, (str, Path)):
            from transformers import AutoModelForCausalLM, AutoTokenizer

            kwargs: dict[str, Any] = {"dtype": dtype or torch.float32}
            if attn_implementation:
                kwargs["attn_implementation"] = attn_implementation
            if tokenizer is None:
                tokenizer = AutoTokenizer.from_pretrained(model)
            model = AutoModelForCausalLM.from_pretrained(model, **kwargs)
        elif dtype is not None:
            model = model.to(dtype)
        if tokenizer is None:
            raise ValueError("a tokenizer is required when passing a model object")
        if lora is not None:
            try:
                from peft import get_peft_model
            except ImportError as err:
                raise ImportError("LoRA needs peft: pip install 'sdgym[lora]'") from err
            model = get_peft_model(model, lora)
        self.model = model.to(device)
        self.tokenizer = tokenizer
        self.device = torch.device(device)
        self.max_batch_size = max_batch_size
        self.share_prompt_prefill = share_prompt_prefill
        self.drop_finished_rows = drop_finished_rows
        self.length_buckets = length_buckets
        self.bucket_cost = bucket_cost
        self.grouped_decode_attention = grouped_decode_attention
        self.static_cache = static_cache
        self.shared_prefix = shared_prefix
        self.lean_decode = lean_decode
        self._lean: LeanDecoder | None = None
        self.pad_token_id = self._pad_id(tokenizer)
        self.eos_token_ids = (
            frozenset(eos_token_ids) if eos_token_ids is not None else self._default_eos()
        )

    @staticmethod
    def _pad_id(tokenizer: Any) -> int:
        for candidate in (tokenizer.pad_token_id, tokenizer.eos_token_id, 0):
            if candidate is not None:
                return int(candidate)
        return 0

    def _default_eos(self) -> frozenset[int]:
        ids: set[int] = set()
        if self.tokenizer.eos_token_id is not None:
            ids.add(int(self.tokenizer.eos_token_id))
        gen_cfg = getattr(self.model, "generation_config", None)
        cfg_eos = getattr(gen_cfg, "eos_token_id", None)
        if isinstance(cfg_eos, int):
            ids.add(cfg_eos)
        elif cfg_eos:
            ids.update(int(i) for i in cfg_eos)
        im_end = self.tokenizer.convert_tokens_to_ids("<|im_end|>")
        if isinstance(im_end, int) and im_end != self.tokenizer.unk_token_id:
            ids.add(im_end)
        return frozenset(ids)

    def encode(self, prompts: Sequence[str]) -> list[list[int]]:
        """Tokenize rendered prompts (no extra BOS/EOS: the template has them)."""
        return [
            list(ids)
            for ids in self.tokenizer(list(prompts), add_special_tokens=False)["input_ids"]
        ]

    def generate(self, prompts: Sequence[str], params: SamplingParams) -> list[Generation]:
        """Sample one response per prompt; see :class:`~agents.backends.base.Generation`."""
        return self.generate_from_ids(self.encode(prompts), params)

    def generate_from_ids(
        self, prompt_ids: Sequence[Sequence[int]], params: SamplingParams
    ) -> list[Generation]:
        """Like :meth:`generate`, for prompts that are already token ids."""
        if any(len(p) == 0 for p in prompt_ids):
            raise ValueError("every prompt needs at least one token")
        params.check_rows(len(prompt_ids))
        generator = None
        if params.seed is not None and params.temperature > 0 and params.row_seeds is None:
            generator = torch.Generator(device=self.device).manual_seed(params.seed)
        results: list[Generation] = []
        was_training = self.model.training
        self.model.eval()
        try:
            for rows in self._chunks(range(len(prompt_ids))):
                chunk_params = params if params.row_seeds is None else dataclasses.replace(
                    params, row_seeds=[params.row_seeds[i] for i in rows])
                results.extend(self._generate_batch([prompt_ids[i] for i in rows],
                                                    chunk_params, generator))
        finally:
            self.model.train(was_training)
        return results

    def _chunks(self, items: Sequence[Any]) -> list[Sequence[Any]]:
        size = self.max_batch_size or max(len(items), 1)
        return [items[i : i + size] for i in range(0, len(items), size)]

    @torch.no_grad()
    def _generate_batch(
        self,
        prompt_ids: Sequence[Sequence[int]],
        params: SamplingParams,
        generator: torch.Generator | None,
    ) -> list[Generation]:
        batch = len(prompt_ids)
        distinct: dict[tuple[int, ...], int] = {}
        owner = [distinct.setdefault(tuple(p), len(distinct)) for p in prompt_ids]
        if self.share_prompt_prefill and len(distinct) < batch:
            prefill = [list(p) for p in distinct]
        else:
            prefill, owner = [list(p) for p in prompt_ids], list(range(batch))
        stop_ids = self.eos_token_ids | set(params.stop_token_ids)
        responses: list[list[int]] = [[] for _ in range(batch)]
        logprobs: list[list[float]] = [[] for _ in range(batch)]
        reasons: list[FinishReason | None] = [None] * batch
        with grouped_decoding(self.model, self.grouped_decode_attention):
            lean = self._lean_decoder()
            state = self._prefill(prefill, owner, params.max_new_tokens, lean)
            try:
                self._sample(state, lean, params, generator, stop_ids, responses, logprobs,
                             reasons)
            finally:
                if isinstance(state.cache, ReusedKVCache):
                    state.cache.release()
        return [
            Generation(
                text=self._decode(resp, params),
                prompt_ids=list(prompt),
                response_ids=resp,
                logprobs=lps,
                finish_reason=reason or "length",
            )
            for prompt, resp, lps, reason in zip(prompt_ids, responses, logprobs, reasons)
        ]

    def _sample(self, state: _DecodeState, lean: LeanDecoder | None, params: SamplingParams,
                generator: torch.Generator | None, stop_ids: set[int] | frozenset[int],
                responses: list[list[int]], logprobs: list[list[float]],
                reasons: list[FinishReason | None]) -> None:
        """Sample from ``state`` and decode until every row has finished, appending each row's
        tokens, log-probs and finish reason to ``responses``, ``logprobs`` and ``reasons``."""
        logits = state.logits
        for step in range(params.max_new_tokens):
            draws = (None if params.row_seeds is None or params.temperature == 0 else
                     torch.from_numpy(uniforms(params.row_seeds, step)))
            tokens = sample_next(logits, params, generator, draws)  # one stream or per row
            token_lp = logits.gather(-1, tokens[:, None]).squeeze(-1) - torch.logsumexp(
                logits, dim=-1)
            for row, (tok, lp) in enumerate(zip(tokens.tolist(), token_lp.tolist())):
                if reasons[row] is not None:
                    continue
                responses[row].append(tok)
                logprobs[row].append(lp)
                if tok in stop_ids or self._hits_stop_string(responses[row], params.stop):
                    reasons[row] = "stop"
                elif step == params.max_new_tokens - 1:
                    reasons[row] = "length"
            if all(r is not None for r in reasons):
                break
            state.decode(self.model, tokens, reasons, logits, self.drop_finished_rows, lean)

    def _lean_decoder(self) -> LeanDecoder | None:
        """The :class:`LeanDecoder` for this call's prefill and decode steps (bound to the
        current weights), when :attr:`lean_decode` and :attr:`static_cache` are on and the model
        qualifies (:func:`~agents.backends.lean_decode.can_lean_decode`)."""
        if not (self.lean_decode and self.static_cache and can_lean_decode(self.model)):
            return None
        if self._lean is None or self._lean.model is not self.model:
            self._lean = LeanDecoder(self.model)
        self._lean.bind()
        return self._lean

    def _prefill(self, prompts: list[list[int]], owner: list[int], max_new_tokens: int,
                 lean: LeanDecoder | None = None) -> _DecodeState:
        """Run the prompts' forward and give every row its prompt's state (``owner[row]``):
        with ``lean``, packed through :meth:`LeanDecoder.prefill`; else with
        :attr:`length_buckets`, in buckets of similar length whose KV caches are then laid
        side by side, left-padded to the longest, as one cache (attention-only models)."""
        attention_only = _full_attention_only(self.model)
        shared = self._shared_prefix_length(prompts) if attention_only else 0
        if lean is not None:
            return self._lean_prefill(lean, prompts, owner, max_new_tokens, shared)
        prefix = _prefix_cache(self.model, prompts[0][:shared], self.device) if shared else None
        groups = (length_buckets([len(p) - shared for p in prompts], self.bucket_cost)
                  if self.length_buckets and attention_only else [list(range(len(prompts)))])
        pieces = [self._prefill_group([prompts[i][shared:] for i in group], prefix)
                  for group in groups]
        width = max(mask.shape[1] for _, mask, _, _ in pieces)
        order = [i for group in groups for i in group]
        cache = None
        if self.static_cache and attention_only:
            from transformers import StaticCache

            cache = StaticCache(config=self.model.config, max_cache_len=width + max_new_tokens)
        if len(pieces) == 1 and cache is None:
            cache = pieces[0][3]
        else:
            cache = _merged_cache(cache, [piece[3] for piece in pieces], width,
                                  self.model.config, front=shared)
        attention_mask = torch.cat([_pad_columns(mask, width, shared, 1)
                                    for _, mask, _, _ in pieces])
        logits = torch.cat([piece[0] for piece in pieces])
        next_pos = torch.cat([piece[2] for piece in pieces])
        slot = {prompt: i for i, prompt in enumerate(order)}
        return self._rows_state([slot[owner[row]] for row in range(len(owner))], cache,
                                attention_mask, next_pos, logits, shared)

    def _lean_prefill(self, lean: LeanDecoder, prompts: list[list[int]], owner: list[int],
                      max_new_tokens: int, shared: int) -> _DecodeState:
        """:meth:`_prefill` through :meth:`LeanDecoder.prefill` (prompts packed, no buckets)
        into a reused cache (:meth:`LeanDecoder.new_cache`; released at the end of the call) laid
        out ``[shared prefix | left padding | prompt]``."""
        rest = [p[shared:] for p in prompts]
        width = max(len(p) for p in rest)
        cache = lean.new_cache(len(rest), shared + width + max_new_tokens)
        try:
            logits = lean.prefill(rest, cache, prompts[0][:shared])
            _, attention_mask = left_pad(rest, self.pad_token_id, self.device)
            attention_mask = torch.cat([attention_mask.new_ones(len(rest), shared),
                                        attention_mask], 1)
            next_pos = torch.tensor([[len(p)] for p in prompts], device=self.device)
            return self._rows_state(owner, cache, attention_mask, next_pos, logits, shared)
        except BaseException:
            cache.release()
            raise

    def _rows_state(self, index: list[int], cache: Any, attention_mask: torch.Tensor,
                    next_pos: torch.Tensor, logits: torch.Tensor, shared: int) -> _DecodeState:
        """The decode state of the call's rows, row ``r`` taking prefill entry ``index[r]``
        (each prompt's state copied to the rows repeating it)."""
        if index != list(range(len(logits))):
            select = torch.tensor(index, device=self.device)
            logits, attention_mask, next_pos = logits[select], attention_mask[select], next_pos[select]
            cache.reorder_cache(select)
        return _DecodeState(list(range(len(index))), cache, attention_mask, next_pos, logits,
                            shared)

    def _shared_prefix_length(self, prompts: list[list[int]]) -> int:
        """Tokens every prompt of the call starts with, when worth one extra forward
        (:func:`common_prefix_length`; 0 without :attr:`shared_prefix`)."""
        return common_prefix_length(prompts, self.bucket_cost) if self.shared_prefix else 0

    def _prefill_group(self, prompts: list[list[int]], prefix: tuple[Any, int] | None = None,
                       ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, Any]:
        """``(last logits, attention mask, next positions, cache)`` of one left-padded batch;
        with a ``prefix`` cache, ``prompts`` are what follows it: the batch is laid out
        ``[prefix | left-padded rest]`` (positions count real tokens only, so they are the
        plain layout's)."""
        input_ids, attention_mask = left_pad(prompts, self.pad_token_id, self.device)
        positions = position_ids_from_mask(attention_mask)
        cache, attention_mask, length = _on_prefix(prefix, attention_mask, self.model)
        positions = positions + length
        out = self.model(input_ids=input_ids, attention_mask=attention_mask,
                         position_ids=positions, past_key_values=cache, use_cache=True,
                         logits_to_keep=1)
        return (out.logits[:, -1, :].float(), attention_mask, positions[:, -1:] + 1,
                out.past_key_values)

    def _hits_stop_string(self, response: list[int], stops: Sequence[str]) -> bool:
        if not stops:
            return False
        text = self.tokenizer.decode(response, skip_special_tokens=True)
        return find_stop(text, stops) is not None

    def _decode(self, response: list[int], params: SamplingParams) -> str:
        text = self.tokenizer.decode(response, skip_special_tokens=True)
        return cut_at_stop(text, params.stop, params.include_stop_str_in_output)

    def score(
        self, prompt_ids: Sequence[Sequence[int]], response_ids: Sequence[Sequence[int]]
    ) -> list[list[float]]:
        """Raw-model log-probs of each response token (no grad), as Python lists."""
        if len(prompt_ids) != len(response_ids):
            raise ValueError("prompt_ids and response_ids must have the same length")
        pairs = list(zip(prompt_ids, response_ids))
        result: list[list[float]] = []
        was_training = self.model.training
        self.model.eval()
        try:
            with torch.no_grad():
                for chunk in self._chunks(pairs):
                    lps, mask = response_logprobs(
                        self.model,
                        [p for p, _ in chunk],
                        [r for _, r in chunk],
                        pad_token_id=self.pad_token_id,
                    )
                    for row in range(len(chunk)):
                        result.append(lps[row][mask[row]].tolist())
        finally:
            self.model.train(was_training)
        return result
