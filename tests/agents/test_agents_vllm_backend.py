"""Tests for agents.backends.vllm_backend with a fake engine (no vLLM, no GPU)."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import pytest

from agents.backends.base import SamplingParams
from agents.backends.vllm_backend import VLLM_MISSING, VLLMBackend, to_vllm_kwargs


class CharTokenizer:
    """One token per character: id = code point."""

    def encode(self, text: str, add_special_tokens: bool = True) -> list[int]:
        assert add_special_tokens is False
        return [ord(c) for c in text]


@dataclass
class Logprob:
    logprob: float
    rank: int | None = None


class FakeSamplingParams:
    """Stands in for ``vllm.SamplingParams``: keeps the keyword arguments."""

    def __init__(self, **kwargs: Any) -> None:
        self.kwargs = kwargs


class FakeEngine:
    """Mimics ``vllm.LLM.generate``: echoes a fixed completion and records every call."""

    def __init__(self) -> None:
        self.calls: list[tuple[list[dict], Any]] = []

    def get_tokenizer(self) -> CharTokenizer:
        return CharTokenizer()

    def generate(self, prompts, sampling_params=None, use_tqdm=True):
        assert use_tqdm is False
        self.calls.append((prompts, sampling_params))
        outputs = []
        for i, prompt in enumerate(prompts):
            ids = prompt["prompt_token_ids"]
            completion = SimpleNamespace(
                text="ok",
                token_ids=(111, 107),
                logprobs=[{111: Logprob(-0.5, 1)}, {107: Logprob(-1.25, 1)}],
                finish_reason="length" if i % 2 else "stop",
            )
            prompt_lps = [None] + [{t: Logprob(-0.1 * (j + 1))} for j, t in enumerate(ids[1:])]
            outputs.append(
                SimpleNamespace(
                    prompt_token_ids=list(ids), outputs=[completion], prompt_logprobs=prompt_lps
                )
            )
        return outputs


def test_generate_maps_params_and_extracts_logprobs() -> None:
    engine = FakeEngine()
    backend = VLLMBackend(engine=engine, sampling_params_cls=FakeSamplingParams)
    params = SamplingParams(max_new_tokens=7, temperature=0.7, top_p=0.9, seed=3, stop=("]",))
    gens = backend.generate(["ab", "xyz"], params)

    ((prompts, sampling),) = engine.calls
    assert prompts == [{"prompt_token_ids": [97, 98]}, {"prompt_token_ids": [120, 121, 122]}]
    assert sampling.kwargs == {
        "n": 1,
        "max_tokens": 7,
        "temperature": 0.7,
        "top_p": 0.9,
        "seed": 3,
        "stop": ["]"],
        "stop_token_ids": None,
        "include_stop_str_in_output": True,
        "logprobs": 0,
        "skip_special_tokens": True,
    }
    assert [g.prompt_ids for g in gens] == [[97, 98], [120, 121, 122]]
    assert all(g.response_ids == [111, 107] and g.text == "ok" for g in gens)
    assert all(g.logprobs == [-0.5, -1.25] for g in gens)
    assert [g.finish_reason for g in gens] == ["stop", "length"]


def test_score_uses_prompt_logprobs() -> None:
    engine = FakeEngine()
    backend = VLLMBackend(
        engine=engine, tokenizer=CharTokenizer(), sampling_params_cls=FakeSamplingParams
    )
    scores = backend.score([[1, 2], [3]], [[4, 5], [6]])
    ((prompts, sampling),) = engine.calls
    assert prompts == [{"prompt_token_ids": [1, 2, 4, 5]}, {"prompt_token_ids": [3, 6]}]
    assert sampling.kwargs["prompt_logprobs"] == 0
    assert sampling.kwargs["max_tokens"] == 1
    assert scores[0] == pytest.approx([-0.2, -0.3])
    assert scores[1] == pytest.approx([-0.1])


def test_plain_float_logprobs_and_namespace_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "vllm", None)  # vLLM "not installed"
    engine = FakeEngine()
    backend = VLLMBackend(engine=engine)
    assert backend.sampling_params_cls is SimpleNamespace
    gens = backend.generate(["a"], SamplingParams(max_new_tokens=2, temperature=0))
    assert engine.calls[0][1].temperature == 0
    assert gens[0].logprobs == [-0.5, -1.25]


def test_missing_vllm_has_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "vllm", None)
    with pytest.raises(ImportError, match="sdgym\\[vllm\\]") as info:
        VLLMBackend("some/model")
    assert str(info.value) == VLLM_MISSING


def test_to_vllm_kwargs_options() -> None:
    kwargs = to_vllm_kwargs(
        SamplingParams(stop_token_ids=[5], include_stop_str_in_output=False), prompt_logprobs=0
    )
    assert kwargs["stop_token_ids"] == [5]
    assert kwargs["stop"] is None
    assert kwargs["include_stop_str_in_output"] is False
    assert kwargs["prompt_logprobs"] == 0
