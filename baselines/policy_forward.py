"""One forward pass over ``[prompt | response]`` rows: per-token log-probs and logits.

Built on :func:`agents.backends.hf.response_logits` (the layout the backend samples with), so
training log-probs match rollout log-probs; it also returns the logits, which the entropy bonus
and logit-level teacher heads (SDPO, SDFT) need.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from agents.backends.hf import response_logits

UPDATE_BUCKET_COST = 200.0
"""An extra forward + backward's price in padded positions: measured 1.18× (1.14–1.23) faster
than one pass at the cpu-mini update shape (16 groups × 4 first turns + 16 later turns, 150–250
prompt tokens), 1.13× at 800, 1.03× at 2000 (2026-12-01, A/B, loaded 2-core machine)."""


def response_forward(
    model: torch.nn.Module,
    prompt_ids: Sequence[Sequence[int]],
    response_ids: Sequence[Sequence[int]],
    pad_token_id: int,
    temperature: float = 1.0,
    share_prompts: bool = True,
    bucket_cost: float | None = UPDATE_BUCKET_COST,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``(logprobs [B, R], logits [B, R, V], mask [B, R])`` of each response given its prompt.

    With ``temperature`` T != 1 both are those of the tempered policy ``softmax(logits / T)``.
    ``share_prompts``: rows that repeat a prompt (a GRPO group's first turn) share one forward
    of it (:func:`agents.backends.hf.response_logits`; equal up to float rounding).
    ``bucket_cost``: rows run in length buckets where the padding saved outweighs this many
    positions per extra forward (``None``: one pass).
    """
    logits, ids, mask = response_logits(model, prompt_ids, response_ids, pad_token_id,
                                        share_prompts=share_prompts, bucket_cost=bucket_cost)
    if temperature != 1.0:
        logits = logits / temperature
    logprobs = torch.log_softmax(logits, dim=-1).gather(-1, ids.unsqueeze(-1)).squeeze(-1)
    return logprobs.masked_fill(~mask, 0.0), logits, mask
