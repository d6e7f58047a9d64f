"""The test evaluation's rollout seeds batched together vs one seed per call (same outcomes).

:func:`agents.panel.evaluate_on_panel` runs a panel's (task, rollout seed) episodes task-major,
``num_groups`` per call, each from its own row stream; the seeds of a task then share a call and
the prefill of the prompts they have in common (the first at least; at a low temperature often
the later ones too). The anchor is the previous schedule: one call per rollout seed. Both give the
same outcomes (asserted here and in tests/agents/test_panel.py). Shape: the cpu-mini test
evaluation cut to 48 tasks × 8 rollout seeds (Search-QA ``small``, the shipped
``searchqa-hasty-sft`` warm start, T = 0.4, 32 new tokens, one thread), A/B alternating in one
process after a warm-up of both, median and min–max of the per-round ratio.
"""

from __future__ import annotations

import time

import pytest

pytest.importorskip("pytest_benchmark")
pytest.importorskip("transformers")

from agents.backends.base import SamplingParams, render_chat  # noqa: E402
from agents.backends.hf import HFBackend  # noqa: E402
from agents.model_loading import load_model  # noqa: E402
from agents.panel import evaluate_on_panel, task_panel  # noqa: E402
from agents.prompts import PromptLimits  # noqa: E402
from agents.rollout import RolloutEngine, RolloutEngineConfig  # noqa: E402
from agents.warm_starts import resolve_model, shipped_prompt_limits  # noqa: E402
from baselines.seed_layout import TEST_OFFSET  # noqa: E402
from benchmarks.ab_timing import alternate  # noqa: E402

TARGET = 1.3
"""Batching the 8 seeds must make the test evaluation at least this much faster (median)."""
TASKS, SEEDS = 48, list(range(8))


def test_batched_rollout_seeds_speedup(benchmark) -> None:
    import torch

    torch.set_num_threads(1)
    model, tokenizer = load_model(resolve_model("searchqa-hasty-sft"))
    limits = PromptLimits.from_dict(shipped_prompt_limits("searchqa-hasty-sft"))
    engine = RolloutEngine(RolloutEngineConfig("sdgym/SearchQA-v0", {"size": "small"}, TASKS, 1,
                                         hide_privileged=True, prompt_limits=limits),
                           HFBackend(model, tokenizer), lambda m: render_chat(tokenizer, m))
    outcomes: dict[str, list] = {}

    def sampling(seed: int) -> SamplingParams:
        return SamplingParams(max_new_tokens=32, temperature=0.4, seed=TEST_OFFSET + seed)

    def batched() -> float:
        started = time.perf_counter()
        outcomes["batched"] = evaluate_on_panel(engine, "test", panel, SEEDS, sampling).outcomes
        return time.perf_counter() - started

    def seed_by_seed() -> float:
        started = time.perf_counter()
        runs = [evaluate_on_panel(engine, "test", panel, [s], sampling).outcomes for s in SEEDS]
        outcomes["seed_by_seed"] = [o for run in runs for o in run]
        return time.perf_counter() - started

    try:
        panel = task_panel(engine.task_count("test"), TASKS)
        result = alternate(batched, seed_by_seed, rounds=3)
        assert outcomes["batched"] == outcomes["seed_by_seed"]
        benchmark.pedantic(batched, rounds=1, iterations=1)
    finally:
        engine.close()
    benchmark.extra_info.update(result.summary("speedup"))
    assert result.median >= TARGET, result.ratios
