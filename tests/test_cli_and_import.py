"""The ``sdgym`` command and the cost of ``import sdgym``."""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys

import gymnasium as gym
import pytest

from sdgym.cli import main, parse_env_kwargs

HEAVY_MODULES = ("torch", "transformers", "textworld", "alfworld", "scienceworld", "py4j",
                 "bm25s", "selenium", "flask", "jnius")


def test_import_sdgym_is_light() -> None:
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import sdgym"],
        capture_output=True, text=True, check=True,
    )
    imported = {line.split("|")[-1].strip().split(".")[0] for line in result.stderr.splitlines()}
    assert not imported & set(HEAVY_MODULES), imported & set(HEAVY_MODULES)


def test_registration_ids_and_limits() -> None:
    limits = {"sdgym/ALFWorld-v0": 50, "sdgym/ScienceWorld-v0": 30, "sdgym/SearchQA-v0": 4,
              "sdgym/WebShop-v0": 15}
    for env_id, limit in limits.items():
        assert gym.spec(env_id).max_episode_steps == limit
    env = gym.make("sdgym:sdgym/SearchQA-v0", size="tiny", max_episode_steps=2)
    env.reset(seed=0)
    env.step("<search>a capital</search>")
    assert env.step("<search>a capital</search>")[3] is True
    env.close()


def test_parse_env_kwargs() -> None:
    assert parse_env_kwargs(["size=tiny", "top_k=5", "x=[1, 2]"]) == {
        "size": "tiny", "top_k": 5, "x": [1, 2]}
    with pytest.raises(ValueError, match="--env-kwarg expects KEY=VALUE, got 'novalue'"):
        parse_env_kwargs(["novalue"])
    with pytest.raises(ValueError, match="--set expects KEY=VALUE"):
        parse_env_kwargs(["lr"], "--set")


def test_list_counts_on_request_and_caches_them(capsys, monkeypatch) -> None:
    from sdgym.envs.searchqa.dataset import generated_dataset

    monkeypatch.setenv("COLUMNS", "400")
    kwargs = ["--env-kwarg", "SearchQA-v0:size=tiny", "--env-kwarg", "webshop:size=tiny"]
    assert main(["list", "--counts", *kwargs]) == 0
    out = capsys.readouterr().out
    for env_id in ("ALFWorld-v0", "ScienceWorld-v0", "SearchQA-v0", "WebShop-v0"):
        assert env_id in out
    expected = len(generated_dataset(0, "tiny").questions["test"])
    assert f"test {expected}" in out
    assert "unexpected keyword" not in out
    assert main(["list", *kwargs]) == 0  # now from the cache
    assert f"test {expected}" in capsys.readouterr().out
    assert main(["list", "--env-kwarg", "SearchQA-v0:size=small"]) == 0  # other settings: not cached
    assert "sdgym list --counts" in capsys.readouterr().out


LIST_PROBE = """
import sys
import gymnasium
def refuse(*args, **kwargs):
    raise AssertionError("sdgym list made an env")
gymnasium.make = refuse
from sdgym.cli import main
main(["list", "--env-kwarg", "SearchQA-v0:size=tiny"])
print("LOADED", sorted(m for m in sys.modules if m.split(".")[0] in {heavy}))
"""


