"""Every shipped warm start carries a Hugging Face model card generated from its record."""

from __future__ import annotations

import json

import pytest

from agents.warm_starts import RECORD_FILE, shipped_warm_starts
from agents.warm_starts.model_card import CARD_FILE, model_card, model_shape

WARM_STARTS = shipped_warm_starts()


@pytest.mark.parametrize("name", sorted(WARM_STARTS))
def test_each_warm_start_has_a_card_whose_numbers_are_its_metadata(name) -> None:
    folder = WARM_STARTS[name]
    record = json.loads((folder / RECORD_FILE).read_text())
    card = (folder / CARD_FILE).read_text()
    assert card == model_card(name, record, model_shape(folder)), (
        f"{name}'s card is stale: run agents.warm_starts.model_card.write_model_card")
    assert card.startswith("---\nlibrary_name: transformers\n")
    assert record["command"] in card and record["weights_sha256"] in card
    for entry in record.get("measured", []):
        student = entry["student"]
        assert f"{student[0]:.3f} [{student[1]:.3f}, {student[2]:.3f}]" in card


def test_the_parameter_count_is_that_of_the_loaded_model() -> None:
    torch = pytest.importorskip("torch")  # noqa: F841
    from transformers import AutoModelForCausalLM

    folder = WARM_STARTS["searchqa-easy-sft"]
    model = AutoModelForCausalLM.from_pretrained(folder)
    tied = sum(p.numel() for p in model.parameters())
    assert model_shape(folder)["parameters"] in (tied, tied + model.lm_head.weight.numel())
