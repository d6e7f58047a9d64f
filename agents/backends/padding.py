"""Token-id padding and position ids for the ``[left-padded prompt | right-padded response]``
layout that sampling (:mod:`agents.backends.hf`) and training-time scoring
(:mod:`agents.backends.scoring`) share.

Prompts are left-padded and ``position_ids = cumsum(attention_mask) - 1`` (clamped at 0), so
every row's real tokens sit at the positions they would have unpadded.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch


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


def model_device(model: torch.nn.Module) -> torch.device:
    """The device of ``model``'s first parameter (where its inputs go)."""
    return next(model.parameters()).device
