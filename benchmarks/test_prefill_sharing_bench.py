"""Generation with a GRPO group's shared prompt prefilled once vs once per row (HF backend).

A GRPO rollout's first turn gives each of a group's G members the same prompt; the HF backend
runs that prompt's forward once and copies its KV cache (``share_prompt_prefill``). Measured here
at the cpu-mini shape (16 groups × 4, ~200-token prompts, 32 new tokens, the shipped 1M-parameter
warm start, one thread), A/B alternating in one process after a warm-up of both, median and
min–max of the per-round ratio. The outputs are identical (tests/agents/test_agents_hf_backend.py).
"""

from __future__ import annotations

import random
import statistics
import time

import pytest

pytest.importorskip("pytest_benchmark")
pytest.importorskip("transformers")

from agents.backends.base import SamplingParams  # noqa: E402
from agents.backends.hf import HFBackend  # noqa: E402
from agents.model_loading import load_model  # noqa: E402
from agents.warm_starts import resolve_model  # noqa: E402

TARGET = 1.3
"""The shared prefill must make first-turn generation at least this much faster (median)."""


def first_turn_prompts(groups: int = 16, group_size: int = 4) -> list[list[int]]:
    rng = random.Random(0)
    prompts = []
    for _ in range(groups):
        prompt = [rng.randrange(5, 1000) for _ in range(rng.randint(150, 250))]
        prompts += [prompt] * group_size
    return prompts


def test_shared_prompt_prefill_speedup(benchmark) -> None:
    import torch

    torch.set_num_threads(1)
    model, tokenizer = load_model(resolve_model("searchqa-hasty-sft"))
    shared = HFBackend(model, tokenizer, share_prompt_prefill=True)
    plain = HFBackend(model, tokenizer, share_prompt_prefill=False)
    prompts = first_turn_prompts()

    def run(backend: HFBackend, seed: int) -> float:
        started = time.perf_counter()
        backend.generate_from_ids(prompts, SamplingParams(max_new_tokens=32, temperature=1.0,
                                                          seed=seed))
        return time.perf_counter() - started

    run(shared, 0), run(plain, 0)  # warm-up of both
    ratios = []
    for round_ in range(5):
        order = (plain, shared) if round_ % 2 == 0 else (shared, plain)
        seconds = {id(b): run(b, round_) for b in order}
        ratios.append(seconds[id(plain)] / seconds[id(shared)])
    benchmark.pedantic(run, args=(shared, 99), rounds=1, iterations=1)
    benchmark.extra_info.update(speedup_median=statistics.median(ratios),
                                speedup_min=min(ratios), speedup_max=max(ratios))
    assert statistics.median(ratios) >= TARGET, ratios


def test_shared_prompt_update_forward_speedup(benchmark) -> None:
    """The update's forward + backward over [prompt | response] rows, a group's first-turn
    prompt run once (``response_logits(share_prompts=True)``) vs once per row: 16 groups × 4
    first turns plus 16 distinct second turns, ~200-token prompts, 3–20-token responses."""
    import torch

    from agents.backends.scoring import response_logits

    torch.set_num_threads(1)
    model, _ = load_model(resolve_model("searchqa-hasty-sft"))
    model.train()
    rng = random.Random(1)
    prompts = first_turn_prompts()
    prompts += [[rng.randrange(5, 1000) for _ in range(rng.randint(150, 250))] for _ in range(16)]
    responses = [[rng.randrange(5, 1000) for _ in range(rng.randint(3, 20))] for _ in prompts]

    def run(share: bool) -> float:
        started = time.perf_counter()
        model.zero_grad()
        logits, ids, mask = response_logits(model, prompts, responses, 0, share_prompts=share)
        logprobs = torch.log_softmax(logits, -1).gather(-1, ids.unsqueeze(-1)).squeeze(-1)
        ((logprobs * mask).sum() / mask.sum()).backward()
        return time.perf_counter() - started

    run(True), run(False)  # warm-up of both
    ratios = []
    for round_ in range(5):
        order = (False, True) if round_ % 2 == 0 else (True, False)
        seconds = {share: run(share) for share in order}
        ratios.append(seconds[False] / seconds[True])
    benchmark.pedantic(run, args=(True,), rounds=1, iterations=1)
    benchmark.extra_info.update(speedup_median=statistics.median(ratios),
                                speedup_min=min(ratios), speedup_max=max(ratios))
    assert statistics.median(ratios) >= 1.5, ratios
