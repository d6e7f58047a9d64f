"""Per-task-type "skills": short guidance texts written for this project, one set per env.

Skill-conditioned heads (``skill_sd`` by default, any head with ``context="skills"``) put the
text for the row's task type in the teacher prompt. Unknown task types get the env's default.
"""

from __future__ import annotations

SKILLS: dict[str, dict[str, str]] = {
    "sdgym/SearchQA-v0": {
        "single_hop": "Search for the entity named in the question together with the relation "
                      "(e.g. 'NAME born', 'NAME founded by'); read the passage whose title is that "
                      "entity and answer with the exact name or year it states.",
        "multi_hop": "Resolve one hop at a time: search the entity in the question, read the "
                     "intermediate entity from its passage, then search that entity for the next "
                     "relation. Answer with the last entity's full name.",
        "comparison": "Search each of the two entities separately, note the compared value "
                      "(birth year, founding year, population) for both, and answer with the name "
                      "of the one that wins the comparison, exactly as written.",
        "default": "Search for the key entity, read the passage titled with it, and answer with "
                   "the exact span from the passage.",
    },
    "sdgym/WebShop-v0": {
        "default": "Search with the product type and the key attributes from the instruction; "
                   "open a result whose title matches the type and attributes and whose price is "
                   "under the ceiling; click every option the instruction names (size, colour, "
                   "flavour, count); then click Buy Now.",
    },
    "sdgym/ALFWorld-v0": {
        "pick_and_place": "Find the object (check countertops, tables, drawers, cabinets), take "
                          "it, go to the target receptacle, open it if closed, and put it there.",
        "pick_two_obj_and_place": "Find and place the first object, then search again for the "
                                  "second one of the same kind and place it in the same target.",
        "look_at_obj_in_light": "Find and take the object, then find a desklamp or floorlamp and "
                                "use it while holding the object.",
        "pick_clean_then_place": "Take the object, go to the sinkbasin, clean it with the "
                                 "sinkbasin, then put it in the target receptacle.",
        "pick_heat_then_place": "Take the object, go to the microwave, heat it with the "
                                "microwave, then put it in the target receptacle.",
        "pick_cool_then_place": "Take the object, go to the fridge, cool it with the fridge, then "
                                "put it in the target receptacle.",
        "default": "Explore receptacles systematically, take the goal object, transform it if the "
                   "task says so, and place it in the goal receptacle.",
    },
    "sdgym/ScienceWorld-v0": {
        "default": "Read the task carefully; look around and teleport or walk to the room that "
                   "holds what you need; pick up and move objects into containers; focus on the "
                   "task's target object only when the task asks you to; use devices (stove, "
                   "freezer, thermometer) step by step and wait when a process needs time.",
    },
}


def skill_text(env_id: str, task_type: str) -> str:
    """The skill text for ``task_type`` in ``env_id`` (the env's default when none is written)."""
    skills = SKILLS.get(env_id, {})
    return skills.get(task_type) or skills.get("default", "Act step by step toward the goal.")
