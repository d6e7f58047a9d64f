"""Generation backends behind one small interface, :class:`PolicyBackend`.

Backends: :class:`~agents.backends.hf.HFBackend` (transformers, also used for training),
:class:`~agents.backends.vllm_backend.VLLMBackend` and
:class:`~agents.backends.openai_http.OpenAICompatBackend`; any of them can run in a Ray actor
(:class:`~agents.backends.ray_actor.RayActorBackend`, e.g. vLLM on a GPU node). They are imported
lazily. The training-time forward (log-probs and logits of responses given their prompts) is
:func:`agents.backends.scoring.response_logprobs`.
"""

from __future__ import annotations

from agents.backends.base import Generation, PolicyBackend, SamplingParams, render_chat

__all__ = ["Generation", "PolicyBackend", "SamplingParams", "render_chat"]
