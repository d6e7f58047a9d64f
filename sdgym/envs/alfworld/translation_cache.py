"""fast-downward's PDDL -> SAS translation of ALFWorld games, cached on disk by content.

TextWorld's ``PddlState`` runs ``fast_downward.pddl2sas`` twice (plain and ``optimize=True``)
whenever a game is loaded or reset: 85% of an upstream reset of an ALFWorld-sized room. The
translation is a pure function of the domain, the problem, ``optimize`` and the translator's
version, so :func:`translate` keeps its SAS text, zlib-compressed (~20x: ~40 KB for an
ALFWorld-sized kitchen), in ``$SDGYM_CACHE/alfworld/translations/<sha256 of those>.sas.z``. On a hit the parsed task (the
other half of ``pddl2sas``'s answer) is rebuilt with the translator's own parse and normalise
steps (the first lines of ``pddl2sas``; ~5 ms), so callers get what ``pddl2sas`` returns.

Entries are written atomically (:func:`sdgym.cache.atomic_write_bytes`) after a header line
holding the SAS text's digest: an entry that fails to decompress or to match it (torn,
truncated or edited) is rebuilt, with a :class:`~sdgym.cache.CacheEntryWarning` naming its path.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import sys
import warnings
import zlib
from collections.abc import Iterator
from functools import cache, lru_cache
from importlib import metadata
from pathlib import Path
from typing import Any

from sdgym.cache import CacheEntryWarning, atomic_write_bytes, cache_dir

FORMAT = "sdgym-sas-2"
"""First word of an entry's header; bump it when the entry layout changes."""


@contextlib.contextmanager
def preserved_argv() -> Iterator[None]:
    """Restore ``sys.argv`` after fast-downward's translator rewrote it."""
    saved = list(sys.argv)
    try:
        yield
    finally:
        sys.argv[:] = saved


@cache
def engine_version() -> str:
    """The installed translator's version (part of every entry's key)."""
    return metadata.version("fast-downward-textworld")


def entry_path(domain: str, problem: str, optimize: bool = False) -> Path:
    """Where the translation of ``(domain, problem, optimize)`` is cached."""
    key = json.dumps([FORMAT, engine_version(), bool(optimize), domain, problem])
    digest = hashlib.sha256(key.encode("utf-8")).hexdigest()
    return cache_dir("alfworld", "translations") / f"{digest}.sas.z"


def _header(body: str) -> str:
    return f"{FORMAT} sha256={hashlib.sha256(body.encode('utf-8')).hexdigest()}"


def read_entry(path: Path) -> str | None:
    """The SAS text stored at ``path``; ``None`` if absent or (with a warning) unreadable."""
    try:
        header, _, payload = path.read_bytes().partition(b"\n")
        body = zlib.decompress(payload).decode("utf-8")
    except FileNotFoundError:
        return None
    except (OSError, zlib.error, UnicodeDecodeError) as error:
        warnings.warn(f"ALFWorld translation cache entry {path} is unreadable ({error}); "
                      "rebuilding it", CacheEntryWarning, stacklevel=3)
        return None
    if header.decode("utf-8", "replace") != _header(body):
        warnings.warn(f"ALFWorld translation cache entry {path} is torn or corrupt; rebuilding it",
                      CacheEntryWarning, stacklevel=3)
        return None
    return body


def write_entry(path: Path, sas: str) -> None:
    """Store ``sas`` at ``path`` atomically: its digest's header line, then the compressed text."""
    atomic_write_bytes(path, _header(sas).encode("utf-8") + b"\n" + zlib.compress(sas.encode()))


@lru_cache(maxsize=4)
def parsed_task(domain: str, problem: str) -> Any:
    """The normalised PDDL task, as ``pddl2sas`` builds it before translating."""
    with preserved_argv():
        sys.argv = ["translate.py", "domain", "task"]  # the translator's options parse argv
        from fast_downward.translate import normalize
        from fast_downward.translate.pddl_parser import lisp_parser, parsing_functions

        with contextlib.redirect_stdout(io.StringIO()):
            task = parsing_functions.parse_task(
                lisp_parser.parse_nested_list(domain.split("\n")),
                lisp_parser.parse_nested_list(problem.split("\n")),
            )
            normalize.normalize(task)
    return task


def translate(domain: str, problem: str, verbose: bool = False, optimize: bool = False
              ) -> tuple[Any, str]:
    """``fast_downward.pddl2sas(domain, problem, verbose, optimize)``, through the disk cache."""
    from fast_downward.interface import pddl2sas

    path = entry_path(domain, problem, optimize)
    sas = read_entry(path)
    if sas is not None:
        return parsed_task(domain, problem), sas
    task, sas = pddl2sas(domain, problem, verbose=verbose, optimize=optimize)
    try:
        write_entry(path, sas)
    except OSError as error:  # a read-only or full cache costs speed, never the game
        warnings.warn(f"could not cache the ALFWorld translation at {path} ({error})",
                      CacheEntryWarning, stacklevel=2)
    return task, sas
