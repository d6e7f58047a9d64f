"""Per-task-type "skills": short guidance texts written for this project, declared by each env.

Skill-conditioned heads (``skill_sd`` by default, any head with ``context="skills"``) put the
text for the row's task type in the teacher prompt. The texts live with the env
(``sdgym/envs/<env>/skills.py``, its class's ``skills``); a task type without its own text gets the
env's ``"default"`` one, and an env that declares no skills is an error when they are asked for.
"""

from __future__ import annotations

from sdgym.registration import env_class


def skill_text(env_id: str, task_type: str) -> str:
    """The skill text for ``task_type`` in ``env_id`` (the env's ``"default"`` when it has none)."""
    skills = env_class(env_id).skills
    text = skills.get(task_type) or skills.get("default")
    if not text:
        raise ValueError(f"{env_id} declares no skills for task type {task_type!r} and no "
                         "'default' one (sdgym.core.TextEnv.skills): the skills context is empty")
    return text
