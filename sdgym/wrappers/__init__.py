"""Wrappers: hide the privileged channel, parse LLM responses, discretise, record episodes."""

from sdgym.wrappers.admissible_discrete import (
    AdmissibleDiscrete,
    candidate_commands,
    hashed_bag_of_words,
)
from sdgym.wrappers.hide_privileged import HidePrivileged, strip_privileged
from sdgym.wrappers.recording import RecordEpisodes
from sdgym.wrappers.tagged_actions import TaggedActions, extract_tagged

__all__ = [
    "AdmissibleDiscrete",
    "HidePrivileged",
    "RecordEpisodes",
    "TaggedActions",
    "candidate_commands",
    "extract_tagged",
    "hashed_bag_of_words",
    "strip_privileged",
]
