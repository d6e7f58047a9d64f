"""Batched multi-turn rollout: N tasks × G group members in lock-step over an env pool.

Each turn, one generation call covers every live episode; episodes end at different times and
finished sub-envs receive an empty (ignored) command until the whole batch is done. A group is G
sub-envs reset with the same seed, so they share a task. The result is one :class:`TurnRow` per
(episode, turn) — verl-agent style — carrying what training needs: prompt and response ids,
rollout log-probs, the env outcome, and the privileged info seen at that turn (for teacher heads;
never in the student prompt).

The sub-envs live in an env pool (:mod:`agents.pools`): a Gymnasium vector env in this process
(``rollout_backend="local"``) or Ray actors (``"ray"``, :mod:`agents.pools.ray`); the engine is the
same for both.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym
import numpy as np

from agents.backends.base import PolicyBackend, SamplingParams
from agents.backends.row_streams import stream_seed
from agents.pools import EnvPoolSpec, make_env_pool
from agents.prompts import PromptLimits, PublicTurn, public_turn, student_messages

Renderer = Callable[[list[dict[str, str]]], str]
MessageBuilder = Callable[[PublicTurn, dict[str, Any]], list[dict[str, str]]]
"""The chat messages of one turn from its public state and the env's info at that turn."""


def student_turn_messages(turn: PublicTurn, info: dict[str, Any]) -> list[dict[str, str]]:
    """The default :data:`MessageBuilder`: the student prompt (the info is not used)."""
    del info
    return student_messages(turn)


@dataclass
class TurnRow:
    """One training row: a turn of one episode."""

    group_id: int
    traj_id: int
    turn: int
    task_id: str
    task_type: str
    public: PublicTurn
    prompt_ids: list[int]
    response_ids: list[int]
    old_logprobs: list[float]
    response_text: str
    reward: float
    action_valid: bool
    parse_error: str | None
    done: bool
    privileged: dict[str, Any] | None
    episode_return: float = 0.0
    won: bool = False
    score: float = 0.0
    action: str = ""
    """The command the env received (the response's tagged action; empty if none parsed)."""
    next_observation: str = ""
    """What the env answered to it."""


@dataclass
class Episode:
    """Summary of one finished episode."""

    group_id: int
    traj_id: int
    task_id: str
    task_type: str
    turns: int
    score: float
    won: bool
    invalid_actions: int


@dataclass
class RolloutBatch:
    """Rows, episodes and phase timings of one rollout."""

    rows: list[TurnRow] = field(default_factory=list)
    episodes: list[Episode] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    """Wall seconds (``generation``, ``env``, ``total``) and process CPU seconds
    (``generation_cpu``, ``env_cpu``) of the rollout."""
    generated_tokens: int = 0
    prompt_tokens: int = 0

    @property
    def success_rate(self) -> float:
        """Share of episodes won."""
        return float(np.mean([e.won for e in self.episodes])) if self.episodes else 0.0

    @property
    def mean_score(self) -> float:
        """Mean final score."""
        return float(np.mean([e.score for e in self.episodes])) if self.episodes else 0.0


@dataclass
class RolloutEngineConfig:
    """Which env and how many groups; sampling is passed per call."""

    env_id: str
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    num_groups: int = 2
    group_size: int = 4
    vectorization_mode: str = "sync"
    hide_privileged: bool = False
    max_turns: int | None = None
    rollout_backend: str = "local"
    """``"local"`` (a vector env here) or ``"ray"`` (env actors; see :mod:`agents.pools.ray`)."""
    ray_address: str | None = None
    """Ray cluster to join (``None``: a local Ray instance)."""
    ray_num_workers: int = 2
    """Env actors of the Ray backend."""
    prompt_limits: PromptLimits = field(default_factory=PromptLimits)
    """How much history/observation/admissible text the student prompts show."""


