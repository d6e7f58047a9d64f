"""Model cards of the shipped warm starts: ``README.md`` in the Hugging Face model-card format,
generated from the warm start's record (``sdgym_warm_start.json``), never written by hand.

A card says what the model is, its recipe and data, the command that rebuilds it, its measured
student and teacher success with 95% intervals (the record's ``measured`` entries, added by
:func:`add_measurement` from a benchmark's premise cell), and its intended use and limits.
:func:`write_model_card` runs at every export (:func:`agents.warm_starts.export_warm_start`); a test
checks that every shipped card equals :func:`model_card` of its record, so the numbers on a card
are the numbers in its metadata.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

CARD_FILE = "README.md"
RECORD_FILE = "sdgym_warm_start.json"
"""A warm start's record: recipe, command, SFT losses, weights hash, measurements."""


def _interval(values: list[float] | None, signed: bool = False) -> str:
    if not values:
        return "–"
    sign = "+" if signed else ""
    point, low, high = values
    if low is None or high is None:
        return f"{point:{sign}.3f}"
    return f"{point:{sign}.3f} [{low:{sign}.3f}, {high:{sign}.3f}]"


def _measured_lines(record: dict[str, Any]) -> list[str]:
    entries = record.get("measured") or []
    if not entries:
        return ["Not measured yet: no premise cell of a benchmark has been recorded for this "
                "warm start (`add_measurement` in `agents/warm_starts/model_card.py`).", ""]
    lines = []
    for entry in entries:
        lines += [f"Measured {entry['date']} on commit `{entry['commit']}` with "
                  f"`{entry['command']}`: the warm start acting on {entry['tasks']} "
                  f"`{entry['split']}` tasks × {entry['rollout_seeds']} rollout seeds, privileged "
                  "info hidden from the student; the teacher is the same model with one context "
                  "added to its prompt, paired on the same tasks and sampling seeds (95% "
                  "stratified bootstrap intervals).", "",
                  f"- student success: {_interval(entry['student'])}", "",
                  "| teacher context | tasks covered | teacher success | teacher − student | "
                  "premise |", "|---|---|---|---|---|"]
        for context, row in entry.get("teachers", {}).items():
            lines.append(f"| {context} | {row['tasks_covered']} | {_interval(row['teacher'])} | "
                         f"{_interval(row['difference'], signed=True)} | {row['premise']} |")
        lines.append("")
    return lines


def _sft_recipe(config: dict[str, Any]) -> dict[str, Any]:
    """The SFT settings of a record's config (sectioned, or the flat ``sft_*`` of older ones)."""
    if isinstance(config.get("sft"), dict):
        return config["sft"]
    return {key.removeprefix("sft_"): value for key, value in config.items()
            if key.startswith("sft_")}


def _base_model(config: dict[str, Any]) -> str:
    model = config.get("model", "tiny")
    return str(model.get("name", "tiny") if isinstance(model, dict) else model)


def model_shape(folder: str | Path) -> dict[str, int]:
    """Layers, hidden size, vocabulary and parameter count of the model in ``folder``."""
    from safetensors import safe_open

    folder = Path(folder)
    config = json.loads((folder / "config.json").read_text())
    parameters = 0
    for path in sorted(folder.glob("*.safetensors")):
        with safe_open(str(path), framework="numpy") as weights:
            for key in weights.keys():  # noqa: SIM118 (safe_open is not a mapping)
                shape = weights.get_slice(key).get_shape()
                count = 1
                for size in shape:
                    count *= size
                parameters += count
    return {"layers": config.get("num_hidden_layers", 0), "hidden": config.get("hidden_size", 0),
            "vocabulary": config.get("vocab_size", 0), "parameters": parameters}


