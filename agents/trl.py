"""TRL integration: a ready ``rollout_func`` for ``trl.GRPOTrainer`` and reward helpers.

Multi-turn sdgym episodes through TRL's ``rollout_func``::

    from trl import GRPOConfig, GRPOTrainer
    from agents.datasets import task_dataset
    from agents.trl import SdgymRollout, episode_reward

    kwargs = {"size": "tiny"}
    tasks = task_dataset("sdgym/SearchQA-v0", "easy_train", env_kwargs=kwargs, model=folder)
    with SdgymRollout("sdgym/SearchQA-v0", tasks, env_kwargs=kwargs) as rollout:
        trainer = GRPOTrainer(model=folder, reward_funcs=episode_reward, train_dataset=tasks,
                              rollout_func=rollout, args=GRPOConfig(...))
        trainer.train()

How it works. TRL hands the rollout the prompts of a generation batch, each repeated
``num_generations`` times (its groups). Each prompt is looked up in the task datasets given to
:class:`SdgymRollout` (so every repeat of a prompt plays the same task: a GRPO group), an env is
reset on that task, and the episode is played turn by turn with the trained model itself
(:class:`~agents.backends.hf.HFBackend` on the unwrapped TRL model: on-policy, no weight sync;
TRL's ``use_vllm`` is not used). The turns are folded into one sequence, which is what TRL trains:

``prompt_ids`` = the first-turn student prompt (the dataset's ``prompt``, chat-rendered);
``completion_ids`` = response 1, then the next turn's user message (sdgym's student prompt for
that turn, as a chat continuation), response 2, and so on. ``env_mask`` is 1 on response tokens
and 0 on the observation tokens folded in between, so only the model's own tokens are trained.
``logprobs`` are the sampling-time log-probs (raw model, temperature 1; 0 on observation tokens).
The episode outcome comes back as extra fields (``episode_score``, ``episode_won``,
``episode_turns``, ``episode_task_id``), which TRL passes to reward functions:
:func:`episode_reward` returns ``episode_score``. Any number of prompts works (TRL's evaluation
batch size and ``num_generations_eval`` may differ from training's).

Single-turn use (TRL generates one completion per prompt, no ``rollout_func``):
:class:`EnvReward` resets the env on each row's task (the dataset's ``split`` and ``task_index``
columns), steps it once with the completion and returns the env's score.

Needs the ``trl`` extra (``pip install 'sdgym[trl]'``).
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import gymnasium as gym

from agents.datasets import first_turn_messages, prompt_limits_for
from agents.prompts import PromptLimits, public_turn, student_messages
from sdgym.wrappers import HidePrivileged, TaggedActions

if TYPE_CHECKING:
    from datasets import Dataset

    from agents.backends.base import SamplingParams
    from agents.backends.hf import HFBackend

PLACEHOLDER = "SDGYM_RESPONSE_PLACEHOLDER"
"""Stands in for a response when the chat template is asked how a conversation continues."""


@dataclass(frozen=True)
class TaskRef:
    """Where a dataset prompt comes from."""

    split: str
    task_index: int
    task_id: str


@dataclass
class FoldedEpisode:
    """One episode folded into TRL's ``prompt_ids`` / ``completion_ids`` layout."""

    env: gym.Env
    task: TaskRef
    messages: list[dict[str, str]]
    """The first-turn prompt (system + user)."""
    first_observation: str
    observation: str
    info: dict[str, Any]
    prompt_ids: list[int]
    completion_ids: list[int] = field(default_factory=list)
    env_mask: list[int] = field(default_factory=list)
    logprobs: list[float] = field(default_factory=list)
    history: list[tuple[str, str]] = field(default_factory=list)
    turns: int = 0
    done: bool = False

    @property
    def context(self) -> list[int]:
        """Everything the model conditions on for its next response."""
        return self.prompt_ids + self.completion_ids


def prompt_key(prompt: Any) -> str:
    """A hashable key for a TRL prompt (a string or a list of chat messages)."""
    return json.dumps(prompt, sort_keys=True, ensure_ascii=False)


