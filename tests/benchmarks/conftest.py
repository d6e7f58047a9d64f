"""A real small benchmark run folder (``cpu-smoke``), made once per test session."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def smoke_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """``sdgym benchmark --preset cpu-smoke`` into a fresh folder: the folder and what the
    command printed. Tests must not change the folder (copy it first)."""
    from sdgym.cli import main

    out = tmp_path_factory.mktemp("cpu-smoke") / "report"
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        code = main(["benchmark", "--preset", "cpu-smoke", "--out", str(out)])
    assert code == 0, printed.getvalue()[-2000:]
    return out, printed.getvalue()
