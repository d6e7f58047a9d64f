"""Passages: the encyclopedia articles written from a :class:`~.world.World` (as a :class:`Corpus`).

Each entity gets an article of one or two passages whose title is the entity's name. Articles
mention other entities (colleagues, natives of a city, works), so many passages share names and
a query must be specific to find the right one. :func:`write_articles` also records which passage
states which fact, so questions can cite their supporting passages.
"""

from __future__ import annotations

from sdgym.envs.searchqa.world import Entity, World
from sdgym.retrieval import Corpus, Passage

__all__ = ["Corpus", "Passage", "write_articles"]


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
