"""No-grad response logits of a plain Qwen3 model in plain tensor ops (teacher, reference and
scoring forwards).

:func:`lean_response_logits` computes what :func:`agents.backends.scoring.response_logits` returns
without gradients — the logits that predict each response token after its prompt — through
:class:`~agents.backends.lean_decode.LeanDecoder`: each distinct prompt is prefilled once, packed
(:meth:`LeanDecoder.prefill`, a prefix common to all prompts once for all), and the responses then
run packed, one ``[sum of lengths, hidden]`` batch, each attending to its prompt's cache row and
causally to itself (the prefill's per-segment attention, one call per row and layer). No padding is
computed and no transformers per-module work is done. Logits equal the transformers forward's up to
float rounding (tests/agents/test_lean_scoring.py). Padded positions of the returned logits are 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from agents.backends.lean_decode import LeanDecoder, segment_attention


def lean_response_logits(
    lean: LeanDecoder, prompt_ids: Sequence[Sequence[int]], response_ids: Sequence[Sequence[int]],
    shared: int = 0,
) -> torch.Tensor:
    """The float32 logits ``[B, R, V]`` :func:`~agents.backends.scoring.response_logits`
    returns (no grad; 0 at padded positions); ``lean`` bound to the model's current weights;
    ``shared``: leading tokens every prompt has (run once)."""
    device = lean.embed.device
    distinct: dict[tuple[int, ...], int] = {}
    owner = [distinct.setdefault(tuple(p), len(distinct)) for p in prompt_ids]
    prompts = [list(p) for p in distinct]
    lengths = [len(r) for r in response_ids]
    logits = torch.zeros((len(prompt_ids), max(lengths, default=0), lean.lm_head.shape[0]),
                         device=device)
    if not any(lengths):
        return logits
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
    return logits


def _continue(lean: LeanDecoder, cache: Any, seen: torch.Tensor, prompt_lengths: list[int],
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
    at_row = torch.tensor([row for row in rows for _ in fed[row]], device=device)
    at_column = torch.tensor([j for row in rows for j in range(len(fed[row]))], device=device)
    cos, sin = lean.rope(torch.tensor(prompt_lengths, device=device)[at_row] + at_column)
    x = lean.embed[tokens]
    for index, layer in enumerate(lean.layers):
        q, k, v = lean.keys_values(layer, x, cos, sin)
        cached = cache.layers[index]
        contexts = [(cached.keys[o], cached.values[o], seen[o]) for o in range(len(seen))]
        x = lean.finish_layer(layer, x, segment_attention(
            q, k, v, [len(fed[row]) for row in rows], [contexts[owner[row]] for row in rows]))
    logits[at_row, at_column + 1] = lean.logits(x)