def task_index_by_prompt(tasks: Dataset | Sequence[Dataset]) -> dict[str, TaskRef]:
    """Prompt → task of every row of ``tasks`` (built by :func:`agents.datasets.task_dataset`).

    Two tasks with the same first prompt cannot be told apart by TRL's prompt; the first row
    wins (the same one in every process, so a split group still plays one task)."""
    datasets = [tasks] if hasattr(tasks, "column_names") else list(tasks)
    found: dict[str, TaskRef] = {}
    for dataset in datasets:
        missing = {"prompt", "split", "task_index", "task_id"} - set(dataset.column_names)
        if missing:
            raise ValueError(f"a task dataset needs the columns {sorted(missing)}; build it with "
                             "agents.datasets.task_dataset")
        for prompt, split, index, task_id in zip(dataset["prompt"], dataset["split"],
                                                 dataset["task_index"], dataset["task_id"]):
            found.setdefault(prompt_key(prompt), TaskRef(str(split), int(index), str(task_id)))
    return found


def turn_separator(tokenizer: Any, messages: Sequence[Mapping[str, str]], user_content: str,
                   last_response_token: str | None, template_kwargs: Mapping[str, Any]) -> str:
    """The text between a response and the next response in a chat-rendered conversation:
    the end of the assistant turn, the next user message, the next assistant header.

    ``last_response_token`` is the decoded last token of the response when it was a stop token
    (e.g. ``<|im_end|>``), which the end of the assistant turn then does not repeat."""
    from agents.backends.base import render_chat

    answered = [*map(dict, messages), {"role": "assistant", "content": PLACEHOLDER}]
    before = render_chat(tokenizer, answered, add_generation_prompt=False, **template_kwargs)
    after = render_chat(tokenizer, [*answered, {"role": "user", "content": user_content}],
                        add_generation_prompt=True, **template_kwargs)
    if PLACEHOLDER not in before or not after.startswith(before):
        raise ValueError("the tokenizer's chat template does not render a conversation as a "
                         "prefix of its continuation, so turns cannot be folded into one sequence")
    closing = before[before.rindex(PLACEHOLDER) + len(PLACEHOLDER):]
    if last_response_token and closing.startswith(last_response_token):
        closing = closing[len(last_response_token):]
    return closing + after[len(before):]


def _encode(tokenizer: Any, text: str) -> list[int]:
    return list(tokenizer(text, add_special_tokens=False)["input_ids"])


def play_folded_episodes(
    episodes: Sequence[FoldedEpisode],
    backend: HFBackend,
    params: SamplingParams,
    *,
    env_id: str,
    limits: PromptLimits,
    max_turns: int,
    max_total_tokens: int | None = None,
    template_kwargs: Mapping[str, Any] | None = None,
) -> None:
    """Play every episode to its end, one batched generation per turn over the live ones."""
    tokenizer, template_kwargs = backend.tokenizer, dict(template_kwargs or {})

    def fits(episode: FoldedEpisode, extra: int) -> bool:
        total = len(episode.context) + extra + params.max_new_tokens
        return max_total_tokens is None or total <= max_total_tokens

    for episode in episodes:
        if not fits(episode, 0):
            raise ValueError(f"the prompt of {episode.task.task_id} has {len(episode.prompt_ids)} "
                             f"tokens: with {params.max_new_tokens} new tokens it passes "
                             f"max_total_tokens={max_total_tokens}")
    for turn in range(1, max_turns + 1):
        live = [episode for episode in episodes if not episode.done]
        if not live:
            return
        generations = backend.generate_from_ids([episode.context for episode in live], params)
        for episode, generation in zip(live, generations):
            episode.completion_ids += generation.response_ids
            episode.env_mask += [1] * len(generation.response_ids)
            episode.logprobs += list(generation.logprobs)
            episode.turns = turn
            shown = episode.observation
            observation, _, terminated, truncated, info = episode.env.step(generation.text)
            episode.history.append((shown, str(info.get("parsed_action", ""))))
            episode.observation, episode.info = observation, info
            if terminated or truncated or turn == max_turns:
                episode.done = True
                continue
            next_turn = public_turn(env_id, episode.first_observation, turn + 1, episode.history,
                                    observation, info, limits)
            last = generation.response_ids[-1:] if generation.finish_reason == "stop" else []
            separator = turn_separator(
                tokenizer, episode.messages, student_messages(next_turn)[1]["content"],
                tokenizer.decode(last) if last else None, template_kwargs)
            folded = _encode(tokenizer, separator)
            if not fits(episode, len(folded)):
                episode.done = True  # the next turn would not fit: the episode ends here
                continue
            episode.completion_ids += folded
            episode.env_mask += [0] * len(folded)
            episode.logprobs += [0.0] * len(folded)


def episode_seed(step: int, task: TaskRef) -> int:
    """The reset seed of a task at a training step (equal for a whole group, in every process)."""
    return zlib.crc32(f"{step}/{task.split}/{task.task_index}".encode()) & 0x7FFFFFFF


