"""Questions over a generated world: single-hop, multi-hop (2-3 hops) and comparison.

Every question carries its gold answers (with aliases), the hop chain that leads to the answer,
the ids of the passages that state each hop, and an expert search query per supporting passage.
Splits are assigned by a hash of the normalised question text, so no question text is shared
between train, val and test.
"""

from __future__ import annotations

import random
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from sdgym.envs.searchqa.scoring import normalize_answer
from sdgym.envs.searchqa.world import Entity, World

SPLIT_BUCKETS: tuple[tuple[str, int], ...] = (("test", 10), ("val", 10), ("train", 80))
"""Share (percent) of question texts in each split."""


@dataclass(frozen=True)
class Hop:
    """One reasoning step: ``subject --relation--> value``, stated in passage ``pid``."""

    subject: str
    relation: str
    value: str
    pid: str
    query: str


@dataclass
class Question:
    """A question with everything the privileged channel needs."""

    qid: str
    question: str
    answers: list[str]
    qtype: str
    hops: list[Hop] = field(default_factory=list)
    data_source: str = "sdgym-encyclopedia"

    @property
    def supporting_pids(self) -> list[str]:
        """Passage ids that together state the answer, in hop order (deduplicated)."""
        return list(dict.fromkeys(hop.pid for hop in self.hops))


def split_of(question_text: str) -> str:
    """Split of a question, from a hash of its normalised text."""
    bucket = zlib.crc32(normalize_answer(question_text).encode()) % 100
    for split, share in SPLIT_BUCKETS:
        if bucket < share:
            return split
        bucket -= share
    raise AssertionError("split shares must sum to 100")


def _answers(entity: Entity) -> list[str]:
    return [entity.name, *entity.aliases]


