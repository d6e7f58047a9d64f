"""Seconds per GRPO training step: sdgym's GRPO core vs TRL's ``GRPOTrainer`` (issue #8).

Both sides train their own copy of the same tiny Qwen3 model (:func:`build_tiny_model`, fp32,
CPU, one torch thread) on the same work per step: the same 4 chat-rendered prompts (the first
observations of Search-QA tiny, ``easy_train`` split, seeds 0-3), 4 sampled completions per
prompt (16 rows), at most 32 new tokens at temperature 1 (no top-p/top-k), the same reward
(:func:`word_count_reward` on the decoded completion), group-normalised advantages, the PPO
clipped loss with token-mean reduction, no KL term (beta = 0), one backward pass, gradient
clipping at norm 1 and one AdamW step (lr 1e-5, no weight decay, constant schedule).

What one timed round counts:

* **sdgym** (:class:`SdgymGRPOStep`): ``HFBackend.generate_from_ids`` (batched KV-cache
  sampling that also records the rollout log-probs), decoding and the reward,
  :func:`baselines.grpo.group_advantages`, one grad-enabled ``response_logprobs`` over
  ``[prompt | response]`` (log-probs and logits), :func:`baselines.grpo.clipped_policy_loss`
  plus the entropy bonus the sdgym trainer adds (coefficient 0.001), ``backward``,
  ``clip_grad_norm_`` and ``AdamW.step``. Not counted: prompt tokenisation (done once, as the
  rollout engine does per turn outside generation) and environment steps.
* **TRL** (:class:`TRLStepGate`): everything ``GRPOTrainer.train()`` does between the end of
  one optimizer step and the end of the next: fetching the batch, prompt tokenisation,
  ``model.generate``, reward, advantages, the loss forward (TRL also computes token entropies
  for its metrics, without grad), backward, gradient clipping, ``AdamW.step``, the scheduler
  step and TRL's metric bookkeeping (logging to any backend is off). ``steps_per_generation=1``
  and ``num_iterations=1``, so each step generates once and updates once, and the old
  log-probs are the detached current ones (no extra forward), as sdgym reuses the rollout
  log-probs. Gradient checkpointing (TRL's default) is switched off, as sdgym does not use
  it. Not counted: ``train()``'s setup before the first step.

One warm-up round is excluded on each side. The sdgym test runs first; the TRL test puts the
ratio ``sdgym_over_trl`` (mean seconds per step, target <= 1.0) in its ``extra_info``.
Needs the ``bench`` extra (``pip install 'sdgym[bench]'``); skipped without ``trl``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pytest_benchmark")
pytest.importorskip("transformers")
pytest.importorskip("trl", reason="the GRPO-vs-TRL benchmark needs trl: pip install 'sdgym[bench]'")
pytest.importorskip("datasets", reason="TRL's GRPOTrainer needs datasets: pip install 'sdgym[bench]'")

import torch  # noqa: E402

import sdgym  # noqa: E402, F401  (registers the environments)
from agents.backends.base import SamplingParams  # noqa: E402
from agents.backends.hf import HFBackend  # noqa: E402
from agents.backends.scoring import response_logprobs  # noqa: E402
from agents.model_loading import load_model  # noqa: E402
from agents.tiny_model import build_tiny_model  # noqa: E402
from baselines.grpo import (  # noqa: E402
    GRPOConfig,
    clipped_policy_loss,
    entropy_from_logits,
    group_advantages,
    masked_mean,
)
from baselines.learner import UPDATE_BUCKET_COST  # noqa: E402
from benchmarks.real_prompts import first_turn_prompts  # noqa: E402

ENV_ID = "sdgym/SearchQA-v0"
NUM_PROMPTS = 4
GROUP_SIZE = 4
MAX_NEW_TOKENS = 32
LEARNING_RATE = 1e-5
MAX_GRAD_NORM = 1.0
ROUNDS = 5
WARMUP_ROUNDS = 1
STEP_TIMEOUT_S = 300.0
"""A TRL step that takes longer than this is reported as a failure instead of hanging."""

PREVIOUS_BACKEND = {"share_prompt_prefill": False, "drop_finished_rows": False,
                    "length_buckets": False, "grouped_decode_attention": False,
                    "static_cache": False, "shared_prefix": False}
PREVIOUS_FORWARD = {"share_prompts": False, "bucket_cost": None}
"""The path before the throughput work: every row prefilled and trained on its whole prompt,
one padded batch, transformers' sdpa with a growing cache (the same numbers, slower)."""
FAST_FORWARD = {"share_prompts": True, "bucket_cost": UPDATE_BUCKET_COST}
"""The update forward :class:`baselines.learner.Learner` runs: shared prompts, length buckets."""

_MEAN_SECONDS: dict[str, float] = {}
"""Mean seconds per step of each side measured in this run (the ratio is taken from it)."""


