"""A generated world of fictional entities (countries, cities, people, organisations, works).

Everything is a pure function of ``(seed, size)``: names are built from syllables with a seeded
:class:`random.Random`, so the same world appears on every machine. Surnames are drawn from a
small pool and city names reuse stems ("Varn", "New Varn", "Varn Falls"), so retrieval meets
realistic near-duplicates and ambiguity.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field

SIZES: dict[str, dict[str, int]] = {
    "tiny": {"countries": 6, "cities": 30, "people": 120, "orgs": 50, "works": 80},
    "small": {"countries": 20, "cities": 200, "people": 1_200, "orgs": 500, "works": 800},
    "medium": {"countries": 60, "cities": 1_000, "people": 6_000, "orgs": 2_500, "works": 4_000},
    "large": {"countries": 200, "cities": 6_000, "people": 30_000, "orgs": 10_000, "works": 20_000},
}
"""Entity counts per named size (passages ≈ 2 per entity; ``large`` exceeds 100,000)."""

_ONSETS = ["b", "br", "c", "ch", "d", "dr", "f", "g", "gr", "h", "j", "k", "kl", "l", "m", "n", "p", "pr", "qu", "r", "s", "sh", "st", "t", "th", "tr", "v", "w", "z"]
_VOWELS = ["a", "e", "i", "o", "u", "ae", "ai", "ea", "ie", "io", "ou", "y"]
_CODAS = ["n", "r", "l", "s", "th", "nd", "rn", "st", "m", "x", "k", "ll", "ss"] + [""] * 4

OCCUPATIONS = (
    "painter", "physicist", "composer", "novelist", "architect", "botanist", "poet",
    "engineer", "astronomer", "sculptor", "chemist", "historian", "cartographer", "playwright",
)
WORK_KINDS = {
    "painter": "painting", "physicist": "treatise", "composer": "symphony", "novelist": "novel",
    "architect": "monograph", "botanist": "field guide", "poet": "poetry collection",
    "engineer": "handbook", "astronomer": "star atlas", "sculptor": "statue",
    "chemist": "textbook", "historian": "chronicle", "cartographer": "atlas",
    "playwright": "play",
}
ORG_KINDS = ("company", "university", "orchestra", "observatory", "publishing house", "museum")
WORK_NOUNS = ("Hours", "Garden", "Letters", "Tide", "Lantern", "Road", "Mirror", "Winter")
REGIONS = ("the Northern Reach", "the Amber Coast", "the Lowlands", "the Eastern Steppe",
           "the Isles", "the High Plateau")
LANGUAGES_SUFFIX = ("ic", "ish", "ese", "an", "i")
CITY_PATTERNS = ("{stem}", "New {stem}", "{stem} Falls", "Port {stem}", "{stem}ford", "{stem}holm")


@dataclass
class Entity:
    """One entity: ``kind`` is country, city, person, org or work; ``facts`` maps relation→value."""

    entity_id: str
    kind: str
    name: str
    aliases: list[str] = field(default_factory=list)
    facts: dict[str, object] = field(default_factory=dict)


@dataclass
class World:
    """All entities of a generated world, indexed by id."""

    seed: int
    size: str
    entities: dict[str, Entity]

    def of_kind(self, kind: str) -> list[Entity]:
        """Entities of one kind, in generation order."""
        return [entity for entity in self.entities.values() if entity.kind == kind]


class _NameMaker:
    """Unique pronounceable names from a seeded RNG."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.used: set[str] = set()

    def word(self, syllables: int) -> str:
        parts = [self.rng.choice(_ONSETS) + self.rng.choice(_VOWELS) for _ in range(syllables)]
        return ("".join(parts) + self.rng.choice(_CODAS)).capitalize()

    def unique(self, *makers: Callable[[], str]) -> str:
        """First unused name from ``makers`` (each tried up to 50 times, in order)."""
        for make in makers:
            for _ in range(50):
                name = make()
                if name not in self.used:
                    self.used.add(name)
                    return name
        raise RuntimeError("name space exhausted; use a smaller size")


