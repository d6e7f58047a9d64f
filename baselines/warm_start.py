"""The SFT warm start: behaviour cloning on the env's expert, cached once per recipe.

The cache key is derived from the config itself: every field of
:class:`~baselines.config.TrainConfig` and its sections tagged as an SFT input
(``metadata=SFT_INPUT``: the env and its split, the seed, ``model.name`` / ``model.tiny``,
``rollout.prompt`` and every ``sft.*`` option) enters it under its dotted path, so a new SFT
option cannot be forgotten. ``tests/baselines/test_warm_start.py`` checks that :func:`warm_start`
reads no other field.
"""

from __future__ import annotations

import hashlib
import json
import logging
from pathlib import Path

from agents.backends.base import render_chat
from agents.corpus import default_corpus
from agents.model_loading import load_model
from agents.prompts import PromptLimits, student_messages
from agents.tiny_model import build_tiny_model
from agents.warm_starts import resolve_model, weights_digest
from baselines.config import TrainConfig, sft_inputs
from baselines.run_log import RunLog
from baselines.seeding import seed_everything
from baselines.sft import (
    behaviour_clone,
    expert_demonstrations,
    hasty_demonstrations,
    with_swapped_words,
    with_teacher_contexts,
)
from sdgym.cache import atomic_directory, cache_dir, usable_entry

KEY_VERSION = 3
"""Bump when the SFT recipe changes in code, so cached warm starts are rebuilt (3: the inputs
are named by their dotted paths in the sectioned config)."""


def sft_cache_key(config: TrainConfig) -> str:
    """16 hex digits of the SHA-256 of every SFT input of ``config`` (and :data:`KEY_VERSION`)."""
    data = {"key_version": KEY_VERSION, **sft_inputs(config)}
    return hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode()).hexdigest()[:16]


def sft_cache_folder(config: TrainConfig) -> Path:
    """Where the warm start of ``config`` is cached: its :func:`sft_cache_key`, plus, for a
    fine-tune of a model folder with ``*.safetensors`` weights (a shipped warm start, a local
    model), the first 12 hex digits of those weights' digest. The recipe names its base, not the
    base's weights; without the digest a rebuilt base would find the old fine-tune in the cache
    and export it again. A Hugging Face id is keyed by its name alone."""
    key = sft_cache_key(config)
    base = Path(resolve_model(config.model.name))
    if config.model.name != "tiny" and base.is_dir() and any(base.glob("*.safetensors")):
        key += "-" + weights_digest(base)[:12]
    return cache_dir("sft") / key


def warm_start(config: TrainConfig, log: RunLog | None = None) -> Path:
    """The SFT warm-start model folder for this config, trained once and cached on disk.

    Every method of a benchmark cell starts from the same folder: the cache key covers the SFT
    inputs (:func:`sft_cache_key`), not the method.
    """
    if config.sft.steps <= 0 and config.model.name != "tiny":
        return Path(resolve_model(config.model.name))
    target = sft_cache_folder(config)
    if usable_entry(target, "config.json"):
        return target
    limits = PromptLimits.from_dict(config.rollout.prompt)
    demos = expert_demonstrations(config.env_id, config.env_kwargs, config.train_split,
                                  config.sft.tasks, config.seed, limits)
    expert_turns = demos  # the teacher prompts' turns: plain expert episodes
    if config.sft.detour_rate > 0:
        demos = expert_demonstrations(config.env_id, config.env_kwargs, config.train_split,
                                      config.sft.tasks, config.seed, limits, config.sft.detour_rate)
    if config.sft.hasty_fraction > 0:
        demos = hasty_demonstrations(demos, config.sft.hasty_fraction, config.seed,
                                     config.sft.hasty_turn)
    if config.sft.swap_words:
        demos = with_swapped_words(demos, config.sft.swap_words)
    if config.model.name == "tiny":
        corpus = default_corpus() + [
            student_messages(d.turn)[1]["content"] + "\n" + d.response for d in demos
        ]
        base = build_tiny_model(corpus=corpus, seed=config.seed, **config.model.tiny)
    else:
        base = Path(resolve_model(config.model.name))
    model, tokenizer = load_model(base, dtype="float32")
    seed_everything(config.seed)

    def render(messages: list[dict[str, str]]) -> str:
        return render_chat(tokenizer, messages)

    losses = behaviour_clone(model, tokenizer, demos, steps=config.sft.steps, lr=config.sft.lr,
                             batch_size=config.sft.batch_size, seed=config.seed, render=render,
                             context_loss_weight=config.sft.context_loss_weight,
                             warmup_steps=config.sft.warmup_steps,
                             teacher_demos=with_teacher_contexts(
                                 expert_turns, config.sft.teacher_contexts, config.env_id,
                                 config.seed),
                             teacher_fraction=config.sft.teacher_fraction, log=_log_sft_progress)
    with atomic_directory(target, replace=False) as staging:  # another process first: keep theirs
        model.save_pretrained(staging)
        tokenizer.save_pretrained(staging)
        (staging / "sft.json").write_text(json.dumps({"losses": losses, "demonstrations": len(demos)}))
    if log is not None and losses:
        log.event("sft", {"first_loss": losses[0], "last_loss": losses[-1], "demos": len(demos)})
    return target


def _log_sft_progress(step: int, loss: float) -> None:
    if (step + 1) % 100 == 0:
        logging.getLogger("sdgym.sft").info("SFT step %d: response loss %.3f", step + 1, loss)

