"""No orphans: a ``kill -9`` of a process that runs benchmark workers ends its whole tree.

A real tree runs in a subprocess: the benchmark's worker pool
(:func:`benchmarks.protocol.process_dispatch.run_cells_in_processes`, 2 workers and the
``multiprocessing`` resource tracker), each worker with a plain child process and a tied
Gymnasium ``AsyncVectorEnv`` sub-env process (optionally a ScienceWorld JVM too). The test
collects every descendant, SIGKILLs the top process and waits for all of them to end.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

psutil = pytest.importorskip("psutil")
pytest.importorskip("torch")  # the pool's workers set torch's thread count

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc and prctl")

ROOT = Path(__file__).resolve().parents[1]
GONE_WITHIN_S = 10.0

TREE = r'''
import os, subprocess, sys, threading, time
from pathlib import Path

from benchmarks.protocol.process_dispatch import run_cells_in_processes


def attempt(cell, marks, jvm):
    import gymnasium as gym
    from sdgym.process_lifetime import tied_async_worker

    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    vector = gym.vector.AsyncVectorEnv([lambda: gym.make("CartPole-v1")],
                                       worker=tied_async_worker())
    vector.reset(seed=0)
    if jvm:
        from sdgym.envs.scienceworld.jvm import SimulatorJVM
        simulator = SimulatorJVM()
    Path(marks, str(os.getpid())).write_text(str(sleeper.pid))
    time.sleep(600)


def run(marks, jvm):
    for _ in run_cells_in_processes([0, 1], attempt, (marks, jvm), jobs=2):
        pass


if __name__ == "__main__":
    marks, where, jvm = sys.argv[1], sys.argv[2], sys.argv[3] == "jvm"
    if where == "main":
        run(marks, jvm)
    else:  # started from another thread: the kernel's parent-death signal is not asked for
        driver = threading.Thread(target=run, args=(marks, jvm))
        driver.start()
        driver.join()
'''


def _running(process: psutil.Process) -> bool:
    """Whether ``process`` still runs (a zombie waiting for a reaper does not)."""
    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def _kill_tree(processes: list[psutil.Process]) -> None:
    for process in processes:
        with contextlib.suppress(psutil.Error):
            process.kill()


def _tree_ends_with_its_top(tmp_path: Path, where: str, jvm: bool) -> float:
    """Start the tree, SIGKILL its top; seconds until every descendant is gone."""
    script = tmp_path / "tree.py"
    script.write_text(TREE)
    marks = tmp_path / "marks"
    marks.mkdir()
    env = {**os.environ, "OMP_NUM_THREADS": "1",
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    top = subprocess.Popen([sys.executable, str(script), str(marks), where,
                            "jvm" if jvm else "plain"], env=env, cwd=tmp_path)
    descendants: list[psutil.Process] = []
    try:
        deadline = time.monotonic() + 240  # two workers import torch on a loaded machine
        while len(list(marks.iterdir())) < 2:
            assert top.poll() is None, f"the tree's top process exited ({top.returncode})"
            assert time.monotonic() < deadline, "the workers did not start their cells"
            time.sleep(0.2)
        descendants = psutil.Process(top.pid).children(recursive=True)
        commands = [" ".join(p.cmdline()) for p in descendants]
        assert any("resource_tracker" in c for c in commands), commands
        # tracker + 2 workers, each with a sleeper and a sub-env process (and a JVM)
        assert len(descendants) == 1 + 2 * (3 + jvm), commands
        os.kill(top.pid, signal.SIGKILL)
        killed = time.monotonic()
        top.wait(timeout=10)
        while any(map(_running, descendants)):
            elapsed = time.monotonic() - killed
            left = [" ".join(p.cmdline()) for p in descendants if _running(p)]
            assert elapsed < GONE_WITHIN_S, f"still running {elapsed:.1f} s after the kill: {left}"
            time.sleep(0.05)
        return time.monotonic() - killed
    finally:
        if top.poll() is None:
            top.kill()
            top.wait(timeout=10)
        _kill_tree([p for p in descendants if _running(p)])


@pytest.mark.slow
@pytest.mark.parametrize("where", ["main", "other"])
def test_kill_9_of_the_driver_ends_its_workers_and_their_children(tmp_path: Path,
                                                                   where: str) -> None:
    """From the main thread the kernel's parent-death signal ends the tree; from another thread
    the parent-pid watch does (within ~1 s more)."""
    seconds = _tree_ends_with_its_top(tmp_path, where, jvm=False)
    assert 0 <= seconds < GONE_WITHIN_S, f"tree started from the {where} thread: {seconds:.2f} s"


@pytest.mark.slow
@pytest.mark.needs_java
def test_kill_9_of_the_driver_ends_the_workers_jvms(tmp_path: Path) -> None:
    """A worker's ScienceWorld JVM ends with it."""
    pytest.importorskip("scienceworld")
    from sdgym.envs.scienceworld.jvm import find_java

    try:
        find_java()
    except FileNotFoundError:
        pytest.skip("no Java runtime for ScienceWorld")
    seconds = _tree_ends_with_its_top(tmp_path, "main", jvm=True)
    assert 0 <= seconds < GONE_WITHIN_S, f"tree with JVMs: {seconds:.2f} s"


def test_async_vector_envs_of_the_local_pool_are_tied(monkeypatch: pytest.MonkeyPatch) -> None:
    """``make_vector_env`` hands Gymnasium the tied worker in async mode, and nothing in sync."""
    import gymnasium as gym

    from agents.pools.base import EnvPoolSpec
    from agents.pools.local import make_vector_env

    seen: list[dict] = []
    monkeypatch.setattr(gym, "make_vec", lambda *a, vector_kwargs=None, **k: seen.append(vector_kwargs))
    make_vector_env(EnvPoolSpec("CartPole-v1", {}, False, "async"), 2)
    make_vector_env(EnvPoolSpec("CartPole-v1", {}, False, "sync"), 2)
    assert seen[0]["worker"].func.__name__ == "_tied_async_worker"
    assert seen[1] == {}


def test_a_child_whose_parent_is_already_gone_exits_at_once() -> None:
    """The parent may die before the child asks for the signal: the child sees a new parent id
    and ends at once, with its children."""
    child = subprocess.run(
        [sys.executable, "-c",
         "from sdgym.process_lifetime import ParentTie, tie_to_parent\n"
         "tie_to_parent(ParentTie(1 << 22, True))\n"
         "print('still here')"],
        capture_output=True, text=True, timeout=60, cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert child.returncode == 128 + signal.SIGTERM
    assert "still here" not in child.stdout
