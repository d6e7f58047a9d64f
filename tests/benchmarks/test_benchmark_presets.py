"""Benchmark presets: one name per file across kinds, old names kept, types checked on load."""

from __future__ import annotations

import pytest

from baselines.config import PRESET_DIR
from benchmarks.protocol.matrix import PRESET_DIR as BENCHMARK_DIR
from benchmarks.protocol.matrix import load_benchmark_preset


def test_every_preset_file_name_is_unique_across_kinds() -> None:
    train = {p.stem for p in PRESET_DIR.glob("*.toml")}
    benchmark = {p.stem for p in BENCHMARK_DIR.glob("*.toml")}
    assert train and benchmark and not train & benchmark
    assert all(name.endswith("-bench") for name in benchmark)


def test_old_benchmark_names_still_work_and_keep_the_report_name() -> None:
    old, new = load_benchmark_preset("cpu-mini"), load_benchmark_preset("cpu-mini-bench")
    assert old == new and new.name == "cpu-mini" and new.train_preset == "cpu-mini"


@pytest.mark.parametrize(("text", "message"), [
    ('train_preset = "cpu-smoke"\nenvs = []\nmethods = []\nseeds = "0"\n',
     r"^seeds must be a list of integers, got '0'$"),
    ('train_preset = "cpu-smoke"\nenvs = []\nmethods = []\nseeds = [0]\nretries = "1"\n',
     r"^retries must be an integer, got '1'$"),
    ('train_preset = "cpu-smoke"\nenvs = []\nmethods = []\nseeds = [0]\ncolour = 1\n',
     r"unknown benchmark options \['colour'\]"),
])
def test_benchmark_preset_types_are_checked_on_load(tmp_path, text, message) -> None:
    path = tmp_path / "bad-bench.toml"
    path.write_text(text)
    with pytest.raises(ValueError, match=message):
        load_benchmark_preset(str(path))