class RolloutEngine:
    """Runs grouped episodes of a policy backend on a vector env (see the module docstring)."""

    def __init__(self, config: RolloutEngineConfig, backend: PolicyBackend, render: Renderer,
                 messages: MessageBuilder = student_turn_messages) -> None:
        self.config = config
        self.backend = backend
        self.render = render
        self.messages = messages
        self.num_envs = config.num_groups * config.group_size
        spec = EnvPoolSpec(config.env_id, dict(config.env_kwargs), config.hide_privileged,
                           config.vectorization_mode)
        self.pool = make_env_pool(spec, self.num_envs, config.rollout_backend,
                                  config.ray_address, config.ray_num_workers)
        spec_limit = gym.spec(config.env_id).max_episode_steps or 50
        self.max_turns = config.max_turns or int(config.env_kwargs.get("max_episode_steps", spec_limit))

    def close(self) -> None:
        """Close the env pool and every sub-env."""
        self.pool.close()

    def __enter__(self) -> RolloutEngine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def task_count(self, split: str) -> int:
        """Number of tasks in ``split`` of the engine's env."""
        return self.pool.task_count(split)

    def collect(
        self, seeds: Sequence[int], params: SamplingParams, split: str = "train",
        task_indices: Sequence[int] | None = None, sample_seeds: Sequence[int] | None = None,
    ) -> RolloutBatch:
        """One episode per sub-env; group ``g`` is reset with ``seeds[g]``, on task
        ``task_indices[g]`` when given (else the task the seed picks).

        ``sample_seeds`` (one per group): every sub-env samples from its own row stream
        (:mod:`agents.backends.row_streams`), seeded by its group's sample seed, its place in
        the group and the turn, so its episode does not depend on which other episodes share
        the call; else ``params.seed`` seeds one stream per call."""
        config = self.config
        if len(seeds) != config.num_groups:
            raise ValueError(f"need {config.num_groups} seeds (one per group), got {len(seeds)}")
        if sample_seeds is not None and len(sample_seeds) != config.num_groups:
            raise ValueError(f"need {config.num_groups} sample seeds (one per group), "
                             f"got {len(sample_seeds)}")
        options: dict[str, Any] = {"split": split}
        if task_indices is not None:
            if len(task_indices) != len(seeds) or len(set(seeds)) != len(seeds):
                raise ValueError("task_indices needs one task per group and distinct group seeds")
            options["task_index_by_seed"] = {int(s): int(t) for s, t in zip(seeds, task_indices)}
        batch = RolloutBatch(timings={"generation": 0.0, "env": 0.0, "generation_cpu": 0.0,
                                      "env_cpu": 0.0})
        started, cpu = time.perf_counter(), time.process_time()
        env_seeds = [int(seed) for seed in seeds for _ in range(config.group_size)]
        observations, current = self.pool.reset(env_seeds, options)
        batch.timings["env"] += time.perf_counter() - started
        batch.timings["env_cpu"] += time.process_time() - cpu
        tasks = list(observations)
        histories: list[list[tuple[str, str]]] = [[] for _ in range(self.num_envs)]
        live = [True] * self.num_envs
        episode_rows: list[list[TurnRow]] = [[] for _ in range(self.num_envs)]
        for turn in range(self.max_turns):
            indices = [i for i in range(self.num_envs) if live[i]]
            if not indices:
                break
            turns = [
                public_turn(config.env_id, tasks[i], turn + 1, histories[i], observations[i],
                            current[i], config.prompt_limits)
                for i in indices
            ]
            conversations = [self.messages(t, current[i]) for t, i in zip(turns, indices)]
            chat = self.backend.wants_messages  # a chat endpoint renders the template itself
            prompts = [] if chat else [self.render(m) for m in conversations]
            turn_params = params if sample_seeds is None else dataclasses.replace(
                params, row_seeds=[stream_seed(sample_seeds[i // config.group_size],
                                               i % config.group_size, turn) for i in indices])
            tick, cpu = time.perf_counter(), time.process_time()
            generations = (self.backend.chat(conversations, turn_params) if chat
                           else self.backend.generate(prompts, turn_params))
            batch.timings["generation"] += time.perf_counter() - tick
            batch.timings["generation_cpu"] += time.process_time() - cpu
            actions = [""] * self.num_envs
            for i, generation in zip(indices, generations):
                actions[i] = generation.text
                batch.generated_tokens += len(generation.response_ids)
                batch.prompt_tokens += len(generation.prompt_ids)
            tick, cpu = time.perf_counter(), time.process_time()
            observations, rewards, terminated, truncated, infos = self.pool.step(actions)
            batch.timings["env"] += time.perf_counter() - tick
            batch.timings["env_cpu"] += time.process_time() - cpu
            for i, generation, state in zip(indices, generations, turns):
                info = infos[i]
                done = bool(terminated[i] or truncated[i]) or turn + 1 == self.max_turns
                episode_rows[i].append(TurnRow(
                    group_id=i // config.group_size, traj_id=i, turn=turn,
                    task_id=str(current[i]["task_id"]), task_type=str(current[i]["task_type"]),
                    public=state, prompt_ids=list(generation.prompt_ids),
                    response_ids=list(generation.response_ids),
                    old_logprobs=list(generation.logprobs), response_text=generation.text,
                    reward=float(rewards[i]), action_valid=bool(info.get("action_valid", True)),
                    parse_error=info.get("parse_error"), done=done,
                    privileged=current[i].get("privileged"),
                    action=str(info.get("parsed_action", "")),
                    next_observation=str(observations[i]),
                ))
                histories[i].append((state.observation, str(info.get("parsed_action", ""))))
                current[i] = info
                if done:
                    live[i] = False
                    self._finish(batch, episode_rows[i], info)
        batch.timings["total"] = time.perf_counter() - started
        return batch

    @staticmethod
    def _finish(batch: RolloutBatch, rows: list[TurnRow], info: dict[str, Any]) -> None:
        score, won = float(info.get("score", 0.0)), bool(info.get("won", False))
        for row in rows:
            row.episode_return, row.won, row.score = score, won, score
        batch.rows.extend(rows)
        first = rows[0]
        batch.episodes.append(Episode(
            first.group_id, first.traj_id, first.task_id, first.task_type, len(rows), score, won,
            sum(not row.action_valid for row in rows),
        ))
