"""A teacher head's extra forward against a whole GRPO step (the throughput target: ≤ 0.3×).

The GRPO step is :class:`SdgymGRPOStep` (4 Search-QA first-turn prompts × 4 completions, 32 new
tokens, loss, backward, AdamW) on the shipped ``searchqa-hasty-sft`` warm start. The teacher
forward is what :class:`baselines.learner.Learner` runs for a logit-level head (SDPO, SDFT):
one no-grad :func:`~agents.backends.scoring.response_logprobs` of the same 16 responses after the
prompts a teacher with the ``privileged`` per-turn context reads at those turns (the student
prompt plus the gold answer and plan: ~230-250 tokens against the student's ~150), shared
prompts and buckets as in training. A/B alternating in one process after a warm-up of both
(:mod:`ab_timing`), one thread; ``teacher_share`` is teacher seconds / step seconds per round.
"""

from __future__ import annotations

import pytest

pytest.importorskip("pytest_benchmark")
pytest.importorskip("transformers")

import torch  # noqa: E402

from agents.backends.base import SamplingParams  # noqa: E402
from agents.backends.scoring import response_logprobs  # noqa: E402
from agents.model_loading import load_model  # noqa: E402
from agents.warm_starts import resolve_model  # noqa: E402
from baselines.learner import UPDATE_BUCKET_COST  # noqa: E402
from benchmarks.ab_timing import alternate  # noqa: E402
from benchmarks.real_prompts import first_turn_prompts  # noqa: E402
from benchmarks.test_grpo_vs_trl_bench import (  # noqa: E402
    ENV_ID,
    GROUP_SIZE,
    MAX_NEW_TOKENS,
    NUM_PROMPTS,
    SdgymGRPOStep,
)


def test_teacher_forward_vs_grpo_step(benchmark) -> None:
    import time

    torch.set_num_threads(1)
    torch.manual_seed(0)
    model, tokenizer = load_model(resolve_model("searchqa-hasty-sft"))
    student = first_turn_prompts(tokenizer, NUM_PROMPTS, env_id=ENV_ID, size="tiny")
    teacher = first_turn_prompts(tokenizer, NUM_PROMPTS, env_id=ENV_ID, size="tiny",
                                 teacher_context="privileged")
    step = SdgymGRPOStep(model, tokenizer, student)
    teacher_ids = [ids for ids in step.backend.encode(teacher) for _ in range(GROUP_SIZE)]
    params = SamplingParams(max_new_tokens=MAX_NEW_TOKENS, temperature=1.0, seed=0)
    responses = [g.response_ids for g in step.backend.generate_from_ids(step.prompt_ids, params)]

    def teacher_forward() -> float:
        started = time.perf_counter()
        with torch.no_grad():
            response_logprobs(model, teacher_ids, responses,
                              pad_token_id=step.backend.pad_token_id, share_prompts=True,
                              bucket_cost=UPDATE_BUCKET_COST)
        return time.perf_counter() - started

    def grpo_step() -> float:
        started = time.perf_counter()
        step()
        return time.perf_counter() - started

    result = alternate(teacher_forward, grpo_step, rounds=7)
    shares = sorted(1.0 / ratio for ratio in result.ratios)
    benchmark.pedantic(teacher_forward, rounds=1, iterations=1)
    benchmark.extra_info.update(result.summary("step_over_teacher"))
    benchmark.extra_info.update(
        teacher_share_median=round(shares[len(shares) // 2], 3),
        teacher_share_min=round(shares[0], 3), teacher_share_max=round(shares[-1], 3),
        teacher_prompt_tokens=round(sum(map(len, teacher_ids)) / len(teacher_ids), 1),
        student_prompt_tokens=round(sum(map(len, step.prompt_ids)) / len(step.prompt_ids), 1))
    assert shares[len(shares) // 2] < 1.0, shares  # a forward without backward or sampling