def test_list_builds_no_engine_and_keeps_ids_whole_at_80_columns(tmp_path, monkeypatch) -> None:
    from sdgym.envs.searchqa.dataset import generated_dataset
    from sdgym.task_counts import count_tasks

    monkeypatch.setenv("SDGYM_CACHE", str(tmp_path))
    count_tasks("sdgym/SearchQA-v0", {"size": "tiny"})  # what an earlier `list --counts` stored
    result = subprocess.run(
        [sys.executable, "-c", LIST_PROBE.format(heavy=set(HEAVY_MODULES))],
        capture_output=True, text=True, timeout=120, env={**os.environ, "COLUMNS": "80"},
    )
    assert result.returncode == 0, result.stderr
    assert "LOADED []" in result.stdout  # no engine made, no engine dependency imported
    for line in result.stdout.splitlines()[:-1]:
        assert len(line) <= 80, line
    for env_id in ("sdgym/ALFWorld-v0", "sdgym/ScienceWorld-v0", "sdgym/SearchQA-v0",
                   "sdgym/WebShop-v0"):
        assert env_id in result.stdout  # whole, on one line: what users copy
    assert "splits: train, val_seen, val_unseen" in result.stdout  # ALFWorld: names, uncounted
    assert f"test {len(generated_dataset(0, 'tiny').questions['test'])}" in result.stdout


def test_play_runs_an_episode_from_stdin() -> None:
    from sdgym.envs.searchqa.dataset import generated_dataset

    question = generated_dataset(0, "tiny").questions["test"][0]
    script = f"<search>{question.hops[0].query}</search>\n:expert\n<answer>{question.answers[0]}</answer>\n"
    result = subprocess.run(
        [sys.executable, "-m", "sdgym.cli", "play", "SearchQA-v0", "--split", "test",
         "--task-index", "0", "--show-privileged", "--env-kwarg", "size=tiny"],
        input=script, capture_output=True, text=True, timeout=120,
        env={**os.environ, "COLUMNS": "200"},
    )
    assert result.returncode == 0, result.stderr
    assert question.question in result.stdout
    assert "episode over: won" in result.stdout
    assert "Gold answer" in result.stdout


