"""Benchmark statistics on synthetic records whose answer is known: a clear winner, a tie and a
loser against GRPO, paired task by task."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("rliable")

from benchmarks.protocol.statistics import (  # noqa: E402
    ScoreMatrix,
    compare_to_grpo,
    framing_lines,
    iqm_interval,
    mean_interval,
    paired_difference,
    probability_of_improvement,
    score_matrix,
    seed_consistency_lines,
    seed_interval,
)

ENV = "sdgym/SearchQA-v0"
TASKS, ROLLOUTS, SEEDS = 120, 4, 3


def outcomes(success: np.ndarray) -> list[dict]:
    """``success[task, rollout]`` as panel outcomes."""
    return [{"task_index": t, "task_id": f"t{t}", "rollout_seed": r, "success": bool(success[t, r]),
             "score": float(success[t, r])} for t in range(success.shape[0])
            for r in range(success.shape[1])]


def synthetic_records() -> list[dict]:
    rng = np.random.default_rng(0)
    records = []
    for seed in range(SEEDS):
        grpo = rng.random((TASKS, ROLLOUTS)) < 0.5
        flip = rng.random((TASKS, ROLLOUTS)) < 0.35
        variants = {
            "grpo": grpo,
            "winner": grpo | flip,            # every GRPO success kept, 35% of failures fixed
            "loser": grpo & ~flip,            # 35% of GRPO's successes lost
            "tie": np.roll(grpo, 1, axis=0),  # GRPO's outcomes on shifted tasks: same mean
        }
        cost = {"grpo": 100.0, "winner": 150.0, "loser": 180.0, "tie": 95.0}
        for method, success in variants.items():
            records.append({"kind": "train", "env_id": ENV, "method": method, "seed": seed,
                            "outcomes": outcomes(success), "train_cpu_seconds": cost[method]})
    return records


def matrices(records):
    by = {}
    for method in ("grpo", "winner", "loser", "tie"):
        by[method] = score_matrix([r for r in records if r["method"] == method])
    return {ENV: by}


def test_score_matrix_pairs_seeds_and_tasks() -> None:
    m = matrices(synthetic_records())[ENV]["grpo"]
    assert m.values.shape == (SEEDS, TASKS) and m.rollout_seeds == ROLLOUTS
    assert m.tasks == list(range(TASKS)) and m.seeds == [0, 1, 2]
    assert 0.4 < m.values.mean() < 0.6


def test_paired_difference_finds_the_winner_the_tie_and_the_loser() -> None:
    records = synthetic_records()
    costs = {ENV: {r["method"]: r["train_cpu_seconds"] for r in records}}
    result = {c.method: c for c in compare_to_grpo(matrices(records), costs, reps=500)}
    assert result["winner"].verdict == "beats" and result["winner"].difference.low > 0.1
    assert result["loser"].verdict == "worse" and result["loser"].difference.high < -0.1
    assert result["tie"].verdict == "tie"
    assert result["tie"].difference.low < 0 < result["tie"].difference.high
    assert result["winner"].improvement.point > 0.6 > 0.4 > result["loser"].improvement.point
    assert result["winner"].cost_ratio == pytest.approx(1.5)
    assert all(c.seeds == SEEDS and c.tasks == TASKS for c in result.values())
    lines = framing_lines(list(result.values()), "process CPU seconds")
    assert lines[0].startswith("**1 of 3 methods beat GRPO**") and "winner (1/1)" in lines[0]
    assert "1 are worse in at least one: loser (1/1)" in lines[0]
    assert "3 training seed(s) × 120 test tasks" in lines[0]
    # winner and loser cost more; of those the loser did worse, with the interval below 0
    assert lines[1].startswith("**2 of 3 method-vs-GRPO comparisons took more training cost**")
    assert "in 1 of those the method also did worse (point estimate), 1 with the interval" in lines[1]


def test_seed_differences_are_each_training_seeds_paired_mean() -> None:
    records = synthetic_records()
    result = {c.method: c for c in compare_to_grpo(matrices(records), {}, reps=200)}
    m = matrices(records)[ENV]
    expected = (m["winner"].values - m["grpo"].values).mean(axis=1)
    assert result["winner"].seed_differences == pytest.approx(tuple(expected))
    assert len(result["tie"].seed_differences) == SEEDS
    assert result["winner"].seed_consistent and result["loser"].seed_consistent
    assert not result["tie"].seed_consistent  # a tie has no verdict to hold


def test_a_win_carried_by_one_training_seed_is_named() -> None:
    """One seed far ahead, two slightly behind: the pooled bootstrap calls it a win (it resamples
    seeds within each task), the per-seed line says that only one seed shows it."""
    rng = np.random.default_rng(3)
    grpo = (rng.random((3, 200)) < 0.3).astype(float)
    carried = grpo.copy()
    carried[0] = np.maximum(grpo[0], rng.random(200) < 0.45)   # seed 0: far ahead
    for seed in (1, 2):                                          # seeds 1 and 2: a little behind
        lost = np.flatnonzero(grpo[seed])[:2]
        carried[seed, lost] = 0.0
    seeds, tasks = [0, 1, 2], list(range(200))
    [c] = compare_to_grpo({ENV: {"grpo": ScoreMatrix(seeds, tasks, grpo),
                                 "carried": ScoreMatrix(seeds, tasks, carried)}}, {}, reps=500)
    assert c.verdict == "beats"
    assert c.seed_differences[0] > 0.2 and all(d < 0 for d in c.seed_differences[1:])
    assert not c.seed_consistent
    [line] = seed_consistency_lines([c])
    assert "better on every seed in 0 of the 1 'beats' verdicts" in line
    assert "Not shown by every seed (Δ per seed, in training-seed order): carried (SearchQA-v0: +0." in line
    assert seed_consistency_lines([]) == []


def test_intervals_are_reproducible_and_shrink_with_more_tasks() -> None:
    rng = np.random.default_rng(1)
    small = (rng.random((3, 20)) < 0.5).astype(float)
    big = (rng.random((3, 400)) < 0.5).astype(float)
    a, b = mean_interval(small, reps=500), mean_interval(big, reps=500)
    assert a == mean_interval(small, reps=500)  # seeded bootstrap
    assert (b.high - b.low) < (a.high - a.low) / 2.5
    assert a.low <= a.point <= a.high
    iqm = iqm_interval(big, reps=300)
    assert iqm.low <= iqm.point <= iqm.high
    same = paired_difference(big, big, reps=300)
    assert same.point == 0 and same.low == same.high == 0  # identical runs: no difference


def test_probability_of_improvement_matches_rliable() -> None:
    from rliable import metrics

    rng = np.random.default_rng(2)
    x, y = rng.random((3, 30)).round(1), rng.random((2, 30)).round(1)  # ties included
    ours = probability_of_improvement(x, y, reps=300)
    assert ours.point == pytest.approx(float(metrics.probability_of_improvement(x, y)))
    assert ours.low <= ours.point <= ours.high


def test_seed_interval_needs_two_seeds() -> None:
    assert seed_interval([0.7]).low is None
    spread = seed_interval([0.2, 0.8, 0.5])
    assert spread.point == pytest.approx(0.5) and spread.low < 0.5 < spread.high
