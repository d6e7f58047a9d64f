"""``sdgym eval`` / ``sdgym rollout``: run an LLM policy on an env split, report, write JSONL.

``eval`` samples at a low temperature with privileged info hidden and prints success and score
over rollout seeds; ``rollout`` samples at temperature 1 and writes every turn-row. Both write
trajectories as JSON lines (prompts, responses, rewards, validity; never privileged info).

``--backend hf`` (default) runs a local model folder; ``--backend openai --base-url URL --model
NAME`` samples from an OpenAI-compatible server: ``--openai-api chat`` (default) sends each turn's
messages to ``/chat/completions`` (the server applies its chat template), ``--openai-api
completions`` renders prompts with a local tokenizer (``--tokenizer``) and calls ``/completions``.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
from pathlib import Path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments shared by ``sdgym eval`` and ``sdgym rollout``."""
    parser.add_argument("--env", required=True, help="env id, e.g. SearchQA-v0")
    parser.add_argument("--model", default="tiny",
                        help="model folder (offline), a shipped warm start (e.g. searchqa-easy-sft), "
                             "or 'tiny' for a freshly built tiny model; with --backend openai: the "
                             "model name the server serves")
    parser.add_argument("--backend", choices=BACKENDS, default="hf",
                        help="hf: a local transformers model; openai: an OpenAI-compatible server")
    parser.add_argument("--base-url", default=None,
                        help="openai backend: API root, e.g. http://127.0.0.1:8000/v1 "
                             "(default $OPENAI_BASE_URL); the key comes from $OPENAI_API_KEY")
    parser.add_argument("--openai-api", choices=("chat", "completions"), default="chat",
                        help="openai backend: /chat/completions (server-side chat template) or "
                             "/completions (prompts rendered here with --tokenizer)")
    parser.add_argument("--tokenizer", default=None,
                        help="openai completions mode: tokenizer folder or shipped warm start "
                             "whose chat template renders the prompts")
    parser.add_argument("--request-timeout", type=float, default=60.0,
                        help="openai backend: seconds per HTTP request")
    parser.add_argument("--max-retries", type=int, default=2,
                        help="openai backend: retries after a connection error, timeout or 5xx")
    parser.add_argument("--split", default="test",
                        help="split whose tasks are evaluated (default test; `sdgym list` names "
                             "each env's splits)")
    parser.add_argument("--episodes", type=int, default=16, help="tasks per rollout seed")
    parser.add_argument("--seeds", type=int, default=8, help="rollout seeds")
    parser.add_argument("--panel-width", type=int, default=16,
                        help="episodes run at once, one env each (default 16; outcomes do not "
                             "depend on it, memory does: ScienceWorld's JVM holds about 16)")
    parser.add_argument("--temperature", type=float, default=None,
                        help="sampling temperature (default: 0.4 for eval, 1.0 for rollout)")
    parser.add_argument("--max-new-tokens", type=int, default=64,
                        help="largest response per turn, in tokens (default 64)")
    parser.add_argument("--env-kwarg", action="append", default=[], metavar="KEY=VALUE",
                        help="keyword for gym.make, e.g. size=small (repeatable)")
    parser.add_argument("--out", default=None, help="trajectory JSONL file")
    parser.add_argument("--prompt-limit", action="append", default=[], metavar="KEY=VALUE",
                        help="student prompt limits (history, observation_chars, history_chars, "
                             "max_admissible); a shipped warm start's own limits are the default")


BACKENDS = ("hf", "openai")


def policy_backend(args: argparse.Namespace):
    """``(backend, tokenizer or None)`` for ``--backend`` (see the module docstring)."""
    from agents.model_loading import load_model
    from agents.tiny_model import build_tiny_model
    from agents.warm_starts import resolve_model

    if args.backend == "openai":
        from transformers import AutoTokenizer

        from agents.backends.openai_http import OpenAICompatBackend

        tokenizer = None
        if args.openai_api == "completions":
            if not args.tokenizer:
                raise ValueError("--openai-api completions renders prompts here: give --tokenizer "
                                 "(a tokenizer folder or shipped warm start), or use "
                                 "--openai-api chat")
            tokenizer = AutoTokenizer.from_pretrained(resolve_model(args.tokenizer))
        backend = OpenAICompatBackend(args.base_url, args.model, api=args.openai_api,
                                      tokenizer=tokenizer, timeout=args.request_timeout,
                                      max_retries=args.max_retries)
        return backend, tokenizer
    from agents.backends.hf import HFBackend

    if "://" in args.model:
        raise ValueError(f"--model {args.model!r} is a URL: for a server use --backend openai "
                         "--base-url URL --model NAME")
    model_dir = build_tiny_model() if args.model == "tiny" else Path(resolve_model(args.model))
    model, tokenizer = load_model(model_dir)
    return HFBackend(model, tokenizer), tokenizer


def run(args: argparse.Namespace, temperature: float) -> int:
    """Roll the policy out, print the summary, write the trajectories (a failing server: a
    one-line error naming it, exit status 1)."""
    from agents.backends.openai_http import OpenAIHTTPError

    try:
        return _run(args, temperature)
    except OpenAIHTTPError as error:
        print(f"error: {args.command} --backend openai: {error}", file=sys.stderr)
        return 1


