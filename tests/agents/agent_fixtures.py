"""Shared set-up for agents/ tests: offline HF settings and one tiny model per process.

Test modules wrap these helpers in their own small fixtures. There is deliberately no
``tests/agents/conftest.py``: a second module named ``conftest`` would shadow
``tests/conftest.py`` for tests that do ``from conftest import ...``.
"""

from __future__ import annotations

import functools
import os
import tempfile
from pathlib import Path
from typing import Any

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")

_TMP = tempfile.TemporaryDirectory(prefix="sdgym-agents-tests-")
"""Holds the shared tiny model; removed when the test process exits."""

PROMPT_CONTENTS = (
    "hi",
    "go to cabinet 1, open it, then take the mug and put it in the coffeemachine",
    "<search>capital of France</search>",
    "You are in the middle of a room. Looking quickly around you, you see a cabinet 1, "
    "a drawer 1 and a fridge 1. Your task is to: put a clean mug in the fridge.",
)
"""User messages whose rendered prompts have clearly different token lengths."""


@functools.cache
def shared_tiny_model_dir() -> Path:
    """The default tiny model, built once per process in a temporary folder."""
    import torch

    from agents.tiny_model import build_tiny_model

    torch.set_num_threads(1)
    return build_tiny_model(Path(_TMP.name) / "tiny")


@functools.cache
def shared_hf_backend() -> Any:
    """An ``HFBackend`` (CPU, float32) on the shared tiny model."""
    from agents.backends.hf import HFBackend

    return HFBackend(shared_tiny_model_dir())


def rendered_prompts(tokenizer: Any) -> list[str]:
    """:data:`PROMPT_CONTENTS` as single-turn ChatML prompts."""
    from agents.backends.base import render_chat

    return [render_chat(tokenizer, [{"role": "user", "content": c}]) for c in PROMPT_CONTENTS]
