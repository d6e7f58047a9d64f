"""Loaders for upstream Search-R1 data: question files and a JSONL passage corpus.

* Questions: JSON Lines (or a JSON list, or Parquet when pandas is installed) with Search-R1's
  fields ``question``, ``golden_answers`` (list or string) and ``data_source``; an ``id`` field is
  used when present.
* Corpus: JSON Lines with ``id`` and ``contents`` (``"Title"\\ntext``, the FlashRAG / Search-R1
  wiki format); a separate ``title`` field is honoured when present.

Upstream questions have no supporting-passage annotation, so their hop chain is empty and the
expert plan is "search the question, then answer".
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from sdgym.envs.searchqa.corpus import Corpus, Passage
from sdgym.envs.searchqa.questions import Question


def _records(path: Path) -> Iterator[dict[str, Any]]:
    if path.suffix == ".parquet":
        try:
            import pandas as pd
        except ImportError as error:
            raise ImportError("reading Parquet question files needs pandas and pyarrow") from error
        yield from pd.read_parquet(path).to_dict(orient="records")
        return
    text = path.read_text(encoding="utf-8")
    if text.lstrip().startswith("["):
        yield from json.loads(text)
        return
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            try:
                yield json.loads(line)
            except json.JSONDecodeError as error:
                raise ValueError(f"{path}:{number}: not a JSON object: {error.msg}") from error


def load_questions(path: str | Path) -> list[Question]:
    """Questions from a Search-R1-format file (see the module docstring)."""
    path = Path(path)
    questions = []
    for number, record in enumerate(_records(path), start=1):
        if "question" not in record or "golden_answers" not in record:
            raise ValueError(f"{path}: record {number} lacks 'question' or 'golden_answers'")
        answers = record["golden_answers"]
        answers = [answers] if isinstance(answers, str) else [str(a) for a in answers]
        text = str(record["question"]).strip()
        if text and not text.endswith("?"):
            text += "?"
        qid = str(record.get("id") or f"q{zlib.crc32(text.encode()):08x}")
        source = str(record.get("data_source") or "upstream")
        questions.append(Question(qid, text, answers, source, [], source))
    return questions


def load_corpus(path: str | Path) -> Corpus:
    """A :class:`Corpus` from a JSONL passage file with ``id`` and ``contents`` fields."""
    path = Path(path)
    passages = []
    for number, record in enumerate(_records(path), start=1):
        if "contents" not in record and "text" not in record:
            raise ValueError(f"{path}: record {number} lacks 'contents'")
        contents = str(record.get("contents", record.get("text", "")))
        title = record.get("title")
        if title is None:
            first, _, rest = contents.partition("\n")
            title, body = first.strip().strip('"'), rest.strip()
        else:
            body = contents
        passages.append(Passage(str(record.get("id", number - 1)), str(title), body))
    return Corpus(passages)