def first_observation_prompts(tokenizer: Any, count: int = NUM_PROMPTS) -> list[str]:
    """Chat-rendered student prompts of the first turn of ``count`` Search-QA tiny episodes."""
    return first_turn_prompts(tokenizer, count, env_id=ENV_ID, size="tiny")


def word_count_reward(text: str) -> float:
    """A trivial reward shared by both sides: the number of whitespace-separated words."""
    return float(len(text.split()))


class SdgymGRPOStep:
    """One GRPO step built from sdgym's pieces: HF generation, group advantages, clipped loss."""

    def __init__(self, model: torch.nn.Module, tokenizer: Any, prompts: list[str],
                 fast: bool = True) -> None:
        self.backend = HFBackend(model, tokenizer, **({} if fast else PREVIOUS_BACKEND))
        self.forward_options = FAST_FORWARD if fast else PREVIOUS_FORWARD
        self.model = model
        self.config = GRPOConfig(kl_coef=0.0)
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=LEARNING_RATE, weight_decay=0.0)
        prompt_ids = self.backend.encode(prompts)
        self.prompt_ids = [ids for ids in prompt_ids for _ in range(GROUP_SIZE)]
        self.group_ids = [p for p in range(len(prompts)) for _ in range(GROUP_SIZE)]
        self.completion_tokens: list[int] = []
        self.calls = 0

    def __call__(self) -> None:
        self.calls += 1
        params = SamplingParams(max_new_tokens=MAX_NEW_TOKENS, temperature=1.0, seed=self.calls)
        generations = self.backend.generate_from_ids(self.prompt_ids, params)
        rewards = torch.tensor([word_count_reward(g.text) for g in generations])
        advantages = group_advantages(rewards, rewards, self.group_ids,
                                      list(range(len(generations))), "episode", self.config.eps)
        self.model.train()
        self.optimizer.zero_grad()
        logprobs, logits, mask = response_logprobs(
            self.model, self.prompt_ids, [g.response_ids for g in generations],
            pad_token_id=self.backend.pad_token_id, **self.forward_options)
        old = torch.nn.utils.rnn.pad_sequence(
            [torch.tensor(g.logprobs, dtype=torch.float32) for g in generations], batch_first=True)
        token_advantages = advantages.unsqueeze(1).expand_as(logprobs)
        loss, _ = clipped_policy_loss(logprobs, old, token_advantages, mask, self.config)
        loss = loss - self.config.entropy_coef * masked_mean(entropy_from_logits(logits), mask)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), MAX_GRAD_NORM)
        self.optimizer.step()
        self.model.eval()
        self.completion_tokens.append(sum(len(g.response_ids) for g in generations))


def _trl_reward(completions: list[str], **_: Any) -> list[float]:
    return [word_count_reward(text) for text in completions]


class TRLStepGate:
    """Runs ``GRPOTrainer.train()`` in a thread and lets it advance one optimizer step per call.

    A callback blocks the trainer at the start of training and after each step's end until
    the next call releases it; a call returns when the trainer reaches the next step end, so
    the timed interval is one whole step of TRL's own training loop.
    """

    def __init__(self, model: torch.nn.Module, tokenizer: Any, prompts: list[str],
                 output_dir: Path) -> None:
        from datasets import Dataset
        from transformers import TrainerCallback
        from trl import GRPOConfig as TRLGRPOConfig
        from trl import GRPOTrainer

        gate = self

        class _Gate(TrainerCallback):
            def on_train_begin(self, args, state, control, **kwargs):
                gate._wait_for_release()

            def on_step_end(self, args, state, control, **kwargs):
                gate.completion_tokens.append(gate._last_completion_tokens())
                gate._finished.release()
                gate._wait_for_release()
                if gate._stopping:
                    control.should_training_stop = True

        args = TRLGRPOConfig(
            output_dir=str(output_dir), per_device_train_batch_size=NUM_PROMPTS * GROUP_SIZE,
            num_generations=GROUP_SIZE, steps_per_generation=1, num_iterations=1,
            max_completion_length=MAX_NEW_TOKENS, temperature=1.0, top_p=1.0, top_k=0,
            beta=0.0, loss_type="dapo", scale_rewards="group", learning_rate=LEARNING_RATE,
            lr_scheduler_type="constant", warmup_steps=0, optim="adamw_torch", weight_decay=0.0,
            max_grad_norm=MAX_GRAD_NORM, gradient_checkpointing=False, max_steps=10_000,
            use_cpu=True, bf16=False, fp16=False, report_to="none", save_strategy="no",
            logging_strategy="no", eval_strategy="no", disable_tqdm=True, seed=0,
            dataloader_num_workers=0)
        self.trainer = GRPOTrainer(
            model=model, reward_funcs=[_trl_reward], args=args, processing_class=tokenizer,
            train_dataset=Dataset.from_dict({"prompt": prompts}), callbacks=[_Gate()])
        self.completion_tokens: list[int] = []
        self._release = threading.Semaphore(0)
        self._finished = threading.Semaphore(0)
        self._stopping = False
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._train, name="trl-grpo-train", daemon=True)
        self._thread.start()

    def _train(self) -> None:
        torch.set_num_threads(1)  # the thread count is per thread for OpenMP
        try:
            self.trainer.train()
        except BaseException as err:  # reported to the caller of the next step
            self._error = err
        finally:
            self._finished.release()

    def _wait_for_release(self) -> None:
        if not self._release.acquire(timeout=STEP_TIMEOUT_S * 4):
            self._stopping = True  # the benchmark went away: end training

    def _last_completion_tokens(self) -> int:
        lengths = self.trainer._metrics["train"].get("completions/mean_length", [])
        return int(round(lengths[-1] * NUM_PROMPTS * GROUP_SIZE)) if lengths else 0

    def __call__(self) -> None:
        if not self._thread.is_alive():
            raise RuntimeError("TRL training thread ended early") from self._error
        self._release.release()
        if not self._finished.acquire(timeout=STEP_TIMEOUT_S):
            raise TimeoutError(f"a TRL GRPO step took longer than {STEP_TIMEOUT_S:.0f} s")
        if self._error is not None:
            raise RuntimeError("TRL GRPOTrainer.train() failed") from self._error

    def close(self) -> None:
        """Let the trainer finish after its current step and wait for the thread."""
        self._stopping = True
        self._release.release()
        self._thread.join(timeout=STEP_TIMEOUT_S)


