"""Plugins: an installed package adds a head (``sdgym.heads``), an env (``sdgym.envs``) and a
subcommand (``sdgym.commands``) that sdgym then uses, with no edit to sdgym.

The package (``tests/plugin_package/``: ``sdgym_demo_plugin.py``, ``sdgym_demo_command.py``) is
installed the way pip leaves a
package: its module and a ``.dist-info`` folder with ``entry_points.txt`` on the path, which is
what ``importlib.metadata`` reads."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

PLUGIN = Path(__file__).parent / "plugin_package" / "sdgym_demo_plugin.py"
COMMAND = PLUGIN.with_name("sdgym_demo_command.py")
ENTRY_POINTS = """[sdgym.heads]
demo_half = sdgym_demo_plugin:HalfAdvantageHead

[sdgym.envs]
echo = sdgym_demo_plugin:ECHO

[sdgym.commands]
greet = sdgym_demo_command:GREET
"""


@pytest.fixture
def installed(tmp_path) -> dict[str, str]:
    """The environment of a process that has the demo plugin installed."""
    site = tmp_path / "site"
    site.mkdir()
    shutil.copy(PLUGIN, site / PLUGIN.name)
    shutil.copy(COMMAND, site / COMMAND.name)
    info = site / "sdgym_demo_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: sdgym-demo-plugin\n"
                                   "Version: 0.1\n")
    (info / "entry_points.txt").write_text(ENTRY_POINTS)
    path = os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")]))
    return {**os.environ, "PYTHONPATH": path, "OMP_NUM_THREADS": "1"}


def _sdgym(env: dict[str, str], *args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "sdgym.cli", *args], capture_output=True,
                          text=True, timeout=timeout, env=env, stdin=subprocess.DEVNULL)


def test_the_plugin_env_is_registered_listed_and_made_by_gym(installed) -> None:
    code = ("import gymnasium as gym, sdgym; env = gym.make('demo/Echo-v0'); "
            "obs, info = env.reset(options={'split': 'test', 'task_index': 2}); "
            "print(obs, env.step(info['privileged']['expert_action'])[1])")
    made = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, env=installed)
    assert made.returncode == 0, made.stderr
    assert made.stdout.split() == ["Say", "the", "word:", "stone", "1.0"]
    listed = _sdgym(installed, "list")
    assert listed.returncode == 0 and "demo/Echo-v0" in listed.stdout
    assert "splits: train, val, test, easy_train, easy_val" in listed.stdout


def test_a_plugin_head_trains_a_cpu_smoke_cell_on_the_plugin_env(installed, tmp_path) -> None:
    out = tmp_path / "run"
    done = _sdgym(installed, "train", "--env", "demo/Echo-v0", "--method", "demo_half",
                  "--preset", "cpu-smoke", "--out", str(out), "--set", "env_kwargs={}")
    assert done.returncode == 0, done.stderr[-3000:]
    [summary_file] = out.rglob("summary.json")
    summary = json.loads(summary_file.read_text())
    assert summary["method"] == "demo_half" and summary["env_id"] == "demo/Echo-v0"
    metrics = [json.loads(line) for line in summary_file.with_name("metrics.jsonl").open()]
    assert any(m.get("head/halved") == 1.0 for m in metrics)  # the plugin's apply() ran
    assert summary["test"]["episodes_total"] > 0


def test_without_the_plugin_its_names_are_unknown(tmp_path) -> None:
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    done = _sdgym(env, "train", "--env", "demo/Echo-v0", "--method", "grpo", "--preset",
                  "cpu-smoke", "--out", str(tmp_path / "run"))
    assert done.returncode == 2 and "unknown environment 'demo/Echo-v0'" in done.stderr


def test_a_broken_entry_point_is_named(installed, tmp_path) -> None:
    site = Path(installed["PYTHONPATH"].split(os.pathsep)[0])
    (site / "sdgym_demo_plugin-0.1.dist-info" / "entry_points.txt").write_text(
        "[sdgym.heads]\nbroken = sdgym_demo_plugin:WORDS\n")
    done = _sdgym(installed, "train", "--env", "SearchQA-v0", "--method", "broken",
                  "--preset", "cpu-smoke", "--out", str(tmp_path / "run"))
    assert done.returncode == 2
    assert "entry point 'broken' (sdgym_demo_plugin:WORDS) in group 'sdgym.heads' is not a " \
           "Head subclass" in done.stderr


def test_a_plugin_command_runs_and_is_listed_in_help(installed) -> None:
    greeted = _sdgym(installed, "greet", "--name", "sdgym", timeout=120)
    assert greeted.returncode == 0, greeted.stderr
    assert greeted.stdout.strip() == "hello, sdgym"
    helped = _sdgym(installed, "--help", timeout=120)
    assert "say hello (a plugin's subcommand)" in helped.stdout
    assert "run a benchmark preset, write its report" in helped.stdout  # sdgym's own stay


@pytest.mark.parametrize(("lines", "message"), [
    ("[sdgym.commands]\nlist = sdgym_demo_command:GREET\n",
     "entry point 'list' (sdgym_demo_command:GREET) in group 'sdgym.commands' takes the name of "
     "a built-in sdgym command"),
    ("[sdgym.commands]\ngreet = sdgym_demo_command:greet\n",
     "entry point 'greet' (sdgym_demo_command:greet) in group 'sdgym.commands' is a function, "
     "not a sdgym.subcommands.Command"),
])
def test_a_broken_command_entry_point_is_named(installed, lines, message) -> None:
    site = Path(installed["PYTHONPATH"].split(os.pathsep)[0])
    (site / "sdgym_demo_plugin-0.1.dist-info" / "entry_points.txt").write_text(lines)
    done = _sdgym(installed, "list", "--no-counts", timeout=120)
    assert done.returncode == 2
    assert done.stderr.strip() == f"error: {message}"
