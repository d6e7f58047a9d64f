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

from agents.model_loading import check_dtype_name
from agents.pools import ROLLOUT_BACKENDS
from agents.prompts import PromptLimits
from baselines.grpo import GRPOConfig
from baselines.typecheck import check_fields

PRESET_DIR = Path(__file__).parent / "presets"
WANDB_MODES: tuple[str, ...] = ("offline", "online", "disabled")
SFT_INPUT: dict[str, bool] = {"sft_input": True}
"""Field metadata: the field changes the SFT warm start, so it enters its cache key
(:func:`sft_inputs`, :mod:`baselines.warm_start`). Tag every new field that SFT reads."""
SHARDINGS: tuple[str, ...] = ("replicated", "fsdp")


@dataclass
class TrainConfig:
    """One training run (one env, one method, one seed)."""

    env_id: str = field(default="sdgym/SearchQA-v0", metadata=SFT_INPUT)
    env_kwargs: dict[str, Any] = field(default_factory=lambda: {"size": "tiny"}, metadata=SFT_INPUT)
    train_split: str = field(default="easy_train", metadata=SFT_INPUT)
    val_split: str = "easy_val"
    test_split: str = "test"
    method: str = "grpo"
    head_kwargs: dict[str, Any] = field(default_factory=dict)
    model: str = field(default="tiny", metadata=SFT_INPUT)
    """``"tiny"`` (built locally) or a model folder / hub id available offline."""
    tiny_model: dict[str, Any] = field(default_factory=dict, metadata=SFT_INPUT)
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
    seed: int = field(default=0, metadata=SFT_INPUT)
    sft_steps: int = field(default=150, metadata=SFT_INPUT)
    sft_lr: float = field(default=3e-3, metadata=SFT_INPUT)
    sft_batch_size: int = field(default=16, metadata=SFT_INPUT)
    sft_tasks: int = field(default=200, metadata=SFT_INPUT)
    sft_context_loss_weight: float = field(default=0.0, metadata=SFT_INPUT)
    """Weight of the prompt tokens' LM loss in SFT (see ``baselines.sft.behaviour_clone``)."""
    sft_warmup_steps: int = field(default=0, metadata=SFT_INPUT)
    """SFT learning-rate warm-up steps, then linear decay (0: constant learning rate)."""
    sft_hasty_fraction: float = field(default=0.0, metadata=SFT_INPUT)
    """Share of SFT episodes replaced by an immediate wrong answer (``baselines.sft.
    hasty_demonstrations``): an imperfect demonstrator, for a warm start that leaves RL room."""
    sft_hasty_turn: int = field(default=1, metadata=SFT_INPUT)
    """The turn a hasty episode answers at (``baselines.sft.hasty_demonstrations``)."""
    sft_teacher_fraction: float = field(default=0.0, metadata=SFT_INPUT)
    """Share of each SFT batch drawn from the (unmixed) expert turns under their *teacher* prompt
    (privileged block included), so that the self-distillation teacher can read that block."""
    sft_teacher_contexts: list[str] = field(default_factory=lambda: ["privileged"],
                                           metadata=SFT_INPUT)
    """Teacher contexts those teacher prompts carry, one drawn per expert episode
    (``baselines.sft.with_teacher_contexts``): list every context the heads use, or their
    teachers cannot read it."""
    steps: int = 20
    num_groups: int = 4
    group_size: int = 4
    lr: float = 3e-4
    ppo_epochs: int = 1
    micro_batch_size: int = 32
    max_grad_norm: float = 1.0
    max_new_tokens: int = 40
    prompt: dict[str, Any] = field(default_factory=dict, metadata=SFT_INPUT)
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
        check_fields(self)  # a preset's `seeds = "0"` or `lr = "abc"`: one line naming the field
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
        if self.wandb_mode not in WANDB_MODES:
            raise ValueError(f"wandb_mode must be one of {WANDB_MODES}, got {self.wandb_mode!r}")
        check_dtype_name(self.dtype)
        if self.sharding not in SHARDINGS:
            raise ValueError(f"sharding must be one of {SHARDINGS}, got {self.sharding!r}")
        if not isinstance(self.gradient_checkpointing, bool):
            raise ValueError(f"gradient_checkpointing must be true or false, "
                             f"got {self.gradient_checkpointing!r}")
        if isinstance(self.gpu_memory_gib, bool) or not isinstance(self.gpu_memory_gib, (int, float)) \
                or self.gpu_memory_gib < 0:
            raise ValueError(f"gpu_memory_gib must be a number >= 0, got {self.gpu_memory_gib!r}")
        self._check_head()

    def _check_head(self) -> None:
        """The method exists and takes ``head_kwargs`` (its choice fields checked now, not at the
        first step)."""
        from baselines.heads import make_head

        try:
            make_head(self.method, **self.head_kwargs)
        except TypeError as error:
            raise ValueError(f"head_kwargs for method {self.method!r}: {error}") from None

    def run_dir(self) -> Path:
        """``out_dir/<env>/<method>/seed<seed>``."""
        env = self.env_id.split("/")[-1]
        return Path(self.out_dir) / env / self.method / f"seed{self.seed}"

    def to_dict(self) -> dict[str, Any]:
        """Plain-data form (JSON/TOML ready)."""
        return dataclasses.asdict(self)


