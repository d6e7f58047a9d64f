"""Discrete(K) over the admissible commands, with ``action_masks()``, for sb3-contrib MaskablePPO."""

from __future__ import annotations

import re
import zlib
from typing import Any

import gymnasium as gym
import numpy as np

from sdgym.core import TextEnv

_TOKEN = re.compile(r"[a-z0-9]+")
_ARGUMENT = re.compile(r"^\s*<(\w+)>(.*)</\1>\s*$|^\s*(\w+)\[(.*)\]\s*$", re.DOTALL)


def candidate_commands(env: gym.Env, observation: str, info: dict[str, Any]) -> list[str]:
    """Commands an agent can choose from now.

    The env's own discrete action set (``candidate_actions(observation, info)`` on the unwrapped
    env) when it defines one -- Search-QA (open action set), WebShop (free-text search bar) and
    ScienceWorld (a compact, ranked part of its admissible list) do, and it takes precedence over
    the admissible list; else ``info["admissible_actions"]``;
    else the list computed on request (``get_admissible_actions()``, e.g. ScienceWorld); else
    nothing.
    """
    core = env.unwrapped
    if not isinstance(core, TextEnv):  # a plain Gymnasium env: its info is all there is
        return list(info.get("admissible_actions") or [])
    candidates = core.candidate_actions(observation, info)
    if candidates is not None:
        return list(candidates)
    actions = info.get("admissible_actions")
    if actions:
        return list(actions)
    return list(core.get_admissible_actions() or [])


_FUNCTION_WORDS = frozenset({
    "a", "an", "the", "to", "on", "in", "into", "at", "of", "from", "with", "and", "or", "is",
    "it", "its", "you", "your", "that", "this", "for", "by",
})


def content_words(text: str) -> set[str]:
    """Lower-cased alphanumeric words of ``text`` without function words."""
    return {word for word in _TOKEN.findall(text.lower()) if word not in _FUNCTION_WORDS}


def relevance(command: str, task_words: set[str], observation_words: set[str]) -> float:
    """How much ``command`` is about the task and the current observation: each of its content
    words counts 2 when the task text has it and 1 when the observation has it, and the sum is
    divided by the number of its words that neither has plus one (so a command about unseen
    things ranks low). Public text only: no privileged information."""
    words = content_words(command)
    hits = sum(2 * (w in task_words) + (w in observation_words) for w in words)
    unseen = sum(1 for w in words if w not in task_words and w not in observation_words)
    return hits / (1 + unseen)


_PARTICLES = frozenset({"to", "at", "in", "on", "up", "down", "around", "into", "off", "out"})


def command_verb(command: str) -> str:
    """The command's verb: its first word, with a following particle (``go to``, ``look at``)."""
    words = _TOKEN.findall(command.lower())
    if len(words) > 1 and words[1] in _PARTICLES:
        return " ".join(words[:2])
    return words[0] if words else ""


def ranked_commands(commands: list[str], task: str, observation: str, k: int) -> list[str]:
    """``k`` of ``commands`` for the slots, from public text only: all of them, in the given
    order, when they fit; else the best of every verb (:func:`command_verb`), then the second
    best of every verb, and so on, where best means most :func:`relevance` to ``task`` and
    ``observation`` and then fewest words, and verbs take turns in the order of their best
    command. Taking turns keeps one verb with thousands of argument combinations (ScienceWorld's
    ``connect X to Y``) from filling every slot."""
    if len(commands) <= k:
        return list(commands)
    task_words, observation_words = content_words(task), content_words(observation)
    order = sorted(
        range(len(commands)),
        key=lambda i: (
            -relevance(commands[i], task_words, observation_words),
            len(_TOKEN.findall(commands[i])),
        ),
    )
    by_verb: dict[str, list[str]] = {}
    for i in order:
        by_verb.setdefault(command_verb(commands[i]), []).append(commands[i])
    chosen: list[str] = []
    for rank in range(max(len(group) for group in by_verb.values())):
        for group in by_verb.values():
            if rank < len(group):
                chosen.append(group[rank])
                if len(chosen) == k:
                    return chosen
    return chosen


def hashed_bag_of_words(text: str, dim: int, tag: str = "") -> np.ndarray:
    """L2-normalised hashed bag of words (unigrams and bigrams, crc32 buckets) of ``text``.

    ``tag`` prefixes every gram before hashing (so tagged and untagged words fall into different
    buckets).
    """
    return _hashed_grams(_TOKEN.findall(text.lower()), dim, tag)


def _hashed_grams(tokens: list[str], dim: int, tag: str = "") -> np.ndarray:
    vector = np.zeros(dim, dtype=np.float32)
    for gram in tokens + [f"{a} {b}" for a, b in zip(tokens, tokens[1:])]:
        vector[zlib.crc32(f"{tag}{gram}".encode()) % dim] += 1.0
    norm = float(np.linalg.norm(vector))
    return vector / norm if norm > 0 else vector


