"""benchmarks/speed_vs_commit.py: the earlier commit's tree, and a child that fails says so."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from benchmarks.speed_vs_commit import foreign_modules, time_tree, unpack_commit

ROOT = Path(__file__).parents[2]


@pytest.mark.skipif(shutil.which("git") is None or not (ROOT / ".git").exists(),
                    reason="needs a git checkout")
def test_the_anchor_tree_is_the_commit_s_own_files(tmp_path) -> None:
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True,
                          text=True, check=True).stdout.strip()
    tree = unpack_commit(head, tmp_path)
    committed = subprocess.run(["git", "-C", str(ROOT), "show", f"{head}:benchmarks/speed_vs_commit.py"],
                               capture_output=True, text=True, check=True).stdout
    assert (tree / "benchmarks/speed_vs_commit.py").read_text() == committed
    assert (tree / "benchmarks/test_grpo_vs_trl_bench.py").is_file()


def test_a_tree_without_the_benchmark_fails_with_its_name(tmp_path) -> None:
    """A tree that has a project package but not the benchmark fails in its own import: the
    editable install's checkout does not fill the gap."""
    (tmp_path / "agents").mkdir()
    (tmp_path / "agents/__init__.py").write_text("")
    (tmp_path / "work.json").write_text('{"kind": "grpo-step", "prompts": []}')
    with pytest.raises(RuntimeError, match=f"the timed work of {tmp_path} failed") as failed:
        time_tree(tmp_path, tmp_path, tmp_path / "work.json", 1)
    assert "No module named 'agents.backends'" in str(failed.value)


def test_code_from_outside_the_tree_is_named(tmp_path) -> None:
    inside, outside = tmp_path / "tree/agents/x.py", tmp_path / "other/agents/y.py"
    assert foreign_modules(tmp_path / "tree", [str(inside), str(outside)]) == [str(outside)]
