"""Subcommands that other layers and installed packages add to the ``sdgym`` command.

A subcommand is a :class:`Command` named in the entry-point group :data:`COMMAND_ENTRY_POINTS`
(``sdgym.commands``). sdgym's own training, evaluation and benchmark commands are declared this
way in its ``pyproject.toml`` (``train = "baselines.commands:TRAIN"``), and an installed package
adds one the same way::

    [project.entry-points."sdgym.commands"]
    hello = "my_package.commands:HELLO"

A :class:`Command` names its handler by string, so ``sdgym list`` and ``sdgym --help`` read the
help texts without importing the handler's module (``agents``, ``baselines`` and ``benchmarks``
import torch); only the subcommand that runs imports it.
"""

from __future__ import annotations

import argparse
import functools
import importlib
from collections.abc import Callable
from dataclasses import dataclass

COMMAND_ENTRY_POINTS = "sdgym.commands"
"""Entry-point group through which layers and installed packages add subcommands."""

BUILT_IN = frozenset({"list", "play", "serve"})
"""Subcommands :mod:`sdgym.cli` defines itself; an entry point may not take their names."""


@dataclass(frozen=True)
class Command:
    """One ``sdgym`` subcommand, declared without importing what runs it."""

    help: str
    """One line for ``sdgym --help``."""
    handler: str
    """``"module:function"``: ``function(args: argparse.Namespace) -> int`` runs the command and
    returns its exit code."""
    arguments: str | None = None
    """``"module:function"`` that adds the command's options to its parser; None: the handler
    module's ``add_<name>_arguments`` where it has one, else its ``add_arguments``."""

    def run(self, args: argparse.Namespace) -> int:
        """Import the handler's module and run it."""
        return int(_resolve(self.handler)(args))

    def add_arguments(self, parser: argparse.ArgumentParser, name: str) -> None:
        """Import the module that declares the options and add them to ``parser``."""
        if self.arguments is not None:
            _resolve(self.arguments)(parser)
            return
        module = importlib.import_module(self.handler.partition(":")[0])
        getattr(module, f"add_{name}_arguments", getattr(module, "add_arguments", None))(parser)


def _resolve(target: str) -> Callable:
    module, _, function = target.partition(":")
    return getattr(importlib.import_module(module), function)


@functools.cache
def commands() -> dict[str, Command]:
    """Every subcommand that entry points declare, by name (sorted). A ValueError names an entry
    point that is not a :class:`Command` or takes a built-in name; when two installed packages
    declare the same name, the error names both."""
    from importlib.metadata import entry_points

    found: dict[str, Command] = {}
    owners: dict[str, str] = {}
    for point in sorted(entry_points(group=COMMAND_ENTRY_POINTS), key=lambda p: p.name):
        where = f"entry point {point.name!r} ({point.value}) in group {COMMAND_ENTRY_POINTS!r}"
        if point.name in BUILT_IN:
            raise ValueError(f"{where} takes the name of a built-in sdgym command")
        command = point.load()
        if not isinstance(command, Command):
            raise ValueError(f"{where} is a {type(command).__name__}, not a "
                             f"sdgym.subcommands.Command")
        if point.name in found and found[point.name] != command:
            raise ValueError(f"{where} and {owners[point.name]} both declare "
                             f"'sdgym {point.name}'")
        found[point.name] = command
        owners[point.name] = point.value
    return found
