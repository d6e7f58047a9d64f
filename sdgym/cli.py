"""The ``sdgym`` command: list the environments and play them in a terminal.

Training, evaluation and benchmark subcommands come from the entry-point group ``sdgym.commands``
(:mod:`sdgym.subcommands`); their modules in ``agents`` / ``baselines`` / ``benchmarks`` (or an
installed package) are imported only when they run, so ``sdgym list`` stays light.
"""

from __future__ import annotations

import argparse
import ast
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import gymnasium as gym

from sdgym.process_memory import keep_freed_memory
from sdgym.registration import EnvEntry, all_environments, entry_for, env_class, implemented
from sdgym.subcommands import Command
from sdgym.subcommands import commands as subcommands


def parse_env_kwargs(pairs: Sequence[str], option: str = "--env-kwarg") -> dict[str, Any]:
    """``["size=tiny", "top_k=5"]`` → ``{"size": "tiny", "top_k": 5}`` (values as Python literals;
    ``true``/``false`` as in TOML; anything else is a string). A pair without ``KEY=`` is a
    ValueError naming ``option``, the command-line option the pairs came from."""
    kwargs: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"{option} expects KEY=VALUE, got {pair!r}")
        try:
            value: Any = ast.literal_eval(raw)
        except (ValueError, SyntaxError):
            value = {"true": True, "false": False}.get(raw.strip(), raw)
        kwargs[key.strip()] = value
    return kwargs


def check_at_least(option: str, value: int, bound: int = 1) -> None:
    """ValueError naming ``option`` unless ``value >= bound``."""
    if value < bound:
        raise ValueError(f"{option} must be >= {bound}, got {value}")


def check_writable(path: str | Path, option: str = "--out", is_file: bool = False) -> None:
    """ValueError naming ``option`` and ``path`` unless this process can make ``path`` (a folder;
    with ``is_file`` a file) or write in it: checked before any set-up work, creating nothing
    (a temporary folder in the nearest existing ancestor comes and goes)."""
    path = Path(path)
    if is_file and path.is_dir():
        raise ValueError(f"{option} {path} is a folder; give a file path")
    existing = path.parent if is_file else path
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        raise ValueError(f"{option} {path}: {existing} is a file, not a folder")
    try:
        tempfile.TemporaryDirectory(dir=existing).cleanup()
    except OSError as error:
        raise ValueError(f"{option} {path}: cannot make a folder in {existing} "
                         f"({error.strerror})") from None


def env_kwargs_for(entry: EnvEntry, pairs: Sequence[str]) -> dict[str, Any]:
    """``gym.make`` kwargs for ``entry`` from ``KEY=VALUE`` (every env) and ``ID:KEY=VALUE`` pairs.

    ``ID`` may be the full id, the short name (``SearchQA-v0``) or the extra (``searchqa``).
    """
    chosen = []
    for pair in pairs:
        target, sep, rest = pair.partition(":")
        if sep and "=" not in target:
            if target in (entry.env_id, entry.env_id.split("/")[1], entry.extra):
                chosen.append(rest)
        else:
            chosen.append(pair)
    return parse_env_kwargs(chosen)


def command_list(args: argparse.Namespace) -> int:
    """Print the registered environments: id, extra, whether installed, the split names the env
    class declares (no engine is built), task counts where known, and a description.

    One block per env, so it reads at 80 columns with or without a terminal: the id line never
    wraps (it is what users copy), the rest wraps at word boundaries. Counts come from the cache
    (:mod:`sdgym.task_counts`); ``--counts`` builds each installed env once to count (and cache)
    them.
    """
    from rich.console import Console
    from rich.padding import Padding
    from rich.text import Text

    console = Console(width=min(Console().width, 100))
    notes = {}
    if implemented(entry_for("sdgym/ScienceWorld-v0")):  # its folder may be left out of a build
        from sdgym.envs.scienceworld.ceiling import EXPERT_CEILING, STEP_LIMIT

        notes["sdgym/ScienceWorld-v0"] = (
            f"; expert wins within the {STEP_LIMIT}-step limit: "
            + ", ".join(f"{split} ~{share:.0%}" for split, share in EXPERT_CEILING.items()))
    missing_counts = False
    for entry in all_environments():
        status, splits = "installed", "-"
        if not implemented(entry):
            status = "not in this build"
        elif not entry.installed():
            status = f"not installed: pip install 'sdgym[{entry.extra}]'"
        else:
            kwargs = env_kwargs_for(entry, args.env_kwarg)
            counts = _counts_cell(entry, kwargs, args.counts)
            missing_counts |= counts is None
            splits = counts if counts not in (None, "-") else ", ".join(env_class(entry.env_id).splits)
        console.print(Text.assemble((entry.env_id, "bold"), f"  [{entry.extra}]  {status}"),
                      no_wrap=True, overflow="ignore", crop=False)
        console.print(Padding(Text(f"{entry.description}{notes.get(entry.env_id, '')}"),
                              (0, 0, 0, 4), expand=False))
        console.print(Padding(Text(f"splits: {splits}"), (0, 0, 0, 4), expand=False))
    if missing_counts:
        console.print("task counts: `sdgym list --counts` (builds each engine once, then cached)")
    return 0


