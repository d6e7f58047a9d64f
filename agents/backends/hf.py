"""transformers backend: batched KV-cache sampling (generation only).

Prompts are left-padded and ``position_ids = cumsum(attention_mask) - 1`` (clamped at 0)
(:mod:`agents.backends.padding`), the layout training-time scoring uses too
(:mod:`agents.backends.scoring`), so the log-probs recorded while sampling equal the ones a
trainer recomputes in one full forward pass (up to float round-off). :meth:`HFBackend.score`
delegates to :func:`~agents.backends.scoring.response_logprobs`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch

from agents.backends.base import FinishReason, Generation, PolicyBackend, SamplingParams
from agents.backends.decode_attention import grouped_decoding
from agents.backends.kv_buffers import ReusedKVCache
from agents.backends.lean_decode import LeanDecoder, can_lean_decode
from agents.backends.length_buckets import length_buckets
from agents.backends.padding import left_pad, position_ids_from_mask
from agents.backends.row_streams import uniforms
from agents.backends.scoring import (
    _on_prefix,
    _prefix_cache,
    common_prefix_length,
    response_logprobs,
)

if TYPE_CHECKING:
    from peft import LoraConfig
    from transformers import PreTrainedModel, PreTrainedTokenizerBase


def _full_attention_only(model: torch.nn.Module) -> bool:
    """Whether every layer attends to the whole context (no sliding window, no linear or
    recurrent state): then prefill caches can be merged and preallocated."""
    config = getattr(model, "config", None)
    config = getattr(config, "text_config", None) or config
    layer_types = getattr(config, "layer_types", None)
    return ((layer_types is None or set(layer_types) <= {"full_attention"})
            and not getattr(config, "use_sliding_window", False))


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
        """Raw-model log-probs of each response token (no grad), as Python lists
        (:func:`~agents.backends.scoring.response_logprobs` in chunks of
        :attr:`max_batch_size`)."""
        if len(prompt_ids) != len(response_ids):
            raise ValueError("prompt_ids and response_ids must have the same length")
        pairs = list(zip(prompt_ids, response_ids))
        result: list[list[float]] = []
        was_training = self.model.training
        self.model.eval()
        try:
            with torch.no_grad():
                for chunk in self._chunks(pairs):
                    scores = response_logprobs(
                        self.model,
                        [p for p, _ in chunk],
                        [r for _, r in chunk],
                        pad_token_id=self.pad_token_id,
                    )
                    for row in range(len(chunk)):
                        result.append(scores.logprobs[row][scores.mask[row]].tolist())
        finally:
            self.model.train(was_training)
        return result
