"""Product search: the project's retriever (:mod:`sdgym.retrieval`) over upstream's product
documents, top 50 hits.

Upstream indexes, per product, ``Title + Description + first bullet point + option text``
(``"size: s, m, and color: red, blue"``) with pyserini/Lucene BM25 (``k1=0.9``, ``b=0.4``) and
returns the top ``SEARCH_RETURN_N = 50`` hits. Here each product is one
:class:`~sdgym.retrieval.Passage` (id = asin, title = the product title, text = the rest of that
document) and the search runs through :func:`~sdgym.retrieval.shared_retriever`: bm25s (the same
BM25 variant and parameters, index cached on disk per catalogue fingerprint) by default, or
Lucene itself with ``backend="lucene"`` (the ``pyserini`` extra).

Pages re-read the last search's hits on every step, so :class:`ProductSearch` keeps an LRU cache
of query -> hits per process; a step on a results page then costs a dict lookup.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Any

from sdgym.retrieval import Corpus, Passage, Retriever, shared_retriever

SEARCH_RETURN_N = 50
DEFAULT_BACKEND = "bm25"


def document_body(product: Mapping[str, Any]) -> str:
    """Upstream's indexed text of a product after its title: description, first bullet point
    and option text (``"size: s, m, and color: red"``)."""
    option_text = ", and ".join(
        f"{name}: {', '.join(values)}" for name, values in product["options"].items()
    )
    bullets = product["BulletPoints"]
    first_bullet = bullets[0] if bullets else ""
    return " ".join([product["Description"], first_bullet, option_text])


def product_corpus(products: Sequence[Mapping[str, Any]]) -> Corpus:
    """The products as a retrieval corpus, one passage per product, in catalogue order."""
    return Corpus(
        Passage(str(product["asin"]), str(product["Title"]), document_body(product))
        for product in products
    )


class ProductSearch:
    """Search over a product list; :meth:`search` returns the asins of the top hits.

    Args:
        products: the catalogue's products (normalised dicts with ``asin``, ``Title``, ...).
        backend: a :data:`sdgym.retrieval.BACKENDS` name (``"bm25"`` default, or ``"lucene"``).
        cache_size: how many distinct queries the LRU cache keeps.

    Example:
        >>> search = ProductSearch([{"asin": "B1", "Title": "Red Shoe", "Description": "",
        ...                          "BulletPoints": [], "options": {}}])
        >>> search.search("red shoes")
        ('B1',)
    """

    def __init__(
        self,
        products: Sequence[Mapping[str, Any]],
        backend: str = DEFAULT_BACKEND,
        cache_size: int = 4096,
    ) -> None:
        self.corpus = product_corpus(products)
        self.backend = backend
        self.retriever: Retriever = shared_retriever(self.corpus, backend)
        self._cache: OrderedDict[tuple[str, int], tuple[str, ...]] = OrderedDict()
        self._cache_size = int(cache_size)

    def search(self, query: str, k: int = SEARCH_RETURN_N) -> tuple[str, ...]:
        """Asins of the (at most ``k``) best-scoring products with a positive score."""
        key = (query, int(k))
        hits = self._cache.get(key)
        if hits is not None:
            self._cache.move_to_end(key)
            return hits
        hits = tuple(hit.pid for hit in self.retriever.search(query, int(k)))
        self._cache[key] = hits
        if len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)
        return hits

    def batch_search(
        self, queries: Sequence[str], k: int = SEARCH_RETURN_N
    ) -> list[tuple[str, ...]]:
        """:meth:`search` for many queries in one retriever call (cache bypassed)."""
        return [tuple(h.pid for h in hits) for hits in self.retriever.batch_search(queries, int(k))]