def _counts_cell(entry: EnvEntry, kwargs: dict[str, Any], mode: str) -> str | None:
    """The "splits (tasks)" cell: counted (``mode="count"``) or cached; ``None`` if not cached."""
    from sdgym.task_counts import cached_task_counts, count_tasks, format_counts

    if mode == "none":
        return "-"
    try:
        found = count_tasks(entry.env_id, kwargs) if mode == "count" else cached_task_counts(
            entry.env_id, kwargs)
    except Exception as error:  # a broken engine must not hide the other envs
        return f"error: {error}"
    return None if found is None else format_counts(found)


QUIT_WORDS: tuple[str, ...] = ("quit", "exit", ":q", ":quit")
"""What ends ``sdgym play`` (as do end of input and Ctrl-C); ``:send WORD`` sends one of them to
the env as an action."""


def command_play(args: argparse.Namespace) -> int:
    """Play an environment in the terminal (``:expert`` shows the expert's next action; a word of
    :data:`QUIT_WORDS`, end of input or Ctrl-C leaves with exit code 0).

    Env text (observations, actions, privileged facts) goes through ``rich.text.Text``, so it shows
    verbatim: WebShop's ``click[...]`` and any other ``[...]`` or ``:name:`` are not read as markup.
    """
    from rich.console import Console

    console = Console()
    try:
        return _play(args, console)
    except KeyboardInterrupt:  # Ctrl-C while the env is made or steps: leave as from the prompt
        console.print("\n[dim]interrupted[/]")
        return 0


def _play(args: argparse.Namespace, console: Any) -> int:
    from rich.panel import Panel
    from rich.text import Text

    entry = entry_for(args.env_id)
    env = gym.make(entry.env_id, **parse_env_kwargs(args.env_kwarg))
    options: dict[str, Any] = {"split": args.split}
    if args.task_index is not None:
        options["task_index"] = args.task_index
    try:
        observation, info = env.reset(seed=args.seed, options=options)
        total = 0.0
        heading = f" task {info['task_id']} ({info['task_type']})"
        console.print(Text.assemble((entry.env_id, "bold"), heading))
        while True:
            console.print(Panel(Text(observation), title="observation"))
            if info.get("admissible_actions"):
                admissible = " | ".join(info["admissible_actions"])
                console.print(Text.assemble(("admissible: ", "dim"), admissible))
            if args.show_privileged and "privileged" in info:
                console.print(Panel(Text(str(info["privileged"].get("text"))), title="privileged"))
            try:
                action = input("> ")
            except EOFError:
                console.print("\n[dim]end of input[/]")
                return 0
            if action.strip().lower() in QUIT_WORDS:
                return 0
            if action.strip().startswith(":send "):
                action = action.strip().removeprefix(":send ")
            if action.strip() == ":expert":
                expert = info.get("privileged", {}).get("expert_action")
                console.print(Text(f"expert: {expert}"))
                continue
            observation, reward, terminated, truncated, info = env.step(action)
            total += float(reward)
            valid = "" if info["action_valid"] else " [red](invalid action)[/]"
            console.print(f"reward {reward:+.3f}  return {total:.3f}  score {info['score']:.3f}{valid}")
            if terminated or truncated:
                console.print(Panel(Text(observation), title="final observation"))
                outcome = "won" if info["won"] else ("truncated" if truncated else "lost")
                console.print(f"[bold]episode over: {outcome}, score {info['score']:.3f}[/]")
                return 0
    finally:
        env.close()


SERVABLE: tuple[str, ...] = ("webshop",)
"""Environments with a web site for people (``sdgym serve <name>``)."""


