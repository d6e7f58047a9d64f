"""GRPO learns: from an SFT warm start it raises val success on Search-QA's easy split.

The shipped warm start is near its ceiling at the protocol's validation temperature (0.92 on
easy_val), so it leaves RL little to find. The start here is the typical imperfect SFT instead:
the shipped model fine-tuned on a demonstration mix in which most episodes answer at once, with
another question's answer, instead of searching first (a hasty demonstrator). That policy answers
without searching in about two thirds of its episodes and gets about 0.2 on easy_val. Searching
first is one decision at a fixed place in the response, which GRPO's group-relative advantage
singles out: searching episodes win, hasty ones fail.

Measured on 2 CPU cores (lr 2e-4, 4 groups x 8, T=1.0; val 64 episodes at T=0.4):
val 0.17 -> 0.78 (step 4) -> 0.77 (step 8), turns per episode 1.28 -> 2.0, in under a minute
of GRPO; the SFT step before it takes about 45 s.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

pytest.importorskip("transformers")

from agents.backends.base import render_chat  # noqa: E402
from agents.prompts import PromptLimits  # noqa: E402
from agents.tiny_model import load_tiny_model  # noqa: E402
from agents.warm_starts import resolve_model, shipped_prompt_limits  # noqa: E402
from baselines.config import load_preset  # noqa: E402
from baselines.run_log import read_metrics  # noqa: E402
from baselines.sft import Demonstration, behaviour_clone, expert_demonstrations  # noqa: E402
from baselines.trainer import Trainer  # noqa: E402

WARM_START = "searchqa-easy-sft"


def hasty_mix(demos: list[Demonstration], fraction: float, seed: int = 0) -> list[Demonstration]:
    """Replace ``fraction`` of the expert episodes by one turn that answers at once, wrongly.

    Episodes are the runs of consecutive demonstrations that start at step 1; a hasty episode
    keeps the first turn's prompt and answers with the next episode's (different) answer.
    """
    episodes: list[list[Demonstration]] = []
    for demo in demos:
        if demo.turn.step == 1:
            episodes.append([])
        episodes[-1].append(demo)
    answers = [episode[-1].response for episode in episodes]
    rng = random.Random(seed)
    mixed: list[Demonstration] = []
    for index, episode in enumerate(episodes):
        if rng.random() < fraction:
            mixed.append(Demonstration(episode[0].turn, answers[(index + 1) % len(answers)]))
        else:
            mixed.extend(episode)
    return mixed


def test_hasty_mix_keeps_first_turns_and_answers_without_searching() -> None:
    limits = PromptLimits.from_dict(shipped_prompt_limits(WARM_START))
    demos = expert_demonstrations("sdgym/SearchQA-v0", {"size": "small"}, "easy_train", 20,
                                  seed=1, limits=limits)
    mixed = hasty_mix(demos, fraction=0.5, seed=0)
    first_turns = [d for d in mixed if d.turn.step == 1]
    assert len(first_turns) == sum(d.turn.step == 1 for d in demos) == 20
    hasty = [d for d in first_turns if "<answer>" in d.response]
    assert 3 <= len(hasty) <= 17
    gold_first = {d.turn.task: d.response for d in demos if d.turn.step == 1}
    assert all("<search>" in gold_first[d.turn.task] for d in hasty)
    assert len(mixed) == len(demos) - len(hasty)  # each hasty episode lost its second turn


@pytest.mark.slow
def test_grpo_raises_val_success_from_an_sft_warm_start(tmp_path: Path) -> None:
    limits = shipped_prompt_limits(WARM_START)
    demos = expert_demonstrations("sdgym/SearchQA-v0", {"size": "small"}, "easy_train", 300,
                                  seed=1, limits=PromptLimits.from_dict(limits))
    model, tokenizer = load_tiny_model(resolve_model(WARM_START))
    behaviour_clone(model, tokenizer, hasty_mix(demos, fraction=0.6), steps=60, lr=5e-4,
                    batch_size=16, render=lambda messages: render_chat(tokenizer, messages))
    start = tmp_path / "hasty-sft"
    model.save_pretrained(start)
    tokenizer.save_pretrained(start)

    config = load_preset("cpu-mini", model=str(start), prompt=limits, steps=8, num_groups=4,
                         group_size=8, lr=2e-4, temperature=1.0, val_temperature=0.4,
                         val_every=4, val_episodes=64, checkpoint_every=100,
                         out_dir=str(tmp_path / "runs"))
    trainer = Trainer(config)
    try:
        summary = trainer.fit()
    finally:
        trainer.close()

    curve = dict(summary["validation"])
    assert set(curve) == {0, 4, 8}
    assert curve[0] <= 0.45, f"the hasty warm start should leave room to learn: {curve}"
    assert curve[8] >= curve[0] + 0.3, f"GRPO did not raise val success: {curve}"
    turns = [row["train/turns"] for row in read_metrics(trainer.run_dir) if "train/turns" in row]
    assert turns[0] < 1.6 and turns[-1] > 1.85, f"it should learn to search before answering: {turns}"
