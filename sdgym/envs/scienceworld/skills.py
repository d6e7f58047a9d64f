"""ScienceWorld guidance texts ("skills") per task type, written for this project: the ``skills`` teacher
context puts the one for the row's task type in the teacher prompt (``"default"``: any other
task type)."""

from __future__ import annotations

SKILLS: dict[str, str] = {
    "default": (
        "Read the task carefully; look around and teleport or walk to the room that holds what "
        "you need; pick up and move objects into containers; focus on the task's target object "
        "only when the task asks you to; use devices (stove, freezer, thermometer) step by step "
        "and wait when a process needs time."
    ),
}
