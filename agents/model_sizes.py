"""The named tiny model sizes: one registry, free of heavy imports (report code reads it).

:data:`MODEL_SIZES` maps each size name to the shape :func:`agents.tiny_model.build_tiny_model`
builds (a preset spells it out in ``[model.tiny]``); :func:`agents.warm_starts.model_size` names the
size of any model, and a benchmark setting is an env × such a size
(:mod:`benchmarks.protocol.merge`).
"""

from __future__ import annotations

MODEL_SIZES: dict[str, dict[str, int]] = {
    "tiny-s": {"hidden_size": 64, "num_layers": 4},
    "tiny": {"hidden_size": 128, "num_layers": 4},
    "tiny-l": {"hidden_size": 192, "num_layers": 6},
}
"""The shipped tiny model sizes, smallest first (the model-scale axis: the paper's 2B/4B/9B, here
about 3x apart): name -> shape (:func:`agents.tiny_model.build_tiny_model` keywords; a preset
spells the shape out in ``[model.tiny]``, so a recipe's hash covers the shape itself). With the 2048-token vocabulary,
:func:`tiny_parameters` gives 328,384 (``tiny-s``, 3.2x fewer), 1,049,984 (``tiny``, every warm
start shipped before the axis) and 3,050,496 (``tiny-l``, 2.9x more). Same tokenizer, 4 attention
heads and 2 KV heads, MLP 3x the width, tied embeddings."""

DEFAULT_SIZE = "tiny"
"""The size of every run made before the model-scale axis (records without ``model_size``)."""


def size_of_shape(hidden_size: int, num_layers: int) -> str | None:
    """The :data:`MODEL_SIZES` name of a tiny model of this shape, or None."""
    for name, shape in MODEL_SIZES.items():
        if (shape["hidden_size"], shape["num_layers"]) == (hidden_size, num_layers):
            return name
    return None


def tiny_size_label(hidden_size: int, num_layers: int) -> str:
    """A tiny model's size label: its :data:`MODEL_SIZES` name, else ``tiny-<hidden>x<layers>``
    (e.g. ``tiny-96x3``, the test model ``build_tiny_model`` makes by default)."""
    return size_of_shape(hidden_size, num_layers) or f"tiny-{hidden_size}x{num_layers}"


def size_suffix(name: str) -> str | None:
    """The non-default :data:`MODEL_SIZES` name a model name ends with (``-tiny-l`` in
    ``searchqa-hasty-sft-tiny-l``, the naming of the sized warm starts), or None."""
    for size in MODEL_SIZES:
        if size != DEFAULT_SIZE and name.endswith(f"-{size}"):
            return size
    return None


def tiny_parameters(hidden_size: int, num_layers: int, vocab_size: int = 2048) -> int:
    """Parameters of an :func:`agents.tiny_model.tiny_model_config` model (tied embeddings, no
    biases): ``V·h`` for the embedding, per layer ``12·h²`` (q, o: ``h²`` each; k, v: ``h²/2``
    each with 2 of 4 heads; the MLP ``9·h²``) plus ``2.5·h`` of norms, and the final norm ``h``."""
    head_dim = hidden_size // 4
    per_layer = 12 * hidden_size**2 + 2 * hidden_size + 2 * head_dim
    return vocab_size * hidden_size + num_layers * per_layer + hidden_size
