"""A demo plugin's ``sdgym`` subcommand (entry-point group ``sdgym.commands``)."""

from __future__ import annotations

import argparse

from sdgym.subcommands import Command

GREET = Command(help="say hello (a plugin's subcommand)", handler="sdgym_demo_command:greet")


def add_greet_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--name", default="world", help="who to greet")


def greet(args: argparse.Namespace) -> int:
    print(f"hello, {args.name}")
    return 0
