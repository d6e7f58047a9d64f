"""Train sdgym's shipped warm start ``searchqa-hasty-sft`` with ``trl.GRPOTrainer`` on Search-QA.

Multi-turn episodes (search, read, answer) through :class:`agents.trl.SdgymRollout`; the reward
is the episode's exact-match score (:func:`agents.trl.episode_reward`). Runs on a CPU at a few
seconds per step at the defaults (2.5-5 s measured on a shared 2-core machine)::

    pip install 'sdgym[trl,searchqa]'
    python examples/trl_grpo_searchqa.py --steps 4 --output-dir runs/trl-searchqa

``--eval-steps N`` also evaluates on the ``easy_val`` split every N steps, with its own batch size.
The trained model, its tokenizer and sdgym's prompt format are saved to ``--output-dir``, so
``AutoModelForCausalLM.from_pretrained(DIR)`` and ``sdgym eval --model DIR`` load it. It trains on
the GPU when there is one (bfloat16 where supported), else on the CPU; ``--report-to`` picks
TRL's logger (``none``, ``tensorboard``, ``wandb``, ...). Each log entry is printed once, by the
trainer.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

ENV_ID = "sdgym/SearchQA-v0"
MODEL = "searchqa-hasty-sft"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=4, help="optimizer steps")
    parser.add_argument("--size", default="small", choices=("tiny", "small"),
                        help="Search-QA data size")
    parser.add_argument("--output-dir", default="runs/trl-grpo-searchqa",
                        help="where the trained model, tokenizer and prompt format are saved")
    parser.add_argument("--report-to", default="none",
                        help="TRL/transformers logger: none, tensorboard, wandb, ... (default none)")
    parser.add_argument("--batch-size", type=int, default=8, help="completions per step")
    parser.add_argument("--num-generations", type=int, default=4, help="GRPO group size")
    parser.add_argument("--max-new-tokens", type=int, default=32, help="tokens per turn")
    parser.add_argument("--learning-rate", type=float, default=3e-5, help="AdamW learning rate")
    parser.add_argument("--tasks", type=int, default=64, help="training tasks (easy_train)")
    parser.add_argument("--eval-steps", type=int, default=0, help="evaluate every N steps (0: never)")
    parser.add_argument("--eval-tasks", type=int, default=3, help="easy_val tasks evaluated")
    parser.add_argument("--eval-batch-size", type=int, default=6, help="completions per eval batch")
    parser.add_argument("--eval-generations", type=int, default=2, help="group size in evaluation")
    parser.add_argument("--seed", type=int, default=0, help="training seed")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> Any:
    """Train; return the ``GRPOTrainer`` (its ``state.log_history`` holds the metrics)."""
    args = parse_args(argv)
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")  # rollout_func is experimental in TRL
    import torch
    from transformers import AutoTokenizer
    from trl import GRPOConfig, GRPOTrainer

    from agents.datasets import task_dataset
    from agents.prompt_format import add_prompt_format, recorded_prompt_limits
    from agents.trl import SdgymRollout, episode_reward
    from agents.warm_starts import resolve_model

    folder = resolve_model(MODEL)
    env_kwargs = {"size": args.size}
    train = task_dataset(ENV_ID, "easy_train", env_kwargs=env_kwargs, model=MODEL,
                         task_indices=range(args.tasks))
    evaluate = args.eval_steps > 0
    val = (task_dataset(ENV_ID, "easy_val", env_kwargs=env_kwargs, model=MODEL,
                        task_indices=range(args.eval_tasks)) if evaluate else None)
    gpu = torch.cuda.is_available()
    bf16 = gpu and torch.cuda.is_bf16_supported()
    config = GRPOConfig(
        output_dir=args.output_dir, max_steps=args.steps, learning_rate=args.learning_rate,
        per_device_train_batch_size=args.batch_size, num_generations=args.num_generations,
        max_completion_length=args.max_new_tokens, temperature=1.0, beta=0.0,
        gradient_checkpointing=False, use_cpu=not gpu, bf16=bf16, seed=args.seed,
        logging_steps=1, save_strategy="no", report_to=args.report_to, disable_tqdm=True,
        eval_strategy="steps" if evaluate else "no", eval_steps=args.eval_steps or None,
        per_device_eval_batch_size=args.eval_batch_size,
        num_generations_eval=args.eval_generations,
    )
    tokenizer = AutoTokenizer.from_pretrained(folder, padding_side="left")
    with SdgymRollout(ENV_ID, [train] + ([val] if val is not None else []),
                      env_kwargs=env_kwargs, model=MODEL) as rollout:
        trainer = GRPOTrainer(model=folder, reward_funcs=episode_reward, args=config,
                              train_dataset=train, eval_dataset=val, processing_class=tokenizer,
                              rollout_func=rollout)
        trainer.train()
    trainer.save_model(args.output_dir)  # the model and, as processing_class, the tokenizer
    tokenizer.save_pretrained(args.output_dir)
    add_prompt_format(Path(args.output_dir), ENV_ID, recorded_prompt_limits(folder))
    return trainer


if __name__ == "__main__":
    main()  # the trainer prints each log entry (logging_steps=1); nothing printed twice
