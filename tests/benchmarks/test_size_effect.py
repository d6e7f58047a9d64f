"""The report's "Across model sizes" section: a method's advantage over GRPO at two model sizes,
and its change, paired on the same test tasks, from hand-made records."""

from __future__ import annotations

import numpy as np

from benchmarks.protocol.report import summarise
from benchmarks.protocol.size_effect import kendall_tau, size_changes, size_lines

TASKS = 40


def _record(method: str, seed: int, size: str, rate: float, env: str = "sdgym/SearchQA-v0") -> dict:
    """A trained cell whose success on task t, rollout r is a deterministic draw at ``rate``."""
    key = [seed, sum(map(ord, method)), sum(map(ord, size)), int(rate * 100)]
    draws = np.random.default_rng(key).random((TASKS, 2))
    outcomes = [{"task_index": t, "task_id": f"t{t}", "rollout_seed": r,
                 "success": bool(draws[t, r] < rate), "score": 0.0}
                for t in range(TASKS) for r in range(2)]
    return {"kind": "train", "env_id": env, "method": method, "seed": seed,
            "cell": f"train-{env.split('/')[-1]}-{method}-seed{seed}", "outcomes": outcomes,
            "split": "test", "steps": 8, "model_name": f"warm-{size}", "val_split": "val",
            "validation": [[0, 0.3], [8, rate]], "auc": rate, "train_flops_estimate": 1e9,
            "train_seconds": 1.0, "train_cpu_seconds": 1.0, "model_size": size}


def _records(rates: dict[str, dict[str, float]], seeds: dict[str, tuple[int, ...]] | None = None
             ) -> list[dict]:
    return [_record(method, seed, size, rate) for size, by_method in rates.items()
            for method, rate in by_method.items()
            for seed in (seeds or {}).get(size, (0, 1, 2))]


def test_a_method_that_gains_with_size_is_named_with_its_interval() -> None:
    """sdar: worse than GRPO at tiny-s, better at tiny-l -> its change excludes 0 and it is
    listed as flipping; opsd: the same standing at both sizes -> its change includes 0."""
    records = _records({"tiny-s": {"grpo": 0.5, "sdar": 0.2, "opsd": 0.5},
                        "tiny-l": {"grpo": 0.5, "sdar": 0.8, "opsd": 0.5}})
    changes = {c.method: c for c in size_changes(summarise(records))}
    assert set(changes) == {"sdar", "opsd"}
    sdar, opsd = changes["sdar"], changes["opsd"]
    assert (sdar.smaller, sdar.larger, sdar.seeds, sdar.tasks) == ("tiny-s", "tiny-l", 3, TASKS)
    assert sdar.delta_smaller.excludes_zero() == -1 and sdar.delta_larger.excludes_zero() == 1
    assert sdar.change.low > 0.3 and np.isclose(
        sdar.change.point, sdar.delta_larger.point - sdar.delta_smaller.point)
    assert opsd.change.excludes_zero() == 0 and opsd.change.point != 0  # other draws, same rate
    text = "\n".join(size_lines(summarise(records)))
    assert "## Across model sizes" in text and "excludes 0 for 1 (sdar SearchQA-v0 +" in text
    assert "is worse at another: sdar (SearchQA-v0)." in text
    assert "| SearchQA-v0 | sdar | tiny-s → tiny-l |" in text and "**changed**" in text


def test_rank_agreement_and_no_section_without_a_second_size() -> None:
    same = _records({"tiny-s": {"grpo": 0.5, "sdar": 0.3, "opsd": 0.7},
                     "tiny": {"grpo": 0.5, "sdar": 0.3, "opsd": 0.7}})
    flipped = _records({"tiny-s": {"grpo": 0.5, "sdar": 0.3, "opsd": 0.7},
                        "tiny": {"grpo": 0.5, "sdar": 0.7, "opsd": 0.3}})
    assert kendall_tau(size_changes(summarise(same))) == {
        ("sdgym/SearchQA-v0", "tiny-s", "tiny"): 1.0}
    assert kendall_tau(size_changes(summarise(flipped))) == {
        ("sdgym/SearchQA-v0", "tiny-s", "tiny"): -1.0}
    one_size = _records({"tiny": {"grpo": 0.5, "sdar": 0.3}})
    assert size_changes(summarise(one_size)) == [] and size_lines(summarise(one_size)) == []


def test_sizes_with_other_training_seeds_keep_each_sizes_own_paired_difference() -> None:
    """tiny-s ran seeds 0-2, tiny-l seeds 1-2: each Δ column is that size's own paired
    difference (all of its seeds, as in the setting's table), and the change's interval is
    wider than one that treated the two sizes' runs as paired."""
    from benchmarks.protocol.statistics import paired, paired_difference, score_matrix

    rates = {"tiny-s": {"grpo": 0.5, "sdar": 0.3}, "tiny-l": {"grpo": 0.5, "sdar": 0.6}}
    records = _records(rates, seeds={"tiny-l": (1, 2)})
    (change,) = size_changes(summarise(records))
    for size, delta in (("tiny-s", change.delta_smaller), ("tiny-l", change.delta_larger)):
        mine = score_matrix([r for r in records if r["model_size"] == size and r["method"] == "sdar"])
        grpo = score_matrix([r for r in records if r["model_size"] == size and r["method"] == "grpo"])
        assert delta.point == paired_difference(*paired(mine, grpo)).point
    assert change.seeds == 2 and change.tasks == TASKS
    assert change.change.low < change.change.point < change.change.high
    assert change.change.excludes_zero() == 1