class SdgymRollout:
    """A ``rollout_func`` for ``trl.GRPOTrainer`` that plays multi-turn sdgym episodes.

    See the module docstring for the layout it returns.

    Args:
        env_id: The sdgym env, e.g. ``"sdgym/SearchQA-v0"``.
        tasks: The task dataset(s) whose prompts TRL will pass (training and evaluation), from
            :func:`agents.datasets.task_dataset` with the same ``env_kwargs``.
        env_kwargs: ``gym.make`` keyword arguments (they decide the tasks).
        model: A shipped warm start or model folder whose recorded prompt limits to use;
            ``limits`` sets them directly. With neither, the trained model's own folder's record
            is used, else the defaults. The dataset's prompts must have been built with the same
            limits (checked on every reset).
        max_turns: Turns per episode (default: the env's ``max_episode_steps``).
        max_new_tokens: Tokens per response (default: the trainer's ``max_completion_length``).
        max_total_tokens: An episode ends before a turn that could push prompt + completion past
            this (default: the model's ``max_position_embeddings``).
    """

    def __init__(
        self,
        env_id: str,
        tasks: Dataset | Sequence[Dataset],
        *,
        env_kwargs: Mapping[str, Any] | None = None,
        model: str | None = None,
        limits: PromptLimits | Mapping[str, Any] | None = None,
        max_turns: int | None = None,
        max_new_tokens: int | None = None,
        max_total_tokens: int | None = None,
    ) -> None:
        import sdgym  # noqa: F401  (registers the env ids)

        self.env_id = env_id
        self.env_kwargs = dict(env_kwargs or {})
        self.tasks = task_index_by_prompt(tasks)
        self.limits = prompt_limits_for(model, limits) if (model or limits) else None
        spec_turns = gym.spec(env_id).max_episode_steps or 50
        self.max_turns = max_turns or int(self.env_kwargs.get("max_episode_steps", spec_turns))
        self.max_new_tokens = max_new_tokens
        self.max_total_tokens = max_total_tokens
        self.envs: list[gym.Env] = []
        self.__name__ = "sdgym_rollout"

    def close(self) -> None:
        """Close every env the rollout made."""
        while self.envs:
            self.envs.pop().close()

    def __enter__(self) -> SdgymRollout:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _env(self, index: int) -> gym.Env:
        while len(self.envs) <= index:
            env = gym.make(self.env_id, **self.env_kwargs)
            self.envs.append(TaggedActions(HidePrivileged(env)))
        return self.envs[index]

    def _task(self, prompt: Any) -> TaskRef:
        task = self.tasks.get(prompt_key(prompt))
        if task is None:
            raise ValueError("SdgymRollout got a prompt that is in none of its task datasets; "
                             "pass every dataset the trainer uses (train and eval) as tasks")
        return task

    def _limits(self, trainer: Any) -> PromptLimits:
        if self.limits is None:
            model = trainer.accelerator.unwrap_model(trainer.model)
            folder = getattr(getattr(model, "config", None), "_name_or_path", None)
            self.limits = prompt_limits_for(folder or None)
        return self.limits

    def start(self, index: int, prompt: Any, step: int, limits: PromptLimits, tokenizer: Any,
              template_kwargs: Mapping[str, Any]) -> FoldedEpisode:
        """Reset env ``index`` on the task of ``prompt`` and tokenize the prompt."""
        from agents.backends.base import render_chat

        task, env = self._task(prompt), self._env(index)
        observation, info = env.reset(seed=episode_seed(step, task),
                                      options={"split": task.split, "task_index": task.task_index})
        if info["task_id"] != task.task_id:
            raise ValueError(f"task {task.split}/{task.task_index} is {info['task_id']} here but "
                             f"{task.task_id} in the dataset: build both with the same env_kwargs")
        messages = first_turn_messages(self.env_id, observation, info, limits)
        if messages != prompt:
            raise ValueError(f"the dataset prompt of {task.task_id} is not sdgym's first-turn "
                             f"prompt with limits {limits}; build the dataset with the same limits "
                             "(task_dataset(..., model=...) or limits=...)")
        prompt_ids = _encode(tokenizer, render_chat(tokenizer, messages, **template_kwargs))
        return FoldedEpisode(env=env, task=task, messages=messages, first_observation=observation,
                             observation=observation, info=info, prompt_ids=prompt_ids)

    def __call__(self, prompts: list[Any], trainer: Any) -> dict[str, list[Any]]:
        """TRL's ``rollout_func(prompts, trainer)``: one folded episode per prompt."""
        from trl.models.utils import unwrap_model_for_generation

        from agents.backends.base import SamplingParams
        from agents.backends.hf import HFBackend

        tokenizer = getattr(trainer.processing_class, "tokenizer", trainer.processing_class)
        template_kwargs = dict(getattr(trainer, "chat_template_kwargs", None) or {})
        limits = self._limits(trainer)
        step = int(trainer.state.global_step)
        episodes = [self.start(i, prompt, step, limits, tokenizer, template_kwargs)
                    for i, prompt in enumerate(prompts)]
        params = SamplingParams(
            max_new_tokens=self.max_new_tokens or int(trainer.args.max_completion_length),
            temperature=float(trainer.temperature), top_p=float(trainer.top_p))
        with unwrap_model_for_generation(
            trainer.model_wrapped, trainer.accelerator,
            gradient_checkpointing_kwargs=trainer.args.gradient_checkpointing_kwargs,
        ) as model:
            backend = HFBackend(model, tokenizer, device=next(model.parameters()).device)
            total = self.max_total_tokens or getattr(model.config, "max_position_embeddings", None)
            play_folded_episodes(episodes, backend, params, env_id=self.env_id, limits=limits,
                                 max_turns=self.max_turns, max_total_tokens=total,
                                 template_kwargs=template_kwargs)
        return folded_output(episodes)


