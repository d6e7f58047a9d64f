"""The training loop: rollout → teacher → advantages/losses from the head → update → validate.

Read :func:`Trainer.train_step` top to bottom for one GRPO(+head) step. Every phase is timed
(:mod:`baselines.cost`), every step is logged as one JSON line, checkpoints are atomic and hold
everything needed to resume exactly (:mod:`baselines.checkpoint`).

Launched by ``torchrun`` the same code trains data-parallel (:mod:`baselines.distributed`): each
rank rolls out its share of the groups, gradients are summed over ranks, and rank 0 alone logs to
the run folder, validates and checkpoints.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import torch

import sdgym  # noqa: F401  (registers the env ids)
from agents.backends.base import PolicyBackend, SamplingParams, render_chat
from agents.backends.hf import HFBackend
from agents.backends.vllm_backend import colocated_vllm
from agents.model_loading import load_model
from agents.panel import evaluate_on_panel, task_panel
from agents.prompts import PromptLimits, PublicTurn
from agents.rollout import (
    MessageBuilder,
    RolloutBatch,
    RolloutEngine,
    RolloutEngineConfig,
    TurnRow,
    student_turn_messages,
)
from baselines.checkpoint import (
    SHARDS,
    STATE,
    load_latest,
    load_latest_with_folder,
    rng_state,
    save_checkpoint,
    set_rng_state,
)
from baselines.config import TrainConfig, flat_settings
from baselines.cost import NOT_TRAINING_PHASES, PhaseTimer, flops_estimate
from baselines.distributed import from_environment
from baselines.episode_log import EpisodeLog, PanelEpisodeLog, episode_records
from baselines.grpo import group_outcome_counts
from baselines.heads import Head, make_head
from baselines.learner import Learner, teacher_weight_modes
from baselines.memory_plan import check_fits
from baselines.metrics import validation_auc
from baselines.precision import Precision
from baselines.run_log import METRICS_FILE, RunLog
from baselines.seed_layout import TEST_OFFSET, VALIDATION_OFFSET, group_seeds, sampling_seed
from baselines.seeding import seed_everything
from baselines.sharding import gathered, load_shards, save_shards, shard
from baselines.teacher import (
    TURN_CONTEXTS,
    TeacherWeights,
    teacher_prompt_ids,
    turn_teacher_messages,
)
from baselines.warm_start import warm_start
from sdgym.cache import atomic_write_text

RESUME_MAY_CHANGE = ("steps", "infra.wandb_project", "infra.wandb_mode", "infra.episodes_per_step",
                     "infra.test_episodes_mb")
"""Options a resumed run may set differently from the run it continues."""

RUN_LOCATION = ("out_dir",)
"""Where the run lives, not how it trains: a moved or copied run folder resumes from its new place."""


def run_folder_config(config: TrainConfig, head: Head) -> dict[str, Any]:
    """What ``config.json`` of a run folder holds: the config, the built head's settings (under
    ``head``) and the head's deviations from its reference recipe."""
    return {**config.to_dict(), "head": head.config(),
            "head_deviations": head.deviations(config.to_dict()),
            "teacher_forward_counts_as_cost": True}


def check_resume_settings(config: TrainConfig, run_dir: Path) -> None:
    """Refuse to resume ``run_dir`` under other settings than it was started with (a resumed
    optimizer, schedule or data stream would silently not match ``config.json``)."""
    recorded = run_dir / "config.json"
    if not recorded.exists():
        return
    before = flat_settings(json.loads(recorded.read_text()))
    head = make_head(config.method, **config.head).config()  # compared as recorded
    now = flat_settings(json.loads(json.dumps({**config.to_dict(), "head": head}, default=str)))
    changed = sorted(k for k in now if k not in RESUME_MAY_CHANGE + RUN_LOCATION
                     and k in before and before[k] != now[k])
    if changed:
        detail = ", ".join(f"{k}: {before[k]!r} -> {now[k]!r}" for k in changed)
        raise ValueError(f"cannot --resume {run_dir} with other settings ({detail}); resume with "
                         f"the settings it was started with (only {', '.join(RESUME_MAY_CHANGE)} "
                         "may change) or train into another --out")


