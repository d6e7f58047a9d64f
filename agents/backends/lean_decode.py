"""Decode steps of a Qwen3 model in plain tensor ops, on the backend's preallocated KV cache.

At the sizes trained on CPU a transformers decode step is mostly per-call Python work (module
dispatch, mask construction, cache bookkeeping, output dataclasses): about 7 ms for the shipped
4-layer model at batch 16 against well under 1 ms of arithmetic. :class:`LeanDecoder` computes
the same step with the same math (RMSNorm in float32, rotary embedding, grouped-query attention
over the cache, SwiGLU MLP, tied or separate LM head) and about a third of the calls: the query,
key and value projections are one matmul, the gate and up projections another, and attention is
one ``scaled_dot_product_attention`` call with the query heads grouped onto their key/value
heads. It reads the weights of the model it was built from at the start of every generate call
(:meth:`LeanDecoder.bind`), so it follows training updates, and it writes the step's keys and
values into the transformers ``StaticCache`` the prefill filled, so the cache stays the one the
rest of the backend (row dropping, merging) works on. Logits equal transformers' up to float
rounding (tests/agents/test_lean_decode.py).

Only plain Qwen3 decoders qualify: full attention in every layer, default
RoPE, SiLU, no adapter (:func:`can_lean_decode`); any other model decodes through its own
forward.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F


def can_lean_decode(model: torch.nn.Module) -> bool:
    """Whether ``model`` is a plain Qwen3 causal LM :class:`LeanDecoder` can step."""
    config = getattr(model, "config", None)
    if getattr(config, "model_type", None) != "qwen3" or type(model).__name__ != "Qwen3ForCausalLM":
        return False
    rope = getattr(config, "rope_parameters", None) or {}
    layer_types = getattr(config, "layer_types", None) or ["full_attention"]
    return (rope.get("rope_type", "default") == "default" and set(layer_types) == {"full_attention"}
            and not getattr(config, "use_sliding_window", False)
            and getattr(config, "hidden_act", None) == "silu"
            and not getattr(config, "attention_bias", False))


@dataclass
class _Layer:
    input_norm: torch.Tensor
    qkv: torch.Tensor
    q_norm: torch.Tensor
    k_norm: torch.Tensor
    out: torch.Tensor
    post_norm: torch.Tensor
    gate_up: torch.Tensor
    down: torch.Tensor


class LeanDecoder:
    """One-token decode steps of a Qwen3 ``model`` (see the module docstring)."""

    def __init__(self, model: torch.nn.Module) -> None:
        if not can_lean_decode(model):
            raise ValueError(f"LeanDecoder steps plain Qwen3 models, not {type(model).__name__}")
        config = model.config
        self.model = model
        self.heads, self.kv_heads = config.num_attention_heads, config.num_key_value_heads
        self.head_dim = getattr(config, "head_dim", None) or config.hidden_size // self.heads
        self.intermediate = config.intermediate_size
        self.eps = config.rms_norm_eps
        self.layers: list[_Layer] = []

    def bind(self) -> None:
        """Read the model's current weights (fusing the projections); call once per generate."""
        inner = self.model.model
        with torch.no_grad():
            self.embed = inner.embed_tokens.weight
            self.final_norm = inner.norm.weight
            self.lm_head = self.model.lm_head.weight
            rotary = inner.rotary_emb
            self.inv_freq, self.rope_scale = rotary.inv_freq.float(), rotary.attention_scaling
            self.layers = [_Layer(
                layer.input_layernorm.weight,
                torch.cat([layer.self_attn.q_proj.weight, layer.self_attn.k_proj.weight,
                           layer.self_attn.v_proj.weight]),
                layer.self_attn.q_norm.weight, layer.self_attn.k_norm.weight,
                layer.self_attn.o_proj.weight, layer.post_attention_layernorm.weight,
                torch.cat([layer.mlp.gate_proj.weight, layer.mlp.up_proj.weight]),
                layer.mlp.down_proj.weight) for layer in inner.layers]

    def _norm(self, x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
        """Qwen3's RMSNorm (in float32, then scaled by ``weight`` in the input's dtype): one
        fused ``F.rms_norm`` call instead of six written-out ops for float32 inputs."""
        if x.dtype == torch.float32 and weight.dtype == torch.float32:
            return F.rms_norm(x, (x.shape[-1],), weight, self.eps)
        dtype = x.dtype
        x = x.float()
        x = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)
        return weight * x.to(dtype)

    @torch.no_grad()
    def step(self, tokens: torch.Tensor, positions: torch.Tensor, cache: Any,
             attention_mask: torch.Tensor, shared_columns: int = 0) -> torch.Tensor:
        """Logits ``[B, V]`` (float32) after feeding ``tokens [B]`` at ``positions [B]``.

        ``attention_mask [B, L]`` covers the cache columns so far, this step's last; the step's
        keys and values are written to column ``L - 1`` of every layer of ``cache`` (a
        transformers ``StaticCache``). ``shared_columns``: the first columns hold the same
        prefix in every row; attention then reads that prefix once for the whole batch
        (:func:`_attend`) instead of once per row."""
        batch, column = tokens.shape[0], attention_mask.shape[1] - 1
        heads, kv_heads, dim = self.heads, self.kv_heads, self.head_dim
        freqs = positions.reshape(batch, 1).float() * self.inv_freq
        angles = torch.cat((freqs, freqs), dim=-1)[:, None, :]  # [B, 1, D]
        cos, sin = angles.cos() * self.rope_scale, angles.sin() * self.rope_scale
        allowed = attention_mask.bool()[:, None, None, :]  # [B, 1, 1, L]
        x = self.embed[tokens]
        q_width, kv_width = heads * dim, kv_heads * dim
        for index, layer in enumerate(self.layers):
            h = self._norm(x, layer.input_norm)
            qkv = h @ layer.qkv.T
            q = self._norm(qkv[:, :q_width].view(batch, heads, dim), layer.q_norm)
            k = self._norm(qkv[:, q_width:q_width + kv_width].view(batch, kv_heads, dim),
                           layer.k_norm)
            v = qkv[:, q_width + kv_width:].view(batch, kv_heads, dim)
            cos_q, sin_q = cos.to(q.dtype), sin.to(q.dtype)
            q = q * cos_q + _rotate_half(q) * sin_q
            k = k * cos_q + _rotate_half(k) * sin_q
            keys, values = cache.layers[index].keys, cache.layers[index].values
            keys[:, :, column] = k
            values[:, :, column] = v
            attended = _attend(q, keys[:, :, : column + 1], values[:, :, : column + 1],
                               allowed, shared_columns)
            x = x + attended.reshape(batch, q_width) @ layer.out.T
            h = self._norm(x, layer.post_norm)
            gate_up = h @ layer.gate_up.T
            x = x + (F.silu(gate_up[:, : self.intermediate]) * gate_up[:, self.intermediate:]
                     ) @ layer.down.T
        return (self._norm(x, self.final_norm) @ self.lm_head.T).float()


