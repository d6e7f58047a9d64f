"""sdgym/SearchQA-v0: protocol, retrieval, expert, privileged info, upstream data."""

from __future__ import annotations

import json

import gymnasium as gym
import pytest

from sdgym.core import InvalidAction
from sdgym.envs.searchqa.dataset import generated_dataset
from sdgym.envs.searchqa.protocol import parse_command
from sdgym.envs.searchqa.retrieval import BM25Retriever, shared_retriever


@pytest.fixture
def env():
    made = gym.make("sdgym/SearchQA-v0", size="tiny")
    yield made
    made.close()


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("<search>capital of Xoria</search>", ("search", "capital of Xoria")),
        ("<think>hmm</think><answer> Varn </answer>", ("answer", "Varn")),
        ("search[who founded x]", ("search", "who founded x")),
        ("answer[Varn]", ("answer", "Varn")),
        ("<search>a\n  b</search><answer>c</answer>", ("search", "a b")),
    ],
)
def test_parse_command_accepts_the_protocol(command, expected) -> None:
    assert parse_command(command) == expected


@pytest.mark.parametrize(
    ("command", "reason"),
    [
        ("<search>unclosed", "no complete"),
        ("<search><answer>x</answer></search>", "nested"),
        ("<search>  </search>", "empty"),
        ("look around", "unknown command"),
        ("<answer><information>x</information></answer>", "nested"),
    ],
)
def test_parse_command_rejects_malformed_input(command, reason) -> None:
    with pytest.raises(InvalidAction, match=reason):
        parse_command(command)


def test_search_returns_information_block_with_top_k(env) -> None:
    env.reset(seed=0, options={"split": "test"})
    observation, reward, terminated, _, info = env.step("<search>Republic of capital</search>")
    assert observation.startswith("<information>") and observation.endswith("</information>")
    assert observation.count("Doc ") == 3 and reward == 0.0 and not terminated
    assert info["action_valid"]


def test_search_with_unknown_terms_returns_no_results(env) -> None:
    env.reset(seed=0)
    observation, *_ = env.step("<search>zzzqqq xxyyzz</search>")
    assert observation == "<information>No results.</information>"


def test_answer_ends_episode_with_exact_match_and_f1(env) -> None:
    _, info = env.reset(options={"split": "test", "task_index": 0})
    gold = info["privileged"]["goal"]["answers"][0]
    _, reward, terminated, _, info = env.step(f"<answer>{gold.upper()}!</answer>")
    assert terminated and reward == 1.0 and info["won"] and info["f1"] == 1.0
    _, info = env.reset(options={"split": "test", "task_index": 0})
    _, reward, terminated, _, info = env.step("<answer>certainly not this</answer>")
    assert terminated and reward == 0.0 and not info["won"] and info["exact_match"] == 0.0


def test_long_queries_are_handled(env) -> None:
    env.reset(seed=0)
    _, _, _, _, info = env.step("<search>" + "capital " * 200 + "</search>")
    assert info["action_valid"]
    _, _, _, _, info = env.step("<search>" + "q" * 10_000 + "</search>")
    assert not info["action_valid"]


def test_turn_limit_is_four(env) -> None:
    env.reset(seed=0)
    outcomes = [env.step("<search>capital</search>")[2:4] for _ in range(4)]
    assert outcomes == [(False, False)] * 3 + [(False, True)]


def test_privileged_info_has_gold_supports_and_a_plan(env) -> None:
    _, info = env.reset(options={"split": "train", "task_index": 5})
    privileged = info["privileged"]
    goal = privileged["goal"]
    assert goal["answers"] and goal["hops"] and goal["supporting_passages"]
    assert privileged["expert_plan"][-1] == f"<answer>{goal['answers'][0]}</answer>"
    assert privileged["expert_action"] == privileged["expert_plan"][0]
    assert goal["answers"][0] in privileged["text"]
    assert len(privileged["expert_plan"]) == len(goal["supporting_passages"]) + 1


def test_expert_plan_shrinks_as_supports_are_retrieved(env) -> None:
    _, info = env.reset(options={"split": "test", "task_index": 0})
    plan = info["privileged"]["expert_plan"]
    _, _, _, _, info = env.step(plan[0])
    assert info["privileged"]["expert_plan"] == plan[1:]


