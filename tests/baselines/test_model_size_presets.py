"""The sized presets of the model-scale axis (#41): each size's warm-start recipes are today's with
only the model changed, its training presets start from its warm starts with their prompt limits,
and the memory plan and the FLOP cost model order the sizes tiny-s < tiny < tiny-l."""

from __future__ import annotations

import pytest

from agents.model_sizes import MODEL_SIZES
from agents.warm_starts import model_size
from baselines.config import load_preset, sft_inputs

SIZED = ("tiny-s", "tiny-l")
RECIPES = {  # base recipe -> (what the sized one names: its model shape, or its start)
    "searchqa-warm-start": None, "webshop-base-warm-start": None,
    "searchqa-hasty-warm-start": "searchqa-easy-sft", "webshop-warm-start": "webshop-easy-base"}
TRAINING = {"cpu-mini": "searchqa-hasty-sft", "cpu-mini-webshop": "webshop-easy-sft"}
LONGER = {("webshop-base-warm-start", "tiny-s"): {"sft.steps": 2400}}
"""The one sized recipe that differs in more than the model: with tiny's 800 steps the tiny-s
WebShop base never learned to copy the instruction into its search (student 0.000 on easy_val);
3x the steps did (0.578). Measured 2026-12-06 (docs/scaling.md)."""
LOWER_LR = {("cpu-mini-webshop", "tiny-l"): 1e-4}
"""The sized training presets that lower the lr: at tiny-l on WebShop the shared 3e-4 collapses
GRPO (-0.465 [-0.505, -0.425] against its warm start, 3 seeds; docs/scaling.md)."""


@pytest.mark.parametrize("size", SIZED)
@pytest.mark.parametrize("recipe", sorted(RECIPES))
def test_a_sized_recipe_is_the_base_recipe_on_another_model(recipe: str, size: str) -> None:
    base, sized = load_preset(recipe), load_preset(f"{recipe}-{size}")
    start = RECIPES[recipe]
    if start is None:  # built from scratch: the size's shape, the rest of the tiny model as is
        assert sized.model.name == "tiny" and model_size("tiny", sized.model.tiny) == size
        assert sized.model.tiny == {**base.model.tiny, **MODEL_SIZES[size]}
    else:  # fine-tuned from the size's own first stage
        assert sized.model.name == f"{start}-{size}" and model_size(sized.model.name) == size
    changed = {key: value for key, value in sft_inputs(sized).items()
               if sft_inputs(base)[key] != value}
    longer = LONGER.get((recipe, size), {})
    assert set(changed) == ({"model.tiny"} if start is None else {"model.name"}) | set(longer)
    assert {key: changed[key] for key in longer} == longer
    assert sized.env_id == base.env_id and sized.rollout.prompt == base.rollout.prompt


@pytest.mark.parametrize("size", SIZED)
@pytest.mark.parametrize("preset", sorted(TRAINING))
def test_sized_training_presets_start_from_the_sized_warm_start(preset: str, size: str) -> None:
    base, sized = load_preset(preset), load_preset(f"{preset}-{size}")
    assert sized.model.name == f"{TRAINING[preset]}-{size}" and model_size(sized.model.name) == size
    base_values, sized_values = base.to_dict(), sized.to_dict()
    base_values["model"].pop("name"), sized_values["model"].pop("name")
    assert sized_values["grpo"].pop("lr") == LOWER_LR.get((preset, size), base.grpo.lr)
    base_values["grpo"].pop("lr")
    assert sized_values == base_values  # the same protocol: steps, panels, prompt limits


def test_paper_presets_keep_their_qwen_shapes() -> None:
    for size, name in (("2b", "Qwen/Qwen3.5-2B"), ("4b", "Qwen/Qwen3.5-4B"), ("9b", "Qwen/Qwen3.5-9B")):
        for env in ("alfworld", "scienceworld", "searchqa", "webshop"):
            model = load_preset(f"paper-qwen3.5-{size}-{env}").model.name
            assert model == name and model_size(model) == name.split("/")[1]


@pytest.mark.parametrize("preset", sorted(TRAINING))
def test_memory_plan_and_flops_order_the_sizes(preset: str) -> None:
    """Planned before any sized warm start is built (the size its name ends with gives the
    shape): parameters, the plan's total and the FLOPs of the same tokens grow with the size."""
    pytest.importorskip("transformers")
    from baselines.cost import flops_estimate
    from baselines.memory_plan import model_shape, plan_memory

    tokens = {"generation_context": 100_000, "generated": 8_000, "trained_context": 100_000}
    names = [f"{preset}-tiny-s", preset, f"{preset}-tiny-l"]
    configs = [load_preset(name) for name in names]
    shapes = [model_shape(config.model.name) for config in configs]
    parameters = [shape.parameters for shape in shapes]
    assert parameters == sorted(parameters) and len(set(parameters)) == 3
    assert [(s.hidden_size, s.num_layers) for s in shapes] == [
        (shape["hidden_size"], shape["num_layers"]) for shape in MODEL_SIZES.values()]
    totals = [plan_memory(config, 1, shape=shape).total
              for config, shape in zip(configs, shapes, strict=True)]
    assert totals == sorted(totals) and len(set(totals)) == 3
    flops = [flops_estimate(n, tokens) for n in parameters]
    assert flops[0] < flops[1] < flops[2] and flops[2] / flops[1] == pytest.approx(
        parameters[2] / parameters[1])
