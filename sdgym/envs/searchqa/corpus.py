"""Passages: the encyclopedia articles written from a :class:`~.world.World`, and the corpus type.

Each entity gets an article of one or two passages whose title is the entity's name. Articles
mention other entities (colleagues, natives of a city, works), so many passages share names and
a query must be specific to find the right one. :func:`write_articles` also records which passage
states which fact, so questions can cite their supporting passages.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from sdgym.envs.searchqa.world import Entity, World


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


def _name(world: World, entity_id: object) -> str:
    return world.entities[str(entity_id)].name


def _indefinite(noun: str) -> str:
    return f"{'an' if noun[0] in 'aeiou' else 'a'} {noun}"


def _article(world: World, entity: Entity, natives: list[str], works: list[str]) -> list[str]:
    f = entity.facts
    if entity.kind == "country":
        return [
            f"{entity.name}, also called {entity.aliases[0]}, is a country in {f['region']}. "
            f"Its capital is {_name(world, f['capital'])}. The official language is "
            f"{f['language']}.",
            f"{entity.aliases[0]} was founded as a state in {f['founded']}. It has a population "
            f"of about {f['population']:,}.",
        ]
    if entity.kind == "city":
        born_here = ", ".join(natives[:3]) if natives else "no famous people"
        return [
            f"{entity.name} is a city in the {_name(world, f['country'])}. It was founded in "
            f"{f['founded']}.",
            f"{entity.name} has a population of {f['population']:,}. People born in "
            f"{entity.name} include {born_here}.",
        ]
    if entity.kind == "person":
        surname = entity.name.split()[-1]
        career = f"{entity.name} worked alone"
        if "colleague" in f:
            career = f"{entity.name} worked alongside {_name(world, f['colleague'])}"
        if "founded_org" in f:
            career += f" and founded the {_name(world, f['founded_org'])}"
        best = f" {surname} is best known for {works[0]}." if works else ""
        return [
            f"{entity.name} ({f['born']}–{f['died']}), also known as {entity.aliases[0]}, was "
            f"{_indefinite(str(f['occupation']))}. {surname} was born in {f['born']} in "
            f"{_name(world, f['birthplace'])}.",
            f"{career}.{best}",
        ]
    if entity.kind == "org":
        return [
            f"The {entity.name} is {_indefinite(str(f['kind']))} headquartered in "
            f"{_name(world, f['headquarters'])}. It was founded in {f['founded']} by "
            f"{_name(world, f['founder'])}.",
        ]
    return [
        f"{entity.name} is {_indefinite(str(f['kind']))} by {_name(world, f['creator'])}, completed in "
        f"{f['year']}.",
    ]


def write_articles(world: World) -> Corpus:
    """The encyclopedia of ``world``: passage ``<entity_id>#<k>`` is part ``k`` of its article."""
    natives: dict[str, list[str]] = {}
    works: dict[str, list[str]] = {}
    for entity in world.entities.values():
        if entity.kind == "person":
            natives.setdefault(str(entity.facts["birthplace"]), []).append(entity.name)
        elif entity.kind == "work":
            works.setdefault(str(entity.facts["creator"]), []).append(entity.name)
    passages = []
    for entity in world.entities.values():
        texts = _article(
            world, entity, natives.get(entity.entity_id, []), works.get(entity.entity_id, [])
        )
        for k, text in enumerate(texts):
            passages.append(Passage(f"{entity.entity_id}#{k}", entity.name, text))
    return Corpus(passages)
