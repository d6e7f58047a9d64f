"""``sdgym benchmark --ray``: cells run as Ray tasks and give the records of the local path."""

from __future__ import annotations

import json
import os
import sys

import pytest

ray = pytest.importorskip("ray")

from agents.ray_runtime import ray_session  # noqa: E402
from benchmarks.protocol.matrix import BenchmarkPreset, run_cell, run_matrix  # noqa: E402
from benchmarks.protocol.ray_dispatch import RayDispatch  # noqa: E402

SEARCHQA = "sdgym/SearchQA-v0"


def _runner(cell, preset, out):
    """Real reference-policy cells; cheap stand-ins for training cells (one always crashes)."""
    if cell.kind == "baseline":
        return {**run_cell(cell, preset, out), "pid": os.getpid()}
    if cell.method == "broken":
        raise RuntimeError("cell exploded")
    return {"kind": cell.kind, "env_id": cell.env_id, "method": cell.method, "seed": cell.seed,
            "success_per_seed": [0.25 * len(cell.method)], "validation": [], "auc": None,
            "train_seconds": 1.0, "cell": cell.key, "pid": os.getpid()}


def _preset() -> BenchmarkPreset:
    return BenchmarkPreset(name="t", train_preset="cpu-smoke", envs=[SEARCHQA],
                           methods=["grpo", "broken"], seeds=[0], baseline_envs=[SEARCHQA],
                           baseline_episodes=2, baseline_seeds=1, retries=1,
                           env_kwargs={SEARCHQA: {"size": "tiny"}})


def _comparable(record: dict) -> dict:
    return {k: v for k, v in record.items() if k not in ("pid", "seconds", "wall_seconds", "train_seconds")}


@pytest.fixture(scope="module")
def ray_cluster():
    """A local two-CPU Ray instance; this test module's functions travel to it by value."""
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    with ray_session(num_cpus=2) as session:
        yield session


@pytest.mark.slow
def test_ray_dispatch_gives_the_local_records(tmp_path, ray_cluster) -> None:
    local = run_matrix(_preset(), tmp_path / "local", runner=_runner)
    seen: list[tuple[str, str]] = []
    remote = run_matrix(_preset(), tmp_path / "ray", runner=_runner, dispatch=RayDispatch(),
                        on_cell=lambda cell, status: seen.append((cell.key, status)))
    assert remote["planned"] == local["planned"] == 5
    assert [r["cell"] for r in remote["records"]] == [r["cell"] for r in local["records"]]
    assert [_comparable(r) for r in remote["records"]] == [_comparable(r) for r in local["records"]]
    assert all(r["pid"] != os.getpid() for r in remote["records"])  # ran in Ray workers
    assert {r["method"] for r in remote["records"]} == {"random", "expert", "sft-start", "grpo"}
    assert [f["cell"] for f in remote["failures"]] == ["train-SearchQA-v0-broken-seed0"]
    failure = json.loads((tmp_path / "ray" / "cells" / "train-SearchQA-v0-broken-seed0" /
                          "failure.json").read_text())
    assert len(failure["errors"]) == 2 and "cell exploded" in failure["errors"][-1]
    assert sorted(status for _, status in seen) == ["done"] * 4 + ["failed"]
    for record in remote["records"]:  # each finished cell wrote its result file
        saved = tmp_path / "ray" / "cells" / record["cell"] / "result.json"
        assert json.loads(saved.read_text()) == json.loads(json.dumps(record, default=str))
    seen.clear()
    again = run_matrix(_preset(), tmp_path / "ray", runner=_runner, dispatch=RayDispatch(),
                       on_cell=lambda cell, status: seen.append((cell.key, status)))
    assert sorted(status for _, status in seen) == ["cached"] * 4 + ["failed"]  # resumable
    assert len(again["records"]) == 4
    assert ray_cluster.is_initialized()  # the caller's Ray is left running
