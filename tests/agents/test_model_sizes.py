"""The named tiny model sizes (#41, the model-scale axis): one registry, exact parameter counts,
and the size label of any model a run names."""

from __future__ import annotations

import json

import pytest

from agents.model_sizes import (
    DEFAULT_SIZE,
    MODEL_SIZES,
    size_of_shape,
    size_suffix,
    tiny_parameters,
    tiny_size_label,
)
from agents.warm_starts import model_size, resolve_model, shipped_warm_starts

PARAMETERS = {"tiny-s": 328_384, "tiny": 1_049_984, "tiny-l": 3_050_496}
"""With the 2048-token vocabulary (docs/scaling.md, Model sizes)."""


def test_three_sizes_about_three_times_apart_smallest_first() -> None:
    assert list(MODEL_SIZES) == ["tiny-s", "tiny", "tiny-l"] and DEFAULT_SIZE == "tiny"
    counts = {name: tiny_parameters(**shape) for name, shape in MODEL_SIZES.items()}
    assert counts == PARAMETERS
    assert 2.5 < counts["tiny"] / counts["tiny-s"] < 3.5
    assert 2.5 < counts["tiny-l"] / counts["tiny"] < 3.5
    assert all(shape["hidden_size"] % 4 == 0 for shape in MODEL_SIZES.values())  # 4 heads


def test_parameter_counts_are_those_of_the_built_model() -> None:
    torch = pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from transformers import Qwen3ForCausalLM

    from agents.tiny_model import tiny_model_config

    for name, shape in MODEL_SIZES.items():
        with torch.device("meta"):
            model = Qwen3ForCausalLM(tiny_model_config(2048, **shape))
        assert sum(p.numel() for p in model.parameters()) == PARAMETERS[name], name


def test_every_warm_start_shipped_before_the_axis_is_the_default_size() -> None:
    for name, folder in shipped_warm_starts().items():
        config = json.loads((folder / "config.json").read_text())
        size = size_suffix(name) or DEFAULT_SIZE  # the sized ones say so in their name
        assert size_of_shape(config["hidden_size"], config["num_hidden_layers"]) == size, name
        assert model_size(name) == size


def test_size_labels_of_the_models_a_run_can_name() -> None:
    assert model_size("tiny", {"hidden_size": 64, "num_layers": 4}) == "tiny-s"
    assert model_size("tiny", {"vocab_size": 2048, "hidden_size": 192, "num_layers": 6}) == "tiny-l"
    assert model_size("tiny") == "tiny-96x3" == tiny_size_label(96, 3)  # the test model (cpu-smoke)
    assert model_size("searchqa-hasty-sft") == "tiny"
    assert model_size(str(resolve_model("webshop-easy-sft"))) == "tiny"  # a model folder
    assert model_size("searchqa-hasty-sft-tiny-l") == "tiny-l"  # a sized warm start not built here
    assert size_suffix("searchqa-hasty-sft") is None and size_suffix("x-tiny") is None
    assert model_size("Qwen/Qwen3.5-2B") == "Qwen3.5-2B"