@pytest.fixture(scope="module")
def tiny_model_dir() -> Path:
    return build_tiny_model()


def _make_step(side: str, model_dir: Path, output_dir: Path) -> tuple[Callable[[], None], Any]:
    model, tokenizer = load_model(model_dir)
    prompts = first_observation_prompts(tokenizer)
    if side == "sdgym":
        return (step := SdgymGRPOStep(model, tokenizer, prompts)), step
    gate = TRLStepGate(model, tokenizer, prompts, output_dir)
    return gate, gate


@pytest.mark.parametrize("side", ["sdgym", "trl"])
def test_grpo_step(benchmark, side: str, tiny_model_dir: Path, tmp_path: Path) -> None:
    torch.set_num_threads(1)
    torch.manual_seed(0)
    step, owner = _make_step(side, tiny_model_dir, tmp_path)
    try:
        benchmark.pedantic(step, rounds=ROUNDS, warmup_rounds=WARMUP_ROUNDS, iterations=1)
    finally:
        if isinstance(owner, TRLStepGate):
            owner.close()
    timed = owner.completion_tokens[WARMUP_ROUNDS:]
    assert len(timed) == ROUNDS
    mean_seconds = benchmark.stats.stats.mean
    _MEAN_SECONDS[side] = mean_seconds
    benchmark.extra_info.update(
        seconds_per_step=mean_seconds,
        completion_tokens_per_step=sum(timed) / len(timed),
        rows_per_step=NUM_PROMPTS * GROUP_SIZE,
    )
    if side == "trl" and "sdgym" in _MEAN_SECONDS:
        benchmark.extra_info["sdgym_over_trl"] = _MEAN_SECONDS["sdgym"] / mean_seconds


def test_grpo_step_ab(benchmark, tiny_model_dir: Path, tmp_path: Path) -> None:
    """The same step A/B alternating in one process (each side its own model copy, warmed up):
    sdgym's path vs TRL's ``GRPOTrainer``, and vs sdgym's previous path (no prompt sharing, no
    buckets, plain decode loop)."""
    import time

    from benchmarks.ab_timing import alternate

    torch.set_num_threads(1)
    torch.manual_seed(0)
    sides = {}
    for name in ("fast", "previous", "trl"):
        model, tokenizer = load_model(tiny_model_dir)
        prompts = first_observation_prompts(tokenizer)
        sides[name] = (TRLStepGate(model, tokenizer, prompts, tmp_path / "trl") if name == "trl"
                       else SdgymGRPOStep(model, tokenizer, prompts, fast=name == "fast"))

    def timed(step) -> Callable[[], float]:
        def run() -> float:
            started = time.perf_counter()
            step()
            return time.perf_counter() - started
        return run

    try:
        over_trl = alternate(timed(sides["fast"]), timed(sides["trl"]), rounds=ROUNDS)
        over_previous = alternate(timed(sides["fast"]), timed(sides["previous"]), rounds=ROUNDS)
    finally:
        sides["trl"].close()
    benchmark.pedantic(timed(sides["fast"]), rounds=1, iterations=1)
    benchmark.extra_info.update(over_trl.summary("over_trl"))
    benchmark.extra_info.update(over_previous.summary("over_previous_path"))
    assert over_trl.median > 1.0, over_trl.ratios
