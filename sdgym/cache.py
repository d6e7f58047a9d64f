"""Where sdgym caches generated data and indexes, and how it writes them safely."""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path


def cache_dir(*parts: str) -> Path:
    """``$SDGYM_CACHE/<parts>`` (default ``~/.cache/sdgym``), created if missing."""
    root = Path(os.environ.get("SDGYM_CACHE") or Path.home() / ".cache" / "sdgym")
    path = root.joinpath(*parts)
    path.mkdir(parents=True, exist_ok=True)
    return path


@contextlib.contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """Exclusive inter-process lock on ``path`` (so N processes build a cache entry once)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@contextlib.contextmanager
def atomic_directory(target: Path) -> Iterator[Path]:
    """Yield a temp dir beside ``target``; on success it replaces ``target`` atomically."""
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        yield staging
        if target.exists():
            shutil.rmtree(target)
        os.replace(staging, target)
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a sibling temp file and ``os.replace`` (never torn).

    The temp file's name is unique, so processes writing the same entry at once never mix bytes:
    the last ``os.replace`` wins with a whole file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, staging = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
        os.replace(staging, path)
    finally:
        if os.path.exists(staging):
            os.unlink(staging)


def atomic_write_text(path: Path, text: str) -> None:
    """:func:`atomic_write_bytes` of ``text`` in UTF-8."""
    atomic_write_bytes(path, text.encode("utf-8"))


class CacheEntryWarning(UserWarning):
    """A cache entry on disk was unreadable (torn or edited) and is being rebuilt."""