def model_card(name: str, record: dict[str, Any], shape: dict[str, int]) -> str:
    """The card of the warm start ``name`` from its record and :func:`model_shape` (see the
    module docstring)."""
    config = record.get("config", {})
    env_id = config.get("env_id", "?")
    sft = _sft_recipe(config)
    base = _base_model(config)
    prompt = config.get("rollout", {}).get("prompt", config.get("prompt", {}))
    env_kwargs = config.get("env_kwargs", {})
    start = ("trained from scratch (its tokenizer trained on the demonstrations' text)"
             if base == "tiny" else f"fine-tuned from the shipped warm start `{base}`")
    front = ["---", "library_name: transformers", "license: mit", "pipeline_tag: text-generation",
             "tags:", "- sdgym", "- agentic-rl", "- self-distillation", f"- {env_id.split('/')[-1]}",
             "---", ""]
    lines = [
        f"# {name}", "",
        f"A tiny causal language model (Qwen3 architecture, float16, {shape['parameters']:,} "
        f"parameters: {shape['layers']} layers, hidden size {shape['hidden']}, vocabulary "
        f"{shape['vocabulary']}), {start}, by supervised fine-tuning on expert demonstrations "
        f"of `{env_id}` from [sdgym](https://example.invalid/sdgym). It is a *warm start*: a policy that acts above "
        "chance on the env's easy split and leaves room for reinforcement learning, so GRPO and "
        "the self-distillation heads can be compared from the same start on a CPU.", "",
        "## Recipe and data", "",
        f"- preset `{record.get('preset', '?')}` (recipe hash `{record.get('recipe_hash', '?')}`)"
        f"; env `{env_id}` with {json.dumps(env_kwargs)}, split `{config.get('train_split', '?')}`",
        f"- {record.get('demonstrations', '?')} demonstration turns generated locally from the "
        f"env's expert (no download); {sft.get('steps', '?')} SFT steps, lr {sft.get('lr', '?')}, "
        f"batch {sft.get('batch_size', '?')}, teacher-prompt fraction "
        f"{sft.get('teacher_fraction', '?')} (contexts: "
        f"{', '.join(sft.get('teacher_contexts', [])) or 'none'})",
        f"- SFT loss {record.get('first_loss', float('nan')):.3f} → "
        f"{record.get('last_loss', float('nan')):.4f}",
        f"- prompt format (`sdgym_prompt.json`, chat template `sdgym`): {json.dumps(prompt)}",
        f"- weights SHA-256 `{record.get('weights_sha256', '?')}`", "",
        "Rebuild it bit for bit (same code, same machine type):", "",
        "```bash", record.get("command", "?"), "```", "",
        "## Measured success", "",
        *_measured_lines(record),
        "## Intended use and limits", "",
        "- For sdgym's CPU presets, tests and examples: a starting point for GRPO and the teacher "
        "heads, with the prompt format it was trained on (`sdgym eval --model "
        f"{name}` uses it).",
        "- Not a general language model: it has seen only this env's generated tasks and its "
        "tokenizer was trained on them; outside that env its output is meaningless.",
        "- Its success rates hold for the split, step limit and prompt format above; a teacher "
        "context whose premise is \"not met\" does not make it act better, so heads that read that "
        "context have no better teacher to learn from in this setting.",
        "",
    ]
    return "\n".join(front + lines)


def write_model_card(folder: str | Path, name: str | None = None) -> Path:
    """Write ``README.md`` into the warm-start ``folder`` from its record; return its path.
    ``name``: the warm start's name (default: the folder's; an export names its target while it
    writes into a staging folder)."""
    folder = Path(folder)
    record = json.loads((folder / RECORD_FILE).read_text())
    path = folder / CARD_FILE
    path.write_text(model_card(name or folder.name, record, model_shape(folder)))
    return path


def add_measurement(folder: str | Path, measurement: dict[str, Any]) -> Path:
    """Record ``measurement`` (keys: date, commit, command, split, tasks, rollout_seeds,
    student ``[point, low, high]``, teachers ``{context: {tasks_covered, teacher, difference,
    premise}}``) in the warm start's record, replacing an earlier one on the same split, and
    rewrite its card. The weights are not touched (their hash stays valid)."""
    folder = Path(folder)
    record = json.loads((folder / RECORD_FILE).read_text())
    kept = [m for m in record.get("measured", []) if m.get("split") != measurement["split"]]
    record["measured"] = [*kept, measurement]
    (folder / RECORD_FILE).write_text(json.dumps(record, indent=2) + "\n")
    return write_model_card(folder)
