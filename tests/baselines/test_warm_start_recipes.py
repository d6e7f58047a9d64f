"""The ALFWorld and ScienceWorld warm-start recipes, and the sized Search-QA and WebShop ones (#41),
rebuild bit for bit: a reduced recipe built twice from nothing (fresh caches) exports the same
weights, under the same recipe hash."""

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


SIZED_RECIPES = [(f"{recipe}-{size}", env_id, start and f"{start}-{size}", size)
                 for size in ("tiny-s", "tiny-l")
                 for recipe, env_id, start in (
                     ("searchqa-warm-start", "sdgym/SearchQA-v0", None),
                     ("searchqa-hasty-warm-start", "sdgym/SearchQA-v0", "searchqa-easy-sft"),
                     ("webshop-base-warm-start", "sdgym/WebShop-v0", None),
                     ("webshop-warm-start", "sdgym/WebShop-v0", "webshop-easy-base"))]
"""Each sized recipe, its env, the sized warm start it fine-tunes (None: from scratch), its size."""


@pytest.mark.parametrize(("preset", "env_id", "start", "size"), SIZED_RECIPES)
def test_reduced_sized_recipe_rebuilds_the_same_weights_at_its_size(
        preset: str, env_id: str, start: str | None, size: str, tmp_path: Path,
        monkeypatch) -> None:
    from agents.model_sizes import MODEL_SIZES
    from agents.warm_starts import shipped_warm_starts

    if not entry_for(env_id).installed():
        pytest.skip(f"{env_id} is not installed")
    if start is not None and start not in shipped_warm_starts():
        pytest.skip(f"{start} (the warm start {preset} fine-tunes) is not built yet")
    first = _build(preset, tmp_path / "a", monkeypatch)
    second = _build(preset, tmp_path / "b", monkeypatch)
    assert first["recipe_hash"] == second["recipe_hash"]
    assert first["weights_sha256"] == second["weights_sha256"]
    config = json.loads((tmp_path / "b" / "export" / "config.json").read_text())
    assert (config["hidden_size"], config["num_hidden_layers"]) == (
        MODEL_SIZES[size]["hidden_size"], MODEL_SIZES[size]["num_layers"])