class _Builder:
    """Question templates over one world."""

    def __init__(self, world: World) -> None:
        self.world = world

    def get(self, entity_id: object) -> Entity:
        return self.world.entities[str(entity_id)]

    def hop(self, subject: Entity, relation: str, value: str, part: int = 0) -> Hop:
        keyword = {
            "born in": "born",
            "birth year": "born",
            "located in": "city country",
            "capital": "capital",
            "founded by": "founded by",
            "founded in": "founded",
            "created by": "by",
            "population": "population",
        }[relation]
        return Hop(subject.name, relation, value, f"{subject.entity_id}#{part}",
                   f"{subject.name} {keyword}")

    # -- chains of hops starting from an entity ----------------------------------------
    def birthplace(self, person: Entity) -> tuple[Entity, list[Hop]]:
        city = self.get(person.facts["birthplace"])
        return city, [self.hop(person, "born in", city.name)]

    def country_of(self, city: Entity) -> tuple[Entity, list[Hop]]:
        country = self.get(city.facts["country"])
        return country, [self.hop(city, "located in", country.name)]

    def maker(self, thing: Entity) -> tuple[Entity, list[Hop]]:
        relation, key = ("founded by", "founder") if thing.kind == "org" else ("created by", "creator")
        person = self.get(thing.facts[key])
        return person, [self.hop(thing, relation, person.name)]

    # -- templates ---------------------------------------------------------------------
    def single_hop(self, entity: Entity) -> Iterator[Question]:
        if entity.kind == "person":
            city, hops = self.birthplace(entity)
            yield self.make(f"In which city was {entity.name} born?", _answers(city), hops, "single_hop")
        elif entity.kind in ("org", "work"):
            person, hops = self.maker(entity)
            verb = "founded" if entity.kind == "org" else "created"
            the = "the " if entity.kind == "org" else ""
            yield self.make(f"Who {verb} {the}{entity.name}?", _answers(person), hops, "single_hop")
            if entity.kind == "org":
                year = str(entity.facts["founded"])
                hops = [self.hop(entity, "founded in", year)]
                yield self.make(f"In what year was the {entity.name} founded?", [year], hops,
                                "single_hop")
        elif entity.kind == "country":
            capital = self.get(entity.facts["capital"])
            hops = [self.hop(entity, "capital", capital.name)]
            yield self.make(f"What is the capital of the {entity.name}?", _answers(capital), hops,
                            "single_hop")

    def multi_hop(self, entity: Entity) -> Iterator[Question]:
        if entity.kind == "person":
            city, first = self.birthplace(entity)
            country, second = self.country_of(city)
            yield self.make(f"In which country was {entity.name} born?", _answers(country),
                            first + second, "multi_hop")
        elif entity.kind in ("org", "work"):
            person, first = self.maker(entity)
            role = "founder of the" if entity.kind == "org" else "creator of"
            city, second = self.birthplace(person)
            yield self.make(f"In which city was the {role} {entity.name} born?", _answers(city),
                            first + second, "multi_hop")
            country, third = self.country_of(city)
            yield self.make(f"In which country was the {role} {entity.name} born?",
                            _answers(country), first + second + third, "multi_hop")
            if entity.kind == "work":
                year = str(person.facts["born"])
                hops = first + [self.hop(person, "birth year", year)]
                yield self.make(f"In what year was the creator of {entity.name} born?", [year],
                                hops, "multi_hop")
        elif entity.kind == "city":
            country, first = self.country_of(entity)
            capital = self.get(country.facts["capital"])
            if capital is not entity:
                second = [self.hop(country, "capital", capital.name)]
                yield self.make(
                    f"What is the capital of the country in which {entity.name} is located?",
                    _answers(capital), first + second, "multi_hop")

    def comparison(self, a: Entity, b: Entity) -> Iterator[Question]:
        if a.kind != b.kind or a is b:
            return
        if a.kind == "person" and a.facts["born"] != b.facts["born"]:
            first = a if int(a.facts["born"]) < int(b.facts["born"]) else b
            hops = [self.hop(e, "birth year", str(e.facts["born"])) for e in (a, b)]
            yield self.make(f"Who was born first, {a.name} or {b.name}?", _answers(first), hops,
                            "comparison")
        elif a.kind == "org" and a.facts["founded"] != b.facts["founded"]:
            first = a if int(a.facts["founded"]) < int(b.facts["founded"]) else b
            hops = [self.hop(e, "founded in", str(e.facts["founded"])) for e in (a, b)]
            yield self.make(f"Which was founded earlier, the {a.name} or the {b.name}?",
                            _answers(first), hops, "comparison")
        elif a.kind == "city" and a.facts["population"] != b.facts["population"]:
            larger = a if int(a.facts["population"]) > int(b.facts["population"]) else b
            hops = [self.hop(e, "population", f"{e.facts['population']:,}", part=1) for e in (a, b)]
            yield self.make(f"Which city has more inhabitants, {a.name} or {b.name}?",
                            _answers(larger), hops, "comparison")

    def make(self, text: str, answers: list[str], hops: list[Hop], qtype: str) -> Question:
        qid = f"q{zlib.crc32(text.encode()):08x}"
        return Question(qid, text, list(dict.fromkeys(answers)), qtype, hops)


def generate_questions(world: World, seed: int = 0) -> dict[str, list[Question]]:
    """All questions of ``world`` grouped by split (order: generation order, deterministic)."""
    builder = _Builder(world)
    rng = random.Random(f"sdgym-searchqa-questions-{seed}-{world.size}")
    entities = list(world.entities.values())
    templates: list[Callable[[Entity], Iterator[Question]]] = [builder.single_hop, builder.multi_hop]
    generated: list[Question] = []
    for entity in entities:
        for template in templates:
            generated.extend(template(entity))
    by_kind: dict[str, list[Entity]] = {}
    for entity in entities:
        by_kind.setdefault(entity.kind, []).append(entity)
    for kind in ("person", "org", "city"):
        pool = by_kind.get(kind, [])
        for _ in range(len(pool) // 2):
            generated.extend(builder.comparison(rng.choice(pool), rng.choice(pool)))
    splits: dict[str, list[Question]] = {name: [] for name, _ in SPLIT_BUCKETS}
    seen: set[str] = set()
    for question in generated:
        key = normalize_answer(question.question)
        if key in seen:
            continue
        seen.add(key)
        splits[split_of(question.question)].append(question)
    return splits
