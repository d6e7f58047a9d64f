"""The shared retrieval module: bm25s tokenisation parity, scores equal to bm25s's, top-k order
with ties broken by passage id (as Lucene), single vs batch search."""

from __future__ import annotations

import numpy as np
import pytest

from sdgym.retrieval import BM25Retriever, Corpus, Passage, pid_ranks, top_k_positions

TEXTS = [
    "Red running shoes for women, lightweight and breathable",
    "The Running Man: a 1987 film; runners ran through the city",
    "Blue shoe rack with 3 shelves (bamboo) — été 2024 édition",
    "Shampoo and conditioner set, sulfate free, for curly hair",
    "Men's leather boots, waterproof, size 10, brown",
    "Running shoes",
]


@pytest.fixture(scope="module")
def retriever(tmp_path_factory: pytest.TempPathFactory) -> BM25Retriever:
    corpus = Corpus(Passage(f"d{i}", text.split(",")[0], text) for i, text in enumerate(TEXTS))
    return BM25Retriever(corpus, index_dir=tmp_path_factory.mktemp("bm25") / "index")


@pytest.mark.parametrize(
    "query",
    ["RUNNING shoes!!", "the of and", "Été édition 2024", "men's boots", "a", "", "shoes shoes"],
)
def test_query_tokens_match_bm25s_tokenize(retriever: BM25Retriever, query: str) -> None:
    vocabulary = retriever._model.vocab_dict
    expected = [t for t in retriever._tokenize([query])[0] if t in vocabulary]
    assert retriever.query_tokens(query) == expected


def test_search_ranks_and_batches_consistently(retriever: BM25Retriever) -> None:
    hits = retriever.search("running shoes", k=3)
    assert [h.pid for h in hits][:1] == ["d5"] and {"d0", "d5"} <= {h.pid for h in hits}
    assert all(a.score >= b.score > 0 for a, b in zip(hits, hits[1:]))
    queries = ["running shoes", "shampoo", "nothingknown", "boots waterproof"]
    assert retriever.batch_search(queries, 2) == [retriever.search(q, 2) for q in queries]
    assert retriever.search("nothingknown") == [] and retriever.search("x", k=0) == []
    assert len(retriever.search("shoes", k=100)) <= len(TEXTS)


def test_top_k_positions_breaks_ties_by_position() -> None:
    scores = np.array([0.5, 2.0, 2.0, 0.0, 2.0, 1.0], dtype=np.float32)
    assert top_k_positions(scores, 2).tolist() == [1, 2]
    assert top_k_positions(scores, 4).tolist() == [1, 2, 4, 5]
    assert top_k_positions(scores, 99).tolist() == [1, 2, 4, 5, 0, 3]
    assert top_k_positions(scores, 0).tolist() == []
    rng = np.random.default_rng(0)
    for _ in range(50):
        values = rng.integers(0, 4, size=40).astype(np.float32)
        expected = sorted(range(40), key=lambda i: (-values[i], i))[:7]
        assert top_k_positions(values, 7).tolist() == expected


def test_top_k_positions_breaks_ties_by_rank() -> None:
    rng = np.random.default_rng(1)
    for _ in range(50):
        values = rng.integers(0, 4, size=40).astype(np.float32)
        rank = rng.permutation(40)
        expected = sorted(range(40), key=lambda i: (-values[i], rank[i]))[:7]
        assert top_k_positions(values, 7, rank).tolist() == expected


def test_pid_ranks_follow_code_point_order() -> None:
    corpus = Corpus(Passage(pid, "t", "x") for pid in ["d2", "d10", "D9", "d1", "é", "e"])
    ranks = pid_ranks(corpus)
    order = sorted(range(6), key=lambda i: ranks[i])
    assert [corpus[i].pid for i in order] == ["D9", "d1", "d10", "d2", "e", "é"]


@pytest.mark.parametrize("query", ["running shoes", "shoes shoes", "shampoo boots", "2024"])
def test_scores_equal_bm25s_get_scores(retriever: BM25Retriever, query: str) -> None:
    tokens = retriever.query_tokens(query)
    dense = retriever._model.get_scores(tokens)
    positions, scores = retriever.scores(tokens)
    assert positions.tolist() == np.flatnonzero(dense).tolist()
    assert np.array_equal(scores, dense[positions])  # bit-equal float32 sums


TIED = ["apple pie recipe", "apple pie recipe", "apple pie recipe", "apple tart", "pear pie",
        "apple pie recipe", "banana bread"]
PIDS = ["p3", "p10", "p1", "p7", "p0", "p2", "p5"]


def _tied_corpus(order: list[int]) -> Corpus:
    return Corpus(Passage(PIDS[i], "doc", TIED[i]) for i in order)


def test_ties_are_broken_by_passage_id_whatever_the_corpus_order(tmp_path) -> None:
    results = []
    for n, order in enumerate([list(range(7)), [6, 5, 4, 3, 2, 1, 0], [3, 0, 6, 2, 5, 1, 4]]):
        retriever = BM25Retriever(_tied_corpus(order), index_dir=tmp_path / f"index{n}")
        results.append([(h.pid, h.score) for h in retriever.search("apple pie recipe", k=5)])
    assert results[0] == results[1] == results[2]
    # the four identical passages tie; "p1" < "p10" < "p2" < "p3" in code point order
    assert [pid for pid, _ in results[0][:4]] == ["p1", "p10", "p2", "p3"]
    assert results[0][0][1] == results[0][3][1] > results[0][4][1]


def test_tie_order_matches_lucene_when_installed(tmp_path) -> None:
    pytest.importorskip("pyserini")
    from sdgym.retrieval import LuceneRetriever

    corpus = _tied_corpus(list(range(7)))
    lucene = LuceneRetriever(corpus, index_dir=tmp_path / "lucene")
    bm25 = BM25Retriever(corpus, index_dir=tmp_path / "bm25")
    for query in ["apple pie recipe", "pie", "apple", "recipe banana"]:
        assert [h.pid for h in lucene.search(query, 6)] == [h.pid for h in bm25.search(query, 6)]
