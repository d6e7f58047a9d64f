"""Turn a free-form LLM response into an env command (``<action>…</action>`` or the env's tags)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import gymnasium as gym

from sdgym.spaces import UnicodeText

DEFAULT_TAGS: tuple[str, ...] = ("action",)


def extract_tagged(response: Any, tags: Sequence[str]) -> tuple[str | None, str | None]:
    """Find the first complete ``<tag>…</tag>`` block for any of ``tags`` in ``response``.

    Returns ``(tag, inner_text)`` or ``(None, None)``. Tags match case-insensitively; the inner
    text is stripped. Never raises.

    >>> extract_tagged("<think>hmm</think><action> go to desk 1 </action>", ["action"])
    ('action', 'go to desk 1')
    """
    if not isinstance(response, str) or not tags:
        return None, None
    alternatives = "|".join(re.escape(tag) for tag in tags)
    match = re.search(rf"<({alternatives})>(.*?)</\1\s*>", response, re.DOTALL | re.IGNORECASE)
    if match is None:
        return None, None
    return match.group(1).lower(), match.group(2).strip()


class TaggedActions(gym.Wrapper):
    """Accepts whole LLM responses as actions and passes the tagged command to the env.

    By default it extracts ``<action>…</action>``; for envs with their own protocol (the env's
    ``native_action_tags``, e.g. SearchQA's ``<search>``/``<answer>``) it forwards the whole tagged
    block. A response with no complete block is sent as an empty (invalid) command, so it costs a
    turn as in verl-agent, and ``info["parse_error"]`` says why; otherwise ``parse_error`` is
    ``None``. ``info["parsed_action"]`` holds what was sent.
    """

    def __init__(
        self, env: gym.Env, tags: Sequence[str] | None = None, max_response_length: int = 32_768
    ) -> None:
        super().__init__(env)
        native = tuple(getattr(env.unwrapped, "native_action_tags", ()))
        self.native_tags = native
        self.tags = tuple(tags) if tags is not None else (native or DEFAULT_TAGS)
        self.action_space = UnicodeText(max_length=max_response_length)

    def parse(self, response: Any) -> tuple[str, str | None]:
        """Return ``(command, parse_error)`` for one response."""
        tag, inner = extract_tagged(response, self.tags)
        if tag is None:
            wanted = " or ".join(f"<{t}>...</{t}>" for t in self.tags)
            return "", f"no complete {wanted} block in the response"
        if tag in self.native_tags:
            return f"<{tag}>{inner}</{tag}>", None
        return inner or "", None

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        command, parse_error = self.parse(action)
        observation, reward, terminated, truncated, info = self.env.step(command)
        info = {**info, "parse_error": parse_error, "parsed_action": command}
        return observation, reward, terminated, truncated, info
