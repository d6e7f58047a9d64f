"""Load a causal LM and its tokenizer from a folder or an (offline-cached) hub id, in a chosen dtype.

Dtype names (``TrainConfig.dtype``, ``--set dtype=...``):

* ``"auto"`` — ``bfloat16`` on a CUDA device, ``float32`` elsewhere;
* ``"float32"`` / ``"bfloat16"`` (also ``"fp32"`` / ``"bf16"``) — that dtype everywhere.

:func:`resolve_dtype` turns a name into a ``torch.dtype``; :func:`load_model` loads in it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch
    from transformers import PreTrainedModel, PreTrainedTokenizerBase

DTYPE_NAMES: tuple[str, ...] = ("auto", "float32", "bfloat16")
_ALIASES = {"fp32": "float32", "bf16": "bfloat16"}


def check_dtype_name(name: str) -> str:
    """The canonical dtype name of ``name``; ValueError naming it when unknown."""
    canonical = _ALIASES.get(name, name)
    if canonical not in DTYPE_NAMES:
        raise ValueError(f"dtype must be one of {DTYPE_NAMES} (or fp32/bf16), got {name!r}")
    return canonical


def resolve_dtype(name: str | torch.dtype | None, device: str = "cpu") -> torch.dtype:
    """The ``torch.dtype`` that dtype name ``name`` means on ``device`` (None: ``"auto"``)."""
    import torch

    if isinstance(name, torch.dtype):
        return name
    canonical = check_dtype_name(name or "auto")
    if canonical == "auto":
        return torch.bfloat16 if str(device).startswith("cuda") else torch.float32
    return getattr(torch, canonical)


def load_model(
    name_or_path: str | Path, *, dtype: str | torch.dtype | None = "float32", device: str = "cpu",
) -> tuple[PreTrainedModel, PreTrainedTokenizerBase]:
    """Load ``(model, tokenizer)`` from a model folder or a hub id in the local cache (offline).

    Args:
        name_or_path: What ``AutoModelForCausalLM.from_pretrained`` accepts.
        dtype: A dtype name (see the module docstring) or a ``torch.dtype``; ``"auto"`` is
            resolved against ``device``.
        device: Where the weights go.

    Returns:
        The model in eval mode and a left-padding tokenizer.
    """
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(name_or_path, padding_side="left")
    model = AutoModelForCausalLM.from_pretrained(name_or_path, dtype=resolve_dtype(dtype, device))
    return model.to(device).eval(), tokenizer

