"""Search-QA's retrieval backends: the shared ones of :mod:`sdgym.retrieval`, re-exported."""

from sdgym.retrieval import (
    BACKENDS,
    BM25Retriever,
    Hit,
    LuceneRetriever,
    Retriever,
    shared_retriever,
)

__all__ = ["BACKENDS", "BM25Retriever", "Hit", "LuceneRetriever", "Retriever", "shared_retriever"]
