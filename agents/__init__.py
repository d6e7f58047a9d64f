"""LLM policies for sdgym: a tiny offline test model and generation backends.

Heavy dependencies (``torch``, ``transformers``, ``vllm``, ``requests``) are imported
only by the submodules that need them, so ``import agents`` stays cheap.
"""

from __future__ import annotations

from agents.backends.base import Generation, PolicyBackend, SamplingParams, render_chat

__all__ = ["Generation", "PolicyBackend", "SamplingParams", "render_chat"]