def test_play_exits_cleanly_on_end_of_input_and_bad_split() -> None:
    base = [sys.executable, "-m", "sdgym.cli", "play", "SearchQA-v0", "--env-kwarg", "size=tiny"]
    done = subprocess.run(base, input="", capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "end of input" in done.stdout
    bad = subprocess.run(base + ["--split", "nope"], input="", capture_output=True, text=True,
                         timeout=120)
    assert bad.returncode == 2 and "unknown split" in bad.stderr


ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07|\r")


def _default_sigint() -> None:
    """In the child before exec: SIGINT as a terminal delivers it. A parent that ignores or
    blocks SIGINT (an earlier test's thread pools may leave it blocked in the pytest process)
    passes the ignore and the signal mask on across exec, and Python would not raise
    KeyboardInterrupt."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


class Terminal:
    """``sdgym play`` on a pseudo-terminal (what a person sees), read until a pattern appears."""

    def __init__(self, argv: list[str], columns: int = 200) -> None:
        import fcntl
        import pty
        import struct
        import termios

        self.master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
        env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
        self.process = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave,
                                        env={**env, "TERM": "xterm-256color"}, close_fds=True,
                                        preexec_fn=_default_sigint)
        os.close(slave)
        self.seen = ""

    def read_until(self, pattern: str, timeout: float = 90.0) -> re.Match:
        import select
        import time

        deadline = time.monotonic() + timeout
        while (match := re.search(pattern, self.seen)) is None:
            left = deadline - time.monotonic()
            assert left > 0, f"no {pattern!r} on the terminal; it shows:\n{self.seen[-3000:]}"
            if select.select([self.master], [], [], left)[0]:
                try:
                    chunk = os.read(self.master, 65536)
                except OSError:  # the child closed the terminal
                    chunk = b""
                assert chunk, f"play ended before {pattern!r}:\n{self.seen[-3000:]}"
                self.seen += ANSI.sub("", chunk.decode("utf-8", "replace"))
        return match

    def type(self, line: str) -> None:
        os.write(self.master, (line + "\n").encode())

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=30)
        os.close(self.master)


def test_play_on_a_terminal_shows_actions_and_expert_verbatim() -> None:
    terminal = Terminal([sys.executable, "-m", "sdgym.cli", "play", "WebShop-v0", "--split", "test",
                         "--task-index", "0", "--show-privileged", "--env-kwarg", "size=tiny"])
    try:
        terminal.read_until(r"admissible: search\[<query>\]")
        terminal.read_until(r"> $")
        terminal.type(":expert")
        expert = terminal.read_until(r"expert: (search\[[^\]\n]+\])\n").group(1)
        terminal.type(expert)
        terminal.read_until(r"admissible: click\[back to search\] \| click\[next >\] \| click\[\w+\]")
        terminal.read_until(r"> $")
        terminal.type(":expert")
        terminal.read_until(r"expert: click\[\w+\]\n")
        terminal.type(":q")
        assert terminal.process.wait(timeout=60) == 0
    finally:
        terminal.close()


@pytest.mark.parametrize("word", ["quit", "exit", ":q", "QUIT"])
def test_play_leaves_on_each_quit_word_without_taking_a_turn(word) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "sdgym.cli", "play", "SearchQA-v0", "--env-kwarg", "size=tiny"],
        input=f"{word}\n<answer>never sent</answer>\n", capture_output=True, text=True,
        timeout=120)
    assert result.returncode == 0, result.stderr
    assert "reward" not in result.stdout and "invalid action" not in result.stdout
    assert "Traceback" not in result.stderr


def test_play_leaves_on_ctrl_c_with_exit_code_0_and_no_traceback() -> None:
    import signal

    terminal = Terminal([sys.executable, "-m", "sdgym.cli", "play", "SearchQA-v0",
                         "--env-kwarg", "size=tiny"])
    try:
        terminal.read_until(r"> $")
        for _ in range(3):  # Ctrl-C: SIGINT (this pty is not the child's controlling terminal)
            terminal.process.send_signal(signal.SIGINT)
            try:
                terminal.read_until("interrupted", timeout=10)
                break
            except AssertionError:  # pressed while readline set the terminal up: again
                continue
        else:
            pytest.fail(f"Ctrl-C did not end play:\n{terminal.seen[-2000:]}")
        assert terminal.process.wait(timeout=60) == 0
        assert "Traceback" not in terminal.seen
    finally:
        terminal.close()


def test_play_send_passes_a_quit_word_to_the_env_as_an_action() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "sdgym.cli", "play", "SearchQA-v0", "--env-kwarg", "size=tiny"],
        input=":send quit\n:q\n", capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "invalid action" in result.stdout  # 'quit' reached the env, which refused it


@pytest.mark.parametrize("command", ["train", "sft", "benchmark", "eval", "rollout", "report",
                                     "baseline", "play", "list", "serve"])
def test_every_option_of_every_command_says_what_it_does(command) -> None:
    from sdgym.cli import build_parser

    parser = build_parser(command)
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    actions = [a for a in sub.choices[command]._actions if a.dest != "help"]
    assert actions
    for action in actions:
        text = (action.help or "").strip()
        assert text and not text.startswith("["), f"{command} {action.option_strings}: no help"
        if action.dest.startswith("config:") and not action.dest.startswith("config:head."):
            assert text.split("[")[0].strip(), f"{action.option_strings}: only a type, no words"


def test_train_help_lists_the_methods_and_presets_from_their_registries() -> None:
    from baselines.config import available_presets
    from baselines.heads import available_heads
    from sdgym.cli import build_parser

    parser = build_parser("train")
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    helps = {a.dest: a.help for a in sub.choices["train"]._actions}
    assert all(name in helps["method"] for name in available_heads())
    assert all(name in helps["preset"] for name in available_presets())


def test_options_appear_only_for_the_command_they_apply_to() -> None:
    from sdgym.cli import build_parser

    def options(command: str) -> set[str]:
        parser = build_parser(command)
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        return {o for a in sub.choices[command]._actions for o in a.option_strings}

    train, sft = options("train"), options("sft")
    assert "--export" in sft and "--export" not in train
    assert {"--dry-run", "--gpus", "--no-eval"} <= train and not {"--dry-run", "--gpus"} & sft
