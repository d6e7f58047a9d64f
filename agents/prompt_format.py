"""A model folder's sdgym prompt format, for use from plain ``transformers`` (no sdgym code).

:func:`add_prompt_format` writes two things into a model folder: a named chat template
``sdgym`` (``additional_chat_templates/sdgym.jinja``) that builds the student prompt of
:func:`agents.prompts.student_messages` — system prompt, task, history window, clipping limits,
admissible actions — and renders it with the folder's own chat template; and ``sdgym_prompt.json``,
the record of that format (env id, limits, history window, system prompt, the call). A plain
transformers loop then reproduces sdgym's prompt for a turn with one call::

    prompt = tokenizer.apply_chat_template(
        [{"role": "user", "content": current_observation}], chat_template="sdgym",
        tokenize=False, add_generation_prompt=True,
        task=first_observation, step=turn_number,             # 1 on the first turn
        history=[[observation, action], ...],                  # every earlier turn, oldest first
        admissible_actions=info["admissible_actions"])
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

from agents.prompts import (
    SAME_AS_TASK,
    TASK_AGAIN,
    PromptLimits,
    history_window,
    system_prompt,
    task_statement_line,
)

TEMPLATE_NAME = "sdgym"
RECORD_FILE = "sdgym_prompt.json"
USAGE = ('tokenizer.apply_chat_template([{"role": "user", "content": current_observation}], '
         'chat_template="sdgym", tokenize=False, add_generation_prompt=True, '
         'task=first_observation, step=turn_number, history=[[observation, action], ...], '
         'admissible_actions=info["admissible_actions"])')


def _literal(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def sdgym_chat_template(env_id: str, limits: PromptLimits, base_template: str) -> str:
    """Jinja that builds the student messages of one turn from keyword arguments, then renders
    them with ``base_template`` (the model's own chat template)."""
    window = history_window(env_id) if limits.history is None else limits.history
    system = system_prompt(env_id)
    obs_chars, hist_chars = limits.observation_chars, limits.history_chars
    nl = '{{- "\\n" -}}'
    task_again = ""
    if limits.repeat_task:
        statement = f'task.split("\\n")[{task_statement_line(env_id)}]'
        task_again = f'{nl}{TASK_AGAIN} {{{{- " " ~ clip({statement}, {obs_chars}) -}}}}'
    user = (
        '{%- macro clip(text, limit) -%}{%- if text|length <= limit -%}{{- text -}}{%- else -%}'
        '{{- text[:[0, limit - 3]|max] ~ "..." -}}{%- endif -%}{%- endmacro -%}'
        f'{{%- set shown_history = ((history or [])[-{window}:]) if {window} > 0 else [] -%}}'
        '{%- set observation = messages[-1]["content"] -%}'
        f'{{%- set same = {_literal(SAME_AS_TASK)} -%}}'
        '{%- set user_text -%}'
        f'Task: {{{{- " " ~ clip(task, {obs_chars}) -}}}}{nl}Step {{{{- " " ~ step ~ "." -}}}}'
        f'{{%- if shown_history -%}}{nl}Recent history:'
        '{%- for pair in shown_history -%}'
        f'{nl}Observation: {{{{- " " ~ (same if pair[0] == task else clip(pair[0], {hist_chars}))'
        f' -}}}}{nl}Action: {{{{- " " ~ pair[1] -}}}}'
        '{%- endfor -%}{%- endif -%}'
        f'{nl}Current observation: {{{{- " " ~ (same if observation == task else '
        f'clip(observation, {obs_chars})) -}}}}'
        f'{{%- if admissible_actions -%}}{nl}Admissible actions: '
        f'{{{{- " " ~ admissible_actions[:{limits.max_admissible}]|join(" | ") -}}}}{{%- endif -%}}'
        f'{task_again}'
        '{%- endset -%}'
        f'{{%- set messages = [{{"role": "system", "content": {_literal(system)}}}, '
        '{"role": "user", "content": user_text}] -%}'
    )
    return user + base_template


def prompt_record(env_id: str, limits: PromptLimits) -> dict[str, Any]:
    """What ``sdgym_prompt.json`` holds: the format, readable without sdgym."""
    window = history_window(env_id) if limits.history is None else limits.history
    return {"env_id": env_id, "chat_template": TEMPLATE_NAME, "limits": asdict(limits),
            "history_window": window,
            "system_prompt": system_prompt(env_id),
            "usage": USAGE}


def recorded_prompt_limits(folder: str | Path) -> PromptLimits | None:
    """The prompt limits in ``folder``'s ``sdgym_prompt.json`` (``None``: the folder has no record)."""
    path = Path(folder) / RECORD_FILE
    if not path.is_file():
        return None
    try:
        return PromptLimits.from_dict(json.loads(path.read_text())["limits"])
    except (ValueError, KeyError, TypeError) as error:
        raise ValueError(f"{path}: not a valid sdgym prompt record ({error})") from error


def add_prompt_format(folder: Path, env_id: str, limits: PromptLimits) -> None:
    """Add the ``sdgym`` chat template and ``sdgym_prompt.json`` to the model folder ``folder``."""
    from transformers import AutoTokenizer

    folder = Path(folder)
    tokenizer = AutoTokenizer.from_pretrained(folder)
    base = tokenizer.chat_template
    if isinstance(base, dict):
        base = base.get("default") or next(iter(base.values()))
    if not isinstance(base, str):
        raise ValueError(f"{folder}: the tokenizer has no chat template to render sdgym prompts")
    tokenizer.chat_template = {"default": base,
                               TEMPLATE_NAME: sdgym_chat_template(env_id, limits, base)}
    tokenizer.save_pretrained(folder)
    (folder / RECORD_FILE).write_text(json.dumps(prompt_record(env_id, limits), indent=2) + "\n")
