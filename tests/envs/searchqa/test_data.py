"""Search-QA data: generated world, questions, splits, scoring and upstream loaders."""

from __future__ import annotations

import json

import pytest

from sdgym.envs.searchqa.corpus import write_articles
from sdgym.envs.searchqa.dataset import generated_dataset
from sdgym.envs.searchqa.loaders import load_corpus, load_questions
from sdgym.envs.searchqa.questions import generate_questions, split_of
from sdgym.envs.searchqa.scoring import exact_match, normalize_answer, token_f1
from sdgym.envs.searchqa.world import generate_world


def test_generation_is_deterministic_and_seed_dependent() -> None:
    a = write_articles(generate_world(0, "tiny")).fingerprint()
    b = write_articles(generate_world(0, "tiny")).fingerprint()
    c = write_articles(generate_world(1, "tiny")).fingerprint()
    assert a == b != c


def test_splits_share_no_question() -> None:
    questions = generate_questions(generate_world(0, "small"))
    texts = {split: {normalize_answer(q.question) for q in qs} for split, qs in questions.items()}
    assert not texts["train"] & texts["val"]
    assert not texts["train"] & texts["test"]
    assert not texts["val"] & texts["test"]
    assert all(split_of(q.question) == split for split, qs in questions.items() for q in qs)
    total = sum(len(v) for v in texts.values())
    assert 0.05 < len(texts["test"]) / total < 0.15


def test_question_types_and_supporting_passages_state_the_answer() -> None:
    dataset = generated_dataset(0, "tiny")
    seen_types, hop_counts = set(), set()
    for question in dataset.questions["train"]:
        seen_types.add(question.qtype)
        hop_counts.add(len(question.hops))
        last = question.hops[-1]
        passage = dataset.corpus.get(last.pid)
        assert last.value in passage.text, (question.question, passage.text)
        if question.qtype != "comparison":
            assert last.value in question.answers
    assert seen_types == {"single_hop", "multi_hop", "comparison"}
    assert {1, 2, 3} <= hop_counts


def test_easy_splits_are_single_hop_subsets() -> None:
    dataset = generated_dataset(0, "tiny")
    assert dataset.questions["easy_train"]
    assert all(q.qtype == "single_hop" for q in dataset.questions["easy_train"])
    train_ids = {q.qid for q in dataset.questions["train"]}
    assert {q.qid for q in dataset.questions["easy_train"]} <= train_ids


def test_large_size_exceeds_100k_passages() -> None:
    assert len(write_articles(generate_world(0, "large"))) >= 100_000


@pytest.mark.parametrize(
    ("prediction", "gold", "em"),
    [
        ("The Republic of Xoria", ["Republic of Xoria"], 1.0),
        ("republic of xoria.", ["Republic of Xoria"], 1.0),
        ("Xoria", ["Republic of Xoria", "Xoria"], 1.0),
        ("Xoria City", ["Xoria"], 0.0),
        ("", ["Xoria"], 0.0),
    ],
)
def test_exact_match_uses_squad_normalisation(prediction, gold, em) -> None:
    assert exact_match(prediction, gold) == em


def test_token_f1_hand_computed() -> None:
    assert token_f1("new varn city", ["New Varn"]) == pytest.approx(2 * (2 / 3) * 1 / (2 / 3 + 1))
    assert token_f1("nothing", ["New Varn"]) == 0.0
    assert token_f1("New Varn", ["Varn", "New Varn"]) == 1.0


def test_upstream_loaders_read_search_r1_files(tmp_path) -> None:
    questions = tmp_path / "test.jsonl"
    questions.write_text(
        json.dumps({"question": "who wrote the lantern", "golden_answers": ["Ada Vell"],
                    "data_source": "nq"}) + "\n\n"
        + json.dumps({"id": "x2", "question": "capital of Xoria?", "golden_answers": "Varn",
                      "data_source": "hotpotqa"}) + "\n"
    )
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(
        json.dumps({"id": "0", "contents": '"The Lantern"\nThe Lantern is a novel by Ada Vell.'})
        + "\n" + json.dumps({"id": "1", "contents": '"Xoria"\nXoria is a country. Capital: Varn.'})
        + "\n"
    )
    loaded = load_questions(questions)
    assert [q.question for q in loaded] == ["who wrote the lantern?", "capital of Xoria?"]
    assert loaded[1].answers == ["Varn"] and loaded[1].qid == "x2" and loaded[0].qtype == "nq"
    passages = load_corpus(corpus)
    assert passages.get("1").title == "Xoria" and passages.get("0").text.startswith("The Lantern")
    json_list = tmp_path / "questions.json"
    json_list.write_text(json.dumps([{"question": "q?", "golden_answers": ["a"]}]))
    assert load_questions(json_list)[0].answers == ["a"]


def test_loaders_reject_malformed_files_clearly(tmp_path) -> None:
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"question": "ok?", "golden_answers": ["a"]}\n{not json\n')
    with pytest.raises(ValueError, match="broken.jsonl:2"):
        load_questions(broken)
    missing = tmp_path / "missing.jsonl"
    missing.write_text('{"question": "no answers?"}\n')
    with pytest.raises(ValueError, match="golden_answers"):
        load_questions(missing)
