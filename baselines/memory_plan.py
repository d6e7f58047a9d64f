"""Per-GPU memory plan of a training run, checked before anything is loaded.

For ``N`` parameters in ``T`` tensors, ``S`` shards (the world size under ``sharding="fsdp"``,
else 1) and the compute dtype's ``c`` bytes (2 for bfloat16), one GPU holds:

* parameters: ``4·N/S`` (float32 master weights);
* gradients: ``4·N/S`` (float32);
* optimizer: ``8·N/S + 4·T`` (AdamW's two float32 moments, and one step counter per tensor);
* frozen reference/teacher: ``c·N/S`` when the KL term or a frozen teacher needs it (one copy,
  :class:`baselines.teacher.TeacherWeights`); EMA teacher: ``4·N/S`` when a head uses it;
* compute-dtype weights: ``c·N`` under mixed precision (autocast's cast weights; under FSDP the
  whole model gathered for the no-grad forwards of generation and scoring);
* activations of one micro batch of ``b`` rows of ``s = prompt + response`` tokens, per layer per
  token ``8·h + 4·I + 2·kv`` values (``h`` hidden, ``I`` MLP width, ``kv`` key/value width), or
  only each layer's input under gradient checkpointing (plus one layer recomputed);
* logits of the micro batch's response tokens: ``b·(R+1)·V·(c + 12)`` bytes (the logits, their
  float32 copy, the log-softmax kept for backward and the entropy's probabilities);
* the colocated vLLM engine: ``gpu_memory_utilization`` of the GPU (one engine per rank);
* CUDA context and allocator reserve (2 GiB, on CUDA only).

Activations and logits are estimates (prompt length from the prompt limits); the first three
lines are exact for AdamW on one process (tested against what PyTorch allocates).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from baselines.config import TrainConfig, replace_settings

GIB = 2**30
SHAPE_DIR = Path(__file__).parent / "model_shapes"
DEFAULT_GPU_GIB = 80.0
CUDA_RESERVE = 2 * GIB
DEFAULT_VLLM_SHARE = 0.3  # agents.backends.vllm_backend.colocated_vllm's default
TINY_SHAPE_KEYS = ("vocab_size", "hidden_size", "num_layers", "initializer_range")


class MemoryPlanError(ValueError):
    """A run that does not fit its GPUs (the message says what to change)."""


@dataclass(frozen=True)
class ModelShape:
    """What the plan needs to know about a model."""

    name: str
    parameters: int
    tensors: int
    hidden_size: int
    intermediate_size: int
    num_layers: int
    vocab_size: int
    kv_size: int


def shape_from_config(config: Any, name: str) -> ModelShape:
    """The :class:`ModelShape` of a transformers config (built on the meta device: no memory)."""
    import torch
    from transformers import AutoModelForCausalLM

    config = getattr(config, "text_config", None) or config
    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(config)
    params = list(model.parameters())
    heads = getattr(config, "num_attention_heads", 1)
    head_dim = getattr(config, "head_dim", None) or config.hidden_size // heads
    return ModelShape(
        name=name, parameters=sum(p.numel() for p in params), tensors=len(params),
        hidden_size=config.hidden_size, intermediate_size=config.intermediate_size,
        num_layers=config.num_hidden_layers, vocab_size=config.vocab_size,
        kv_size=getattr(config, "num_key_value_heads", heads) * head_dim)


def packaged_shapes() -> list[str]:
    """Model names with a shipped config (``baselines/model_shapes/<name>.json``)."""
    return sorted(p.stem for p in SHAPE_DIR.glob("*.json"))


def packaged_config(name: str) -> Any:
    """The transformers config shipped for model ``name`` (``Qwen/Qwen3.5-9B`` or ``Qwen3.5-9B``)."""
    from transformers import AutoConfig

    path = SHAPE_DIR / f"{name.split('/')[-1]}.json"
    if not path.is_file():
        raise ValueError(f"no config for model {name!r}: not in the local cache and not shipped "
                         f"(shipped: {packaged_shapes()})")
    values = {k: v for k, v in json.loads(path.read_text()).items() if not k.startswith("_")}
    return AutoConfig.for_model(values.pop("model_type"), **values)


@cache
def model_shape(model: str, tiny: tuple[tuple[str, Any], ...] = ()) -> ModelShape:
    """The shape of ``TrainConfig.model.name`` (``tiny``: ``TrainConfig.model.tiny`` items), from its
    folder's or the local hub cache's ``config.json``, else the shipped config of that name, else,
    for a sized warm start not built yet (``searchqa-hasty-sft-tiny-l``), its size's tiny shape
    (:data:`agents.model_sizes.MODEL_SIZES`)."""
    from agents.model_sizes import MODEL_SIZES, size_suffix
    from agents.tiny_model import tiny_model_config
    from agents.warm_starts import resolve_model

    if model == "tiny":
        kwargs = {k: v for k, v in tiny if k in TINY_SHAPE_KEYS}
        return shape_from_config(tiny_model_config(**kwargs), "tiny")
    try:
        from transformers import AutoConfig

        config = AutoConfig.from_pretrained(resolve_model(model))
    except (OSError, ValueError):
        size = size_suffix(model)
        config = tiny_model_config(**MODEL_SIZES[size]) if size else packaged_config(model)
    return shape_from_config(config, model)


def prompt_tokens(config: TrainConfig) -> int:
    """Estimated prompt tokens of one turn (3.5 characters a token, 256 for instructions)."""
    from agents.prompts import PromptLimits

    limits = PromptLimits.from_dict(config.rollout.prompt)
    history = 4 if limits.history is None else limits.history
    chars = limits.observation_chars + history * limits.history_chars + 25 * limits.max_admissible
    return 256 + math.ceil(chars / 3.5)


def gpu_bytes(config: TrainConfig) -> tuple[int, str]:
    """``(bytes, where the number comes from)`` of the GPU the plan checks against."""
    if config.infra.gpu_memory_gib:
        return int(config.infra.gpu_memory_gib * GIB), "gpu_memory_gib"
    try:
        import torch

        if torch.cuda.is_available():
            return torch.cuda.get_device_properties(0).total_memory, "detected"
    except ImportError:
        pass
    return int(DEFAULT_GPU_GIB * GIB), f"assumed {DEFAULT_GPU_GIB:.0f} GiB"


@dataclass
class MemoryPlan:
    """Bytes per GPU of one run, line by line."""

    model: str
    world_size: int
    sharding: str
    gpu_bytes: int
    gpu_basis: str
    lines: dict[str, int] = field(default_factory=dict)

    @property
    def total(self) -> int:
        """Sum of the lines."""
        return sum(self.lines.values())

    @property
    def fits(self) -> bool:
        """Whether the total fits the GPU."""
        return self.total <= self.gpu_bytes

    def table(self) -> str:
        """The plan as aligned text lines."""
        width = max(len(k) for k in self.lines)
        head = (f"memory plan: {self.model}, {self.world_size} GPU(s), {self.sharding}, per GPU "
                f"(GPU {self.gpu_bytes / GIB:.1f} GiB, {self.gpu_basis})")
        rows = [f"  {k:<{width}}  {v / GIB:8.2f} GiB" for k, v in self.lines.items()]
        verdict = "fits" if self.fits else "DOES NOT FIT"
        rows.append(f"  {'total':<{width}}  {self.total / GIB:8.2f} GiB  ({verdict})")
        return "\n".join([head, *rows])


def _teacher_modes(config: TrainConfig) -> list[str]:
    from baselines.heads import make_head
    from baselines.learner import teacher_weight_modes

    return teacher_weight_modes(make_head(config.method, **config.head), config)


def plan_memory(config: TrainConfig, world_size: int = 1, shape: ModelShape | None = None,
                gpu: tuple[int, str] | None = None) -> MemoryPlan:
    """The per-GPU :class:`MemoryPlan` of ``config`` on ``world_size`` GPUs (module docstring)."""
    from agents.model_loading import resolve_dtype

    shape = shape or model_shape(config.model.name, tuple(sorted(config.model.tiny.items())))
    gpu_total, basis = gpu or gpu_bytes(config)
    shards = world_size if config.infra.sharding == "fsdp" else 1
    n, c = math.ceil(shape.parameters / shards), resolve_dtype(config.model.dtype, config.infra.device).itemsize
    modes = _teacher_modes(config)
    lines = {"parameters (float32 master)": 4 * n, "gradients (float32)": 4 * n,
             "optimizer (AdamW, float32)": 8 * n + 4 * shape.tensors}
    if "frozen" in modes:
        lines[f"frozen reference/teacher ({c * 8}-bit)"] = c * n
    if "ema" in modes:
        lines["EMA teacher (float32)"] = 4 * n
    if c < 4 or shards > 1:
        lines["compute-dtype weights (cast/gathered)"] = c * shape.parameters
    b, response = config.grpo.micro_batch_size, config.rollout.max_new_tokens
    tokens = b * (prompt_tokens(config) + response)
    per_layer = 8 * shape.hidden_size + 4 * shape.intermediate_size + 2 * shape.kv_size
    if config.infra.gradient_checkpointing:
        activations = tokens * c * (shape.num_layers * shape.hidden_size + per_layer)
    else:
        activations = tokens * c * shape.num_layers * per_layer
    lines[f"activations (micro batch {b}, {tokens // b} tokens)"] = activations
    lines[f"logits ({b} x {response + 1} x {shape.vocab_size})"] = \
        b * (response + 1) * shape.vocab_size * (c + 12)
    if config.rollout.backend == "vllm":
        share = float(config.rollout.vllm_kwargs.get("gpu_memory_utilization", DEFAULT_VLLM_SHARE))
        lines[f"vLLM engine ({share:.0%} of the GPU, one per rank)"] = int(share * gpu_total)
    if config.infra.device.startswith("cuda"):
        lines["CUDA context and allocator reserve"] = CUDA_RESERVE
    return MemoryPlan(shape.name, world_size, config.infra.sharding, gpu_total, basis, lines)


def fixes(config: TrainConfig, world_size: int, gpu: tuple[int, str]) -> list[str]:
    """Changes that make ``config`` fit: more GPUs under FSDP (with gradient checkpointing if
    needed), gradient checkpointing, a smaller micro batch, a smaller vLLM share."""
    def fits(world: int, changes: dict[str, Any]) -> bool:
        return plan_memory(replace_settings(config, changes), world, gpu=gpu).fits

    found = []
    for extra in ({}, {"infra.gradient_checkpointing": True}):
        gpus = next((g for g in (2, 4, 8, 16, 32, 64)
                     if g >= world_size and fits(g, {"infra.sharding": "fsdp", **extra})), None)
        if gpus is not None:
            found.append(f"infra.sharding='fsdp' on {gpus} GPUs (torchrun --nproc-per-node {gpus})"
                         + "".join(f" with {k}={v!r}" for k, v in extra.items()))
            break
    if not config.infra.gradient_checkpointing and fits(
            world_size, {"infra.gradient_checkpointing": True}):
        found.append("infra.gradient_checkpointing=True")
    size = config.grpo.micro_batch_size // 2
    while size >= 1 and not fits(world_size, {"grpo.micro_batch_size": size}):
        size //= 2
    if size >= 1:
        found.append(f"grpo.micro_batch_size={size}")
    share = {**config.rollout.vllm_kwargs, "gpu_memory_utilization": 0.15}
    if config.rollout.backend == "vllm" and fits(world_size, {"rollout.vllm_kwargs": share}):
        found.append("rollout.vllm_kwargs={'gpu_memory_utilization': 0.15}")
    return found


def fit_advice(config: TrainConfig, world_size: int = 1) -> str | None:
    """The :class:`MemoryPlanError` message of ``config`` as if it ran on CUDA (None: fits)."""
    try:
        check_fits(replace_settings(config, {"infra.device": "cuda"})
                   if not config.infra.device.startswith("cuda") else config, world_size)
    except MemoryPlanError as error:
        return str(error)
    return None


def check_fits(config: TrainConfig, world_size: int = 1) -> MemoryPlan | None:
    """The plan of a CUDA run (None for CPU runs, which are not checked);
    :class:`MemoryPlanError` (one line saying what to change) when it does not fit."""
    if not config.infra.device.startswith("cuda"):
        return None
    gpu = gpu_bytes(config)
    plan = plan_memory(config, world_size, gpu=gpu)
    if plan.fits:
        return plan
    biggest = sorted(plan.lines.items(), key=lambda kv: -kv[1])[:3]
    detail = ", ".join(f"{k} {v / GIB:.1f}" for k, v in biggest)
    options = fixes(config, world_size, gpu)
    advice = ("set one of: " + "; or ".join(options)) if options else \
        "no layout up to 64 GPUs fits: use a smaller model"
    raise MemoryPlanError(
        f"memory plan: {plan.model} needs {plan.total / GIB:.1f} GiB per GPU on {world_size} "
        f"GPU(s) ({config.infra.sharding}) but a GPU has {plan.gpu_bytes / GIB:.1f} GiB (largest: "
        f"{detail} GiB); {advice} (see sdgym train --dry-run)")
