"""Tests for agents.backends.vllm_backend with a fake engine (no vLLM, no GPU)."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import pytest

from agents.backends.base import SamplingParams
from agents.backends.vllm_backend import (
    IN_PROCESS_ONLY,
    VLLM_MISSING,
    VLLMBackend,
    colocated_vllm,
    to_vllm_kwargs,
)


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


class RecordingWorkerModel:
    """Stands in for the model inside an in-process vLLM worker."""

    def __init__(self) -> None:
        self.loaded: dict[str, Any] = {}

    def load_weights(self, weights):
        for name, tensor in weights:
            self.loaded[name] = tensor.clone()


def engine_with_worker(nested: bool) -> tuple[FakeEngine, RecordingWorkerModel]:
    """A fake engine whose worker model sits where vLLM keeps it (V1 nests it one level deeper)."""
    engine, model = FakeEngine(), RecordingWorkerModel()
    runner = SimpleNamespace(model_runner=SimpleNamespace(model=model))
    worker = SimpleNamespace(worker=runner) if nested else runner
    engine.llm_engine = SimpleNamespace(model_executor=SimpleNamespace(driver_worker=worker))
    engine.prefix_cache_resets = 0

    def reset_prefix_cache() -> None:
        engine.prefix_cache_resets += 1

    engine.reset_prefix_cache = reset_prefix_cache
    return engine, model


@pytest.mark.parametrize("nested", [False, True])
def test_sync_weights_loads_every_parameter_and_drops_the_prefix_cache(nested: bool) -> None:
    torch = pytest.importorskip("torch")
    engine, worker_model = engine_with_worker(nested)
    trained = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Linear(4, 2))
    backend = VLLMBackend(engine=engine, sampling_params_cls=FakeSamplingParams)
    backend.sync_weights(trained)
    assert set(worker_model.loaded) == {name for name, _ in trained.named_parameters()}
    assert all(torch.equal(worker_model.loaded[name], p) for name, p in trained.named_parameters())
    assert not any(t.requires_grad for t in worker_model.loaded.values())
    assert engine.prefix_cache_resets == 1
    with torch.no_grad():
        trained[0].weight.add_(1.0)
    backend.sync_weights(trained)
    assert torch.equal(worker_model.loaded["0.weight"], trained[0].weight)
    assert engine.prefix_cache_resets == 2


def test_sync_weights_without_an_in_process_worker_is_a_clear_error() -> None:
    torch = pytest.importorskip("torch")
    backend = VLLMBackend(engine=FakeEngine(), sampling_params_cls=FakeSamplingParams)
    with pytest.raises(RuntimeError, match="external_launcher") as info:
        backend.sync_weights(torch.nn.Linear(2, 2))
    assert str(info.value) == IN_PROCESS_ONLY


def test_colocated_vllm_runs_the_worker_in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    created: list[dict[str, Any]] = []

    class FakeLLM(FakeEngine):
        def __init__(self, model: str, **kwargs: Any) -> None:
            super().__init__()
            created.append({"model": model, **kwargs})

    monkeypatch.setitem(sys.modules, "vllm", SimpleNamespace(LLM=FakeLLM, SamplingParams=FakeSamplingParams))
    for key in ("RANK", "LOCAL_RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"):
        monkeypatch.setenv(key, "")  # recorded, so the values colocated_vllm sets are undone
        monkeypatch.delenv(key)
    backend = colocated_vllm("some/model", seed=7, gpu_memory_utilization=0.5)
    assert created == [{"model": "some/model", "distributed_executor_backend": "external_launcher",
                        "gpu_memory_utilization": 0.5, "seed": 7}]
    assert isinstance(backend.engine, FakeLLM)
    assert (os.environ["RANK"], os.environ["WORLD_SIZE"], os.environ["MASTER_ADDR"]) == ("0", "1", "127.0.0.1")
    assert 0 < int(os.environ["MASTER_PORT"]) < 65536
