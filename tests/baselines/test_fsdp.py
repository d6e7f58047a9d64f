"""Sharded training (FSDP2) on CPU with gloo: two ranks' step equals the single-process step on
the same global batch, and so does the next step after resuming from a checkpoint the ranks
wrote sharded."""

from __future__ import annotations

import datetime
import os
import time
from pathlib import Path

import pytest
import torch

pytest.importorskip("transformers")

from test_distributed import (  # noqa: E402
    WORLD_SIZE,
    _config,
    _free_port,
    _shard,
    assert_adam_steps_match,
)

from agents.backends.base import SamplingParams  # noqa: E402
from baselines.checkpoint import SHARDS, checkpoint_folders  # noqa: E402
from baselines.config import replace_settings  # noqa: E402
from baselines.distributed import DataParallel  # noqa: E402
from baselines.sharding import full_state_dict, is_sharded  # noqa: E402
from baselines.trainer import Trainer  # noqa: E402


def _fsdp_config(out: Path):
    # a frozen reference (KL term): its sharded copy is saved and restored too
    config = _config(out)
    return replace_settings(config, {"infra.sharding": "fsdp",
                                     "infra.gradient_checkpointing": True, "grpo.kl_coef": 0.05})


def _rank(rank: int, port: int, out: str, batch) -> None:
    """One rank: a sharded step, a sharded checkpoint, a fresh resumed trainer, a second step."""
    torch.set_num_threads(1)
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    torch.distributed.init_process_group("gloo", rank=rank, world_size=WORLD_SIZE,
                                         timeout=datetime.timedelta(seconds=60))
    try:
        config = _fsdp_config(Path(out) / "fsdp")
        local = _shard(batch, DataParallel(rank, WORLD_SIZE))
        trainer = Trainer(config)
        try:
            assert is_sharded(trainer.model) and is_sharded(trainer.teachers.frozen)
            metrics1 = trainer.update(local, step=1)
            trainer.step = 1
            first = full_state_dict(trainer.model)
            trainer.save()
        finally:
            trainer.close()
        resumed = Trainer(config, resume=True)
        try:
            assert resumed.step == 1
            restored = full_state_dict(resumed.model)
            metrics = resumed.update(local, step=2)
            second = full_state_dict(resumed.model)
            frozen = full_state_dict(resumed.teachers.frozen)
        finally:
            resumed.close()
        torch.save({"first": first, "restored": restored, "second": second, "frozen": frozen,
                    "metrics": metrics, "metrics1": metrics1}, Path(out) / f"fsdp-rank{rank}.pt")
    finally:
        torch.distributed.destroy_process_group()


@pytest.mark.slow
def test_two_fsdp_ranks_match_one_process_including_a_sharded_resume(tmp_path) -> None:
    torch.set_num_threads(1)
    single = Trainer(replace_settings(_fsdp_config(tmp_path / "single"), {"infra.sharding": "replicated"}))
    try:
        batch = single.engine.collect([11, 12, 13], SamplingParams(max_new_tokens=12, seed=5),
                                      single.config.train_split)
        start = {k: v.clone() for k, v in single.model.state_dict().items()}
        expected1 = single.update(batch, step=1)
        first = {k: v.clone() for k, v in single.model.state_dict().items()}
        expected = single.update(batch, step=2)
        second = single.model.state_dict()
        frozen = single.teachers.frozen.state_dict()
    finally:
        single.close()
    context = torch.multiprocessing.spawn(_rank, args=(_free_port(), str(tmp_path), batch),
                                          nprocs=WORLD_SIZE, join=False)
    deadline = time.monotonic() + 400
    try:  # join() returns False while some rank still runs (it raises if one failed)
        while not context.join(timeout=10):
            assert time.monotonic() < deadline, "ranks did not finish in 400 s"
    finally:
        for process in context.processes:
            if process.is_alive():
                process.kill()
    ranks = [torch.load(tmp_path / f"fsdp-rank{r}.pt", weights_only=False)
             for r in range(WORLD_SIZE)]
    lr = single.config.grpo.lr
    assert max(float((first[k] - start[k]).abs().max()) for k in first) > 1e-5
    run = tmp_path / "fsdp" / "SearchQA-v0" / "grpo" / "seed0"
    (_, folder), = checkpoint_folders(run)
    assert any((folder / SHARDS).iterdir()) and (folder / ".manifest.json").exists()
    for rank in ranks:
        assert rank["metrics1"]["grad_norm"] == pytest.approx(expected1["grad_norm"], rel=1e-4)
        for name in first:
            assert torch.equal(rank["restored"][name], rank["first"][name]), name
        for got, want in ((rank["first"], first), (rank["second"], second)):
            for name, value in want.items():
                assert_adam_steps_match(got[name], value, lr, name)
        for name, value in frozen.items():
            assert torch.equal(rank["frozen"][name], value), name
        for key in ("loss", "policy_loss", "kl", "grad_norm"):
            assert rank["metrics"][key] == pytest.approx(expected[key], rel=1e-4, abs=1e-6), key
