"""transformers backend: batched KV-cache sampling and training-time log-prob recomputation.

Prompts are left-padded and ``position_ids = cumsum(attention_mask) - 1`` (clamped at 0), both
when sampling and in :func:`response_logprobs`, so the log-probs recorded while sampling equal
the ones a trainer recomputes in one full forward pass (up to float round-off).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch

from agents.backends.base import FinishReason, Generation, PolicyBackend, SamplingParams

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
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Float32 logits ``[B, R, V]`` that predict each response token, its ids and mask ``[B, R]``.

    One forward pass over ``[left-padded prompt | right-padded response]`` with
    ``position_ids = cumsum(mask) - 1``, the layout :class:`HFBackend` samples with.

    ``share_prompts``: when prompts repeat (a GRPO group's first turn), run the forward of each
    distinct prompt once, copy its KV cache to the rows that repeat it, and run the responses on
    top. Same logits up to float rounding; gradients flow through the shared prompt once per
    distinct prompt, summed over its rows (the chain rule's sum), so they equal the plain pass's.
    With gradients on, only attention-only models share (see :func:`_attention_only`).
    """
    device = _model_device(model)
    distinct: dict[tuple[int, ...], int] = {}
    rows = [distinct.setdefault(tuple(p), len(distinct)) for p in prompt_ids]
    checkpointing = model.training and getattr(model, "is_gradient_checkpointing", False)
    if (share_prompts and len(distinct) < len(prompt_ids) and any(response_ids)
            and not checkpointing  # it turns the KV cache off
            and (not torch.is_grad_enabled() or _attention_only(model))):
        return _shared_prompt_logits(model, [list(p) for p in distinct], rows, response_ids,
                                     pad_token_id, device)
    p_ids, p_mask = left_pad(prompt_ids, pad_token_id, device)
    r_ids, r_mask = right_pad(response_ids, pad_token_id, device)
    n_resp = r_ids.shape[1]
    if n_resp == 0:
        empty = torch.zeros((len(prompt_ids), 0), device=device)
        return empty.unsqueeze(-1), r_ids, empty.bool()
    input_ids = torch.cat([p_ids, r_ids], dim=1)
    attention_mask = torch.cat([p_mask, r_mask], dim=1)
    out = model(
        input_ids=input_ids,
        attention_mask=attention_mask,
        position_ids=position_ids_from_mask(attention_mask),
        use_cache=False,
        logits_to_keep=n_resp + 1,  # logits at the last prompt token and each response token
    )
    return out.logits[:, :-1, :].float(), r_ids, r_mask.bool()


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
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """:func:`response_logits` with each distinct prompt's forward run once (``rows[i]``: the
    distinct prompt of row ``i``)."""
    p_ids, p_mask = left_pad(prompts, pad_token_id, device)
    positions = position_ids_from_mask(p_mask)
    prefill = model(input_ids=p_ids, attention_mask=p_mask, position_ids=positions,
                    use_cache=True, logits_to_keep=1)
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
    logits: torch.Tensor, params: SamplingParams, generator: torch.Generator | None
) -> torch.Tensor:
    """Pick the next token per row from ``logits [B, V]`` (greedy, temperature, top-p)."""
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
    return torch.multinomial(probs, 1, generator=generator).squeeze(-1)


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
            first prompt). The rows still sample independently, from the same generator stream.
        drop_finished_rows: Stop running the forward for rows that have finished (their KV
            cache rows are dropped once an eighth of the batch has finished since the last cut).
            Sampling still draws for the whole batch, so every row gets the tokens it would get
            without the cut (up to float rounding of the smaller batch's matmuls).
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
        generator = None
        if params.seed is not None and params.temperature > 0:
            generator = torch.Generator(device=self.device).manual_seed(params.seed)
        results: list[Generation] = []
        was_training = self.model.training
        self.model.eval()
        try:
            for chunk in self._chunks(prompt_ids):
                results.extend(self._generate_batch(chunk, params, generator))
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
        rows = [distinct.setdefault(tuple(p), len(distinct)) for p in prompt_ids]
        shared = self.share_prompt_prefill and len(distinct) < batch
        prefill = [list(p) for p in distinct] if shared else prompt_ids
        input_ids, attention_mask = left_pad(prefill, self.pad_token_id, self.device)
        positions = position_ids_from_mask(attention_mask)
        out = self.model(
            input_ids=input_ids,
            attention_mask=attention_mask,
            position_ids=positions,
            use_cache=True,
            logits_to_keep=1,
        )
        logits_last, cache = out.logits[:, -1, :], out.past_key_values
        if shared:  # copy each distinct prompt's state to the rows that repeat it
            index = torch.tensor(rows, device=self.device)
            logits_last, attention_mask, positions = (
                logits_last[index], attention_mask[index], positions[index])
            cache.reorder_cache(index)
        next_pos = positions[:, -1:] + 1
        stop_ids = self.eos_token_ids | set(params.stop_token_ids)
        responses: list[list[int]] = [[] for _ in range(batch)]
        logprobs: list[list[float]] = [[] for _ in range(batch)]
        reasons: list[FinishReason | None] = [None] * batch
        logits = logits_last.float()
        running = list(range(batch))  # the rows the forward still runs, in cache order
        for step in range(params.max_new_tokens):
            tokens = sample_next(logits, params, generator)  # the whole batch: one stream
            token_lp = logits.gather(-1, tokens[:, None]).squeeze(-1) - torch.logsumexp(
                logits, dim=-1
            )
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
            live = [i for i, row in enumerate(running) if reasons[row] is None]
            if self.drop_finished_rows and len(live) <= len(running) * 7 // 8:
                keep = torch.tensor(live, device=self.device)
                cache.reorder_cache(keep)
                attention_mask, next_pos = attention_mask[keep], next_pos[keep]
                running = [running[i] for i in live]
            rows_now = torch.tensor(running, device=self.device)
            attention_mask = torch.cat(
                [attention_mask, attention_mask.new_ones(len(running), 1)], 1)
            out = self.model(
                input_ids=tokens[rows_now][:, None],
                attention_mask=attention_mask,
                position_ids=next_pos,
                past_key_values=cache,
                use_cache=True,
            )
            cache = out.past_key_values
            logits[rows_now] = out.logits[:, -1, :].float()
            next_pos = next_pos + 1
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