def command_argument(command: str) -> str:
    """What a command refers to: the text inside ``<verb>...</verb>`` or ``verb[...]``, else the
    command itself."""
    match = _ARGUMENT.match(command)
    if match is None:
        return command.strip()
    return match.group(2) if match.group(2) is not None else match.group(4)


def context_in(observation: str, command: str, window: int = 3) -> list[str]:
    """Where the observation mentions the command's argument: the ``window`` words before and
    after its first mention (tagged ``<`` and ``>``), as a word list (empty if not mentioned)."""
    argument = _TOKEN.findall(command_argument(command).lower())
    words = _TOKEN.findall(observation.lower())
    size = len(argument)
    if not size:
        return []
    for start in range(len(words) - size + 1):
        if words[start:start + size] == argument:
            before = words[max(0, start - window):start]
            after = words[start + size:start + size + window]
            return [f"<{w}" for w in before] + [f">{w}" for w in after]
    return []


def split_features(features: Any, obs_dim: int, max_actions: int, action_dim: int) -> tuple[Any, Any]:
    """``(context, slots)`` of (a batch of) :class:`AdmissibleDiscrete` feature vectors (numpy or
    torch): ``(..., 2 * obs_dim)`` (task and observation) and ``(..., max_actions,
    2 * action_dim)`` (one row per candidate slot)."""
    context = features[..., : 2 * obs_dim]
    slots = features[..., 2 * obs_dim:]
    return context, slots.reshape(*slots.shape[:-1], max_actions, 2 * action_dim)


class AdmissibleDiscrete(gym.Wrapper):
    """Exposes the env's current candidate commands as ``Discrete(max_actions)``.

    Candidates are :func:`candidate_commands`: the env's own ``candidate_actions(observation,
    info)`` where it defines them (open or free-text action sets, ScienceWorld's compact set),
    else the admissible list; when there are more than ``max_actions``, the slots hold the first
    ``max_actions`` where the env ranks its candidates itself (``ranked_candidates = True`` on
    the env class: ScienceWorld), else the most relevant to the task and the current
    observation, verbs taking turns (:func:`ranked_commands`, public text only). The
    observation becomes a ``Box`` of hashed bags of words (:func:`hashed_bag_of_words`): the task
    (the episode's first observation), the current observation, then one block per candidate slot
    -- the candidate's words, and the words around its mention in the observation
    (:func:`context_in`) -- zeros for empty slots. ``action_masks()`` marks the live slots. An
    action index outside the mask is sent as an empty command, which the env answers with an
    invalid-action observation. :func:`split_features` undoes the layout.
    """

    def __init__(
        self, env: gym.Env, max_actions: int = 32, obs_dim: int = 256, action_dim: int = 32
    ) -> None:
        super().__init__(env)
        self.max_actions = max_actions
        self.obs_dim = obs_dim
        self.action_dim = action_dim
        self.action_space = gym.spaces.Discrete(max_actions)
        size = 2 * obs_dim + max_actions * 2 * action_dim
        self.observation_space = gym.spaces.Box(0.0, 1.0, shape=(size,), dtype=np.float32)
        self.candidates: list[str] = []
        self.task_text = ""

    def _candidates(self, observation: str, info: dict[str, Any]) -> list[str]:
        commands = candidate_commands(self.env, observation, info)
        if getattr(self.env.unwrapped, "ranked_candidates", False):
            return commands[: self.max_actions]
        return ranked_commands(commands, self.task_text, observation, self.max_actions)

    def featurise(self, observation: str, info: dict[str, Any]) -> np.ndarray:
        """Feature vector of the task, the observation and the current candidates (sets
        ``candidates``)."""
        self.candidates = self._candidates(observation, info)
        blocks = [hashed_bag_of_words(self.task_text, self.obs_dim),
                  hashed_bag_of_words(observation, self.obs_dim)]
        empty = np.zeros(self.action_dim, dtype=np.float32)
        for slot in range(self.max_actions):
            if slot < len(self.candidates):
                command = self.candidates[slot]
                blocks += [hashed_bag_of_words(command, self.action_dim),
                           _hashed_grams(context_in(observation, command), self.action_dim)]
            else:
                blocks += [empty, empty]
        return np.concatenate(blocks).astype(np.float32)

    def action_masks(self) -> np.ndarray:
        """Boolean mask of the slots that hold a candidate command."""
        mask = np.zeros(self.max_actions, dtype=bool)
        mask[: len(self.candidates)] = True
        return mask

    def reset(self, **kwargs: Any) -> tuple[np.ndarray, dict[str, Any]]:
        observation, info = self.env.reset(**kwargs)
        self.task_text = observation
        return self.featurise(observation, info), info

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        try:
            index = int(action)
        except (TypeError, ValueError):
            index = -1
        command = self.candidates[index] if 0 <= index < len(self.candidates) else ""
        observation, reward, terminated, truncated, info = self.env.step(command)
        info = {**info, "command": command}
        return self.featurise(observation, info), reward, terminated, truncated, info
