"""GRPO learns: from cpu-mini's SFT warm start it raises val success on Search-QA's easy split.

The base warm start (``searchqa-easy-sft``) is near its ceiling at the validation temperature
(0.92 on easy_val) and leaves RL little to find. cpu-mini starts from ``searchqa-hasty-sft``
instead: the same model fine-tuned on a student demonstration mix in which 60% of the episodes
answer at once, with another question's answer, instead of searching first
(``hasty_demonstrations``), and on expert turns under the teacher prompt. Its student answers
without searching in most episodes. Searching first is one decision at a fixed place
in the response, which GRPO's group-relative advantage singles out: searching episodes win,
hasty ones fail.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("transformers")

from agents.prompts import PromptLimits  # noqa: E402
from agents.warm_starts import shipped_prompt_limits  # noqa: E402
from baselines.config import load_preset  # noqa: E402
from baselines.run_log import read_metrics  # noqa: E402
from baselines.sft import expert_demonstrations, hasty_demonstrations  # noqa: E402
from baselines.trainer import Trainer  # noqa: E402


def test_hasty_demonstrations_answer_first_turns_without_searching() -> None:
    limits = PromptLimits.from_dict(shipped_prompt_limits("searchqa-easy-sft"))
    demos = expert_demonstrations("sdgym/SearchQA-v0", {"size": "small"}, "easy_train", 20,
                                  seed=1, limits=limits)
    mixed = hasty_demonstrations(demos, fraction=0.5, seed=0)
    first_turns = [d for d in mixed if d.turn.step == 1]
    assert len(first_turns) == sum(d.turn.step == 1 for d in demos) == 20
    hasty = [d for d in first_turns if "<answer>" in d.response]
    assert 3 <= len(hasty) <= 17
    gold = {d.turn.task: d for d in demos if d.turn.step == 1}
    assert all("<search>" in gold[d.turn.task].response for d in hasty)
    gold_answers = {d.turn.task: d.response for d in demos if d.turn.step == 2}
    assert all(d.response != gold_answers[d.turn.task] for d in hasty)  # another task's answer
    assert len(mixed) == len(demos) - len(hasty)  # each hasty episode lost its second turn
    assert hasty_demonstrations(demos, fraction=0.0) == demos
    with pytest.raises(ValueError, match="fraction"):
        hasty_demonstrations(demos, fraction=1.5)


def test_hasty_webshop_buyers_skip_the_options() -> None:
    """turn=3: search and open the product as the expert does, then buy it at once."""
    demos = expert_demonstrations("sdgym/WebShop-v0", {"size": "tiny"}, "train", 24, seed=0)
    episodes = [[]]
    for d in demos:
        if d.turn.step == 1 and episodes[-1]:
            episodes.append([])
        episodes[-1].append(d)
    assert any(len(e) >= 4 for e in episodes)  # some goals have options to choose
    mixed = hasty_demonstrations(demos, fraction=1.0, seed=0, turn=3)
    by_step: dict[int, list] = {}
    for d in mixed:
        by_step.setdefault(d.turn.step, []).append(d)
    assert 4 not in by_step  # nobody chooses an option after opening the product
    assert all(d.response.endswith("click[buy now]</action>") for d in by_step[3]), by_step[3][0]
    assert [d.response for d in mixed if d.turn.step < 3] == [
        d.response for d in demos if d.turn.step < 3]  # the expert's search and click kept
    with pytest.raises(ValueError, match="hasty turn"):
        hasty_demonstrations(demos, fraction=0.5, turn=0)


@pytest.mark.slow
def test_grpo_raises_val_success_from_the_cpu_mini_warm_start(tmp_path: Path) -> None:
    config = load_preset("cpu-mini", {"evaluation.val_every": 4, "evaluation.val_episodes": 64, "infra.checkpoint_every": 100}, steps=8, out_dir=str(tmp_path / "runs"))
    assert config.model.name == "searchqa-hasty-sft" and config.method == "grpo"
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
    # the start often answers at once (1.69 turns per episode when shipped; a search-then-answer
    # episode takes 2): GRPO learns to search first
    assert turns[0] < 1.8 and turns[-1] >= turns[0] + 0.25, f"it should learn to search first: {turns}"