def check_fresh_run_dir(run_dir: Path) -> None:
    """Refuse to start a new run in a folder that already holds one (its metrics and
    checkpoints would mix with the new run's)."""
    used = [name for name in (METRICS_FILE, "checkpoints") if (run_dir / name).exists()]
    if used:
        raise ValueError(f"run folder {run_dir} already holds a run ({', '.join(used)}); "
                         "continue it with --resume, or train into another --out (or delete the "
                         "folder to start over)")


class Trainer:
    """GRPO with a swappable teacher head, on one env, for one seed (see the module docstring)."""

    def __init__(self, config: TrainConfig, resume: bool = False, progress: bool = False) -> None:
        started, started_cpu = time.perf_counter(), time.process_time()
        self.config = config
        self.parallel = from_environment(config.infra.device)
        check_fits(config, self.parallel.world_size)  # a CUDA run that cannot fit stops here
        if config.infra.sharding == "fsdp" and not self.parallel.enabled:
            raise ValueError("sharding='fsdp' shards over the ranks of torchrun: launch with "
                             "torchrun --nproc-per-node N (N >= 2), or use sharding='replicated'")
        self.run_dir = config.run_dir()
        if resume:
            check_resume_settings(config, self.run_dir)
        else:
            check_fresh_run_dir(self.run_dir)
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self.timer = PhaseTimer()
        main = self.parallel.is_main
        log_dir = self.run_dir if main else self.run_dir / "ranks" / f"rank{self.parallel.rank}"
        wandb = None
        if config.infra.wandb_project and main:
            wandb = {"project": config.infra.wandb_project, "mode": config.infra.wandb_mode,
                     "name": "/".join(self.run_dir.parts[-3:]), "config": config.to_dict()}
        self.log = RunLog(log_dir, progress=progress and main, total=config.steps, wandb=wandb,
                          tensorboard=config.infra.tensorboard)
        self.episode_log = EpisodeLog(log_dir)
        self.head: Head = make_head(config.method, **config.head)
        seed_everything(config.seed)
        with self.timer.phase("sft"):
            model_dir = self.parallel.main_first(lambda: warm_start(config, self.log))
        sft_wall, sft_cpu = self.timer.total["sft"], self.timer.cpu_total["sft"]
        self.precision = Precision.for_run(config.model.dtype, config.infra.device, config.infra.sharding)
        # float32 master weights (the optimizer's); forwards run in the compute dtype
        self.model, self.tokenizer = load_model(model_dir, dtype="float32", device=config.infra.device)
        self.parallel.broadcast_parameters(self.model)
        self.pad_id = int(self.tokenizer.pad_token_id)
        self.teachers = TeacherWeights(
            self.model, teacher_weight_modes(self.head, config), self.head.ema_decay,
            frozen_dtype=self.precision.compute,
            load_frozen=lambda: load_model(model_dir, dtype=self.precision.compute,
                                           device=config.infra.device)[0])
        if config.infra.gradient_checkpointing:
            self.model.gradient_checkpointing_enable(
                gradient_checkpointing_kwargs={"use_reentrant": False})
        self.sharded = config.infra.sharding == "fsdp"
        if self.sharded:  # the teacher copies were taken from (or loaded as) the whole model
            for network in (self.model, *self.teachers.networks().values()):
                shard(network, self.precision.compute)
        self.backend = self._policy_backend(model_dir)
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=config.grpo.lr, weight_decay=0.0)
        self.learner = Learner(self.model, self.optimizer, self.head, self.teachers, config,
                               self.pad_id, self.timer, self.parallel, self.precision,
                               teacher_prompts=self._teacher_prompt_ids)
        self._training_engine: RolloutEngine | None = None  # built on first use (see engine)
        self.validation_engine: RolloutEngine | None = None
        self.teacher_validation_engine: RolloutEngine | None = None
        self.teacher_success: float | None = None
        self._frozen_teacher_success: float | None = None
        self.step = 0
        self.validation: list[tuple[int, float]] = []
        if main:
            atomic_write_text(self.run_dir / "config.json", json.dumps(
                run_folder_config(config, self.head), indent=2, default=str))
        if resume:
            self._restore()
        self.timer.add("setup", time.perf_counter() - started - sft_wall,  # loading, not training
                       time.process_time() - started_cpu - sft_cpu)

    # ----------------------------------------------------------------- helpers
    def _policy_backend(self, model_dir: Path) -> PolicyBackend:
        """The rollout generator: the trained module itself, or a colocated vLLM engine."""
        config = self.config
        if config.rollout.backend == "vllm":  # one engine per rank, each synced from the gathered weights
            kwargs = {"dtype": str(self.precision.compute).removeprefix("torch."),
                      **config.rollout.vllm_kwargs}
            return colocated_vllm(str(model_dir), seed=config.seed + self.parallel.rank,
                                  tokenizer=self.tokenizer, **kwargs)
        return HFBackend(self.model, self.tokenizer, device=config.infra.device)

    @contextlib.contextmanager
    def generating(self, *networks: torch.nn.Module) -> Iterator[None]:
        """Context of generation: forwards in the compute dtype, and ``networks`` (default: the
        policy, when the HF backend generates with it) gathered whole if sharded (every rank
        enters, see :func:`baselines.sharding.gathered`)."""
        networks = networks or self._generating_networks()
        with gathered(*networks), self.precision.autocast():
            yield

    def _generating_networks(self) -> tuple[torch.nn.Module, ...]:
        """The policy when rollouts run on it (HF backend); a vLLM engine holds its own copy."""
        return (self.model,) if isinstance(self.backend, HFBackend) else ()

    def render(self, messages: list[dict[str, str]]) -> str:
        """Chat template of the policy's tokenizer."""
        return render_chat(self.tokenizer, messages)

    @property
    def engine(self) -> RolloutEngine:
        """The training rollout engine (this rank's groups), made on first use: a cell that
        trains no step (a warm start tested, a premise measured) never starts its envs, which
        matters where each env is a JVM (ScienceWorld, about 0.35 GB each)."""
        if self._training_engine is None:
            local_groups = len(self.parallel.shard(range(self.config.rollout.num_groups)))
            self._training_engine = self._engine(local_groups, self.config.rollout.group_size)
        return self._training_engine

    def release_envs(self) -> None:
        """Close the training and validation engines' envs (made again if used again): the test
        panel runs alone, so a cell's env processes never add up across phases."""
        for engine in (self._training_engine, self.validation_engine,
                       self.teacher_validation_engine):
            if engine is not None:
                engine.close()
        self._training_engine = self.validation_engine = self.teacher_validation_engine = None

    def close(self) -> None:
        """Release env workers, log files and the process group."""
        self.release_envs()
        self.log.close()
        self.parallel.close()

    def _engine(self, num_groups: int, group_size: int, hide_privileged: bool = False,
                messages: MessageBuilder = student_turn_messages) -> RolloutEngine:
        config = self.config
        return RolloutEngine(
            RolloutEngineConfig(config.env_id, dict(config.env_kwargs), num_groups, group_size,
                          hide_privileged=hide_privileged, rollout_backend=config.rollout.pool,
                          ray_address=config.rollout.ray_address, ray_num_workers=config.rollout.ray_num_workers,
                          prompt_limits=PromptLimits.from_dict(config.rollout.prompt)),
            self.backend, self.render, messages)

    def panel_width(self, episodes: int) -> int:
        """Episodes a panel of ``episodes`` runs at once (``evaluation.panel_width`` caps it)."""
        width = self.config.evaluation.panel_width
        return episodes if width is None else min(width, episodes)

    def rollout_engine(self, num_groups: int, hide_privileged: bool = False,
                       messages: MessageBuilder = student_turn_messages) -> RolloutEngine:
        """An engine of ``num_groups`` single episodes on this run's env, policy backend and
        prompt settings (the caller closes it); ``messages`` builds each turn's prompt."""
        return self._engine(num_groups, 1, hide_privileged, messages)

    def _teacher_turn_messages(self, turn: PublicTurn, info: dict[str, Any]) -> list[dict[str, str]]:
        """The prompt the teacher reads at this turn (its context from the turn's info)."""
        return turn_teacher_messages(turn, self.head.context, info.get("privileged"),
                                     str(info.get("task_type", "")), self.config.env_id,
                                     self.head.context_budget_chars)

    @property
    def teacher_can_act(self) -> bool:
        """Whether validation also measures the teacher acting with its context (a per-turn
        context; ``sibling``/``hindsight`` need finished episodes of a group)."""
        return (self.config.evaluation.val_teacher and self.head.needs_teacher
                and self.head.context in TURN_CONTEXTS)

    def _group_seeds(self, step: int) -> list[int]:
        """This rank's share of the step's group seeds (all of them in a single process)."""
        return self.parallel.shard(group_seeds(self.config.seed, step,
                                               self.config.rollout.num_groups))

    def _sampling(self, step: int, temperature: float) -> SamplingParams:
        return SamplingParams(max_new_tokens=self.config.rollout.max_new_tokens, temperature=temperature,
                              seed=sampling_seed(self.config.seed, step, self.parallel.rank))

    # --------------------------------------------------------------- one step
    def train_step(self, step: int) -> dict[str, Any]:
        """One rollout + one (or ``ppo_epochs``) update; returns the step's metrics."""
        config = self.config
        self.model.eval()
        with self.generating():
            batch = self.engine.collect(self._group_seeds(step),
                                        self._sampling(step, config.rollout.temperature),
                                        config.train_split)
        self.timer.add("generation", batch.timings["generation"], batch.timings["generation_cpu"])
        self.timer.add("env", batch.timings["env"], batch.timings["env_cpu"])
        self.timer.count_tokens("generated", batch.generated_tokens)
        self.timer.count_tokens("generation_context", batch.prompt_tokens + batch.generated_tokens)
        self.episode_log.write(episode_records(
            batch.rows, step, config.infra.episodes_per_step,
            self.head.context if self.head.needs_teacher else None, config.env_id,
            self.head.context_budget_chars))
        return self.update(batch, step)

    def update(self, batch: RolloutBatch, step: int) -> dict[str, Any]:
        """Phase 1 once on ``batch`` (this rank's rows), then ``ppo_epochs`` epochs of phase 2
        (:mod:`baselines.learner`)."""
        config = self.config
        rows = batch.rows
        self.model.eval()
        prepared = self.learner.prepare(rows, step=step)
        metrics: dict[str, Any] = {}
        self.model.train()
        for _ in range(config.grpo.ppo_epochs):
            metrics = self.learner.train_epoch(prepared, step)
        self.model.eval()
        with self.timer.phase("weight_sync"):
            self.backend.sync_weights(self.model)
        self.teachers.update_ema(self.model)
        totals = self.parallel.sum_metrics({
            **group_outcome_counts([e.won for e in batch.episodes], [e.score for e in batch.episodes],
                                   [e.group_id for e in batch.episodes], config.grpo),
            "episodes": len(batch.episodes), "won": sum(e.won for e in batch.episodes),
            "score": sum(e.score for e in batch.episodes), "rows": len(rows),
            "invalid": sum(not r.action_valid for r in rows),
            "advantage_abs": float(prepared.row_advantages.abs().sum())})
        episodes, rows_total = max(totals["episodes"], 1), max(totals["rows"], 1)
        groups = max(totals["groups"], 1)
        metrics.update({
            "train/groups_all_won": totals["groups_all_won"] / groups,
            "train/groups_zero_std": totals["groups_zero_std"] / groups,
            "train/success": totals["won"] / episodes,
            "train/score": totals["score"] / episodes,
            "train/invalid_rate": totals["invalid"] / rows_total,
            "train/turns": totals["rows"] / episodes,
            "train/advantage_abs": totals["advantage_abs"] / rows_total,
        })
        return metrics

    def _teacher_prompt_ids(self, rows: list[TurnRow]) -> list[list[int] | None]:
        """Teacher prompt ids per row (:func:`baselines.teacher.teacher_prompt_ids`); the
        learner calls this inside its timed teacher phase."""
        return teacher_prompt_ids(rows, self.head.context, self.config.env_id,
                                  self.head.context_budget_chars, self.render, self.tokenizer)

    @property
    def policy_temperature(self) -> float:
        """Temperature of the policy the loss trains (1.0 unless ``tempered_logprobs``)."""
        return self.learner.policy_temperature

    # ------------------------------------------------------------- validation
    def validate(self, step: int) -> float:
        """Success on the val split (privileged info hidden, temperature ``val_temperature``).

        For teacher heads with a per-turn context it also runs the same episodes with the teacher
        network (current, frozen or EMA weights) reading the teacher prompt (privileged info
        shown): ``self.teacher_success`` holds that success, so a teacher that cannot use its
        context is visible. Only rank 0 validates; other ranks return NaN (at once, or, when
        sharded, after joining the gathers of the weights rank 0 generates with)."""
        config = self.config
        self.teacher_success = None
        main = self.parallel.is_main
        if not main and not self.sharded:
            return float("nan")
        with self.timer.phase("validation"):
            self.model.eval()
            panel: list[int] = []
            with self.generating():
                if main:
                    if self.validation_engine is None:
                        self.validation_engine = self._engine(
                            self.panel_width(config.evaluation.val_episodes), 1,
                            hide_privileged=True)
                    panel = task_panel(self.validation_engine.task_count(config.evaluation.val_split),
                                       config.evaluation.val_episodes)
                    success = evaluate_on_panel(self.validation_engine, config.evaluation.val_split, panel,
                                                [step], self._validation_sampling).success_mean
            if self.teacher_can_act:
                self.teacher_success = self._teacher_acting_success(panel, step)
        if not main:
            return float("nan")
        self.validation.append((step, success))
        return success

    def _validation_sampling(self, rollout_seed: int) -> SamplingParams:
        return self._sampling(VALIDATION_OFFSET + rollout_seed, self.config.evaluation.val_temperature)

    def _teacher_acting_success(self, panel: list[int], step: int) -> float:
        """Success of the teacher *network* (current policy, frozen start or EMA) acting on the
        val panel with its context in the prompt. A frozen teacher is measured once."""
        mode = self.head.teacher_weights
        if mode == "frozen":  # the same weights every time: measure once, with step 0's seed
            if self._frozen_teacher_success is not None:
                return self._frozen_teacher_success
            step = 0
        network = self.teachers.model(mode, self.model)
        success = float("nan")  # other ranks only join the gather of a sharded network
        with self.generating(*(() if mode == "current" else (network,))):
            if self.parallel.is_main:
                if self.teacher_validation_engine is None:  # privileged info shown
                    self.teacher_validation_engine = self._engine(
                        self.panel_width(self.config.evaluation.val_episodes), 1,
                        messages=self._teacher_turn_messages)
                engine = self.teacher_validation_engine
                engine.backend = self.backend if mode == "current" else HFBackend(
                    network, self.tokenizer, device=self.config.infra.device)
                success = evaluate_on_panel(engine, self.config.evaluation.val_split, panel, [step],
                                            self._validation_sampling).success_mean
        if mode == "frozen":
            self._frozen_teacher_success = success
        return success

    def _validation_metrics(self, step: int) -> dict[str, float]:
        metrics = {"val/success": self.validate(step)}
        if self.teacher_success is not None:
            metrics["val/teacher_success"] = self.teacher_success
        return metrics

    def evaluate(self, split: str | None = None, episodes: int | None = None,
                 seeds: int | None = None) -> dict[str, Any]:
        """Final performance on the test panel (:mod:`agents.panel`): ``episodes`` tasks of the
        test split, each run once per rollout seed ``0..seeds-1``, privileged info hidden; the
        record keeps every (task, rollout seed) outcome. Timed as phase ``test``.

        The panel's episodes are written turn by turn to ``test_episodes.jsonl``, whole tasks in
        panel order up to ``infra.test_episodes_mb`` (:class:`baselines.episode_log.PanelEpisodeLog`);
        the file is removed first, so a test run again rewrites it."""
        config = self.config
        split = split or config.evaluation.test_split
        episodes = episodes or config.evaluation.test_episodes
        seeds = seeds or config.evaluation.test_seeds
        if not self.parallel.is_main:  # sharded: join the gather of the weights rank 0 uses
            with self.generating():
                return {}
        with self.timer.phase("test"):
            self.release_envs()
            engine = self._engine(self.panel_width(episodes), 1, hide_privileged=True)
            recorder = PanelEpisodeLog(self.run_dir, split, self.step, seeds,
                                       int(config.infra.test_episodes_mb * 1_000_000))
            try:
                panel = task_panel(engine.task_count(split), episodes)
                with self.generating():
                    result = evaluate_on_panel(
                        engine, split, panel, list(range(seeds)),
                        lambda r: self._sampling(TEST_OFFSET + r, config.evaluation.val_temperature),
                        on_batch=None if recorder.full else recorder)
            finally:
                engine.close()
        record = result.to_record()
        self.log.final(self.step, {"test/success": record["success_mean"],
                                   "test/score": record["score_mean"]}, split=split)
        return record

    # -------------------------------------------------------------- the loop
    def fit(self) -> dict[str, Any]:
        """Train to ``config.steps`` (resuming where a checkpoint left off); return a summary."""
        config = self.config
        if self.step == 0 and not self.validation:
            self.log.step(0, {**self._validation_metrics(0), "phase_seconds": self.timer.end_step()})
        while self.step < config.steps:
            step = self.step + 1
            metrics = self.train_step(step)
            if step % config.evaluation.val_every == 0 or step == config.steps:
                metrics.update(self._validation_metrics(step))
            self.step = step
            if step % config.infra.checkpoint_every == 0 or step == config.steps:
                with self.timer.phase("checkpoint"):
                    self.save()
            self.log.step(step, {**metrics, "phase_seconds": self.timer.end_step(),
                                 "phase_cpu_seconds": self.timer.last_step_cpu,
                                 "tokens": dict(self.timer.tokens)})
        return self.summary()

    def summary(self) -> dict[str, Any]:
        """Validation curve, AUC and cost totals (final test numbers are added by the caller)."""
        steps = [s for s, _ in self.validation]
        values = [v for _, v in self.validation]
        parameters = sum(p.numel() for p in self.model.parameters())
        summary = {
            "env_id": self.config.env_id, "method": self.config.method, "seed": self.config.seed,
            "steps": self.step, "val_split": self.config.evaluation.val_split,
            "validation": self.validation,
            "auc": validation_auc(steps, values, horizon=self.config.steps),
            "phase_seconds_total": dict(self.timer.total), "tokens": dict(self.timer.tokens),
            "phase_cpu_seconds_total": dict(self.timer.cpu_total),
            "train_seconds": sum(v for k, v in self.timer.total.items()
                                 if k not in NOT_TRAINING_PHASES),
            "train_cpu_seconds": sum(v for k, v in self.timer.cpu_total.items()
                                     if k not in NOT_TRAINING_PHASES),
            "device": self.config.infra.device,
            "parameters": parameters,
            "train_flops_estimate": flops_estimate(parameters, dict(self.timer.tokens)),
            "head": self.head.config(),
        }
        if self.parallel.is_main:
            atomic_write_text(self.run_dir / "summary.json",
                              json.dumps(summary, indent=2, default=str))
        return summary

    # ------------------------------------------------------------ checkpoints
    def save(self) -> Path | None:
        """Atomic checkpoint of everything needed to resume exactly (rank 0 writes it; when
        sharded, every rank first writes its shards, which rank 0 moves in)."""
        main = self.parallel.is_main
        state = {"step": self.step, "rng": rng_state(), "timer": self.timer.state_dict(),
                 "validation": self.validation}
        if not self.sharded:
            if not main:
                return None
            return save_checkpoint(self.run_dir, self.step, {
                **state, "model": self.model.state_dict(),
                "optimizer": self.optimizer.state_dict(), "teachers": self.teachers.state_dict()})
        shards = self.run_dir / "checkpoints" / f".shards-step-{self.step:06d}"
        if main:  # a killed earlier write of this step leaves its shards: start clean
            shutil.rmtree(shards, ignore_errors=True)
            shards.mkdir(parents=True)
        self.parallel.barrier()
        save_shards(shards, self.model, self.optimizer, self.teachers.networks())
        self.parallel.barrier()
        target = save_checkpoint(self.run_dir, self.step, state, shards=shards) if main else None
        self.parallel.barrier()
        return target

    def _restore(self) -> None:
        if self.sharded:  # rank 0 picks the intact checkpoint; every rank reads its shards
            found = load_latest_with_folder(self.run_dir) if self.parallel.is_main else None
            folder = self.parallel.broadcast_object(None if found is None else str(found[1]))
            if folder is None:
                return
            state = found[0] if found else torch.load(Path(folder) / STATE, weights_only=False)
            load_shards(Path(folder) / SHARDS, self.model, self.optimizer,
                        self.teachers.networks())
        else:
            state = load_latest(self.run_dir)
            if state is None:
                return
            self.model.load_state_dict(state["model"])
            self.optimizer.load_state_dict(state["optimizer"])
            self.teachers.load_state_dict(state["teachers"])
        set_rng_state(state["rng"])
        self.timer.load_state_dict(state["timer"])
        self.validation = [tuple(v) for v in state["validation"]]
        self.step = int(state["step"])
        self.log.truncate_after(self.step)
        self.episode_log.truncate_after(self.step)
        self.backend.sync_weights(self.model)
