"""Where sdgym caches generated data and indexes, and how it writes them safely.

A cache entry is a folder written by :func:`atomic_directory`: built in a staging sibling whose
name records the writing process (``.<name>.tmp-<pid>@<host>-<random>``), given a manifest of
its files' sizes and SHA-256 digests, and renamed into place. A reader calls
:func:`usable_entry`, which checks the manifest and removes (with a warning naming the folder) an
entry whose files were torn or changed, so the caller rebuilds it. Staging folders of writers that
were killed are removed by the next writer of the same entry.

A write that runs out of disk space raises :class:`DiskFullError`: one line naming the file, and
nothing replaced (a write goes to a temp sibling first, so the previous version stays whole).
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import logging
import os
import re
import shutil
import socket
import tempfile
import time
from collections.abc import Iterable, Iterator
from pathlib import Path

from filelock import FileLock

MANIFEST = ".manifest.json"
"""File inside an entry: ``{"files": {relative path: {"size": n, "sha256": hex}}}``."""

STALE_FOREIGN_STAGING_SECONDS = 24 * 3600
"""A staging folder of another host (or of an old sdgym) is removed once this old."""

FULL_DISK_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT})
"""``OSError`` numbers of a full disk (or a full quota, which looks the same to the user)."""

_STAGING = re.compile(r"^\.(?P<name>.+)\.tmp-(?P<pid>\d+)@(?P<host>.+)-[^-]+$")
_verified: set[tuple] = set()  # entries (with their files' sizes and mtimes) checked here
log = logging.getLogger("sdgym.cache")


class DiskFullError(OSError, ValueError):
    """A write ran out of disk space; the message names the file in one line.

    An ``OSError`` (``errno`` and ``filename`` set) for callers that handle I/O errors, and a
    ``ValueError`` so the ``sdgym`` command prints it as its one ``error:`` line with exit code 2
    (:func:`sdgym.cli.main`), where the raw error was a traceback from deep in ``torch.save``."""

    def __init__(self, path: str | os.PathLike[str], number: int = errno.ENOSPC) -> None:
        super().__init__(f"no space left on device writing {path}: nothing was replaced "
                         "(the previous version, if any, is intact); free some space and re-run")
        self.errno = number
        self.filename = str(path)

    def __str__(self) -> str:  # OSError's would be "[Errno 28] None: 'path'"
        return str(self.args[0])

    def __reduce__(self) -> tuple[type, tuple[str, int]]:  # whole across processes (pickle)
        return type(self), (self.filename, self.errno)


def ran_out_of_disk(error: BaseException) -> bool:
    """Whether ``error``, or an error it was raised from or during, is a full disk."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, OSError) and current.errno in FULL_DISK_ERRNOS:
            return True
        current = current.__cause__ or current.__context__
    return False


@contextlib.contextmanager
def naming_full_disk(path: str | os.PathLike[str]) -> Iterator[None]:
    """Raise a full disk inside the block as :class:`DiskFullError` naming ``path`` (an inner
    block's, naming a more precise file, passes through unchanged)."""
    try:
        yield
    except DiskFullError:
        raise
    except OSError as error:
        if error.errno not in FULL_DISK_ERRNOS:
            raise
        raise DiskFullError(path, error.errno) from error


DEFAULT_ROOT = "~/.cache/sdgym"
"""The cache root when ``$SDGYM_CACHE`` is unset or empty."""


def cache_root() -> Path:
    """The one cache root: ``$SDGYM_CACHE`` (``~`` expanded, made absolute), else ``~/.cache/sdgym``.

    Every cached artefact (generated worlds, indexes, the tiny model, SFT warm starts) lives under
    it, so ``SDGYM_CACHE="~/c"`` means ``$HOME/c`` for all of them."""
    return Path(os.environ.get("SDGYM_CACHE") or DEFAULT_ROOT).expanduser().absolute()


def cache_dir(*parts: str) -> Path:
    """``<cache root>/<parts>`` (:func:`cache_root`), created if missing."""
    path = cache_root().joinpath(*parts)
    path.mkdir(parents=True, exist_ok=True)
    return path


@contextlib.contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """Exclusive inter-process lock on ``path`` (so N processes build a cache entry once).

    A ``filelock.FileLock`` (``flock`` on POSIX, ``msvcrt`` on Windows): the OS drops it when its
    holder dies, so a killed builder never leaves the entry locked."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(path):
        yield


def sha256_file(path: Path) -> str:
    """Hex SHA-256 of a file's bytes."""
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def source_digest(files: Iterable[Path]) -> str:
    """16 hex digits of SHA-256 over the files' bytes, in the order given: a cache key that an
    edit to any of those source files changes."""
    digest = hashlib.sha256()
    for path in files:
        digest.update(Path(path).read_bytes())
    return digest.hexdigest()[:16]


def write_manifest(folder: Path) -> None:
    """Record the size and SHA-256 of every file under ``folder`` in its :data:`MANIFEST`."""
    files = {p.relative_to(folder).as_posix(): {"size": p.stat().st_size, "sha256": sha256_file(p)}
             for p in sorted(folder.rglob("*")) if p.is_file() and p.name != MANIFEST}
    (folder / MANIFEST).write_text(json.dumps({"files": files}, indent=1))


