"""ALFWorld guidance texts ("skills") per task type, written for this project: the ``skills`` teacher
context puts the one for the row's task type in the teacher prompt (``"default"``: any other
task type)."""

from __future__ import annotations

SKILLS: dict[str, str] = {
    "pick_and_place": (
        "Find the object (check countertops, tables, drawers, cabinets), take it, go to the "
        "target receptacle, open it if closed, and put it there."
    ),
    "pick_two_obj_and_place": (
        "Find and place the first object, then search again for the second one of the same kind "
        "and place it in the same target."
    ),
    "look_at_obj_in_light": (
        "Find and take the object, then find a desklamp or floorlamp and use it while holding the "
        "object."
    ),
    "pick_clean_then_place": (
        "Take the object, go to the sinkbasin, clean it with the sinkbasin, then put it in the "
        "target receptacle."
    ),
    "pick_heat_then_place": (
        "Take the object, go to the microwave, heat it with the microwave, then put it in the "
        "target receptacle."
    ),
    "pick_cool_then_place": (
        "Take the object, go to the fridge, cool it with the fridge, then put it in the target "
        "receptacle."
    ),
    "default": (
        "Explore receptacles systematically, take the goal object, transform it if the task says "
        "so, and place it in the goal receptacle."
    ),
}
