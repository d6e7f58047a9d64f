"""Generation speed of the HF backend: the fast path vs the plain loop vs ``model.generate()``.

The fast path (:class:`agents.backends.hf.HFBackend` defaults) prefills prompts in length
buckets decoded in lockstep, attends in decode steps with the query heads grouped onto their
key/value heads (no per-head cache copy) and keeps a static KV cache; the plain loop is the same
backend with those three off (one left-padded batch, transformers' sdpa, a growing cache); both
share each repeated prompt's prefill. The anchor ``model.generate()`` samples the same shapes
(``min_new_tokens`` = ``max_new_tokens``). Shapes: 64 distinct 150–250-token random prompts, a
GRPO-shaped batch of 16 of them × 4 rows, and the real first-turn prompts of 64 Search-QA
``easy_val`` tasks (``small``; they share a ~120-token system prompt and task header, which the
fast path runs once); 32 new tokens, T = 1, the shipped 1M-parameter warm
start, one thread. A/B alternating in one process after a warm-up of both sides
(:mod:`ab_timing`); the outputs of the fast path and the plain loop are equal
(tests/agents/test_agents_hf_backend.py).
"""

from __future__ import annotations

import random
import time

import pytest

pytest.importorskip("pytest_benchmark")
pytest.importorskip("transformers")

from agents.backends.base import SamplingParams  # noqa: E402
from agents.backends.hf import HFBackend  # noqa: E402
from agents.backends.padding import left_pad  # noqa: E402
from agents.model_loading import load_model  # noqa: E402
from agents.warm_starts import resolve_model  # noqa: E402
from benchmarks.ab_timing import alternate  # noqa: E402
from benchmarks.real_prompts import first_turn_prompts  # noqa: E402

PLAIN = {"length_buckets": False, "grouped_decode_attention": False, "static_cache": False,
         "shared_prefix": False}
NEW_TOKENS = 32


def shapes(tokenizer) -> dict[str, list[list[int]]]:
    rng = random.Random(0)
    distinct = [[rng.randrange(5, 1000) for _ in range(rng.randint(150, 250))] for _ in range(64)]
    real = first_turn_prompts(tokenizer, 64, split="easy_val", size="small")
    return {"distinct64": distinct, "grpo16x4": [p for p in distinct[:16] for _ in range(4)],
            "searchqa64": [list(ids) for ids in tokenizer(real, add_special_tokens=False)[
                "input_ids"]]}


def _backend_side(backend: HFBackend, prompts: list[list[int]]):
    params = SamplingParams(max_new_tokens=NEW_TOKENS, temperature=1.0, seed=0)

    def run() -> float:
        started = time.perf_counter()
        generations = backend.generate_from_ids(prompts, params)
        run.tokens = sum(len(g.response_ids) for g in generations)
        return time.perf_counter() - started

    run.tokens = 0
    return run


def _generate_side(model, prompts: list[list[int]]):
    import torch

    ids, mask = left_pad(prompts, 0)

    def run() -> float:
        model.eval()
        started = time.perf_counter()
        with torch.no_grad():
            model.generate(input_ids=ids, attention_mask=mask, max_new_tokens=NEW_TOKENS,
                           min_new_tokens=NEW_TOKENS, do_sample=True, pad_token_id=0)
        return time.perf_counter() - started

    return run


@pytest.mark.parametrize("shape", ["distinct64", "grpo16x4", "searchqa64"])
def test_generation_speed(benchmark, shape: str) -> None:
    import torch

    torch.set_num_threads(1)
    model, tokenizer = load_model(resolve_model("searchqa-hasty-sft"))
    prompts = shapes(tokenizer)[shape]
    fast = _backend_side(HFBackend(model, tokenizer), prompts)
    plain = _backend_side(HFBackend(model, tokenizer, **PLAIN), prompts)
    over_plain = alternate(fast, plain, rounds=5)
    over_generate = alternate(fast, _generate_side(model, prompts), rounds=5)
    seconds = sorted(over_plain.candidate + over_generate.candidate)
    benchmark.pedantic(fast, rounds=1, iterations=1)
    benchmark.extra_info.update(over_plain.summary("over_plain_loop"))
    benchmark.extra_info.update(over_generate.summary("over_generate"))
    benchmark.extra_info["fast_tokens_per_s_median"] = round(
        fast.tokens / seconds[len(seconds) // 2], 1)
    assert over_plain.median >= 1.1, over_plain.ratios
