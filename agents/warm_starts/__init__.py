"""SFT warm starts shipped with sdgym, so CPU presets and tests start above chance at once.

Each one is an ordinary transformers model folder (float16 weights, about 2 MB, plus its
tokenizer and ``sdgym_warm_start.json``, which records the recipe and the command that rebuilt
it), and its prompt format (``sdgym_prompt.json`` and a chat template named ``sdgym``, see
:mod:`agents.prompt_format`). Pass its name wherever a model folder is accepted (``model = "searchqa-easy-sft"`` in a
preset, ``sdgym eval --model searchqa-easy-sft``); :func:`resolve_model` maps names to folders.

Rebuild one with the command in its record, e.g.
``sdgym sft --preset searchqa-warm-start --export agents/warm_starts/searchqa-easy-sft``.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import Any

from agents.prompt_format import add_prompt_format
from agents.prompts import PromptLimits
from agents.warm_starts.model_card import RECORD_FILE, write_model_card

HERE = Path(__file__).parent
__all__ = ["RECORD_FILE", "export_warm_start", "model_size", "resolve_model",
           "shipped_warm_starts", "warm_start_record", "write_model_card"]


def shipped_warm_starts() -> dict[str, Path]:
    """Name → folder of every shipped warm start (a folder with a record file)."""
    return {path.parent.name: path.parent for path in sorted(HERE.glob(f"*/{RECORD_FILE}"))}


def resolve_model(model: str) -> str:
    """The folder of a shipped warm start named ``model``; a model folder or a Hugging Face id
    (``org/name``) unchanged.

    Raises:
        ValueError: naming ``model`` when it is none of these, or when it is a Hugging Face id
            that the local cache lacks while ``HF_HUB_OFFLINE`` is set (nothing to load).
    """
    shipped = shipped_warm_starts()
    if model in shipped:
        return str(shipped[model])
    if model == "tiny" or Path(model).expanduser().is_dir():  # "tiny": built on the spot
        return model
    if re.fullmatch(r"[A-Za-z0-9][\w.-]*/[\w.-]+", model) and not Path(model).parent.exists():
        if not _hub_offline() or _in_hub_cache(model):
            return model
        raise ValueError(f"model {model!r} is not in the local Hugging Face cache "
                         "(HF_HUB_OFFLINE is set)")
    raise ValueError(f"model {model!r}: no such folder, and no shipped warm start of that name "
                     f"(shipped: {sorted(shipped)})")


def _hub_offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").lower() in ("1", "true", "yes", "on")


def _in_hub_cache(repo_id: str) -> bool:
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:  # pragma: no cover - comes with transformers
        return False
    return isinstance(try_to_load_from_cache(repo_id, "config.json"), str)


def model_size(model: str, tiny: dict[str, Any] | None = None) -> str:
    """The size label of ``model`` (a ``TrainConfig.model.name``; ``tiny``: its ``model.tiny``
    shape), the model-size half of a benchmark setting: for a tiny model (``"tiny"``, or a
    folder or shipped warm start whose ``config.json`` has the tiny models' 4 heads and 2 KV
    heads) its :data:`agents.model_sizes.MODEL_SIZES` name (:func:`~agents.model_sizes.
    tiny_size_label`); for a warm start not built yet, the size its name ends with
    (``searchqa-hasty-sft-tiny-l``); for any other model its name without the organisation
    (``Qwen/Qwen3.5-2B`` -> ``Qwen3.5-2B``)."""
    import inspect

    from agents.model_sizes import size_suffix, tiny_size_label
    from agents.tiny_model import build_tiny_model

    if model == "tiny":
        defaults = inspect.signature(build_tiny_model).parameters
        shape = {key: (tiny or {}).get(key, defaults[key].default)
                 for key in ("hidden_size", "num_layers")}
        return tiny_size_label(shape["hidden_size"], shape["num_layers"])
    try:
        config_file = Path(resolve_model(model)) / "config.json"
    except ValueError:
        config_file = None
    if config_file is not None and config_file.is_file():
        config = json.loads(config_file.read_text())
        config = config.get("text_config") or config
        if (config.get("num_attention_heads"), config.get("num_key_value_heads")) == (4, 2):
            return tiny_size_label(config["hidden_size"], config["num_hidden_layers"])
    return size_suffix(model) or model.rstrip("/").split("/")[-1]


def warm_start_record(model: str) -> dict[str, Any]:
    """The record (recipe, command, SFT losses) of the shipped warm start named ``model``."""
    folder = shipped_warm_starts().get(model)
    if folder is None:
        raise KeyError(f"no shipped warm start {model!r}; have {sorted(shipped_warm_starts())}")
    return json.loads((folder / RECORD_FILE).read_text())


def shipped_prompt_limits(model: str) -> dict[str, Any]:
    """The prompt limits a shipped warm start was trained with, or those a model folder records
    in its ``sdgym_prompt.json`` (a model trained from a warm start and saved with its prompt
    format); ``{}`` for any other model."""
    if model not in shipped_warm_starts():
        from agents.prompt_format import recorded_prompt_limits

        recorded = recorded_prompt_limits(model) if Path(model).is_dir() else None
        return {} if recorded is None else dataclasses.asdict(recorded)
    config = warm_start_record(model)["config"]
    if isinstance(config.get("rollout"), dict):  # recorded by the sectioned training config
        return dict(config["rollout"].get("prompt", {}))
    return dict(config.get("prompt", {}))


def weights_digest(folder: Path) -> str:
    """SHA-256 of a model folder's ``*.safetensors`` files (in name order)."""
    import hashlib

    digest = hashlib.sha256()
    for weights in sorted(Path(folder).glob("*.safetensors")):
        digest.update(weights.read_bytes())
    return digest.hexdigest()


def export_warm_start(source: Path, target: Path, record: dict[str, Any]) -> Path:
    """Write the model in ``source`` to ``target`` as float16 plus ``record``, replacing ``target``.
    The record gains ``weights_sha256`` (:func:`weights_digest` of the float16 weights written),
    so a rebuild can be checked bit for bit.

    The folder is assembled beside ``target`` and moved into place, so an interrupted export
    never leaves a half-written warm start under the final name.
    """
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
    try:
        model = AutoModelForCausalLM.from_pretrained(source, dtype=torch.float16)
        model.save_pretrained(staging)
        AutoTokenizer.from_pretrained(source).save_pretrained(staging)
        config = record.get("config", {})
        if "env_id" in config:  # the prompt format travels with the model (agents.prompt_format)
            limits = config.get("rollout", {}).get("prompt", config.get("prompt"))  # flat: old
            add_prompt_format(staging, config["env_id"], PromptLimits.from_dict(limits))
        record = {**record, "weights_sha256": weights_digest(staging)}
        (staging / RECORD_FILE).write_text(json.dumps(record, indent=2) + "\n")
        write_model_card(staging, target.name)  # README.md: the model card, from the record
        for path in [staging, *staging.iterdir()]:  # mkdtemp's 0700 would follow the folder around
            path.chmod(0o755 if path.is_dir() else 0o644)
        if target.exists():
            shutil.rmtree(target)
        staging.rename(target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target
