"""Benchmark suites: several benchmark presets run one after another, then one merged report.

A suite file ``presets/suites/<name>.toml`` names its ``parts`` (benchmark presets). ``sdgym
benchmark --preset <name>`` runs each part into ``OUT/<part>`` exactly as ``sdgym benchmark
--preset <part> --out OUT/<part>`` would (same cells, same resume: a re-run skips finished cells),
then merges the part folders (:func:`benchmarks.protocol.merge.merge_runs`, which refuses parts
whose protocols disagree for an env) into ``OUT/report.md``. With ``--ray`` / ``--ray-address``
every part's cells go to the cluster, one part after another.

Suites are how sdgym covers several settings without one giant preset: each setting keeps its own
preset (sized to run in about an hour here) and its own run folder, and the report is over all of
them (``sdgym report`` does the same for folders made anywhere).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path

from baselines.config import read_toml
from baselines.typecheck import check_fields
from benchmarks.protocol.matrix import PRESET_DIR, BenchmarkPreset, load_benchmark_preset

SUITE_DIR = PRESET_DIR / "suites"
"""Suite files are ``suites/<name>.toml`` under the benchmark presets; ``--preset`` names a suite
by ``<name>`` (a suite and a benchmark preset never share a name: tested)."""


@dataclass
class BenchmarkSuite:
    """Benchmark presets run one after another into one folder, with one merged report."""

    name: str
    parts: list[str]
    """Benchmark presets, run in this order (each into ``OUT/<part>``)."""
    description: str = ""
    title: str = ""
    """The merged report's title (default: the suite's name)."""
    presets: list[BenchmarkPreset] = field(default_factory=list, repr=False)
    """Filled by :func:`load_suite`: each part's loaded benchmark preset, in order."""

    def __post_init__(self) -> None:
        check_fields(self)
        if not self.parts:
            raise ValueError(f"suite {self.name!r}: 'parts' names no benchmark preset")
        if len(set(self.parts)) != len(self.parts):
            raise ValueError(f"suite {self.name!r}: a part is named twice in {self.parts}")


def suite_path(name: str) -> Path | None:
    """The suite file of ``name`` (a shipped suite's name, or a TOML file with a ``parts``
    list), or None: ``name`` is not a suite."""
    if name.endswith(".toml"):
        path = Path(name)
        return path if path.is_file() and "parts" in read_toml(path) else None
    path = SUITE_DIR / f"{name}.toml"
    return path if path.is_file() else None


def available_suites() -> list[str]:
    """Names of the shipped suites."""
    return sorted(p.stem for p in SUITE_DIR.glob("*.toml"))


def load_suite(name: str) -> BenchmarkSuite | None:
    """The suite ``name`` names with its parts checked to be benchmark presets, or None when
    ``name`` is not a suite (a ValueError names an unknown option or part)."""
    path = suite_path(name)
    if path is None:
        return None
    values = read_toml(path)
    known = {f.name for f in dataclasses.fields(BenchmarkSuite)} - {"name", "presets"}
    unknown = sorted(set(values) - known)
    if unknown:
        raise ValueError(f"{path.name}: unknown suite options {unknown}")
    suite = BenchmarkSuite(name=path.stem, **values)
    suite.presets = [load_benchmark_preset(part) for part in suite.parts]  # raises on an unknown
    return suite


def part_folders(suite: BenchmarkSuite, out: str | Path) -> list[Path]:
    """Run folder of each part, in order: ``OUT/<part preset name>``."""
    return [Path(out) / preset.name for preset in suite.presets]
