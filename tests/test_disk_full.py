"""A full disk inside a checkpoint, report or log write: one line naming the file and "no space
left", the previous version intact, and from the ``sdgym`` command exit code 2 with no traceback.

The full disk is faked at the write (``OSError(ENOSPC)`` after part of the bytes went out, as a
real one does); one test checks that ``torch.save`` through a Python file really raises that on
a full device (``/dev/full``), which is why checkpoints are saved so.
"""

from __future__ import annotations

import errno
import json
import os
import stat
from pathlib import Path

import pytest

from sdgym import cache
from sdgym.cache import DiskFullError, append_whole, atomic_write_text


def _no_space() -> OSError:
    return OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


class _HalfWrittenStream:
    """Stands in for ``open(fd, "wb")`` on a disk that fills up halfway through the write."""

    def __init__(self, handle: int, *args: object, **kwargs: object) -> None:
        self.handle = handle

    def __enter__(self) -> _HalfWrittenStream:
        return self

    def __exit__(self, *exc: object) -> None:
        os.close(self.handle)

    def write(self, data: bytes) -> int:
        os.write(self.handle, data[: len(data) // 2])
        raise _no_space()


def _one_line_naming(error: DiskFullError, path: Path) -> bool:
    """Whether ``error`` is the CLI's one-liner (an OSError and a ValueError) naming ``path``."""
    message = str(error)
    return ("no space left" in message and str(path) in message and "\n" not in message
            and error.errno == errno.ENOSPC and error.filename == str(path)
            and isinstance(error, OSError) and isinstance(error, ValueError))


def _only(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def test_a_full_disk_keeps_the_previous_file_and_names_it(tmp_path, monkeypatch) -> None:
    path = tmp_path / "summary.json"
    atomic_write_text(path, '{"old": 1}')
    monkeypatch.setattr(cache, "open", _HalfWrittenStream, raising=False)
    with pytest.raises(DiskFullError) as caught:
        atomic_write_text(path, '{"new": 2}' * 1000)
    assert _one_line_naming(caught.value, path)
    assert path.read_text() == '{"old": 1}'
    assert _only(tmp_path) == ["summary.json"]  # no temp file left behind


def test_the_error_survives_a_trip_to_another_process() -> None:
    import pickle

    error = pickle.loads(pickle.dumps(DiskFullError("/runs/x/state.pt")))
    assert _one_line_naming(error, Path("/runs/x/state.pt"))


def _fill_up_on_appends_to(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """From now on the disk fills up halfway through every ``os.write`` to ``path``."""
    inode = os.stat(path).st_ino
    real_write = os.write

    def filling_up(handle: int, data: bytes) -> int:
        if os.fstat(handle).st_ino != inode:
            return real_write(handle, data)
        real_write(handle, bytes(data[: len(data) // 2]))
        raise _no_space()

    monkeypatch.setattr(os, "write", filling_up)


def test_an_append_is_whole_or_not_at_all(tmp_path, monkeypatch) -> None:
    """A log line cut short by a full disk would stop the next reader of the JSON lines."""
    path = tmp_path / "episodes.jsonl"
    append_whole(path, b'{"episode": 1}\n')
    _fill_up_on_appends_to(path, monkeypatch)
    with pytest.raises(DiskFullError) as caught:
        append_whole(path, b'{"episode": 2, "return": 0.5}\n')
    monkeypatch.undo()
    assert _one_line_naming(caught.value, path)
    assert path.read_bytes() == b'{"episode": 1}\n'


def test_run_log_lines_stay_whole_on_a_full_disk(tmp_path, monkeypatch) -> None:
    from baselines.run_log import RunLog

    log = RunLog(tmp_path, tensorboard=False)
    log.step(1, {"loss": 1.0})
    _fill_up_on_appends_to(log.path, monkeypatch)
    with pytest.raises(DiskFullError) as caught:
        log.step(2, {"loss": 0.5})
    monkeypatch.undo()
    assert _one_line_naming(caught.value, log.path)
    assert [json.loads(line)["step"] for line in log.path.read_text().splitlines()] == [1]


def test_checkpoint_on_a_full_disk_names_the_file_and_keeps_the_last_one(tmp_path,
                                                                          monkeypatch) -> None:
    torch = pytest.importorskip("torch")
    from baselines.checkpoint import LATEST, load_latest, save_checkpoint

    save_checkpoint(tmp_path, 1, {"step": 1, "w": torch.arange(4096.0)})
    real_save = torch.save

    def filling_up(state: object, handle: object, *args: object, **kwargs: object) -> None:
        handle.write(b"PK\x03\x04 part of a zip")  # torn bytes, then the disk is full
        raise _no_space()

    monkeypatch.setattr(torch, "save", filling_up)
    with pytest.raises(DiskFullError) as caught:
        save_checkpoint(tmp_path, 2, {"step": 2, "w": torch.arange(4096.0) * 2})
    monkeypatch.setattr(torch, "save", real_save)
    checkpoints = tmp_path / "checkpoints"
    assert _one_line_naming(caught.value, checkpoints / "step-000002" / "state.pt")
    assert _only(checkpoints) == [LATEST, "step-000001"]  # no staging folder, no torn step 2
    assert json.loads((checkpoints / LATEST).read_text())["step"] == 1
    state = load_latest(tmp_path)
    assert state["step"] == 1 and torch.equal(state["w"], torch.arange(4096.0))


def test_torch_save_through_a_python_file_reports_a_full_device() -> None:
    """Saved to a path, torch's own writer fails with an opaque ``RuntimeError("unexpected
    pos")``; through a Python file object the ``OSError(ENOSPC)`` comes through."""
    torch = pytest.importorskip("torch")
    try:
        is_full_device = stat.S_ISCHR(os.stat("/dev/full").st_mode)
    except OSError:
        is_full_device = False
    if not is_full_device:
        pytest.skip("no /dev/full")
    with pytest.raises(OSError) as caught, open("/dev/full", "wb") as handle:
        torch.save({"w": torch.zeros(100_000)}, handle)
    assert caught.value.errno == errno.ENOSPC


def _empty_result() -> dict:
    return {"records": [], "failures": [], "notes": [], "planned": 0}


def test_report_on_a_full_disk_keeps_the_previous_report(tmp_path, monkeypatch) -> None:
    pytest.importorskip("scipy")  # the report's statistics
    from benchmarks.protocol.report import write_report

    report = write_report(_empty_result(), tmp_path, "first")
    before = report.read_text()
    monkeypatch.setattr(cache, "open", _HalfWrittenStream, raising=False)
    with pytest.raises(DiskFullError) as caught:
        write_report(_empty_result(), tmp_path, "second")
    assert _one_line_naming(caught.value, report)
    assert report.read_text() == before and "first" in before


def test_sdgym_benchmark_on_a_full_disk_is_one_line_exit_2(tmp_path, monkeypatch, capsys) -> None:
    pytest.importorskip("torch")
    pytest.importorskip("scipy")
    from sdgym.cli import main

    monkeypatch.setattr("benchmarks.protocol.matrix.run_matrix",
                        lambda *args, **kwargs: _empty_result())
    monkeypatch.setattr(cache, "open", _HalfWrittenStream, raising=False)
    out = tmp_path / "report"
    assert main(["benchmark", "--preset", "cpu-smoke-bench", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: no space left on device writing ") and "\n" not in err, err
    assert str(out / "report.md") in err