def generate_world(seed: int = 0, size: str = "small") -> World:
    """Generate the world for ``(seed, size)``; see :data:`SIZES` for the sizes."""
    if size not in SIZES:
        raise ValueError(f"unknown size {size!r}; choose from {sorted(SIZES)}")
    counts = SIZES[size]
    rng = random.Random(f"sdgym-searchqa-world-{seed}-{size}")
    names = _NameMaker(rng)
    entities: dict[str, Entity] = {}

    def add(entity: Entity) -> Entity:
        entities[entity.entity_id] = entity
        return entity

    countries = []
    for i in range(counts["countries"]):
        stem = names.unique(lambda: names.word(rng.randint(2, 3)))
        language = stem[: max(3, len(stem) - 2)] + rng.choice(LANGUAGES_SUFFIX)
        countries.append(add(Entity(
            f"country/{i}", "country", f"Republic of {stem}", [stem],
            {"region": rng.choice(REGIONS), "language": language,
             "founded": rng.randint(1200, 1950), "population": rng.randint(300, 90_000) * 1000},
        )))
    stems = [names.unique(lambda: names.word(2)) for _ in range(max(1, counts["cities"] // 2))]
    cities = []
    for i in range(counts["cities"]):
        if i < len(stems):
            name = stems[i]
        else:
            name = names.unique(
                lambda: rng.choice(CITY_PATTERNS[1:]).format(stem=rng.choice(stems))
            )
        country = countries[rng.randrange(len(countries))]
        cities.append(add(Entity(
            f"city/{i}", "city", name, [],
            {"country": country.entity_id, "founded": rng.randint(800, 1900),
             "population": rng.randint(2, 4_000) * 1000},
        )))
    for country in countries:
        own = [c for c in cities if c.facts["country"] == country.entity_id]
        capital = rng.choice(own) if own else rng.choice(cities)
        country.facts["capital"] = capital.entity_id
    surnames = [
        names.unique(lambda: names.word(rng.randint(1, 2)) + rng.choice(["", "son", "er", "ov"]))
        for _ in range(max(4, counts["people"] // 6))
    ]
    people = []
    for i in range(counts["people"]):
        surname = rng.choice(surnames)
        full = names.unique(lambda s=surname: f"{names.word(2)} {s}")
        first = full.split()[0]
        middle = names.word(1)
        occupation = rng.choice(OCCUPATIONS)
        born = rng.randint(1600, 1990)
        people.append(add(Entity(
            f"person/{i}", "person", full, [f"{first} {middle[0]}. {surname}"],
            {"occupation": occupation, "born": born, "died": born + rng.randint(35, 95),
             "birthplace": rng.choice(cities).entity_id},
        )))
    for person in people:
        colleague = rng.choice(people)
        if colleague is not person:
            person.facts["colleague"] = colleague.entity_id
    orgs = []
    for i in range(counts["orgs"]):
        kind = rng.choice(ORG_KINDS)
        city = rng.choice(cities)
        founder = rng.choice(people)
        styles = [
            lambda c=city, k=kind: f"{c.name} {k.title()}",
            lambda f=founder, k=kind: f"{f.name.split()[-1]} {k.title()}",
            lambda k=kind: f"{names.word(2)} {k.title()}",
        ]
        first = rng.randrange(3)
        name = names.unique(styles[first], styles[2])
        orgs.append(add(Entity(
            f"org/{i}", "org", name, [],
            {"kind": kind, "founder": founder.entity_id, "headquarters": city.entity_id,
             "founded": int(founder.facts["born"]) + rng.randint(20, 34)},
        )))
        founder.facts.setdefault("founded_org", orgs[-1].entity_id)
    for i in range(counts["works"]):
        creator = rng.choice(people)
        kind = WORK_KINDS[str(creator.facts["occupation"])]
        title = names.unique(lambda: f"The {names.word(2)} {rng.choice(WORK_NOUNS)}")
        add(Entity(
            f"work/{i}", "work", title, [title.removeprefix("The ")],
            {"kind": kind, "creator": creator.entity_id,
             "year": int(creator.facts["born"]) + rng.randint(18, 34)},
        ))
    return World(seed=seed, size=size, entities=entities)