def _expert_and_baseline(size: str, split: str = "test") -> dict[str, float]:
    made = gym.make("sdgym/SearchQA-v0", size=size)
    core = made.unwrapped
    expert = baseline = recall = 0.0
    count = core.task_count(split)
    for index in range(count):
        _, info = made.reset(options={"split": split, "task_index": index})
        supports = set(core.question.supporting_pids)
        hits = core.retriever.search(core.question.question, 3)
        recall += len(supports & {h.pid for h in hits}) / len(supports)
        for _ in range(4):
            _, reward, terminated, truncated, info = made.step(info["privileged"]["expert_action"])
            expert += reward
            if terminated or truncated:
                break
        made.reset(options={"split": split, "task_index": index})
        made.step(f"<search>{core.question.question}</search>")
        title = hits[0].title if hits else ""
        baseline += made.step(f"<answer>{title}</answer>")[1]
    made.close()
    return {"expert": expert / count, "baseline": baseline / count, "recall@3": recall / count}


def test_expert_reaches_exact_match_on_test_and_beats_the_baseline() -> None:
    scores = _expert_and_baseline("tiny")
    print("\nSearchQA tiny/test:", scores)
    assert scores["expert"] >= 0.99
    assert 0.0 <= scores["baseline"] < scores["expert"]
    assert 0.2 < scores["recall@3"] <= 1.0


@pytest.mark.slow
def test_expert_reaches_exact_match_on_small_test() -> None:
    scores = _expert_and_baseline("small")
    print("\nSearchQA small/test:", scores)
    assert scores["expert"] >= 0.99 and scores["baseline"] < 0.5


def test_bm25_index_is_cached_and_shared(tmp_path, monkeypatch) -> None:
    corpus = generated_dataset(0, "tiny").corpus
    first = BM25Retriever(corpus, index_dir=tmp_path / "index")
    monkeypatch.setattr(BM25Retriever, "_build", lambda *a: pytest.fail("index rebuilt"))
    second = BM25Retriever(corpus, index_dir=tmp_path / "index")
    query = "Republic capital"
    assert [h.pid for h in first.search(query)] == [h.pid for h in second.search(query)]
    assert shared_retriever(corpus) is shared_retriever(corpus)
    with pytest.raises(ValueError, match="unknown retrieval backend"):
        shared_retriever(corpus, "nope")


def test_envs_in_one_process_share_one_retriever() -> None:
    a = gym.make("sdgym/SearchQA-v0", size="tiny")
    b = gym.make("sdgym/SearchQA-v0", size="tiny")
    a.reset(seed=0)
    b.reset(seed=0)
    a.step("<search>x capital</search>")
    b.step("<search>x capital</search>")
    assert a.unwrapped.retriever is b.unwrapped.retriever
    a.close()
    b.close()


def test_env_runs_on_upstream_files(tmp_path) -> None:
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(
        "\n".join(
            json.dumps({"id": str(i), "contents": f'"{title}"\n{text}'})
            for i, (title, text) in enumerate(
                [("Ada Vell", "Ada Vell wrote The Lantern."), ("Xoria", "Xoria's capital is Varn."),
                 ("Varn", "Varn is a port city.")]
            )
        )
    )
    test_file = tmp_path / "test.jsonl"
    test_file.write_text(json.dumps({"question": "What is the capital of Xoria?",
                                     "golden_answers": ["Varn"], "data_source": "nq"}) + "\n")
    made = gym.make("sdgym/SearchQA-v0", corpus_file=corpus, question_files={"test": test_file})
    _, info = made.reset(options={"split": "test", "task_index": 0})
    assert info["task_type"] == "nq" and info["privileged"]["expert_plan"][0].startswith("<search>")
    observation, *_ = made.step(info["privileged"]["expert_action"])
    assert "Varn" in observation
    _, reward, terminated, *_ = made.step("<answer>Varn</answer>")
    assert reward == 1.0 and terminated
    made.close()


def test_lucene_backend_matches_bm25_when_installed() -> None:
    pytest.importorskip("pyserini")
    corpus = generated_dataset(0, "tiny").corpus
    lucene = shared_retriever(corpus, "lucene")
    bm25 = shared_retriever(corpus, "bm25")
    queries = [p.title for p in corpus.passages[:20]]
    overlap = sum(
        len({h.pid for h in lucene.search(q)} & {h.pid for h in bm25.search(q)}) for q in queries
    )
    assert overlap / (3 * len(queries)) > 0.6
