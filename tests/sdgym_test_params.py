"""Parameters shared by the test modules (a uniquely named module: a ``conftest`` import would be
shadowed by the per-folder conftest files)."""

from __future__ import annotations

from sdgym.registration import ENVIRONMENTS, implemented

FAST_KWARGS: dict[str, dict] = {
    "sdgym/SearchQA-v0": {"size": "tiny"},
    "sdgym/WebShop-v0": {"size": "tiny"},
    "sdgym/ScienceWorld-v0": {"task_names": ["chemistry-mix"]},
    "sdgym/ALFWorld-v0": {"size": "small"},
}
"""Keyword arguments that make each env small enough for unit tests."""

AVAILABLE_IDS = [e.env_id for e in ENVIRONMENTS if implemented(e) and e.installed()]