def entry_problem(folder: Path) -> str | None:
    """What is wrong with the entry ``folder`` (a file missing, torn or changed), or ``None``.

    An entry without a manifest (written before manifests existed) is taken as it is."""
    manifest = folder / MANIFEST
    if not manifest.exists():
        return None
    try:
        files = json.loads(manifest.read_text())["files"]
    except (ValueError, KeyError, TypeError):
        return f"{MANIFEST} is unreadable"
    for name, expected in files.items():
        path = folder / name
        if not path.is_file():
            return f"{name} is missing"
        if path.stat().st_size != expected["size"]:
            return f"{name} has {path.stat().st_size} bytes, {expected['size']} were written"
        if sha256_file(path) != expected["sha256"]:
            return f"{name} does not match its recorded sha256"
    return None


def _fingerprint(folder: Path) -> tuple:
    files = sorted(p for p in folder.rglob("*") if p.is_file())
    return (str(folder), *((str(p), p.stat().st_size, p.stat().st_mtime_ns) for p in files))


def usable_entry(folder: Path, required: str | None = None) -> bool:
    """Whether the cache entry ``folder`` exists (with ``required`` inside) and is intact.

    A damaged entry is removed with a one-line warning naming it, so the caller rebuilds it.
    Checked once per process while its files' sizes and modification times stay the same."""
    if not folder.is_dir() or (required is not None and not (folder / required).exists()):
        return False
    key = _fingerprint(folder)
    if key in _verified:
        return True
    problem = entry_problem(folder)
    if problem is None:
        _verified.add(key)
        return True
    discard_entry(folder, problem)
    return False


def discard_entry(folder: Path, problem: str) -> None:
    """Remove a damaged cache entry with a one-line warning naming it and what was wrong."""
    log.warning("cache entry %s is damaged (%s); rebuilding it", folder, problem)
    shutil.rmtree(folder, ignore_errors=True)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, another user's
        return True
    return True


def remove_stale_staging(parent: Path, name: str | None = None) -> list[Path]:
    """Remove staging folders in ``parent`` (of the entry ``name``, or of any entry) left by
    writers that died; return them.

    A staging folder of this host is stale when its process is gone; one of another host (a
    shared file system) or without a recorded writer, once older than a day."""
    removed = []
    host = socket.gethostname()
    for path in parent.glob(f".{name}.*" if name else ".*"):
        match = _STAGING.match(path.name)
        if (match and name and match["name"] != name) or (not match and not name):
            continue
        if match and match["host"] == host:
            stale = not _pid_alive(int(match["pid"]))
        else:
            try:
                stale = time.time() - path.stat().st_mtime > STALE_FOREIGN_STAGING_SECONDS
            except FileNotFoundError:
                continue
        if stale and path.is_dir():
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
    return removed


@contextlib.contextmanager
def atomic_directory(target: Path, replace: bool = True) -> Iterator[Path]:
    """Yield a staging dir beside ``target``; on success it gets a manifest and replaces
    ``target`` atomically (or, with ``replace=False``, is dropped when ``target`` appeared
    meanwhile: another process finished first). Staging dirs of dead writers are removed. A full
    disk raises :class:`DiskFullError` naming ``target`` (or the file a nested
    :func:`naming_full_disk` names) and leaves ``target`` as it was."""
    target.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_staging(target.parent, target.name)
    prefix = f".{target.name}.tmp-{os.getpid()}@{socket.gethostname()}-"
    with naming_full_disk(target):
        staging = Path(tempfile.mkdtemp(prefix=prefix, dir=target.parent))
        try:
            yield staging
            write_manifest(staging)
            if target.exists():
                if not replace:
                    return
                shutil.rmtree(target)
            os.replace(staging, target)
        finally:
            if staging.exists():
                shutil.rmtree(staging, ignore_errors=True)


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a sibling temp file and ``os.replace`` (never torn;
    a full disk raises :class:`DiskFullError` and leaves ``path`` as it was).

    The temp file's name is unique, so processes writing the same entry at once never mix bytes:
    the last ``os.replace`` wins with a whole file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with naming_full_disk(path):
        handle, staging = tempfile.mkstemp(
            prefix=f".{path.name}.tmp-{os.getpid()}@{socket.gethostname()}-", dir=path.parent)
        try:
            with open(handle, "wb") as stream:
                stream.write(data)
            os.replace(staging, path)
        finally:
            if os.path.exists(staging):
                os.unlink(staging)


def atomic_write_text(path: Path, text: str) -> None:
    """:func:`atomic_write_bytes` of ``text`` in UTF-8."""
    atomic_write_bytes(path, text.encode("utf-8"))


def append_whole(path: Path, data: bytes) -> None:
    """Append ``data`` to ``path`` (created if missing) whole or not at all: a failed write (a
    full disk raises :class:`DiskFullError`) cuts the file back to its old size, so a log of
    JSON lines never ends in a torn line that would stop its next reader."""
    with naming_full_disk(path):
        handle = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
        try:
            size = os.fstat(handle).st_size
            try:
                left = memoryview(data)
                while left:
                    left = left[os.write(handle, left):]
            except OSError:
                os.ftruncate(handle, size)
                raise
        finally:
            os.close(handle)


class CacheEntryWarning(UserWarning):
    """A cache entry on disk was unreadable (torn or edited) and is being rebuilt."""
