"""Product search: Lucene-style BM25 over upstream's search documents, top 50 hits.

Upstream indexes, per product, ``Title + Description + first bullet point + option text``
(``"size: s, m, and color: red, blue"``), lower-cased, with pyserini/Lucene BM25 (``k1=0.9``,
``b=0.4``, English stop words, Porter stemming) and returns the top ``SEARCH_RETURN_N = 50``
hits. This module keeps the documents, the parameters and Lucene's BM25 formula
(``idf = ln(1 + (N - df + 0.5) / (df + 0.5))``, ``tf / (tf + k1 (1 - b + b dl / avgdl))``) in a
small numpy inverted index, so it needs no JVM and no extra package. Stemming is reduced to
folding plural ``-s``. Ties keep catalogue order, so rankings are deterministic.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

SEARCH_RETURN_N = 50
K1 = 0.9
B = 0.4
_TOKEN = re.compile(r"[a-z0-9]+")
_STOP_WORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "but",
        "by",
        "for",
        "if",
        "in",
        "into",
        "is",
        "it",
        "no",
        "not",
        "of",
        "on",
        "or",
        "such",
        "that",
        "the",
        "their",
        "then",
        "there",
        "these",
        "they",
        "this",
        "to",
        "was",
        "will",
        "with",
    ]
)  # Lucene's English stop set


def tokenize(text: str) -> list[str]:
    """Lower-cased alphanumeric tokens without stop words, plural ``-s`` folded."""
    tokens = []
    for token in _TOKEN.findall(text.lower()):
        if token in _STOP_WORDS:
            continue
        if len(token) > 3 and token.endswith("s") and not token.endswith("ss"):
            token = token[:-1]
        tokens.append(token)
    return tokens


def search_document(product: Mapping[str, Any]) -> str:
    """Upstream's indexed text of a product."""
    option_text = ", and ".join(
        f"{name}: {', '.join(values)}" for name, values in product["options"].items()
    )
    bullets = product["BulletPoints"]
    first_bullet = bullets[0] if bullets else ""
    return " ".join([product["Title"], product["Description"], first_bullet, option_text]).lower()


class SearchIndex:
    """BM25 over a product list; :meth:`search` returns the asins of the top hits.

    Example:
        >>> index = SearchIndex([{"asin": "B1", "Title": "Red Shoe", "Description": "",
        ...                       "BulletPoints": [], "options": {}}])
        >>> index.search("red shoes")
        ('B1',)
    """

    def __init__(self, products: Sequence[Mapping[str, Any]], cache_size: int = 4096) -> None:
        self.asins = [product["asin"] for product in products]
        postings: dict[str, dict[int, int]] = {}
        lengths = np.zeros(len(products), dtype=np.float64)
        for doc, product in enumerate(products):
            tokens = tokenize(search_document(product))
            lengths[doc] = len(tokens)
            for token in tokens:
                counts = postings.setdefault(token, {})
                counts[doc] = counts.get(doc, 0) + 1
        n = max(len(products), 1)
        norm = K1 * (1 - B + B * lengths / max(float(lengths.mean()) if len(lengths) else 1.0, 1.0))
        self._terms: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        for token, counts in postings.items():
            docs = np.fromiter(counts.keys(), dtype=np.int64, count=len(counts))
            tf = np.fromiter(counts.values(), dtype=np.float64, count=len(counts))
            idf = np.log(1 + (n - len(docs) + 0.5) / (len(docs) + 0.5))
            self._terms[token] = (docs, idf * tf / (tf + norm[docs]))
        self._cache: OrderedDict[str, tuple[str, ...]] = OrderedDict()
        self._cache_size = cache_size

    def scores(self, query: str) -> np.ndarray:
        """BM25 score of every product for ``query`` (each query token counted once per use)."""
        total = np.zeros(len(self.asins), dtype=np.float64)
        for token in tokenize(query):
            if token in self._terms:
                docs, weights = self._terms[token]
                total[docs] += weights
        return total

    def search(self, query: str, k: int = SEARCH_RETURN_N) -> tuple[str, ...]:
        """Asins of the (at most ``k``) best-scoring products with a positive score."""
        key = f"{k}\x00{query}"
        if key in self._cache:
            self._cache.move_to_end(key)
            return self._cache[key]
        scores = self.scores(query)
        order = np.argsort(-scores, kind="stable")[:k]
        hits = tuple(self.asins[i] for i in order if scores[i] > 0)
        self._cache[key] = hits
        if len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)
        return hits
