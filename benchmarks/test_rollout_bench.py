"""Rollout throughput with the tiny model: generated tokens/s, env steps/s, env vs model share."""

from __future__ import annotations

import pytest

pytest.importorskip("pytest_benchmark")
pytest.importorskip("transformers")

from agents.backends.base import SamplingParams, render_chat  # noqa: E402
from agents.backends.hf import HFBackend  # noqa: E402
from agents.model_loading import load_model  # noqa: E402
from agents.rollout import RolloutEngine, RolloutEngineConfig  # noqa: E402
from agents.tiny_model import build_tiny_model  # noqa: E402


@pytest.mark.parametrize("env_id,kwargs", [("sdgym/SearchQA-v0", {"size": "tiny"}),
                                           ("sdgym/WebShop-v0", {"size": "tiny"})])
def test_rollout_tiny_model(benchmark, env_id, kwargs) -> None:
    import torch

    torch.set_num_threads(1)
    model, tokenizer = load_model(build_tiny_model())
    backend = HFBackend(model, tokenizer)
    engine = RolloutEngine(RolloutEngineConfig(env_id, kwargs, num_groups=4, group_size=4, max_turns=3),
                           backend, lambda m: render_chat(tokenizer, m))
    batches = []

    def rollout() -> None:
        batches.append(engine.collect([0, 1, 2, 3], SamplingParams(max_new_tokens=32, seed=0)))

    try:
        benchmark.pedantic(rollout, rounds=3, iterations=1)
    finally:
        engine.close()
    tokens = sum(b.generated_tokens for b in batches)
    generation = sum(b.timings["generation"] for b in batches)
    env_time = sum(b.timings["env"] for b in batches)
    benchmark.extra_info.update(
        generated_tokens_per_s=tokens / generation,
        env_steps_per_s=sum(len(b.rows) for b in batches) / max(env_time, 1e-9),
        env_share=env_time / (env_time + generation),
    )
