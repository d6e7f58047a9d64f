"""Search-QA guidance texts ("skills") per task type, written for this project: the ``skills`` teacher
context puts the one for the row's task type in the teacher prompt (``"default"``: any other
task type)."""

from __future__ import annotations

SKILLS: dict[str, str] = {
    "single_hop": (
        "Search for the entity named in the question together with the relation (e.g. 'NAME "
        "born', 'NAME founded by'); read the passage whose title is that entity and answer with "
        "the exact name or year it states."
    ),
    "multi_hop": (
        "Resolve one hop at a time: search the entity in the question, read the intermediate "
        "entity from its passage, then search that entity for the next relation. Answer with the "
        "last entity's full name."
    ),
    "comparison": (
        "Search each of the two entities separately, note the compared value (birth year, "
        "founding year, population) for both, and answer with the name of the one that wins the "
        "comparison, exactly as written."
    ),
    "default": (
        "Search for the key entity, read the passage titled with it, and answer with the exact "
        "span from the passage."
    ),
}
