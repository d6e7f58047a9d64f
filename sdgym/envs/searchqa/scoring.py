"""Answer scoring as in SQuAD and Search-R1: normalised exact match and token F1."""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Sequence

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = set(string.punctuation)


def normalize_answer(text: str) -> str:
    """Lower-case, drop punctuation and the articles a/an/the, collapse whitespace (SQuAD)."""
    text = "".join(char for char in text.lower() if char not in _PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


def exact_match(prediction: str, gold_answers: Sequence[str]) -> float:
    """1.0 when the normalised prediction equals any normalised gold answer, else 0.0."""
    predicted = normalize_answer(prediction)
    return float(any(predicted == normalize_answer(gold) for gold in gold_answers))


def token_f1(prediction: str, gold_answers: Sequence[str]) -> float:
    """Best token-level F1 of the normalised prediction against any gold answer."""
    predicted = normalize_answer(prediction).split()
    best = 0.0
    for gold in gold_answers:
        reference = normalize_answer(gold).split()
        common = sum((Counter(predicted) & Counter(reference)).values())
        if common == 0:
            continue
        precision, recall = common / len(predicted), common / len(reference)
        best = max(best, 2 * precision * recall / (precision + recall))
    return best