def command_serve(args: argparse.Namespace) -> int:
    """Serve an environment's web site on 127.0.0.1 (or ``--host``) until Ctrl-C (WebShop only)."""
    from sdgym.envs.webshop.server import check_host, check_port, serve_until_interrupted
    from sdgym.envs.webshop.site import check_split, create_app, shop_engine

    check_host(args.host, args.allow_remote)  # refuse before building the catalogue
    check_port(args.port)
    check_split(args.split)
    engine, catalog = shop_engine(args.size, args.catalog_seed)
    app = create_app(engine, catalog.goals_by_split, default_split=args.split, seed=args.seed)

    def announce(url: str) -> None:
        print(f"WebShop ({catalog!r}) at {url}  (Ctrl-C to stop)", flush=True)

    serve_until_interrupted(
        app, args.port, announce=announce, host=args.host, allow_remote=args.allow_remote
    )
    return 0


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The argument parser of the ``sdgym`` command.

    ``command``: the upper-layer subcommand about to run; only its module is imported (to add its
    arguments). The others appear in ``sdgym --help`` by name and help text only.
    """
    parser = argparse.ArgumentParser(
        prog="sdgym",
        description="sdgym: text environments with privileged info for LLM agents, reference "
                    "agents (GRPO and self-distillation heads) and the benchmark that compares "
                    "them. `sdgym COMMAND --help` explains each command.")
    commands = parser.add_subparsers(dest="command", required=True)

    listing = commands.add_parser("list", help="list environments, extras, splits and task counts")
    listing.add_argument("--counts", dest="counts", action="store_const", const="count",
                         default="cached",
                         help="make each installed env to count its tasks (slow), and cache them")
    listing.add_argument("--no-counts", dest="counts", action="store_const", const="none",
                         help="show no task counts, not even cached ones")
    listing.add_argument("--env-kwarg", action="append", default=[], metavar="[ID:]KEY=VALUE",
                         help="keyword for gym.make, for every env or for ID only (repeatable)")
    listing.set_defaults(handler=command_list)

    play = commands.add_parser(
        "play", help="play an environment in the terminal",
        description="Play an environment in the terminal: type an action at the > prompt. "
                    ":expert shows the expert's next action; quit, exit, :q, end of input "
                    "(Ctrl-D) or Ctrl-C leave (exit code 0); :send WORD sends a word such as "
                    "'quit' to the env as an action.")
    play.add_argument("env_id", help="e.g. sdgym/SearchQA-v0 (or SearchQA-v0)")
    play.add_argument("--split", default="train",
                      help="split the task comes from (default train; `sdgym list` names each "
                           "env's splits)")
    play.add_argument("--task-index", type=int, default=None,
                      help="index of the task in the split (default: chosen from --seed)")
    play.add_argument("--seed", type=int, default=None,
                      help="seed of the reset: picks the task when --task-index is not given")
    play.add_argument("--show-privileged", action="store_true",
                      help="show the privileged info (expert plan, gold answers, ...)")
    play.add_argument("--env-kwarg", action="append", default=[], metavar="KEY=VALUE",
                      help="keyword for gym.make, e.g. size=tiny (repeatable)")
    play.set_defaults(handler=command_play)

    serve = commands.add_parser("serve", help="serve an environment's web site on 127.0.0.1")
    serve.add_argument("env_name", choices=SERVABLE, help="the environment (webshop)")
    serve.add_argument("--port", type=int, default=3000, help="port (0: any free port)")
    serve.add_argument("--host", default="127.0.0.1",
                       help="address to bind; a non-loopback one needs --allow-remote")
    serve.add_argument("--allow-remote", action="store_true",
                       help="allow a non-loopback --host (the site becomes reachable remotely)")
    serve.add_argument("--size", default="full", choices=("tiny", "small", "full"),
                       help="generated catalogue size")
    serve.add_argument("--catalog-seed", type=int, default=0,
                       help="seed of the generated catalogue (default 0, the one the envs use)")
    serve.add_argument("--split", default="test", help="split of the goals new sessions get")
    serve.add_argument("--seed", type=int, default=None, help="seed of the goal choice")
    serve.set_defaults(handler=command_serve)

    for name, declared in subcommands().items():
        sub = commands.add_parser(name, help=declared.help)
        sub.set_defaults(handler=_lazy(declared))
        if name == command:  # only the command that runs imports its module
            _lazy_arguments(sub, declared, name)
    return parser


def _lazy(declared: Command):
    """A handler that imports the command's module (from the training packages) only when it
    runs."""

    def handler(args: argparse.Namespace) -> int:
        _hide_model_loading_bars()
        return declared.run(args)

    return handler


def _hide_model_loading_bars() -> None:
    """Turn off transformers' per-load "Loading weights" bars: a benchmark loads models dozens of
    times, and the bars bury its own progress lines."""
    try:
        from transformers.utils import logging as transformers_logging
    except ImportError:
        return
    transformers_logging.disable_progress_bar()


def _lazy_arguments(parser: argparse.ArgumentParser, declared: Command, command: str) -> None:
    """Add ``command``'s arguments (:meth:`Command.add_arguments`), or say on its parser that the
    extras it needs are not installed."""
    try:
        declared.add_arguments(parser, command)
    except ImportError as error:  # the training extras are not installed
        parser.description = f"unavailable: {error}"


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``sdgym`` console script."""
    keep_freed_memory()  # CPU training reuses freed activations' memory (sdgym.process_memory)
    argv = list(sys.argv[1:] if argv is None else argv)
    requested = next((word for word in argv if not word.startswith("-")), None)
    try:
        args = build_parser(requested).parse_args(argv)  # may load plugins (a broken one raises)
        return int(args.handler(args))
    except (ValueError, TypeError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
