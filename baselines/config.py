"""Training configuration: dataclasses, and presets stored as TOML files in ``baselines/presets``.

A preset file holds any subset of :class:`TrainConfig`'s fields (tables for the nested ``grpo``
section); ``load_preset("cpu-mini", method="sdar")`` reads it and applies overrides.
"""

from __future__ import annotations

import dataclasses
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agents.env_pool import ROLLOUT_BACKENDS
from agents.model_loading import check_dtype_name
from agents.prompts import PromptLimits
from baselines.grpo import GRPOConfig

PRESET_DIR = Path(__file__).parent / "presets"
SHARDINGS: tuple[str, ...] = ("replicated", "fsdp")


@dataclass
class TrainConfig:
    """One training run (one env, one method, one seed)."""

    env_id: str = "sdgym/SearchQA-v0"
    env_kwargs: dict[str, Any] = field(default_factory=lambda: {"size": "tiny"})
    train_split: str = "easy_train"
    val_split: str = "easy_val"
    test_split: str = "test"
    method: str = "grpo"
    head_kwargs: dict[str, Any] = field(default_factory=dict)
    model: str = "tiny"
    """``"tiny"`` (built locally) or a model folder / hub id available offline."""
    tiny_model: dict[str, Any] = field(default_factory=dict)
    device: str = "cpu"
    backend: str = "hf"
    """Rollout generation: ``"hf"`` (the trained module itself) or ``"vllm"`` (a colocated
    vLLM engine that gets the trained weights after every update; one process, GPU)."""
    vllm_kwargs: dict[str, Any] = field(default_factory=dict)
    """Extra ``vllm.LLM`` arguments for ``backend="vllm"`` (e.g. ``gpu_memory_utilization``)."""
    rollout_backend: str = "local"
    """Where the rollout sub-envs live: ``"local"`` (a vector env) or ``"ray"`` (env actors)."""
    ray_address: str | None = None
    """Ray cluster to join for ``rollout_backend="ray"`` (``None``: a local Ray instance)."""
    ray_num_workers: int = 2
    """Env actors for ``rollout_backend="ray"``."""
    seed: int = 0
    sft_steps: int = 150
    sft_lr: float = 3e-3
    sft_batch_size: int = 16
    sft_tasks: int = 200
    sft_context_loss_weight: float = 0.0
    """Weight of the prompt tokens' LM loss in SFT (see ``baselines.sft.behaviour_clone``)."""
    sft_warmup_steps: int = 0
    """SFT learning-rate warm-up steps, then linear decay (0: constant learning rate)."""
    sft_hasty_fraction: float = 0.0
    """Share of SFT episodes replaced by an immediate wrong answer (``baselines.sft.
    hasty_demonstrations``): an imperfect demonstrator, for a warm start that leaves RL room."""
    sft_hasty_turn: int = 1
    """The turn a hasty episode answers at (``baselines.sft.hasty_demonstrations``)."""
    sft_teacher_fraction: float = 0.0
    sft_teacher_contexts: list[str] = field(default_factory=lambda: ["privileged"])
    """Teacher contexts those teacher prompts carry, one drawn per expert episode
    (``baselines.sft.with_teacher_contexts``): list every context the heads use, or their
    teachers cannot read it."""
    """Share of each SFT batch drawn from the (unmixed) expert turns under their *teacher* prompt
    (privileged block included), so that the self-distillation teacher can read that block."""
    steps: int = 20
    num_groups: int = 4
    group_size: int = 4
    lr: float = 3e-4
    ppo_epochs: int = 1
    micro_batch_size: int = 32
    max_grad_norm: float = 1.0
    max_new_tokens: int = 40
    prompt: dict[str, Any] = field(default_factory=dict)
    """Student prompt limits (``agents.prompts.PromptLimits`` fields: history,
    observation_chars, history_chars, max_admissible); empty = the defaults."""
    temperature: float = 1.0
    tempered_logprobs: bool = False
    """Train the policy rollouts sample from, ``softmax(logits / temperature)`` (verl's convention):
    the loss, the PPO ratio's old log-probs (recomputed before the update), entropy, teacher and
    reference log-probs all use the tempered distribution. False: raw-model log-probs."""
    val_temperature: float = 0.4
    val_every: int = 5
    val_episodes: int = 16
    val_teacher: bool = True
    """At each validation point, also measure the teacher head's teacher acting with its context
    (``val/teacher_success``; per-turn contexts only), so a weak teacher is visible."""
    test_episodes: int = 16
    test_seeds: int = 8
    checkpoint_every: int = 5
    grpo: GRPOConfig = field(default_factory=GRPOConfig)
    out_dir: str = "runs"
    wandb_project: str | None = None
    """Also log to Weights & Biases under this project (needs ``pip install wandb``)."""
    wandb_mode: str = "offline"
    """``wandb.init`` mode: ``"offline"`` (default: files only), ``"online"`` or ``"disabled"``."""
    dtype: str = "auto"
    """Compute dtype (``agents.model_loading``): ``"auto"`` (bfloat16 on CUDA, float32 on CPU),
    ``"float32"`` or ``"bfloat16"``. The trained policy keeps float32 master weights, gradients
    and AdamW states; its forwards run in this dtype (autocast, or FSDP's mixed-precision policy);
    the frozen reference/teacher copy is stored in it (the EMA teacher stays float32: its small
    updates would round away in bfloat16)."""
    sharding: str = "replicated"
    """Data-parallel layout under ``torchrun``: ``"replicated"`` (every rank holds the whole model,
    gradients all-reduced; for small models) or ``"fsdp"`` (``torch.distributed.fsdp.fully_shard``
    per decoder layer: parameters, gradients, optimizer states and frozen/EMA copies sharded)."""
    gradient_checkpointing: bool = False
    """Recompute each decoder layer's activations in the backward pass (less memory, ~1/3 more
    compute)."""
    gpu_memory_gib: float = 0.0
    """GPU memory the memory plan checks against (0: the detected GPU's, else 80 GiB)."""

    def __post_init__(self) -> None:
        if self.rollout_backend not in ROLLOUT_BACKENDS:
            raise ValueError(f"rollout_backend must be one of {ROLLOUT_BACKENDS}, "
                             f"got {self.rollout_backend!r}")
        PromptLimits.from_dict(self.prompt)  # unknown keys fail when the config is built
        import gymnasium as gym

        import sdgym  # noqa: F401  (registers the env ids)

        if self.env_id not in gym.registry:
            known = sorted(k for k in gym.registry if k.startswith("sdgym/"))
            raise ValueError(f"unknown env_id {self.env_id!r}; choose from {known}")
        if self.backend == "openai":
            raise ValueError("training takes backend 'hf' or 'vllm', not 'openai': samples from a "
                             "remote server are off-policy unless it reloads the trained weights "
                             "after every update (sdgym eval/rollout take --backend openai)")
        if self.backend not in ("hf", "vllm"):
            raise ValueError(f"backend must be 'hf' or 'vllm', got {self.backend!r}")
        if self.ray_num_workers < 1:
            raise ValueError(f"ray_num_workers must be >= 1, got {self.ray_num_workers}")
        counts = ("steps", "sft_steps", "num_groups", "group_size", "micro_batch_size",
                  "ppo_epochs", "val_every", "checkpoint_every", "val_episodes", "test_episodes",
                  "test_seeds", "max_new_tokens", "sft_batch_size", "sft_tasks", "seed", "sft_hasty_turn")
        for name in counts:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise ValueError(f"{name} must be an integer, got {value!r}")
        for name in ("lr", "sft_lr", "temperature", "val_temperature", "max_grad_norm"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ValueError(f"{name} must be a number, got {value!r}")
        for name in ("steps", "sft_steps"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0, got {getattr(self, name)}")
        for name in ("num_groups", "group_size", "micro_batch_size", "ppo_epochs", "val_every",
                     "checkpoint_every", "val_episodes", "test_episodes", "test_seeds",
                     "max_new_tokens", "sft_batch_size", "sft_hasty_turn"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        if not self.lr > 0:
            raise ValueError(f"lr must be > 0, got {self.lr}")
        if self.temperature < 0 or self.val_temperature < 0:
            raise ValueError("temperature and val_temperature must be >= 0")
        check_dtype_name(self.dtype)
        if self.sharding not in SHARDINGS:
            raise ValueError(f"sharding must be one of {SHARDINGS}, got {self.sharding!r}")
        if not isinstance(self.gradient_checkpointing, bool):
            raise ValueError(f"gradient_checkpointing must be true or false, "
                             f"got {self.gradient_checkpointing!r}")
        if isinstance(self.gpu_memory_gib, bool) or not isinstance(self.gpu_memory_gib, (int, float)) \
                or self.gpu_memory_gib < 0:
            raise ValueError(f"gpu_memory_gib must be a number >= 0, got {self.gpu_memory_gib!r}")

    def run_dir(self) -> Path:
        """``out_dir/<env>/<method>/seed<seed>``."""
        env = self.env_id.split("/")[-1]
        return Path(self.out_dir) / env / self.method / f"seed{self.seed}"

    def to_dict(self) -> dict[str, Any]:
        """Plain-data form (JSON/TOML ready)."""
        return dataclasses.asdict(self)


def from_dict(values: dict[str, Any]) -> TrainConfig:
    """A :class:`TrainConfig` from plain data; unknown keys are an error."""
    names = {f.name for f in dataclasses.fields(TrainConfig)}
    unknown = set(values) - names
    if unknown:
        raise ValueError(f"unknown training options {sorted(unknown)}")
    values = dict(values)
    grpo_values = values.pop("grpo", {})
    grpo_names = {f.name for f in dataclasses.fields(GRPOConfig)}
    if set(grpo_values) - grpo_names:
        raise ValueError(f"unknown grpo options {sorted(set(grpo_values) - grpo_names)}")
    return TrainConfig(**values, grpo=GRPOConfig(**grpo_values))


def read_toml(path: Path) -> dict[str, Any]:
    """The TOML document in ``path``; ValueError naming the file when it is not valid TOML."""
    try:
        return tomllib.loads(path.read_text())
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise ValueError(f"{path}: invalid TOML ({error})") from None


def available_presets() -> list[str]:
    """Names of the preset files."""
    return sorted(p.stem for p in PRESET_DIR.glob("*.toml"))


def load_preset(name: str, **overrides: Any) -> TrainConfig:
    """Read preset ``name`` (or a path to a TOML file) and apply ``overrides``."""
    path = Path(name) if name.endswith(".toml") else PRESET_DIR / f"{name}.toml"
    if not path.exists():
        raise ValueError(f"unknown preset {name!r}; available: {available_presets()}")
    values = read_toml(path)
    values.pop("description", None)
    grpo = {**values.pop("grpo", {}), **overrides.pop("grpo", {})}
    return from_dict({**values, **overrides, "grpo": grpo})
