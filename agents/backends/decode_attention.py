"""Decode-step attention without copying the KV cache for grouped-query heads.

transformers' ``sdpa`` attention expands a grouped-query (GQA) model's key/value heads to the
query heads (``repeat_kv``, a full copy of the cache) whenever an attention mask is given — and
decoding a left-padded batch always has one. On CPU that copy, not the matmuls, dominates a
decode step of a small model. :func:`grouped_decode_attention` computes decode steps (one query
token over the cache) with the query heads grouped onto their key/value head instead (two batched
matmuls, no copy), and hands every other case (a prompt's prefill, masks it does not know,
soft-capping, sinks, dropout) to transformers' own ``sdpa`` function; results change by float
rounding only. Longer queries stay on sdpa: a 3–20-token response pass over a cached prompt
(training's shared-prompt forward) measured 0.85–0.93× of sdpa grouped this way (its backward
reduces the broadcast key/value gradients), and a prefill's fused kernel does not hold the
``q × L`` scores.

It is registered with transformers' :class:`~transformers.AttentionInterface` under
:data:`IMPLEMENTATION` and switched on for the duration of a ``with`` block by
:func:`grouped_decoding`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import torch

IMPLEMENTATION = "sdgym_grouped_sdpa"
"""The name the attention function is registered under (mask format: transformers' sdpa)."""

_registered = False


def grouped_decode_attention(
    module: torch.nn.Module, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
    attention_mask: torch.Tensor | None, dropout: float = 0.0, scaling: float | None = None,
    **kwargs: Any,
) -> tuple[torch.Tensor, None]:
    """Attention of ``query [B, H, q, d]`` over ``key``/``value [B, Hkv, L, d]``; returns
    ``[B, q, H, d]`` like transformers' attention functions."""
    from transformers.integrations.sdpa_attention import sdpa_attention_forward

    batch, heads, q_len, dim = query.shape
    kv_heads = key.shape[1]
    plain = (q_len != 1 or dropout or heads % kv_heads or kwargs.get("softcap")
             or kwargs.get("s_aux") is not None or kwargs.get("position_bias") is not None
             or (attention_mask is not None and attention_mask.dim() != 4))
    if plain:
        return sdpa_attention_forward(module, query, key, value, attention_mask, dropout=dropout,
                                      scaling=scaling, **kwargs)
    grouped = query.reshape(batch, kv_heads, heads // kv_heads, dim)  # a view: kv-major heads
    scores = torch.matmul(grouped, key.transpose(-1, -2)) * (
        scaling if scaling is not None else dim ** -0.5)  # [B, Hkv, rep, L]: no K/V copy
    if attention_mask is not None:  # [B, 1, 1, L]: bool (True = attend) or additive float
        mask = attention_mask[:, :, :, : key.shape[2]]
        scores = (scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
                  if mask.dtype == torch.bool else scores + mask)
    out = torch.matmul(scores.softmax(dim=-1), value)  # [B, Hkv, rep, d]
    return out.reshape(batch, heads, q_len, dim).transpose(1, 2).contiguous(), None


def _register() -> None:
    global _registered
    if not _registered:
        from transformers import AttentionInterface
        from transformers.masking_utils import AttentionMaskInterface, sdpa_mask

        AttentionInterface.register(IMPLEMENTATION, grouped_decode_attention)
        AttentionMaskInterface.register(IMPLEMENTATION, sdpa_mask)
        _registered = True


def _configs(model: torch.nn.Module) -> list[Any]:
    config = getattr(model, "config", None)
    found = [config] if config is not None else []
    text = getattr(config, "text_config", None)
    return found + ([text] if text is not None and text is not config else [])


@contextlib.contextmanager
def grouped_decoding(model: torch.nn.Module, enabled: bool = True) -> Iterator[bool]:
    """Within the block, ``model`` (if it uses transformers' ``sdpa``) attends with
    :func:`grouped_decode_attention`; yields whether it does. Restored on exit."""
    configs = [c for c in _configs(model) if getattr(c, "_attn_implementation", None) == "sdpa"]
    if not enabled or not configs:
        yield False
        return
    _register()
    for config in configs:
        config._attn_implementation = IMPLEMENTATION
    try:
        yield True
    finally:
        for config in configs:
            config._attn_implementation = "sdpa"