def checked_arguments(args: argparse.Namespace) -> tuple[str, Path]:
    """The full env id and the trajectory file of ``args``, after the checks that need no model:
    a one-line error for an unknown env or split, a count below 1 or an unwritable ``--out``."""
    from sdgym.cli import check_at_least, check_writable
    from sdgym.registration import entry_for, env_class

    env_id = entry_for(args.env).env_id
    env_class(env_id).check_split(args.split)
    check_at_least("--episodes", args.episodes)
    check_at_least("--seeds", args.seeds)
    check_at_least("--panel-width", args.panel_width)
    split_in_name = re.sub(r"[^\w.-]+", "_", args.split).strip("_")  # "val[:50%]" -> "val_50"
    out = Path(args.out or f"runs/{args.command}-{env_id.split('/')[-1]}-{split_in_name}.jsonl")
    check_writable(out, is_file=True)
    return env_id, out


def _run(args: argparse.Namespace, temperature: float) -> int:
    """Roll the policy out, print the summary, write the trajectories."""
    from rich.console import Console

    from agents.backends.base import SamplingParams, render_chat
    from agents.panel import PanelSlot, evaluate_on_panel, task_panel
    from agents.prompts import PromptLimits, student_messages
    from agents.rollout import RolloutBatch, RolloutEngine, RolloutEngineConfig
    from agents.warm_starts import shipped_prompt_limits
    from sdgym.cache import atomic_write_text
    from sdgym.cli import parse_env_kwargs

    env_id, out = checked_arguments(args)
    env_kwargs = parse_env_kwargs(args.env_kwarg)
    given_limits = parse_env_kwargs(args.prompt_limit, "--prompt-limit")
    backend, tokenizer = policy_backend(args)
    limits = dict(shipped_prompt_limits(args.model if args.backend == "hf" else args.tokenizer
                                        or args.model))
    limits.update(given_limits)
    engine = RolloutEngine(
        RolloutEngineConfig(env_id, env_kwargs, min(args.episodes, args.panel_width), 1,
                      hide_privileged=True, prompt_limits=PromptLimits.from_dict(limits)),
        backend, lambda messages: render_chat(tokenizer, messages))
    temperature = temperature if args.temperature is None else args.temperature
    records: list[dict] = []

    def keep_rows(batch: RolloutBatch, slots: list[PanelSlot | None]) -> None:
        records.extend({"rollout_seed": slot[1], "task_id": r.task_id, "traj_id": r.traj_id,
                        "turn": r.turn, **({"prompt": tokenizer.decode(r.prompt_ids)}
                                           if r.prompt_ids else
                                           {"messages": student_messages(r.public)}),
                        "response": r.response_text, "reward": r.reward,
                        "action_valid": r.action_valid, "parse_error": r.parse_error,
                        "done": r.done, "score": r.score,
                        "won": r.won} for r in batch.rows
                       if (slot := slots[r.group_id]) is not None)

    try:
        panel = task_panel(engine.task_count(args.split), args.episodes)
        result = evaluate_on_panel(
            engine, args.split, panel, list(range(args.seeds)),
            lambda seed: SamplingParams(max_new_tokens=args.max_new_tokens,
                                        temperature=temperature, seed=seed), keep_rows)
    finally:
        engine.close()
    success, score = result.success_per_seed, result.score_per_seed
    atomic_write_text(out, "".join(json.dumps(r) + "\n" for r in records))  # never half a file
    std = statistics.pstdev(success) if len(success) > 1 else 0.0
    Console().print(f"{env_id} {args.split}: success {statistics.fmean(success):.3f} ± {std:.3f}, "
                    f"score {statistics.fmean(score):.3f} over {args.seeds} seeds × "
                    f"{len(panel)} panel tasks; trajectories: {out}")
    for line in action_format_lines(records):
        print(line)  # not wrapped: a log line to grep
    return 0


def action_format_lines(turns: list[dict]) -> list[str]:
    """What went wrong with the policy's actions, from the written turn records: how many turns
    had no parsable action (the wrapper found no tagged block; ``parse_error``) and how many
    parsed actions the env refused (``action_valid`` false), each with the first offending
    response, so a format problem reads differently from a weak policy. Empty when every turn
    parsed and was valid."""
    total = len(turns)
    unparsed = [t for t in turns if t.get("parse_error")]
    refused = [t for t in turns if not t.get("parse_error") and not t.get("action_valid", True)]
    lines = []
    if unparsed:
        lines.append(f"{len(unparsed)} of {total} turns had no parsable action "
                     f"({unparsed[0]['parse_error']}); first such response: "
                     f"{_clip(unparsed[0].get('response', ''))!r}")
    if refused:
        lines.append(f"{len(refused)} of {total} turns sent an action the env refused as "
                     f"invalid; first such response: {_clip(refused[0].get('response', ''))!r}")
    return lines


def _clip(text: str, limit: int = 160) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


def run_eval(args: argparse.Namespace) -> int:
    """``sdgym eval`` (temperature 0.4 by default)."""
    return run(args, 0.4)


def run_rollout(args: argparse.Namespace) -> int:
    """``sdgym rollout`` (temperature 1 by default)."""
    return run(args, 1.0)
