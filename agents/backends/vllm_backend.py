"""vLLM backend: an adapter from :class:`PolicyBackend` to ``vllm.LLM``.

``vllm`` is imported only in the constructor (and only when no ``engine`` is injected).
Prompts are tokenized here and passed to vLLM as token ids, so ``Generation.prompt_ids`` are
exactly what the model saw. Sampling asks for ``logprobs=0`` (the sampled token only); vLLM
reports raw-model log-probs by default, matching the convention in
:mod:`agents.backends.base`.

Training (:meth:`VLLMBackend.sync_weights`) follows TRL's colocate mode: the engine runs its
worker in the trainer's process (``distributed_executor_backend="external_launcher"``), and
after each update every trained parameter is handed to the worker model's ``load_weights``
(Hugging Face parameter names, dtype converted by vLLM), then the prefix cache is dropped, since
cached KV blocks were computed with the old weights.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Sequence
from types import SimpleNamespace
from typing import Any

from agents.backends.base import Generation, PolicyBackend, SamplingParams

VLLM_MISSING = (
    "VLLMBackend needs vLLM, which is not installed. Install it with "
    "`pip install 'sdgym[vllm]'` (Linux + CUDA), or use agents.backends.hf.HFBackend."
)
IN_PROCESS_ONLY = (
    "vLLM weight sync needs the engine's worker in this process: create the engine with "
    "distributed_executor_backend='external_launcher' (the trainer does), not a separate "
    "worker process"
)


def worker_model(engine: Any) -> Any:
    """The model object inside an in-process vLLM worker (what ``load_weights`` is called on)."""
    executor = getattr(getattr(engine, "llm_engine", None), "model_executor", None)
    worker = getattr(executor, "driver_worker", None)
    for holder in (worker, getattr(worker, "worker", None)):
        model = getattr(getattr(holder, "model_runner", None), "model", None)
        if model is not None and hasattr(model, "load_weights"):
            return model
    raise RuntimeError(IN_PROCESS_ONLY)


def _whole(tensor: Any) -> Any:
    """A sharded ``DTensor`` gathered whole (a collective); a plain tensor as it is."""
    return tensor.full_tensor() if hasattr(tensor, "full_tensor") else tensor


def _logprob_value(entry: Any) -> float:
    """A vLLM ``Logprob`` object (``.logprob``) or a plain float."""
    return float(getattr(entry, "logprob", entry))


def _picked_logprob(position: Any, token_id: int) -> float:
    """Log-prob of ``token_id`` from one position's ``{token_id: Logprob}`` mapping."""
    if position is None:
        return float("nan")
    if token_id in position:
        return _logprob_value(position[token_id])
    raise KeyError(f"vLLM returned no log-prob for token {token_id}")


def to_vllm_kwargs(params: SamplingParams, *, prompt_logprobs: int | None = None) -> dict:
    """Map :class:`SamplingParams` to ``vllm.SamplingParams`` keyword arguments."""
    kwargs: dict[str, Any] = {
        "n": 1,
        "max_tokens": params.max_new_tokens,
        "temperature": params.temperature,
        "top_p": params.top_p,
        "seed": params.seed,
        "stop": list(params.stop) or None,
        "stop_token_ids": list(params.stop_token_ids) or None,
        "include_stop_str_in_output": params.include_stop_str_in_output,
        "logprobs": 0,
        "skip_special_tokens": True,
    }
    if prompt_logprobs is not None:
        kwargs["prompt_logprobs"] = prompt_logprobs
    return kwargs


def colocated_vllm(model: str, *, seed: int = 0, tokenizer: Any = None,
                   **engine_kwargs: Any) -> VLLMBackend:
    """A :class:`VLLMBackend` for training: its worker runs in this (single) process, so
    :meth:`VLLMBackend.sync_weights` can reach the model; it takes 30% of the GPU by default,
    leaving the rest to the trained copy, its optimizer and the teacher/reference forwards."""
    single = {"RANK": "0", "LOCAL_RANK": "0", "WORLD_SIZE": "1", "MASTER_ADDR": "127.0.0.1"}
    for key, value in single.items():
        os.environ.setdefault(key, value)
    if "MASTER_PORT" not in os.environ:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            os.environ["MASTER_PORT"] = str(probe.getsockname()[1])
    kwargs = {"distributed_executor_backend": "external_launcher", "gpu_memory_utilization": 0.3,
              "seed": seed, **engine_kwargs}
    return VLLMBackend(model, tokenizer=tokenizer, **kwargs)


