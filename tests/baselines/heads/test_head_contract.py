"""The head contract: the base class is not the grpo method, and a head cannot both replace and
add to the GRPO loss (one of the two would be dropped silently)."""

from __future__ import annotations

import pytest
import torch

from baselines.heads import HEADS, GRPOHead, Head, HeadBatch, HeadOutput, make_head


def test_grpo_is_its_own_head_and_the_base_class_is_abstract() -> None:
    assert HEADS["grpo"] is GRPOHead and GRPOHead is not Head
    assert Head.name == "" and issubclass(GRPOHead, Head)
    batch = HeadBatch(*(torch.zeros(1, 2) for _ in range(4)))
    assert make_head("grpo").apply(batch) == HeadOutput()
    with pytest.raises(NotImplementedError, match="does not define apply"):
        Head().apply(batch)


def test_a_head_output_with_both_replace_and_aux_loss_is_an_error() -> None:
    one = torch.tensor(1.0)
    assert HeadOutput(aux_loss=one, advantages=torch.zeros(1, 2)).aux_loss is one
    with pytest.raises(ValueError, match="replace_loss or aux_loss, not both"):
        HeadOutput(replace_loss=one, aux_loss=one)