def folded_output(episodes: Sequence[FoldedEpisode]) -> dict[str, list[Any]]:
    """What a TRL ``rollout_func`` returns for ``episodes``."""
    return {
        "prompt_ids": [episode.prompt_ids for episode in episodes],
        "completion_ids": [episode.completion_ids for episode in episodes],
        "logprobs": [episode.logprobs for episode in episodes],
        "env_mask": [episode.env_mask for episode in episodes],
        "episode_score": [float(episode.info.get("score", 0.0)) for episode in episodes],
        "episode_won": [bool(episode.info.get("won", False)) for episode in episodes],
        "episode_turns": [episode.turns for episode in episodes],
        "episode_task_id": [episode.task.task_id for episode in episodes],
    }


def episode_reward(completions: list[Any], episode_score: list[float] | None = None,
                   **kwargs: Any) -> list[float]:
    """TRL reward function: the episode's final score in [0, 1], from :class:`SdgymRollout`."""
    del kwargs
    if episode_score is None:
        raise ValueError("episode_reward reads the episode_score field of SdgymRollout; pass "
                         "rollout_func=SdgymRollout(...) to the GRPOTrainer")
    return [float(score) for score in episode_score]


def completion_text(completion: Any) -> str:
    """The text of a TRL completion (a string, or chat messages whose last one is the reply)."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, list) and completion and isinstance(completion[-1], Mapping):
        return str(completion[-1].get("content", ""))
    return str(completion)


class EnvReward:
    """TRL reward function for single-turn use: the env's score after one step with the
    completion, on the task of the row (its ``split`` and ``task_index`` columns).

    >>> reward = EnvReward("sdgym/SearchQA-v0", env_kwargs={"size": "tiny"})
    >>> # GRPOTrainer(..., reward_funcs=reward, train_dataset=task_dataset(...))
    """

    def __init__(self, env_id: str, *, env_kwargs: Mapping[str, Any] | None = None) -> None:
        import sdgym  # noqa: F401  (registers the env ids)

        self.env_id = env_id
        self.env_kwargs = dict(env_kwargs or {})
        self.env: gym.Env | None = None
        self.__name__ = "env_reward"

    def __call__(self, completions: list[Any], split: list[str] | None = None,
                 task_index: list[int] | None = None, **kwargs: Any) -> list[float]:
        del kwargs
        if split is None or task_index is None:
            raise ValueError("EnvReward needs the split and task_index columns of a task dataset "
                             "(agents.datasets.task_dataset)")
        if self.env is None:
            self.env = TaggedActions(HidePrivileged(gym.make(self.env_id, **self.env_kwargs)))
        scores = []
        for completion, row_split, index in zip(completions, split, task_index, strict=True):
            self.env.reset(options={"split": row_split, "task_index": int(index)})
            _, _, _, _, info = self.env.step(completion_text(completion))
            scores.append(float(info.get("score", 0.0)))
        return scores

    def close(self) -> None:
        """Close the env."""
        if self.env is not None:
            self.env.close()
            self.env = None
