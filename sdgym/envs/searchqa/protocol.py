"""The Search-R1 action protocol: ``<search>query</search>`` or ``<answer>text</answer>``.

The first complete search/answer block anywhere in the command is used (text around it, e.g. a
``<think>`` block, is ignored, as in Search-R1). ``search[query]`` and ``answer[text]`` are
accepted too. Anything else raises :class:`~sdgym.core.InvalidAction` with the reason.
"""

from __future__ import annotations

import re

from sdgym.core import InvalidAction

_TAGGED = re.compile(r"<(search|answer)>(.*?)</\1\s*>", re.DOTALL | re.IGNORECASE)
_BRACKETED = re.compile(r"^\s*(search|answer)\s*\[(.*)\]\s*$", re.DOTALL | re.IGNORECASE)
_ANY_TAG = re.compile(r"</?\s*(search|answer|information|think)\s*>", re.IGNORECASE)
USAGE = "use <search>query</search> to search or <answer>text</answer> to answer"


def parse_command(command: str) -> tuple[str, str]:
    """Return ``("search", query)`` or ``("answer", text)``; raise InvalidAction otherwise."""
    match = _TAGGED.search(command) or _BRACKETED.match(command)
    if match is None:
        if _ANY_TAG.search(command):
            raise InvalidAction(f"no complete <search> or <answer> block; {USAGE}")
        raise InvalidAction(f"unknown command; {USAGE}")
    kind, body = match.group(1).lower(), match.group(2).strip()
    if _ANY_TAG.search(body):
        raise InvalidAction(f"tags may not be nested inside <{kind}>; {USAGE}")
    if not body:
        raise InvalidAction(f"the {kind} is empty; {USAGE}")
    return kind, " ".join(body.split())
