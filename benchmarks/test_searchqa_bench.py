"""Search-QA throughput: retrieval queries/s and index build on 100k+ passages, env steps/s.

Ratios are taken against baselines measured in the same run: batched vs one-by-one retrieval,
an env search step vs a bare retriever call (the env's overhead), and bm25s vs warm Lucene
(A/B alternating in one process, :mod:`ab_timing`; needs the ``pyserini`` extra).
Run: ``python -m pytest benchmarks/test_searchqa_bench.py --benchmark-only``.
"""

from __future__ import annotations

import itertools
import shutil
import statistics
import tempfile
import time

import pytest

from benchmarks.ab_timing import alternate
from sdgym.envs.searchqa.dataset import generated_dataset
from sdgym.envs.searchqa.env import SearchQAEnv
from sdgym.envs.searchqa.retrieval import BM25Retriever

pytest.importorskip("pytest_benchmark")


@pytest.fixture(scope="module")
def large():
    dataset = generated_dataset(0, "large")
    assert len(dataset.corpus) >= 100_000
    return dataset


@pytest.fixture(scope="module")
def retriever(large):
    return BM25Retriever(large.corpus)


@pytest.fixture(scope="module")
def queries(large):
    return [q.question for q in large.questions["test"][:256]]


def test_bm25_index_build_100k(benchmark, large) -> None:
    def build() -> None:
        folder = tempfile.mkdtemp()
        try:
            BM25Retriever(large.corpus, index_dir=f"{folder}/index")
        finally:
            shutil.rmtree(folder)

    benchmark.pedantic(build, rounds=1, iterations=1)


def test_bm25_single_queries(benchmark, retriever, queries) -> None:
    stream = itertools.cycle(queries)
    benchmark(lambda: retriever.search(next(stream), 3))


def test_bm25_batched_256_queries(benchmark, retriever, queries) -> None:
    results = benchmark(retriever.batch_search, queries, 3)
    assert len(results) == len(queries)


def test_env_search_step(benchmark, large) -> None:
    env = SearchQAEnv(size="large", privileged=False)
    env.reset(seed=0, options={"split": "test"})
    stream = itertools.cycle([f"<search>{q.question}</search>" for q in large.questions["test"][:64]])

    def step() -> None:
        env.reset(options={"split": "test", "task_index": 0})
        env.step(next(stream))

    benchmark(step)
    env.close()


LUCENE_WARMUP_QUERIES = 2000
"""Lucene's JIT needs ~1,500 queries to reach its speed (measured); warm-up queries come from
the train split, the timed ones from the test split."""


def test_bm25_vs_warm_lucene_single_query(benchmark, large, retriever, queries) -> None:
    """Single-query latency, bm25s (sparse scoring, ties by passage id) vs warm Lucene, A/B
    alternating: each round runs the same 256 real test questions one at a time on each side.
    Also the top-10 overlap (both break ties by passage id) and exact top-10 agreement."""
    pytest.importorskip("pyserini")
    from sdgym.envs.searchqa.retrieval import shared_retriever

    lucene = shared_retriever(large.corpus, "lucene")
    warmup = [q.question for q in large.questions["train"]]
    for query in itertools.islice(itertools.cycle(warmup), LUCENE_WARMUP_QUERIES):
        lucene.search(query, 3)
        retriever.search(query, 3)

    def per_query(backend) -> float:
        started = time.perf_counter()
        for query in queries:
            backend.search(query, 3)
        return (time.perf_counter() - started) / len(queries)

    result = alternate(lambda: per_query(retriever), lambda: per_query(lucene), rounds=7)
    overlaps, identical = [], 0
    for query in queries:
        ours = [hit.pid for hit in retriever.search(query, 10)]
        theirs = [hit.pid for hit in lucene.search(query, 10)]
        overlaps.append(len(set(ours) & set(theirs)) / max(1, len(theirs)))
        identical += ours == theirs
    benchmark.pedantic(per_query, args=(retriever,), rounds=1, iterations=1)
    benchmark.extra_info.update(**result.summary("speedup"), queries_per_round=len(queries),
                                lucene_warmup_queries=LUCENE_WARMUP_QUERIES,
                                top10_overlap=round(statistics.mean(overlaps), 4),
                                top10_identical=round(identical / len(queries), 4))
    assert result.median >= 1.0, result.ratios
    assert statistics.mean(overlaps) >= 0.9, statistics.mean(overlaps)
