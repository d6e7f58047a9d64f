"""Data-parallel training: a 2-process gloo step equals the single-process step on the same rows."""

from __future__ import annotations

import datetime
import os
import socket
from pathlib import Path

import pytest
import torch

pytest.importorskip("transformers")

from agents.backends.base import SamplingParams  # noqa: E402
from agents.rollout import RolloutBatch  # noqa: E402
from baselines.config import load_preset  # noqa: E402
from baselines.distributed import DataParallel, from_environment  # noqa: E402
from baselines.trainer import Trainer  # noqa: E402

WORLD_SIZE = 2


def _config(out: Path):
    # small micro-batches: ranks run different numbers of them on uneven shards
    return load_preset("cpu-smoke", {"sft.steps": 4, "sft.tasks": 8, "rollout.num_groups": 3, "rollout.group_size": 2, "rollout.max_new_tokens": 12, "grpo.micro_batch_size": 3, "evaluation.val_episodes": 2}, out_dir=str(out), steps=1)


def assert_adam_steps_match(got: torch.Tensor, want: torch.Tensor, lr: float, name: str) -> None:
    """Parameters after the same AdamW steps on gradients equal up to float summation order.

    Adam's update is about ``lr * g / (|g| + eps)``: a summation-order difference far below
    float32 resolution of the gradient flips it only where the true gradient is about 0, by at
    most ~2 lr a step. So nearly every entry matches to 0.05 lr, and the few that do not (at most
    0.1% of a tensor, which no real sharding mistake -- a missing shard, a wrong sign, a shifted
    slice -- stays under) are bounded by the size of Adam's steps.
    """
    off = (got - want).abs()
    far = int((off > 0.05 * lr).sum())
    assert far <= max(1, want.numel() // 1000), f"{name}: {far} of {want.numel()} entries differ"
    assert float(off.max()) <= 6 * lr, f"{name}: differs by {float(off.max()):.3g} (lr {lr})"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _shard(batch: RolloutBatch, parallel: DataParallel) -> RolloutBatch:
    """This rank's whole groups of ``batch`` (as its own rollout would have produced)."""
    groups = set(parallel.shard(sorted({row.group_id for row in batch.rows})))
    return RolloutBatch(rows=[r for r in batch.rows if r.group_id in groups],
                        episodes=[e for e in batch.episodes if e.group_id in groups])


def _rank_update(rank: int, port: int, out: str, batch: RolloutBatch) -> None:
    """One rank: join the gloo group, update on its shard, save its parameters and metrics."""
    torch.set_num_threads(1)
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    torch.distributed.init_process_group("gloo", rank=rank, world_size=WORLD_SIZE,
                                         timeout=datetime.timedelta(seconds=120))
    try:
        trainer = Trainer(_config(Path(out) / "runs"))
        try:
            assert trainer.parallel.world_size == WORLD_SIZE and trainer.parallel.rank == rank
            assert trainer.engine.num_envs == len(trainer.parallel.shard(range(3))) * 2
            metrics = trainer.update(_shard(batch, trainer.parallel), step=1)
            grads = {n: p.grad.clone() for n, p in trainer.model.named_parameters()
                     if p.grad is not None}
            torch.save({"params": trainer.model.state_dict(), "grads": grads, "metrics": metrics},
                       Path(out) / f"rank{rank}.pt")
        finally:
            trainer.close()
    finally:
        torch.distributed.destroy_process_group()


def test_shard_is_contiguous_and_complete() -> None:
    items = list(range(7))
    shards = [DataParallel(rank, 3).shard(items) for rank in range(3)]
    assert shards == [[0, 1, 2], [3, 4], [5, 6]]
    with pytest.raises(ValueError, match="num_groups"):
        DataParallel(2, 4).shard([1, 2])


def test_single_process_collectives_are_identity() -> None:
    parallel = from_environment()
    assert not parallel.enabled and parallel.is_main
    assert parallel.global_sum(3.5) == 3.5
    assert parallel.sum_metrics({"a": 1.0}) == {"a": 1.0}
    assert parallel.main_first(lambda: 7) == 7


@pytest.mark.slow
def test_two_gloo_ranks_match_one_process_step(tmp_path) -> None:
    torch.set_num_threads(1)
    single = Trainer(_config(tmp_path / "single"))
    try:
        batch = single.engine.collect([11, 12, 13], SamplingParams(max_new_tokens=12, seed=5),
                                      single.config.train_split)
        before = {k: v.clone() for k, v in single.model.state_dict().items()}
        expected = single.update(batch, step=1)
        after = single.model.state_dict()
        grads = {n: p.grad.clone() for n, p in single.model.named_parameters() if p.grad is not None}
    finally:
        single.close()
    torch.multiprocessing.spawn(_rank_update, args=(_free_port(), str(tmp_path), batch),
                                nprocs=WORLD_SIZE, join=True)
    ranks = [torch.load(tmp_path / f"rank{r}.pt", weights_only=False) for r in range(WORLD_SIZE)]
    rows_per_rank = [len(_shard(batch, DataParallel(r, WORLD_SIZE)).rows) for r in range(2)]
    assert min(rows_per_rank) > 0 and sum(rows_per_rank) == len(batch.rows)
    moved = max(float((after[k] - before[k]).abs().max()) for k in after)
    assert moved > 1e-5, "the step must change the parameters for the comparison to mean anything"
    assert grads and all(set(rank["grads"]) == set(grads) for rank in ranks)
    for name in after:  # ranks stay bit-identical: same summed gradient, same optimizer step
        assert torch.equal(ranks[0]["params"][name], ranks[1]["params"][name]), name
    lr = single.config.grpo.lr
    for rank in ranks:
        # the summed gradient is the single-process one up to float summation order ...
        for name, value in grads.items():
            assert torch.allclose(rank["grads"][name], value, rtol=1e-5, atol=1e-8), name
        for name, value in after.items():
            assert_adam_steps_match(rank["params"][name], value, lr, name)
        for key in ("loss", "policy_loss", "entropy", "kl", "grad_norm", "train/invalid_rate"):
            assert rank["metrics"][key] == pytest.approx(expected[key], rel=1e-5, abs=1e-7), key


@pytest.mark.slow
def test_sdgym_train_under_torchrun(tmp_path) -> None:
    import json
    import subprocess
    import sys

    overrides = ["sft.steps=4", "sft.tasks=8", "rollout.num_groups=3", "rollout.group_size=2",
                 "evaluation.val_episodes=2", "rollout.max_new_tokens=12", "evaluation.val_every=1"]
    command = [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", str(WORLD_SIZE),
               "--master-addr", "127.0.0.1", "--master-port", str(_free_port()),
               "-m", "sdgym.cli", "train", "--preset", "cpu-smoke", "--steps", "1", "--no-eval",
               "--out", str(tmp_path / "runs"), *[f"--set={o}" for o in overrides]]
    done = subprocess.run(command, capture_output=True, text=True, timeout=240,
                          env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert done.returncode == 0, done.stderr[-3000:]
    run = tmp_path / "runs" / "SearchQA-v0" / "grpo" / "seed0"
    main_log = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    rank1_log = [json.loads(line)
                 for line in (run / "ranks" / "rank1" / "metrics.jsonl").read_text().splitlines()]
    main_steps = [r for r in main_log if "step" in r]
    assert [r["step"] for r in main_steps] == [0, 1] and "val/success" in main_steps[1]
    assert (run / "checkpoints" / "step-000001").is_dir() and (run / "summary.json").exists()
    assert not (run / "ranks" / "rank1" / "checkpoints").exists()  # rank 0 alone checkpoints
    step1 = next(r for r in rank1_log if r.get("step") == 1)
    for key in ("loss", "grad_norm", "train/turns"):  # metrics are global, the same on both ranks
        assert step1[key] == pytest.approx(main_steps[1][key], rel=1e-6), key


def _adam_step(grad: torch.Tensor, lr: float) -> torch.Tensor:
    weight = torch.nn.Parameter(torch.zeros_like(grad))
    optimizer = torch.optim.AdamW([weight], lr=lr, weight_decay=0.0)
    weight.grad = grad.clone()
    optimizer.step()
    return weight.detach()


def test_adam_comparison_tolerates_summation_order_but_not_a_sharding_mistake() -> None:
    lr, generator = 3e-4, torch.Generator().manual_seed(0)
    parts = torch.randn(4, 8192, generator=generator) * 1e-2
    parts[:, :4] = torch.tensor([0.1, 0.2, -0.3, 1e-9]).unsqueeze(1)  # 4 entries summing to ~0
    one_order, other_order = parts.sum(0), parts[[3, 1, 2, 0]].sum(0)
    assert not torch.allclose(_adam_step(one_order, lr), _adam_step(other_order, lr),
                              rtol=0, atol=0.05 * lr)  # the near-zero entries did flip
    assert_adam_steps_match(_adam_step(other_order, lr), _adam_step(one_order, lr), lr, "w")
    half = one_order.clone()
    half[4096:] = 0  # one rank's shard of the gradient lost
    for wrong in (half, -one_order, one_order.roll(1)):
        with pytest.raises(AssertionError):
            assert_adam_steps_match(_adam_step(wrong, lr), _adam_step(one_order, lr), lr, "w")
