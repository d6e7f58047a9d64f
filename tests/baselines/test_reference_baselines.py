"""Random and expert reference policies, and the ``sdgym baseline`` command."""

from __future__ import annotations

import json

import pytest

from baselines.evaluation import evaluate_policy
from baselines.reference_policies import ExpertPolicy, RandomPolicy
from sdgym.cli import main


def test_expert_solves_and_random_does_not_on_searchqa() -> None:
    kwargs = {"size": "tiny"}
    expert = evaluate_policy("sdgym/SearchQA-v0", ExpertPolicy(), episodes=10, seeds=[0, 1],
                             env_kwargs=kwargs)
    random = evaluate_policy("sdgym/SearchQA-v0", RandomPolicy(), episodes=10, seeds=[0, 1],
                             env_kwargs=kwargs)
    assert expert.success_per_seed == [1.0, 1.0] and expert.success_std == 0.0
    assert random.success_mean < 0.5
    assert random.to_record()["success_mean"] == pytest.approx(random.success_mean)


def test_random_policy_is_reproducible_per_seed() -> None:
    runs = [evaluate_policy("sdgym/SearchQA-v0", RandomPolicy(), episodes=12, seeds=[3],
                            env_kwargs={"size": "tiny"}).score_per_seed for _ in range(2)]
    assert runs[0] == runs[1]


def test_expert_refuses_hidden_privileged_info() -> None:
    with pytest.raises(ValueError, match="privileged"):
        ExpertPolicy().act("obs", {}, None)


def test_baseline_command_writes_results(tmp_path) -> None:
    out = tmp_path / "report"
    code = main(["baseline", "--env", "sdgym/SearchQA-v0", "--episodes", "4", "--seeds", "2",
                 "--env-kwarg", "SearchQA-v0:size=tiny", "--out", str(out)])
    assert code == 0
    records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert [r["policy"] for r in records] == ["random", "expert"]
    assert records[1]["success_mean"] == 1.0 and len(records[1]["success_per_seed"]) == 2


def test_baseline_command_rejects_unknown_algo(tmp_path, capsys) -> None:
    assert main(["baseline", "--algo", "nope", "--out", str(tmp_path)]) == 2
    assert "unknown --algo" in capsys.readouterr().err
