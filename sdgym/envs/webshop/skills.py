"""WebShop guidance texts ("skills") per task type, written for this project: the ``skills`` teacher
context puts the one for the row's task type in the teacher prompt (``"default"``: any other
task type)."""

from __future__ import annotations

SKILLS: dict[str, str] = {
    "default": (
        "Search with the product type and the key attributes from the instruction; open a result "
        "whose title matches the type and attributes and whose price is under the ceiling; click "
        "every option the instruction names (size, colour, flavour, count); then click Buy Now."
    ),
}
