"""The prompts' common prefix (system prompt, task header) run once vs in every prompt.

Real prompts: the prompts the shipped ``searchqa-hasty-sft`` warm start reads while it is
evaluated on 64 Search-QA ``easy_val`` tasks (``small`` world, T = 0.4, 32 new tokens; turns 1
and 2 of every episode, as the rollout engine sends them), recorded once. Measured on them,
A/B alternating in one process after a warm-up of both, median and min–max of the per-round
ratio, one thread:

- generation of every recorded call, ``HFBackend(shared_prefix=True)`` vs ``False``;
- the update's forward + backward over those prompts and their responses,
  ``response_logits(share_prompts=True)`` with the prefix stage vs without it.

Both sides give the same tokens, log-probs and gradients (tests/agents/test_agents_hf_backend.py).
"""

from __future__ import annotations

import time

import pytest

pytest.importorskip("pytest_benchmark")
pytest.importorskip("transformers")

from agents.backends.base import SamplingParams, render_chat  # noqa: E402
from agents.backends.hf import HFBackend  # noqa: E402
from agents.backends.scoring import response_logits  # noqa: E402
from agents.model_loading import load_model  # noqa: E402
from agents.panel import evaluate_on_panel, task_panel  # noqa: E402
from agents.prompts import PromptLimits  # noqa: E402
from agents.rollout import RolloutBatch, RolloutEngine, RolloutEngineConfig  # noqa: E402
from agents.warm_starts import resolve_model, shipped_prompt_limits  # noqa: E402
from benchmarks.ab_timing import alternate  # noqa: E402

TARGET = 1.2
"""Running the common prefix once must make both at least this much faster (median)."""
PARAMS = SamplingParams(max_new_tokens=32, temperature=0.4, seed=0)


@pytest.fixture(scope="module")
def recorded() -> tuple[HFBackend, list[list[list[int]]], list[RolloutBatch]]:
    import torch

    torch.set_num_threads(1)
    model, tokenizer = load_model(resolve_model("searchqa-hasty-sft"))
    backend = HFBackend(model, tokenizer)
    limits = PromptLimits.from_dict(shipped_prompt_limits("searchqa-hasty-sft"))
    engine = RolloutEngine(RolloutEngineConfig("sdgym/SearchQA-v0", {"size": "small"}, 64, 1,
                                         hide_privileged=True, prompt_limits=limits),
                           backend, lambda m: render_chat(tokenizer, m))
    batches: list[RolloutBatch] = []
    try:
        panel = task_panel(engine.task_count("easy_val"), 64)
        evaluate_on_panel(engine, "easy_val", panel, [0], lambda s: PARAMS,
                          lambda batch, slots: batches.append(batch))
    finally:
        engine.close()
    turns = sorted({row.turn for batch in batches for row in batch.rows})
    calls = [[row.prompt_ids for batch in batches for row in batch.rows if row.turn == turn]
             for turn in turns]
    return backend, calls, batches


def test_shared_prefix_generation_speedup(benchmark, recorded) -> None:
    backend, calls, _ = recorded
    plain = HFBackend(backend.model, backend.tokenizer, shared_prefix=False)

    def run(side: HFBackend) -> float:
        started = time.perf_counter()
        for prompts in calls:
            side.generate_from_ids(prompts, PARAMS)
        return time.perf_counter() - started

    result = alternate(lambda: run(backend), lambda: run(plain), rounds=5)
    benchmark.pedantic(run, args=(backend,), rounds=1, iterations=1)
    benchmark.extra_info.update(result.summary("speedup"))
    assert result.median >= TARGET, result.ratios


def test_shared_prefix_update_speedup(benchmark, recorded) -> None:
    import torch

    backend, _, batches = recorded
    rows = [row for batch in batches for row in batch.rows]
    prompts, responses = [r.prompt_ids for r in rows], [r.response_ids for r in rows]
    model = backend.model
    model.train()

    def run(share_prefix: bool) -> float:
        started = time.perf_counter()
        model.zero_grad()
        logits, ids, mask = response_logits(model, prompts, responses, backend.pad_token_id,
                                            share_prompts=True, bucket_cost=200.0,
                                            share_prefix=share_prefix)
        logprobs = torch.log_softmax(logits, -1).gather(-1, ids.unsqueeze(-1)).squeeze(-1)
        ((logprobs * mask).sum() / mask.sum()).backward()
        return time.perf_counter() - started

    try:
        result = alternate(lambda: run(True), lambda: run(False), rounds=5)
        benchmark.pedantic(run, args=(True,), rounds=1, iterations=1)
    finally:
        model.eval()
    benchmark.extra_info.update(result.summary("speedup"))
    assert result.median >= TARGET, result.ratios
