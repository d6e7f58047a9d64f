"""The ALFWorld and ScienceWorld warm-start recipes rebuild bit for bit: a reduced recipe built
twice from nothing (fresh caches) exports the same weights, under the same recipe hash."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agents.warm_starts import RECORD_FILE, weights_digest
from sdgym.cli import main
from sdgym.registration import entry_for

REDUCED = ["--set", "sft.steps=2", "--set", "sft.tasks=2", "--set", "sft.batch_size=2",
           "--set", "sft.warmup_steps=1"]


def _build(preset: str, root: Path, monkeypatch, extra: list[str] = ()) -> dict:
    monkeypatch.setenv("SDGYM_CACHE", str(root / "cache"))  # nothing reused between builds
    target = root / "export"
    assert main(["sft", "--preset", preset, *REDUCED, *extra, "--export", str(target)]) == 0
    record = json.loads((target / RECORD_FILE).read_text())
    assert record["weights_sha256"] == weights_digest(target)
    return record


@pytest.mark.parametrize(("preset", "env_id"), [("alfworld-warm-start", "sdgym/ALFWorld-v0"),
                                                ("scienceworld-warm-start", "sdgym/ScienceWorld-v0")])
def test_reduced_recipe_rebuilds_the_same_weights_under_the_same_hash(
        preset: str, env_id: str, tmp_path: Path, monkeypatch) -> None:
    if not entry_for(env_id).installed():
        pytest.skip(f"{env_id} is not installed")
    first = _build(preset, tmp_path / "a", monkeypatch)
    second = _build(preset, tmp_path / "b", monkeypatch)
    assert first["recipe_hash"] == second["recipe_hash"]
    assert first["weights_sha256"] == second["weights_sha256"]
    assert first["demonstrations"] > 0
    other = _build(preset, tmp_path / "c", monkeypatch, ["--set", "sft.lr=0.01"])
    assert other["recipe_hash"] != first["recipe_hash"]
    assert other["weights_sha256"] != first["weights_sha256"]
