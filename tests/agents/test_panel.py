"""The evaluation protocol: fixed task panels without replacement, shared by every path, and
rollout seeds that really change the sampling."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agents.panel import task_panel


@given(st.integers(1, 500), st.one_of(st.none(), st.integers(1, 600)), st.integers(0, 5))
def test_panels_are_without_replacement_and_fixed_by_their_seed(n: int, size: int | None,
                                                                seed: int) -> None:
    panel = task_panel(n, size, seed)
    assert len(panel) == len(set(panel)) == (n if size is None else min(size, n))
    assert all(0 <= t < n for t in panel)
    assert panel == task_panel(n, size, seed)
    if size is not None and size < n:  # a bigger panel extends a smaller one
        assert task_panel(n, size + 1, seed)[:size] == panel


def test_bad_panel_requests_fail_clearly() -> None:
    with pytest.raises(ValueError, match="split with tasks"):
        task_panel(0, 4)
    with pytest.raises(ValueError, match="positive"):
        task_panel(10, 0)


pytest.importorskip("transformers")


@pytest.mark.slow
def test_every_evaluation_path_sees_the_same_tasks(tmp_path) -> None:
    """Trainer.evaluate for two methods, the reference baselines and ``sdgym eval`` run the same
    task panel of the test split; validation runs the val panel."""
    from baselines.config import load_preset
    from baselines.evaluation import evaluate_policy
    from baselines.reference.run import make_policy
    from baselines.trainer import Trainer
    from sdgym.cli import main

    env_kwargs = {"size": "tiny"}
    tasks: dict[str, list[int]] = {}
    for method in ("grpo", "rlsd"):
        config = load_preset("cpu-smoke", {"sft.steps": 2, "sft.tasks": 4, "evaluation.test_episodes": 6, "evaluation.test_seeds": 2, "evaluation.val_episodes": 3, "rollout.max_new_tokens": 8}, method=method, out_dir=str(tmp_path / method), steps=0, env_kwargs=env_kwargs)
        trainer = Trainer(config)
        try:
            record = trainer.evaluate()
        finally:
            trainer.close()
        tasks[method] = sorted({o["task_index"] for o in record["outcomes"]})
        assert len(record["outcomes"]) == 6 * 2 and record["rollout_seeds"] == [0, 1]
        assert sorted(record["task_indices"]) == tasks[method]
    baseline = evaluate_policy("sdgym/SearchQA-v0", make_policy("random", "sdgym/SearchQA-v0", env_kwargs),
                               split="test", episodes=6, seeds=[0, 1], env_kwargs=env_kwargs)
    tasks["random"] = sorted({o["task_index"] for o in baseline.outcomes})
    out = tmp_path / "eval.jsonl"
    assert main(["eval", "--env", "SearchQA-v0", "--env-kwarg", "size=tiny", "--split", "test",
                 "--episodes", "6", "--seeds", "1", "--max-new-tokens", "8",
                 "--out", str(out)]) == 0
    eval_ids = {json.loads(line)["task_id"] for line in out.read_text().splitlines()}
    trainer_ids = {o["task_id"] for o in record["outcomes"]}
    assert tasks["grpo"] == tasks["rlsd"] == tasks["random"]
    assert eval_ids == trainer_ids and len(trainer_ids) == 6


@pytest.mark.slow
def test_rollout_seeds_change_the_samples_at_positive_temperature() -> None:
    from agents.backends.base import SamplingParams, render_chat
    from agents.backends.hf import HFBackend
    from agents.model_loading import load_model
    from agents.panel import evaluate_on_panel
    from agents.rollout import RolloutEngine, RolloutEngineConfig
    from agents.tiny_model import build_tiny_model

    model, tokenizer = load_model(build_tiny_model())
    engine = RolloutEngine(RolloutEngineConfig("sdgym/SearchQA-v0", {"size": "tiny"}, 4, 1,
                                         hide_privileged=True),
                           HFBackend(model, tokenizer), lambda m: render_chat(tokenizer, m))
    responses: dict[tuple[float, int], list[str]] = {}
    try:
        panel = task_panel(engine.task_count("test"), 4)
        for temperature in (1.0, 0.0):
            unparsed: list[int] = []

            def keep(batch, slots, temperature=temperature, unparsed=unparsed):
                unparsed.extend(1 for r in batch.rows
                                if r.parse_error and slots[r.group_id] is not None)
                rows = sorted(batch.rows, key=lambda r: (slots[r.group_id][0], r.turn))
                for seed in (0, 1):
                    responses[temperature, seed] = [r.response_text for r in rows
                                                    if slots[r.group_id][1] == seed]

            result = evaluate_on_panel(
                engine, "test", panel, [0, 1],
                lambda seed, temperature=temperature: SamplingParams(
                    max_new_tokens=12, temperature=temperature, seed=seed), keep)
            assert sorted({o["task_index"] for o in result.outcomes}) == sorted(panel)
            # each outcome counts its episode's unparsable and refused turns (an untrained model
            # rarely writes a whole tag)
            assert sum(o["unparsable_turns"] for o in result.outcomes) == len(unparsed)
            assert all(o["unparsable_turns"] + o["refused_turns"] <= o["turns"]
                       for o in result.outcomes)
    finally:
        engine.close()
    assert responses[1.0, 0] != responses[1.0, 1], "rollout seeds must change the samples"
    assert responses[0.0, 0] == responses[0.0, 1], "greedy decoding ignores the seed"


@pytest.mark.slow
def test_batching_the_rollout_seeds_changes_no_outcome() -> None:
    """Every (task, rollout seed) episode samples from its own stream: engines of different
    widths (one seed per call, several seeds per call, a padded last call) give the same
    outcomes and the same responses at T = 1."""
    from agents.backends.base import SamplingParams, render_chat
    from agents.backends.hf import HFBackend
    from agents.model_loading import load_model
    from agents.panel import evaluate_on_panel
    from agents.rollout import RolloutEngine, RolloutEngineConfig
    from agents.tiny_model import build_tiny_model

    model, tokenizer = load_model(build_tiny_model())
    backend = HFBackend(model, tokenizer)
    runs = []
    for width in (3, 8):
        engine = RolloutEngine(RolloutEngineConfig("sdgym/SearchQA-v0", {"size": "tiny"}, width, 1,
                                             hide_privileged=True),
                               backend, lambda m: render_chat(tokenizer, m))
        texts: dict[tuple[int, int], list[str]] = {}

        def keep(batch, slots, texts=texts):
            for row in sorted(batch.rows, key=lambda r: r.turn):
                if slots[row.group_id] is not None:
                    texts.setdefault(slots[row.group_id], []).append(row.response_text)

        try:
            panel = task_panel(engine.task_count("test"), 4)
            result = evaluate_on_panel(engine, "test", panel, [0, 1], lambda seed: SamplingParams(
                max_new_tokens=12, temperature=1.0, seed=1000 + seed), keep)
        finally:
            engine.close()
        runs.append((result.outcomes, texts))
    assert len(runs[0][0]) == 8 and runs[0][0] == runs[1][0]
    assert runs[0][1] == runs[1][1] and len(runs[0][1]) == 8
    assert {tuple(v) for k, v in runs[0][1].items() if k[1] == 0} != {
        tuple(v) for k, v in runs[0][1].items() if k[1] == 1}, "the seeds must sample differently"
    with pytest.raises(ValueError, match="differ in their seed only"):
        evaluate_on_panel(engine, "test", panel, [0, 1], lambda seed: SamplingParams(
            max_new_tokens=12, temperature=1.0 + seed, seed=seed))
