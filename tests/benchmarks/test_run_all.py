"""benchmarks/run_all.py: outcomes read from pytest's junit report, and RESULTS.md marking a row
whose benchmark missed its own target."""

from __future__ import annotations

import subprocess
import sys

from benchmarks import run_all

TINY_SUITE = '''
import pytest

def test_met():
    pass

def test_missed():
    assert 1.02 >= 1.05

@pytest.mark.parametrize("shape", ["a-1", "b"])
def test_shape(shape):
    assert shape == "b"

def test_without_extra():
    pytest.skip("extra missing")

class TestGroup:
    def test_inside(self):
        raise RuntimeError("broke")
'''


def test_outcomes_from_a_real_junit_report(tmp_path) -> None:
    (tmp_path / "benchmarks").mkdir()
    (tmp_path / "benchmarks" / "__init__.py").write_text("")
    (tmp_path / "benchmarks" / "test_tiny_bench.py").write_text(TINY_SUITE)
    report = tmp_path / "junit.xml"
    subprocess.run([sys.executable, "-m", "pytest", "benchmarks", "-q", "-p", "no:cacheprovider",
                    "-p", "no:benchmark", f"--junitxml={report}"], cwd=tmp_path,
                   capture_output=True, timeout=120, check=False)
    assert run_all.outcomes(report.read_text()) == {
        "test_tiny_bench.py::test_met": "passed",
        "test_tiny_bench.py::test_missed": "failed",
        "test_tiny_bench.py::test_shape[a-1]": "failed",
        "test_tiny_bench.py::test_shape[b]": "passed",
        "test_tiny_bench.py::test_without_extra": "skipped",
        "test_tiny_bench.py::TestGroup::test_inside": "failed",
    }


def _bench(name: str, mean: float, extra: dict) -> dict:
    return {"fullname": f"benchmarks/{name}", "stats": {"mean": mean}, "extra_info": extra}


def test_results_mark_the_rows_whose_target_was_missed() -> None:
    ab_name = "test_panel_bench.py::test_batched_rollout_seeds_speedup"
    ab_extra = {"speedup_median": 1.02, "speedup_min": 0.9, "speedup_max": 1.2,
                "speedup_rounds": 3}
    fast, slow = "test_grpo_vs_trl_bench.py::test_grpo_step[sdgym]", \
        "test_grpo_vs_trl_bench.py::test_grpo_step[trl]"
    data = {"benchmarks": [_bench(ab_name, 1.0, ab_extra), _bench(fast, 0.1, {}),
                           _bench(slow, 0.4, {})]}
    missed = run_all._entries(data, "run-1", "some CPU", {ab_name: "failed", fast: "passed"})
    assert missed[ab_name]["outcome"] == "failed"
    assert missed[slow]["outcome"] == "not recorded"
    text = run_all.render(missed)
    ab_row = next(line for line in text.splitlines() if line.startswith("| Test evaluation"))
    assert "1.02×" in ab_row and "target missed" in ab_row
    trl_row = next(line for line in text.splitlines()
                   if line.startswith("| GRPO training step (tiny model, 16 rows"))
    assert "4.00× faster" in trl_row and "target missed" not in trl_row
    assert f"| {ab_name} | 1.000000 |" in text and text.count("| failed |") == 1

    met = run_all._entries(data, "run-2", "some CPU", {ab_name: "passed", fast: "failed"})
    text = run_all.render(met)
    assert "target missed" not in next(line for line in text.splitlines()
                                       if line.startswith("| Test evaluation"))
    assert "target missed" in next(line for line in text.splitlines()
                                   if line.startswith("| GRPO training step (tiny model, 16 rows"))