def _attend(q: torch.Tensor, keys: torch.Tensor, values: torch.Tensor, allowed: torch.Tensor,
            shared: int) -> torch.Tensor:
    """One query per row, ``q [B, H, D]``, over ``keys``/``values [B, Hkv, L, D]`` where
    ``allowed [B, 1, 1, L]``; query head ``h`` reads key/value head ``h // (H / Hkv)``.

    With ``shared > 0`` the first ``shared`` columns are one prefix in every row: its scores
    are one matmul of all rows' queries against row 0's prefix keys (no per-row read of the
    prefix), the rest of each row's columns are scored per row, and one softmax runs over both
    (exact: the same attention, summed in another order). Returns ``[B, H, D]``."""
    batch, heads, dim = q.shape
    kv_heads = keys.shape[1]
    if not shared:
        return F.scaled_dot_product_attention(q[:, :, None, :], keys, values, attn_mask=allowed,
                                              enable_gqa=True)[:, :, 0]
    group = heads // kv_heads
    scale = dim ** -0.5
    grouped = q.view(batch, kv_heads, group, dim)
    by_head = grouped.permute(1, 0, 2, 3).reshape(kv_heads, batch * group, dim)
    prefix_scores = (by_head @ keys[0, :, :shared].transpose(-1, -2)) * scale  # [Hkv, B·G, P]
    prefix_scores = prefix_scores.view(kv_heads, batch, group, shared).permute(1, 0, 2, 3)
    own_scores = (grouped @ keys[:, :, shared:].transpose(-1, -2)) * scale  # [B, Hkv, G, S]
    own_scores = own_scores.masked_fill(~allowed[:, :, :, shared:],
                                        torch.finfo(own_scores.dtype).min)
    weights = torch.cat([prefix_scores, own_scores], dim=-1).softmax(dim=-1)
    prefix_weights = weights[..., :shared].permute(1, 0, 2, 3).reshape(kv_heads, -1, shared)
    out = (prefix_weights @ values[0, :, :shared]).view(kv_heads, batch, group, dim)
    out = out.permute(1, 0, 2, 3) + weights[..., shared:] @ values[:, :, shared:]
    return out.reshape(batch, heads, dim)


def _rotate_half(x: torch.Tensor) -> torch.Tensor:
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)
