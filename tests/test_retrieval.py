"""The shared retrieval module: bm25s tokenisation parity, top-k order, single vs batch search."""

from __future__ import annotations

import numpy as np
import pytest

from sdgym.retrieval import BM25Retriever, Corpus, Passage, top_k_positions

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
