"""Training configuration: nested dataclasses, and presets stored as TOML files in ``baselines/presets``.

:class:`TrainConfig` holds what a run is (env, method, seed, steps, output folder) and one section
per concern, each a dataclass checked when it is built (types from its hints, then its choices and
ranges; one line naming the field, e.g. ``sft.steps must be an integer, got '3'``):

========== =================== =================================================================
section    class               holds
========== =================== =================================================================
model      :class:`ModelConfig`       which model (or the tiny one and its shape), compute dtype
sft        :class:`SFTConfig`         the SFT warm start from expert demonstrations
grpo       :class:`~baselines.grpo.GRPOConfig`  returns, advantages, loss terms, optimiser
head       ``dict``            the method's knobs (``make_head(method, **head)`` checks them)
rollout    :class:`RolloutConfig`     groups, sampling, student prompt limits, backends, env pool
evaluation :class:`EvaluationConfig`  validation and the final test
infra      :class:`InfraConfig`       device, sharding, memory, checkpoints, logging
========== =================== =================================================================

A preset file holds any subset of these: top-level fields, then one table per section
(``[sft]``, ``[grpo]``, ``[rollout]``, ``[rollout.prompt]``, ``[head]``, …).
``load_preset("cpu-mini", method="sdar", sft={"steps": 0})`` reads one and applies overrides;
``settings={"head.teacher_weights": "frozen"}`` sets single dotted paths (``sdgym train --set``
and the typed ``--sft.steps 200`` options, :mod:`baselines.config_options`).
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
from baselines.typecheck import check_fields, field_default

PRESET_DIR = Path(__file__).parent / "presets"
WANDB_MODES: tuple[str, ...] = ("offline", "online", "disabled")
SFT_INPUT: dict[str, bool] = {"sft_input": True}
"""Field metadata: the field changes the SFT warm start, so it enters its cache key
(:func:`sft_inputs`, :mod:`baselines.warm_start`). Tag every new field that SFT reads, in any
section."""
SFT_INPUT_WHEN_SET: dict[str, bool] = {"sft_input": True, "keyed_when_set": True}
"""Field metadata of an SFT input added after warm starts were shipped: it enters the cache key
only when it differs from its default, so the recipe hashes of the shipped warm starts hold."""
SHARDINGS: tuple[str, ...] = ("replicated", "fsdp")
GENERATION_BACKENDS: tuple[str, ...] = ("hf", "vllm")


def _at_least(section: Any, prefix: str, bound: int, names: tuple[str, ...]) -> None:
    for name in names:
        if getattr(section, name) < bound:
            raise ValueError(f"{prefix}{name} must be >= {bound}, got {getattr(section, name)}")


@dataclass
class ModelConfig:
    """Which model is trained (the ``[model]`` table)."""

    name: str = field(default="tiny", metadata=SFT_INPUT)
    """``"tiny"`` (built locally) or a model folder / hub id available offline."""
    tiny: dict[str, Any] = field(default_factory=dict, metadata=SFT_INPUT)
    """Shape of the tiny model (``agents.tiny_model.build_tiny_model`` keywords)."""
    dtype: str = "auto"
    """Compute dtype (``agents.model_loading``): ``"auto"`` (bfloat16 on CUDA, float32 on CPU),
    ``"float32"`` or ``"bfloat16"``. The trained policy keeps float32 master weights, gradients
    and AdamW states; its forwards run in this dtype (autocast, or FSDP's mixed-precision policy);
    the frozen reference/teacher copy is stored in it (the EMA teacher stays float32: its small
    updates would round away in bfloat16)."""

    def __post_init__(self) -> None:
        check_fields(self, "model.")
        try:
            check_dtype_name(self.dtype)
        except ValueError as error:
            raise ValueError(f"model.{error}") from None


@dataclass
class SFTConfig:
    """The SFT warm start: behaviour cloning on the env's expert (the ``[sft]`` table). Every
    field enters the warm start's cache key."""

    steps: int = field(default=150, metadata=SFT_INPUT)
    """Optimizer steps of the SFT warm start (0: start from the model as it is)."""
    lr: float = field(default=3e-3, metadata=SFT_INPUT)
    """AdamW learning rate of the SFT warm start."""
    batch_size: int = field(default=16, metadata=SFT_INPUT)
    """Demonstration turns per SFT step."""
    tasks: int = field(default=200, metadata=SFT_INPUT)
    """Training-split tasks the expert demonstrations are taken from."""
    context_loss_weight: float = field(default=0.0, metadata=SFT_INPUT)
    """Weight of the prompt tokens' LM loss in SFT (see ``baselines.sft.behaviour_clone``)."""
    warmup_steps: int = field(default=0, metadata=SFT_INPUT)
    """SFT learning-rate warm-up steps, then linear decay (0: constant learning rate)."""
    hasty_fraction: float = field(default=0.0, metadata=SFT_INPUT)
    """Share of SFT episodes replaced by an immediate wrong answer (``baselines.sft.
    hasty_demonstrations``): an imperfect demonstrator, for a warm start that leaves RL room."""
    hasty_turn: int = field(default=1, metadata=SFT_INPUT)
    """The turn a hasty episode answers at (``baselines.sft.hasty_demonstrations``)."""
    teacher_fraction: float = field(default=0.0, metadata=SFT_INPUT)
    """Share of each SFT batch drawn from the (unmixed) expert turns under their *teacher* prompt
    (privileged block included), so that the self-distillation teacher can read that block."""
    teacher_contexts: list[str] = field(default_factory=lambda: ["privileged"],
                                        metadata=SFT_INPUT)
    """Teacher contexts those teacher prompts carry, one drawn per expert episode
    (``baselines.sft.with_teacher_contexts``): list every context the heads use, or their
    teachers cannot read it."""
    detour_rate: float = field(default=0.0, metadata=SFT_INPUT_WHEN_SET)
    """Chance that a wrong command is played before an expert turn (drawn again after each, so
    ``rate / (1 - rate)`` per expert turn on average), the expert then recovering from it
    (``baselines.sft.expert_demonstrations``; DART-style noise injection): the student turns then
    show recoveries from refused and wasted commands, which plain expert episodes never do. The
    wrong commands are not trained on and count toward the step limit; an episode a wrong
    command ends is dropped; the teacher prompts keep the plain episodes."""

    swap_words: list[list[str]] = field(default_factory=list, metadata=SFT_INPUT_WHEN_SET)
    """Groups of interchangeable words (``[["red", "green", "blue"]]``): each student turn whose
    task text names exactly one word of a group is also trained on once with that word replaced,
    everywhere in the turn and its response, by each other word of the group
    (``baselines.sft.with_swapped_words``). Counterfactual augmentation for a detail the model
    must copy from the task rather than recall per task: ScienceWorld's find tasks name the box
    the thing goes to by colour, and its warm starts built without it name the task's colour in
    about one final move in six on test tasks, chance for six colours."""

    def __post_init__(self) -> None:
        check_fields(self, "sft.")
        for group in self.swap_words:
            if len(set(group)) < 2 or not all(isinstance(w, str) and w.strip() for w in group):
                raise ValueError(f"sft.swap_words: each group needs two or more distinct words, "
                                 f"got {group!r}")
        if not 0.0 <= self.detour_rate < 1.0:
            raise ValueError(f"sft.detour_rate must be in [0, 1), got {self.detour_rate}")
        _at_least(self, "sft.", 0, ("steps",))
        _at_least(self, "sft.", 1, ("batch_size", "hasty_turn"))


@dataclass
class RolloutConfig:
    """How training episodes are collected (the ``[rollout]`` table)."""

    num_groups: int = 4
    """Tasks per step; each is played ``group_size`` times (one GRPO group)."""
    group_size: int = 4
    """Episodes per group G: sub-envs reset with the same seed (the same task); advantages are
    normalised within a group."""
    max_new_tokens: int = 40
    """Largest response per turn, in tokens (a longer one is cut and usually unparsable)."""
    temperature: float = 1.0
    """Sampling temperature of training rollouts."""
    prompt: dict[str, Any] = field(default_factory=dict, metadata=SFT_INPUT)
    """Student prompt limits (``agents.prompts.PromptLimits`` fields: history,
    observation_chars, history_chars, max_admissible); empty = the defaults."""
    backend: str = "hf"
    """Generation: ``"hf"`` (the trained module itself) or ``"vllm"`` (a colocated vLLM engine
    that gets the trained weights after every update; one process, GPU)."""
    vllm_kwargs: dict[str, Any] = field(default_factory=dict)
    """Extra ``vllm.LLM`` arguments for ``backend="vllm"`` (e.g. ``gpu_memory_utilization``)."""
    pool: str = "local"
    """Where the rollout sub-envs live: ``"local"`` (a vector env) or ``"ray"`` (env actors)."""
    ray_address: str | None = None
    """Ray cluster to join for ``pool="ray"`` (``None``: a local Ray instance)."""
    ray_num_workers: int = 2
    """Env actors for ``pool="ray"``."""

    def __post_init__(self) -> None:
        check_fields(self, "rollout.")
        if self.pool not in ROLLOUT_BACKENDS:
            raise ValueError(f"rollout.pool must be one of {ROLLOUT_BACKENDS}, got {self.pool!r}")
        if self.backend == "openai":
            raise ValueError("training takes rollout.backend 'hf' or 'vllm', not 'openai': samples "
                             "from a remote server are off-policy unless it reloads the trained "
                             "weights after every update (sdgym eval/rollout take --backend openai)")
        if self.backend not in GENERATION_BACKENDS:
            raise ValueError(f"rollout.backend must be 'hf' or 'vllm', got {self.backend!r}")
        _at_least(self, "rollout.", 1, ("ray_num_workers", "num_groups", "group_size",
                                        "max_new_tokens"))
        if self.temperature < 0:
            raise ValueError(f"rollout.temperature must be >= 0, got {self.temperature}")
        PromptLimits.from_dict(self.prompt)  # unknown keys fail when the config is built


@dataclass
class EvaluationConfig:
    """Validation during training and the final test (the ``[evaluation]`` table)."""

    val_split: str = "easy_val"
    """Split of the validation panel (the curve and its AUC)."""
    test_split: str = "test"
    """Split of the final test panel (privileged info hidden)."""
    val_temperature: float = 0.4
    """Sampling temperature of validation and test episodes."""
    val_every: int = 5
    """Training steps between validation points (step 0 is always validated)."""
    val_episodes: int = 16
    """Tasks of the fixed validation panel (one rollout seed each)."""
    val_teacher: bool = True
    """At each validation point, also measure the teacher head's teacher acting with its context
    (``val/teacher_success``; per-turn contexts only), so a weak teacher is visible."""
    test_episodes: int = 16
    """Tasks of the fixed test panel."""
    test_seeds: int = 8
    """Rollout seeds per test task (the protocol's default is 8)."""
    panel_width: int | None = None
    """Episodes a validation or test panel runs at once (one env each; ``None``: the whole val
    panel, or ``test_episodes``). Outcomes do not depend on it (:mod:`agents.panel`); envs with
    one JVM per env (ScienceWorld) keep it small to bound memory."""

    def __post_init__(self) -> None:
        check_fields(self, "evaluation.")
        if self.panel_width is not None and self.panel_width < 1:
            raise ValueError(f"evaluation.panel_width must be >= 1, got {self.panel_width}")
        _at_least(self, "evaluation.", 1, ("val_every", "val_episodes", "test_episodes",
                                           "test_seeds"))
        if self.val_temperature < 0:
            raise ValueError(f"evaluation.val_temperature must be >= 0, got {self.val_temperature}")


@dataclass
class InfraConfig:
    """Where and how the run executes, and what it writes (the ``[infra]`` table)."""

    device: str = "cpu"
    """Torch device: "cpu", "cuda" or "cuda:N" (checked before any set-up work)."""
    sharding: str = "replicated"
    """Data-parallel layout under ``torchrun``: ``"replicated"`` (every rank holds the whole model,
    gradients all-reduced; for small models) or ``"fsdp"`` (``torch.distributed.fsdp.fully_shard``
    per decoder layer: parameters, gradients, optimizer states and frozen/EMA copies sharded)."""
    gradient_checkpointing: bool = False
    """Recompute each decoder layer's activations in the backward pass (less memory, ~1/3 more
    compute)."""
    gpu_memory_gib: float = 0.0
    """GPU memory the memory plan checks against (0: the detected GPU's, else 80 GiB)."""
    checkpoint_every: int = 5
    """Training steps between checkpoints (model, optimizer, RNG states; --resume continues from
    the last)."""
    episodes_per_step: int = 1
    """Episodes of each training step written in full to the run folder's ``episodes.jsonl``
    (prompts, responses, commands, observations, rewards, teacher contexts) for ``sdgym view``;
    0 writes none."""
    test_episodes_mb: float = 5.0
    """At most this many megabytes (10^6 bytes) of the final test panel's episodes, written in
    full to the run folder's ``test_episodes.jsonl`` for ``sdgym view`` (the student's side only:
    privileged info is hidden on a test panel): whole tasks, every rollout seed of each, in panel
    order, until the next task would pass it; 0 writes none. 5 MB holds the whole test panel of
    cpu-smoke (40 kB) and cpu-mini (0.9 MB); sizes in docs/viewing.md."""
    tensorboard: bool = True
    """Write TensorBoard event files under the run folder's ``tensorboard/`` (``tensorboard
    --logdir runs``): ``train/``, ``val/``, ``test/``, ``head/``, ``timing/`` and ``cost/`` tags."""
    wandb_project: str | None = None
    """Also log to Weights & Biases under this project (needs ``pip install wandb``)."""
    wandb_mode: str = "offline"
    """``wandb.init`` mode: ``"offline"`` (default: files only), ``"online"`` or ``"disabled"``."""

    def __post_init__(self) -> None:
        check_fields(self, "infra.")
        _at_least(self, "infra.", 1, ("checkpoint_every",))
        _at_least(self, "infra.", 0, ("episodes_per_step", "test_episodes_mb"))
        if self.wandb_mode not in WANDB_MODES:
            raise ValueError(f"infra.wandb_mode must be one of {WANDB_MODES}, "
                             f"got {self.wandb_mode!r}")
        if self.sharding not in SHARDINGS:
            raise ValueError(f"infra.sharding must be one of {SHARDINGS}, got {self.sharding!r}")
        if self.gpu_memory_gib < 0:
            raise ValueError(f"infra.gpu_memory_gib must be a number >= 0, "
                             f"got {self.gpu_memory_gib!r}")


SECTIONS: dict[str, type] = {"model": ModelConfig, "sft": SFTConfig, "grpo": GRPOConfig,
                             "rollout": RolloutConfig, "evaluation": EvaluationConfig,
                             "infra": InfraConfig}
"""The dataclass sections of :class:`TrainConfig` (``head`` is the method's knob table)."""


@dataclass
class TrainConfig:
    """One training run (one env, one method, one seed); see the module docstring."""

    env_id: str = field(default="sdgym/SearchQA-v0", metadata=SFT_INPUT)
    env_kwargs: dict[str, Any] = field(default_factory=lambda: {"size": "tiny"}, metadata=SFT_INPUT)
    train_split: str = field(default="easy_train", metadata=SFT_INPUT)
    method: str = "grpo"
    head: dict[str, Any] = field(default_factory=dict)
    """The method's knobs (the ``[head]`` table), e.g. ``teacher_weights = "frozen"``."""
    seed: int = field(default=0, metadata=SFT_INPUT)
    steps: int = 20
    out_dir: str = "runs"
    model: ModelConfig = field(default_factory=ModelConfig)
    sft: SFTConfig = field(default_factory=SFTConfig)
    grpo: GRPOConfig = field(default_factory=GRPOConfig)
    rollout: RolloutConfig = field(default_factory=RolloutConfig)
    evaluation: EvaluationConfig = field(default_factory=EvaluationConfig)
    infra: InfraConfig = field(default_factory=InfraConfig)

    def __post_init__(self) -> None:
        check_fields(self)  # a preset's `seed = "0"` or `steps = "abc"`: one line naming the field
        import gymnasium as gym

        import sdgym  # noqa: F401  (registers the env ids)

        if self.env_id not in gym.registry:
            known = sorted(k for k in gym.registry if k.startswith("sdgym/"))
            raise ValueError(f"unknown env_id {self.env_id!r}; choose from {known}")
        for name, cls in SECTIONS.items():
            if not isinstance(getattr(self, name), cls):
                raise ValueError(f"{name} must be a {cls.__name__} (in a preset: a [{name}] "
                                 f"table), got {getattr(self, name)!r}")
        _at_least(self, "", 0, ("steps",))
        self._check_head()

    def __getattr__(self, name: str) -> Any:
        new = LEGACY_NAMES.get(name)  # only reached for names that are not fields
        if new is None:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        raise AttributeError(f"TrainConfig.{name} is now TrainConfig.{new}")

    def _check_head(self) -> None:
        """The method exists and takes the ``head`` knobs (its choice fields checked now, not at
        the first step)."""
        from baselines.heads import make_head

        try:
            make_head(self.method, **self.head)
        except TypeError as error:
            raise ValueError(f"head options for method {self.method!r}: {error}") from None

    def run_dir(self) -> Path:
        """``out_dir/<env>/<method>/seed<seed>``."""
        env = self.env_id.split("/")[-1]
        return Path(self.out_dir) / env / self.method / f"seed{self.seed}"

    def to_dict(self) -> dict[str, Any]:
        """Plain-data form (JSON/TOML ready), one table per section."""
        return dataclasses.asdict(self)


LEGACY_NAMES: dict[str, str] = {
    "model": "model.name", "tiny_model": "model.tiny", "dtype": "model.dtype",
    **{f"sft_{name}": f"sft.{name}" for name in (
        "steps", "lr", "batch_size", "tasks", "context_loss_weight", "warmup_steps",
        "hasty_fraction", "hasty_turn", "teacher_fraction", "teacher_contexts")},
    **{name: f"grpo.{name}" for name in (
        "lr", "ppo_epochs", "micro_batch_size", "max_grad_norm", "tempered_logprobs")},
    **{name: f"rollout.{name}" for name in (
        "num_groups", "group_size", "max_new_tokens", "temperature", "prompt", "backend",
        "vllm_kwargs", "ray_address", "ray_num_workers")},
    "rollout_backend": "rollout.pool",
    **{name: f"evaluation.{name}" for name in (
        "val_split", "test_split", "val_temperature", "val_every", "val_episodes", "val_teacher",
        "test_episodes", "test_seeds")},
    **{name: f"infra.{name}" for name in (
        "device", "sharding", "gradient_checkpointing", "gpu_memory_gib", "checkpoint_every",
        "wandb_project", "wandb_mode")},
    "head_kwargs": "head",
}
"""The flat field names before the sections (``sft_steps`` → ``sft.steps``): old run folders and
warm-start records are read through it, ``--set sft_steps=…`` is mapped, a preset that uses one is
an error naming the new place. (``model`` was the model name; as a table it is the section.)"""

ALIASES: dict[str, str] = {"env": "env_kwargs", "vllm": "rollout.vllm_kwargs",
                           "prompt": "rollout.prompt", "tiny_model": "model.tiny",
                           "head_kwargs": "head", "vllm_kwargs": "rollout.vllm_kwargs"}
"""Short or old names of tables in dotted paths: ``env.size=small``, ``prompt.history=0``."""


def _fields(cls: type) -> dict[str, dataclasses.Field]:
    return {f.name: f for f in dataclasses.fields(cls)}


def _hints(cls: type) -> dict[str, Any]:
    import typing

    return typing.get_type_hints(cls)


def field_hint(path: str) -> Any:
    """The type hint of the config field at dotted ``path`` (``"sft.steps"`` → ``int``)."""
    section, dot, name = path.partition(".")
    if dot:
        return _hints(SECTIONS[section])[name]
    return _hints(TrainConfig)[section]


def resolve_path(path: str) -> tuple[str, ...]:
    """``path`` as the config's own parts: aliases and old flat names replaced, every part checked
    (``"prompt.history"`` → ``("rollout", "prompt", "history")``). A part under a table field
    (``env_kwargs``, ``head``, ``rollout.prompt``, …) is a key of that table. ValueError naming
    ``path`` when a part is not an option."""
    first, dot, rest = path.partition(".")
    if dot and first in ALIASES:
        first = ALIASES[first]
    elif not dot and first in LEGACY_NAMES and first not in _fields(TrainConfig):
        first = LEGACY_NAMES[first]
    parts = (*first.split("."), *(rest.split(".") if rest else ()))
    top = _fields(TrainConfig)
    if parts[0] not in top:
        if dot:
            tables = [n for n in top if n in SECTIONS or _is_table(field_hint(n))]
            raise ValueError(f"{path}: {parts[0]!r} is not a table of the training config "
                             f"(tables: {', '.join(sorted([*tables, *ALIASES]))})")
        raise ValueError(f"{path}: not a training option (options: {', '.join(top)})")
    if parts[0] in SECTIONS and len(parts) > 1:
        options = _fields(SECTIONS[parts[0]])
        if parts[1] not in options:
            raise ValueError(f"{path}: {parts[1]!r} is not an option of {parts[0]} "
                             f"(options: {', '.join(options)})")
        table = _is_table(field_hint(f"{parts[0]}.{parts[1]}"))
        depth = 3 if table else 2
    else:
        table = _is_table(field_hint(parts[0])) if parts[0] not in SECTIONS else False
        depth = 2 if table else 1
    if len(parts) > depth or (parts[0] in SECTIONS and len(parts) == 1):
        raise ValueError(f"{path}: not an option of the training config (a section's option is "
                         f"section.name, e.g. sft.steps; a table's key table.key, e.g. env.size)")
    return parts


def _is_table(hint: Any) -> bool:
    import typing

    return hint is dict or typing.get_origin(hint) is dict


def set_path(values: dict[str, Any], parts: tuple[str, ...], value: Any) -> None:
    """Set ``values[parts[0]][parts[1]]…`` to ``value``, making the tables on the way."""
    for part in parts[:-1]:
        inner = values.get(part)
        values[part] = inner = dict(inner) if isinstance(inner, dict) else {}
        values = inner
    values[parts[-1]] = value


def sft_inputs(config: TrainConfig) -> dict[str, Any]:
    """``{dotted path: value}`` of every field of ``config`` and its sections tagged
    :data:`SFT_INPUT` (what the warm start depends on); a field tagged
    :data:`SFT_INPUT_WHEN_SET` only where it differs from its default."""
    inputs = {}
    for item in dataclasses.fields(TrainConfig):
        if item.name in SECTIONS:
            section = getattr(config, item.name)
            inputs |= {f"{item.name}.{f.name}": getattr(section, f.name)
                       for f in dataclasses.fields(SECTIONS[item.name])
                       if f.metadata.get("sft_input") and not (
                           f.metadata.get("keyed_when_set")
                           and getattr(section, f.name) == field_default(f))}
        elif item.metadata.get("sft_input"):
            inputs[item.name] = getattr(config, item.name)
    return inputs


def nest_legacy(values: dict[str, Any]) -> dict[str, Any]:
    """Plain config data with the old flat names (:data:`LEGACY_NAMES`) moved to their sections
    (old run folders' ``config.json``, warm-start records); new-style data is returned as is."""
    nested: dict[str, Any] = {}
    for key, value in values.items():
        if key == "model" and isinstance(value, dict):
            set_path(nested, ("model",), {**nested.get("model", {}), **value})
        elif key in LEGACY_NAMES and not (key in SECTIONS and isinstance(value, dict)):
            set_path(nested, tuple(LEGACY_NAMES[key].split(".")), value)
        elif key in SECTIONS and isinstance(value, dict):
            nested[key] = {**nested.get(key, {}), **value}
        else:
            nested[key] = value
    return nested


def flat_settings(values: dict[str, Any]) -> dict[str, Any]:
    """Plain config data (``config.json`` of a run folder, :meth:`TrainConfig.to_dict`) as
    ``{dotted path: value}``, one entry per field of the config and its sections; data recorded
    before the sections has its flat names mapped. A run folder records the built head's settings
    under ``head`` (then its old ``head_kwargs`` are dropped)."""
    values = dict(values)
    if isinstance(values.get("head"), dict) and "name" in values["head"]:
        values.pop("head_kwargs", None)
    settings = {}
    for key, value in nest_legacy(values).items():
        if key in SECTIONS and isinstance(value, dict):
            settings |= {f"{key}.{name}": inner for name, inner in value.items()}
        else:
            settings[key] = value
    return settings


def from_dict(values: dict[str, Any]) -> TrainConfig:
    """A :class:`TrainConfig` from plain data (old flat records too, :func:`nest_legacy`);
    unknown keys are an error."""
    values = nest_legacy(values)
    top = _fields(TrainConfig)
    unknown = set(values) - set(top)
    if unknown:
        raise ValueError(f"unknown training options {sorted(unknown)}")
    sections = {}
    for name, cls in SECTIONS.items():
        given = values.pop(name, {})
        if not isinstance(given, dict):
            raise ValueError(f"{name} must be a table of {', '.join(_fields(cls))}, got {given!r}")
        extra = sorted(set(given) - set(_fields(cls)))
        if extra:
            raise ValueError(f"unknown {name} options {extra}")
        sections[name] = cls(**given)
    return TrainConfig(**values, **sections)


def read_toml(path: Path) -> dict[str, Any]:
    """The TOML document in ``path``; ValueError naming the file when it is not valid TOML or
    cannot be read."""
    try:
        return tomllib.loads(path.read_text())
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise ValueError(f"{path}: invalid TOML ({error})") from None
    except OSError as error:  # a folder, or a file this process may not read
        raise ValueError(f"{path}: cannot read it ({error.strerror})") from None


def preset_path(name: str, directory: Path, kind: str, suffix: str = "") -> Path:
    """The file of preset ``name`` in ``directory`` (or ``name`` itself when it ends in ``.toml``).

    ``suffix``: the file names of this kind end in it (``"-bench"``); ``name`` may leave it out."""
    if name.endswith(".toml"):
        path = Path(name)
    else:
        path = directory / f"{name}.toml"
        if not path.exists() and suffix and not name.endswith(suffix):
            path = directory / f"{name}{suffix}.toml"
    kind_text = "" if kind == "training" else f"{kind} "
    if Path(name).is_dir() and not path.is_file():
        raise ValueError(f"{kind_text}preset {name!r} is a folder: give a preset name or a "
                         "TOML file")
    if not path.exists():
        available = sorted(p.stem for p in directory.glob("*.toml"))
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


def dotted_settings(settings: dict[str, Any]) -> list[tuple[tuple[str, ...], Any]]:
    """``{"sft.steps": 200, "head.teacher_weights": "frozen", "env.size": "small"}`` as checked
    ``(parts, value)`` pairs (:func:`resolve_path`; old flat names are mapped)."""
    pairs = []
    for path, value in settings.items():
        if path in SECTIONS and path in LEGACY_NAMES and not isinstance(value, dict):
            path = LEGACY_NAMES[path]  # model=NAME: the model's name
        pairs.append((resolve_path(path), value))
    return pairs


def _check_preset_names(values: dict[str, Any], name: str) -> None:
    """A preset written with the old flat names fails naming the new place of the first one."""
    for key, value in values.items():
        if key in LEGACY_NAMES and not (key in SECTIONS and isinstance(value, dict)):
            raise ValueError(f"preset {name}: {key} is now {LEGACY_NAMES[key]} (the sections of "
                             "the training config are tables, e.g. [sft] steps = 150)")


def load_preset(name: str, settings: dict[str, Any] | None = None,
                **overrides: Any) -> TrainConfig:
    """Read training preset ``name`` (or a path to a TOML file), resolve ``extends = "<base>"``
    (the base's values, then this file's; tables merged key by key), set the dotted ``settings``
    (one key of a table each: ``{"grpo.kl_coef": 0.0, "env.size": "small"}``) and apply
    ``overrides``: top-level fields as whole values, sections as ``sft={"steps": 0}`` (those
    fields only, each a whole value)."""
    path = preset_path(name, PRESET_DIR, "training")
    values = read_preset(path, PRESET_DIR, "training")
    values.pop("description", None)
    _check_preset_names(values, path.stem)
    for parts, value in dotted_settings(settings or {}):
        set_path(values, parts, value)
    for key, value in overrides.items():
        if key in SECTIONS:
            if not isinstance(value, dict):
                raise ValueError(f"{key} override must be a table, got {value!r}")
            values[key] = {**values.get(key, {}), **value}
        else:
            values[key] = value
    return from_dict(values)


def replace_settings(config: TrainConfig, settings: dict[str, Any]) -> TrainConfig:
    """A copy of ``config`` with the dotted ``settings`` replaced (``{"infra.sharding": "fsdp"}``),
    checked like a new config."""
    values = config.to_dict()
    for parts, value in dotted_settings(settings):
        set_path(values, parts, value)
    return from_dict(values)
