"""A Search-QA dataset: a corpus plus questions per split, generated or loaded from files."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from sdgym.envs.searchqa.corpus import Corpus, write_articles
from sdgym.envs.searchqa.loaders import load_corpus, load_questions
from sdgym.envs.searchqa.questions import Question, generate_questions
from sdgym.envs.searchqa.world import generate_world

SPLITS: tuple[str, ...] = ("train", "val", "test", "easy_train", "easy_val")
"""Splits: the three standard ones plus an easy curriculum (single-hop questions only)."""


@dataclass
class SearchQADataset:
    """Corpus, questions per split, and a name that identifies the data in task ids."""

    name: str
    corpus: Corpus
    questions: dict[str, list[Question]]


@lru_cache(maxsize=8)
def generated_dataset(seed: int = 0, size: str = "small") -> SearchQADataset:
    """The generated encyclopedia and its questions (cached per process)."""
    world = generate_world(seed, size)
    questions = generate_questions(world, seed)
    questions["easy_train"] = [q for q in questions["train"] if q.qtype == "single_hop"]
    questions["easy_val"] = [q for q in questions["val"] if q.qtype == "single_hop"]
    return SearchQADataset(f"gen{seed}-{size}", write_articles(world), questions)


def file_dataset(corpus_file: str | Path, question_files: Mapping[str, str | Path]) -> SearchQADataset:
    """A dataset from upstream files: a JSONL corpus and one question file per split."""
    unknown = set(question_files) - set(SPLITS)
    if unknown:
        raise ValueError(f"unknown splits {sorted(unknown)}; use {list(SPLITS)}")
    corpus = load_corpus(corpus_file)
    questions = {split: load_questions(path) for split, path in question_files.items()}
    for split in SPLITS:
        questions.setdefault(split, [])
    return SearchQADataset(f"files-{corpus.fingerprint()[:8]}", corpus, questions)