def sft_inputs(config: TrainConfig) -> dict[str, Any]:
    """The values of ``config``'s fields tagged :data:`SFT_INPUT` (what the warm start depends on)."""
    return {f.name: getattr(config, f.name) for f in dataclasses.fields(TrainConfig)
            if f.metadata.get("sft_input")}


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


def preset_path(name: str, directory: Path, kind: str, suffix: str = "") -> Path:
    """The file of preset ``name`` in ``directory`` (or ``name`` itself when it ends in ``.toml``).

    ``suffix``: the file names of this kind end in it (``"-bench"``); ``name`` may leave it out."""
    if name.endswith(".toml"):
        path = Path(name)
    else:
        path = directory / f"{name}.toml"
        if not path.exists() and suffix and not name.endswith(suffix):
            path = directory / f"{name}{suffix}.toml"
    if not path.exists():
        available = sorted(p.stem for p in directory.glob("*.toml"))
        kind_text = "" if kind == "training" else f"{kind} "
        raise ValueError(f"unknown {kind_text}preset {name!r}; available: {available}")
    return path


def preset_chain(path: Path, directory: Path, kind: str, suffix: str = "") -> list[Path]:
    """``path`` and the presets it ``extends``, base first (a name is looked up beside the file
    that names it, then in ``directory``)."""
    chain = [path]
    while True:
        parent = read_toml(chain[0]).get("extends")
        if parent is None:
            return chain
        if not isinstance(parent, str):
            raise ValueError(f"{chain[0].name}: extends must be a preset name, got {parent!r}")
        beside = chain[0].parent / f"{parent}.toml"
        parent_path = beside if beside.exists() else preset_path(parent, directory, kind, suffix)
        if parent_path.resolve() in {p.resolve() for p in chain}:
            names = " -> ".join(p.stem for p in [*reversed(chain), parent_path])
            raise ValueError(f"{kind} presets extend each other in a loop: {names}")
        chain.insert(0, parent_path)


def merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """``override`` over ``base``; tables are merged key by key."""
    merged = dict(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def read_preset(path: Path, directory: Path, kind: str, suffix: str = "") -> dict[str, Any]:
    """A preset file's values with its ``extends`` chain applied (``description`` is the file's own,
    not inherited)."""
    values: dict[str, Any] = {}
    for link in preset_chain(path, directory, kind, suffix):
        own = read_toml(link)
        own.pop("extends", None)
        values.pop("description", None)
        values = merge(values, own)
    return values


def available_presets() -> list[str]:
    """Names of the training preset files."""
    return sorted(p.stem for p in PRESET_DIR.glob("*.toml"))


TABLE_ALIASES: dict[str, str] = {"head": "head_kwargs", "env": "env_kwargs", "vllm": "vllm_kwargs"}
"""Short names of tables in dotted overrides: ``head.teacher_weights=frozen``."""


def dotted_overrides(overrides: dict[str, Any]) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """Split ``{"lr": 1e-3, "grpo.kl_coef": 0.0, "head.teacher_weights": "frozen"}`` into plain
    fields and ``{table: {key: value}}`` to merge into the preset's tables (``grpo``, ``prompt``,
    ``env_kwargs`` (``env``), ``head_kwargs`` (``head``), ``tiny_model``, ``vllm_kwargs``
    (``vllm``)); ValueError naming an unknown table."""
    tables = {"grpo"} | {f.name for f in dataclasses.fields(TrainConfig)
                         if f.name != "grpo" and f.type in ("dict[str, Any]", dict[str, Any])}
    flat: dict[str, Any] = {}
    nested: dict[str, dict[str, Any]] = {}
    for key, value in overrides.items():
        table, dot, sub = key.partition(".")
        if not dot:
            flat[key] = value
            continue
        table = TABLE_ALIASES.get(table, table)
        if table not in tables or not sub:
            raise ValueError(f"--set {key}: {table!r} is not a table of the training config "
                             f"(tables: {', '.join(sorted(tables | set(TABLE_ALIASES)))})")
        nested.setdefault(table, {})[sub] = value
    return flat, nested


def load_preset(name: str, tables: dict[str, dict[str, Any]] | None = None,
                **overrides: Any) -> TrainConfig:
    """Read training preset ``name`` (or a path to a TOML file), resolve ``extends = "<base>"``
    (the base's values, then this file's; tables merged key by key), merge ``tables`` into the
    preset's tables key by key and apply ``overrides`` (whole values)."""
    path = preset_path(name, PRESET_DIR, "training")
    values = merge(read_preset(path, PRESET_DIR, "training"), tables or {})
    values.pop("description", None)
    grpo = {**values.pop("grpo", {}), **overrides.pop("grpo", {})}
    return from_dict({**values, **overrides, "grpo": grpo})