class VLLMBackend(PolicyBackend):
    """Generate with a vLLM engine.

    Args:
        model: Model folder or hub id for ``vllm.LLM`` (ignored when ``engine`` is given).
        engine: An existing ``vllm.LLM``-like object (``generate`` and ``get_tokenizer``);
            tests inject a fake here.
        tokenizer: Tokenizer used to encode prompts; default ``engine.get_tokenizer()``.
        sampling_params_cls: Class building vLLM sampling params; default
            ``vllm.SamplingParams`` (or ``SimpleNamespace`` with an injected engine when
            vLLM is not installed).
        **engine_kwargs: Passed to ``vllm.LLM`` (e.g. ``gpu_memory_utilization``).
    """

    def __init__(
        self,
        model: str | None = None,
        *,
        engine: Any = None,
        tokenizer: Any = None,
        sampling_params_cls: Any = None,
        **engine_kwargs: Any,
    ) -> None:
        vllm: Any = None
        try:
            import vllm
        except ImportError as err:
            if engine is None:
                raise ImportError(VLLM_MISSING) from err
        if engine is None:
            if model is None:
                raise ValueError("pass a model path/id or an engine")
            engine = vllm.LLM(model=model, **engine_kwargs)
        if sampling_params_cls is None:
            sampling_params_cls = vllm.SamplingParams if vllm is not None else SimpleNamespace
        self.engine = engine
        self.tokenizer = tokenizer if tokenizer is not None else engine.get_tokenizer()
        self.sampling_params_cls = sampling_params_cls

    def sync_weights(self, model: Any) -> None:
        """Load ``model``'s parameters (a ``torch.nn.Module`` being trained) into the engine."""
        # One call: vLLM's load_weights indexes the model's parameters on every call. A sharded
        # (FSDP) parameter is gathered whole one at a time, as load_weights consumes it, so the
        # extra memory is one parameter; every rank syncs its own engine (same order).
        worker_model(self.engine).load_weights(
            (name, _whole(parameter.detach())) for name, parameter in model.named_parameters())
        self.engine.reset_prefix_cache()

    def _encode(self, prompts: Sequence[str]) -> list[list[int]]:
        return [list(self.tokenizer.encode(p, add_special_tokens=False)) for p in prompts]

    def generate(self, prompts: Sequence[str], params: SamplingParams) -> list[Generation]:
        """Sample one response per rendered prompt string."""
        return self.generate_from_ids(self._encode(prompts), params)

    def generate_from_ids(
        self, prompt_ids: Sequence[Sequence[int]], params: SamplingParams
    ) -> list[Generation]:
        """Sample one response per prompt given as token ids."""
        if not prompt_ids:
            return []
        if params.row_seeds is None:
            sampling: Any = self.sampling_params_cls(**to_vllm_kwargs(params))
        else:  # a seed per request: vLLM gives each its own generator
            sampling = [self.sampling_params_cls(**to_vllm_kwargs(row))
                        for row in params.per_row(len(prompt_ids))]
        requests = [{"prompt_token_ids": list(ids)} for ids in prompt_ids]
        outputs = self.engine.generate(requests, sampling_params=sampling, use_tqdm=False)
        if len(outputs) != len(requests):
            raise RuntimeError(f"vLLM returned {len(outputs)} outputs for {len(requests)} prompts")
        return [self._to_generation(ids, out) for ids, out in zip(prompt_ids, outputs)]

    @staticmethod
    def _to_generation(prompt_ids: Sequence[int], output: Any) -> Generation:
        completion = output.outputs[0]
        response_ids = [int(t) for t in completion.token_ids]
        positions = completion.logprobs or []
        logprobs = [_picked_logprob(pos, tok) for pos, tok in zip(positions, response_ids)]
        reason = completion.finish_reason
        return Generation(
            text=completion.text,
            prompt_ids=list(getattr(output, "prompt_token_ids", None) or prompt_ids),
            response_ids=response_ids,
            logprobs=logprobs,
            finish_reason="length" if reason == "length" else "stop",
        )

    def score(
        self, prompt_ids: Sequence[Sequence[int]], response_ids: Sequence[Sequence[int]]
    ) -> list[list[float]]:
        """Raw-model log-probs of given responses, via vLLM ``prompt_logprobs``."""
        if len(prompt_ids) != len(response_ids):
            raise ValueError("prompt_ids and response_ids must have the same length")
        if not prompt_ids:
            return []
        params = SamplingParams(max_new_tokens=1, temperature=0)
        sampling = self.sampling_params_cls(**to_vllm_kwargs(params, prompt_logprobs=0))
        requests = [
            {"prompt_token_ids": list(p) + list(r)} for p, r in zip(prompt_ids, response_ids)
        ]
        outputs = self.engine.generate(requests, sampling_params=sampling, use_tqdm=False)
        scores: list[list[float]] = []
        for prompt, response, out in zip(prompt_ids, response_ids, outputs):
            positions = list(out.prompt_logprobs or [])[len(prompt) :]
            scores.append([_picked_logprob(pos, int(t)) for pos, t in zip(positions, response)])
        return scores
