"""Parameters shared by the test modules (a uniquely named module: a ``conftest`` import would be
shadowed by the per-folder conftest files)."""

from __future__ import annotations

from sdgym.registration import ENVIRONMENTS, implemented

FAST_KWARGS: dict[str, dict] = {e.env_id: dict(e.test_kwargs) for e in ENVIRONMENTS}
"""Keyword arguments that make each env small enough for unit tests (each entry's
``test_kwargs`` in ``sdgym/registration.py``)."""

AVAILABLE_IDS = [e.env_id for e in ENVIRONMENTS if implemented(e) and e.installed()]
