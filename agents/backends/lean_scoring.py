"""No-grad response logits of a plain Qwen3 model in plain tensor ops (teacher, reference and
scoring forwards).

:func:`lean_response_logits` computes what :func:`agents.backends.hf.response_logits` returns
without gradients — the logits that predict each response token after its prompt — through
:class:`~agents.backends.lean_decode.LeanDecoder`: each distinct prompt is prefilled once, packed
(:meth:`LeanDecoder.prefill`, a prefix common to all prompts once for all), and the responses
then run packed, one ``[sum of lengths, hidden]`` batch, each attending to its prompt's cache row
and causally to itself (one ``scaled_dot_product_attention`` per row and layer). No padding is
computed and no transformers per-module work is done. Logits equal the transformers forward's up
to float rounding (tests/agents/test_lean_scoring.py). Padded positions of the returned logits
are 0.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.nn.functional as F

from agents.backends.lean_decode import LeanDecoder


def lean_response_logits(
    lean: LeanDecoder, prompt_ids: Sequence[Sequence[int]], response_ids: Sequence[Sequence[int]],
    shared: int = 0, pad_token_id: int = 0,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``(logits [B, R, V] float32, ids [B, R], mask [B, R])`` as
    :func:`~agents.backends.hf.response_logits` returns them (no grad); ``lean`` bound to the
    model's current weights; ``shared``: leading tokens every prompt has (run once)."""
    device = lean.embed.device
    distinct: dict[tuple[int, ...], int] = {}
    owner = [distinct.setdefault(tuple(p), len(distinct)) for p in prompt_ids]
    prompts = [list(p) for p in distinct]
    lengths = [len(r) for r in response_ids]
    width = max(lengths, default=0)
    ids = torch.full((len(prompt_ids), width), pad_token_id, dtype=torch.long, device=device)
    mask = torch.zeros((len(prompt_ids), width), dtype=torch.bool, device=device)
    for row, response in enumerate(response_ids):
        ids[row, : len(response)] = torch.tensor(list(response), dtype=torch.long)
        mask[row, : len(response)] = True
    logits = torch.zeros((len(prompt_ids), width, lean.lm_head.shape[0]), device=device)
    if width == 0:
        return logits, ids, mask
    rest = [p[shared:] for p in prompts]
    columns = shared + max(len(p) for p in rest)
    cache = lean.new_cache(len(rest), columns)
    try:
        with torch.no_grad():
            first = lean.prefill(rest, cache, prompts[0][:shared])
            answered = [row for row, n in enumerate(lengths) if n]
            logits[answered, 0] = first[[owner[row] for row in answered]]
            seen = torch.zeros(len(rest), columns, dtype=torch.bool, device=device)
            seen[:, :shared] = True
            for index, prompt in enumerate(rest):
                seen[index, columns - len(prompt):] = True
            _continue(lean, cache, seen, [len(prompts[o]) for o in owner], owner,
                      response_ids, logits)
    finally:
        cache.release()
    return logits, ids, mask


def _continue(lean: LeanDecoder, cache: object, seen: torch.Tensor, prompt_lengths: list[int],
              owner: list[int], response_ids: Sequence[Sequence[int]],
              logits: torch.Tensor) -> None:
    """Run every response but its last token on its prompt's cache row (``owner``; ``seen``:
    the cache columns that hold real tokens) and write the logits of the tokens after them into
    ``logits[row, 1:]``."""
    device = logits.device
    fed = [list(r)[:-1] for r in response_ids]
    rows = [row for row, tokens in enumerate(fed) if tokens]
    if not rows:
        return
    tokens = torch.tensor([t for row in rows for t in fed[row]], device=device)
    positions = torch.tensor([prompt_lengths[row] + j for row in rows
                              for j in range(len(fed[row]))], device=device)
    masks = [torch.cat([seen[owner[row]].expand(len(fed[row]), -1),
                        torch.ones(len(fed[row]), len(fed[row]), dtype=torch.bool,
                                   device=device).tril()], dim=1) for row in rows]
    cos, sin = lean.rope(positions)
    x = lean.embed[tokens]
    for index, layer in enumerate(lean.layers):
        q, k, v = lean.keys_values(layer, x, cos, sin)
        cached_keys, cached_values = cache.layers[index].keys, cache.layers[index].values
        attended = torch.empty_like(q)
        start = 0
        for row, row_mask in zip(rows, masks):
            span = slice(start, start + len(fed[row]))
            keys = torch.cat([cached_keys[owner[row]], k[span].transpose(0, 1)], dim=1)
            values = torch.cat([cached_values[owner[row]], v[span].transpose(0, 1)], dim=1)
            attended[span] = F.scaled_dot_product_attention(
                q[span].transpose(0, 1)[None], keys[None], values[None], attn_mask=row_mask,
                enable_gqa=True)[0].transpose(0, 1)
            start = span.stop
        x = lean.finish_layer(layer, x, attended)
    out = lean.logits(x)
    start = 0
    for row in rows:
        count = len(fed[row])
        logits[row, 1: count + 1] = out[start: start + count]
        start += count
