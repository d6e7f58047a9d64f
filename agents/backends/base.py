"""The backend interface shared by all policies: sampling parameters, generations, scoring.

Log-probability convention (all backends): ``Generation.logprobs[i]`` is the log-probability
of ``response_ids[i]`` under the *raw* model distribution, i.e. ``log_softmax(logits)`` at
temperature 1 with no top-p truncation, whatever temperature/top-p were used for sampling.
This is what a policy-gradient trainer recomputes with grad (see
:func:`agents.backends.scoring.response_logprobs`), so rollout and training log-probs agree.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

FinishReason = Literal["stop", "length"]


@dataclass(frozen=True)
class SamplingParams:
    """How to sample one response per prompt.

    Attributes:
        max_new_tokens: Maximum number of generated tokens.
        temperature: Softmax temperature; ``0`` means greedy decoding.
        top_p: Nucleus sampling mass (``1.0`` disables it).
        seed: Seed for reproducible sampling; ``None`` draws from global RNG state.
        stop: Strings that end generation once they appear in the response text.
        stop_token_ids: Extra token ids that end generation (EOS/``<|im_end|>`` always do).
        include_stop_str_in_output: Keep the matched stop string at the end of ``text``.
        row_seeds: One stream seed per prompt of the call (:mod:`agents.backends.row_streams`):
            each row then samples from its own stream, so a row's tokens do not depend on the
            other rows of the call (batching, chunking, order); ``seed`` is then unused.
    """

    max_new_tokens: int = 128
    temperature: float = 1.0
    top_p: float = 1.0
    seed: int | None = None
    stop: tuple[str, ...] = ()
    stop_token_ids: tuple[int, ...] = ()
    include_stop_str_in_output: bool = True
    row_seeds: tuple[int, ...] | None = None

    def __post_init__(self) -> None:
        if self.max_new_tokens < 1:
            raise ValueError("max_new_tokens must be >= 1")
        if self.temperature < 0:
            raise ValueError("temperature must be >= 0")
        if not 0 < self.top_p <= 1:
            raise ValueError("top_p must be in (0, 1]")
        # accept lists for convenience, but keep the dataclass hashable
        object.__setattr__(self, "stop", tuple(self.stop))
        object.__setattr__(self, "stop_token_ids", tuple(self.stop_token_ids))
        if self.row_seeds is not None:
            object.__setattr__(self, "row_seeds", tuple(int(s) for s in self.row_seeds))

    def check_rows(self, rows: int) -> None:
        """Raise if :attr:`row_seeds` is given but does not hold one seed per prompt."""
        if self.row_seeds is not None and len(self.row_seeds) != rows:
            raise ValueError(f"row_seeds holds {len(self.row_seeds)} seeds for {rows} prompts")

    def per_row(self, rows: int) -> list[SamplingParams]:
        """One params per prompt: with :attr:`row_seeds`, each carries its row's seed as
        ``seed`` (for engines that seed each request: vLLM, an OpenAI-compatible server)."""
        self.check_rows(rows)
        if self.row_seeds is None:
            return [self] * rows
        return [replace(self, seed=seed, row_seeds=None) for seed in self.row_seeds]


@dataclass
class Generation:
    """One sampled response.

    Attributes:
        text: Decoded response (special tokens skipped; cut after a matched stop string).
        prompt_ids: Token ids of the prompt, as fed to the model.
        response_ids: Generated token ids, including the final EOS / stop token if any.
        logprobs: One raw-model (temperature 1) log-prob per entry of ``response_ids``;
            empty when the backend cannot provide them.
        finish_reason: ``"stop"`` (EOS, stop token or stop string) or ``"length"``.
    """

    text: str
    prompt_ids: list[int] = field(default_factory=list)
    response_ids: list[int] = field(default_factory=list)
    logprobs: list[float] = field(default_factory=list)
    finish_reason: FinishReason = "length"


class PolicyBackend(ABC):
    """A text policy that samples responses and scores given responses.

    A backend whose server renders the chat template itself (an OpenAI-compatible
    ``/chat/completions`` endpoint) sets :attr:`wants_messages` and implements :meth:`chat`; the
    rollout engine then sends it the turn's messages instead of rendered prompts.
    """

    wants_messages: bool = False
    """Whether :meth:`chat` (messages in) should be called instead of :meth:`generate`."""

    def chat(self, conversations: Sequence[Sequence[Mapping[str, str]]],
             params: SamplingParams) -> list[Generation]:
        """One response per conversation (only for backends with :attr:`wants_messages`)."""
        raise NotImplementedError(f"{type(self).__name__} takes rendered prompts, not messages")

    @abstractmethod
    def generate(self, prompts: Sequence[str], params: SamplingParams) -> list[Generation]:
        """Sample one response for each already-rendered prompt string (see
        :func:`render_chat`). The result is in prompt order."""

    @abstractmethod
    def score(
        self, prompt_ids: Sequence[Sequence[int]], response_ids: Sequence[Sequence[int]]
    ) -> list[list[float]]:
        """Return raw-model log-probs of each response token given its prompt."""

    def sync_weights(self, model: Any) -> None:  # noqa: B027  (optional hook, no-op by default)
        """Make later calls sample from ``model``'s current weights (a trainer calls this after
        each update). Backends that run the trained module itself, like ``HFBackend``, have
        nothing to do; engines holding their own copy (vLLM) reload it here."""


def render_chat(
    tokenizer: Any,
    messages: Sequence[Mapping[str, str]],
    *,
    add_generation_prompt: bool = True,
    **template_kwargs: Any,
) -> str:
    """Render chat ``messages`` to a prompt string with the tokenizer's chat template.

    Extra keyword arguments (e.g. ``enable_thinking=False`` for Qwen3) are passed to the
    template.
    """
    text = tokenizer.apply_chat_template(
        [dict(m) for m in messages],
        tokenize=False,
        add_generation_prompt=add_generation_prompt,
        **template_kwargs,
    )
    if not isinstance(text, str):
        raise TypeError(f"chat template returned {type(text).__name__}, expected str")
    return text
