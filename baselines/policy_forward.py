"""One forward pass over ``[prompt | response]`` rows: per-token log-probs and logits.

Same layout as :func:`agents.backends.hf.response_logprobs` (left-padded prompts, right-padded
responses, ``position_ids = cumsum(mask) − 1``), so training log-probs match rollout log-probs;
this variant also returns the response logits, which the entropy bonus and logit-level teacher
heads (SDPO, SDFT) need.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from agents.backends.hf import left_pad, position_ids_from_mask, right_pad


def response_forward(
    model: torch.nn.Module,
    prompt_ids: Sequence[Sequence[int]],
    response_ids: Sequence[Sequence[int]],
    pad_token_id: int,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``(logprobs [B, R], logits [B, R, V], mask [B, R])`` of each response given its prompt."""
    device = next(model.parameters()).device
    p_ids, p_mask = left_pad(prompt_ids, pad_token_id, device)
    r_ids, r_mask = right_pad(response_ids, pad_token_id, device)
    width = r_ids.shape[1]
    input_ids = torch.cat([p_ids, r_ids], dim=1)
    attention_mask = torch.cat([p_mask, r_mask], dim=1)
    output = model(
        input_ids=input_ids,
        attention_mask=attention_mask,
        position_ids=position_ids_from_mask(attention_mask),
        use_cache=False,
        logits_to_keep=width + 1,
    )
    logits = output.logits[:, :-1, :].float()
    logprobs = torch.log_softmax(logits, dim=-1).gather(-1, r_ids.unsqueeze(-1)).squeeze(-1)
    mask = r_mask.bool()
    return logprobs.masked_fill(~mask, 0.0), logits, mask
