"""Search-QA throughput: retrieval queries/s and index build on 100k+ passages, env steps/s.

Ratios are taken against baselines measured in the same run: batched vs one-by-one retrieval,
and an env search step vs a bare retriever call (the env's overhead).
Run: ``python -m pytest benchmarks/test_searchqa_bench.py --benchmark-only``.
"""

from __future__ import annotations

import itertools
import shutil
import tempfile

import pytest

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


@pytest.mark.parametrize("backend", ["lucene"])
def test_other_backends_single_queries(benchmark, large, queries, backend) -> None:
    pytest.importorskip("pyserini")
    from sdgym.envs.searchqa.retrieval import shared_retriever

    other = shared_retriever(large.corpus, backend)
    stream = itertools.cycle(queries)
    benchmark(lambda: other.search(next(stream), 3))
