"""Reference baselines as a library: build a policy (random, expert, MaskablePPO) and evaluate it.

One record format (the benchmark's, so reports can mix reference baselines and LLM runs:
``kind="baseline"``, ``method``, per-seed success/score, ``train_seconds``). Used by
``sdgym baseline`` (:mod:`baselines.reference.cli`) and the benchmark matrix
(:mod:`benchmarks.protocol.matrix`).

Splits: ``split="easy"`` evaluates on each env's easy evaluation split (the one its class declares
in ``easy_splits`` with the role ``"val"``, else ``test``); MaskablePPO trains on its easy
``"train"`` split, else ``train``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from baselines.evaluation import evaluate_policy
from baselines.reference.policies import POLICIES

ALGOS = (*POLICIES, "maskable_ppo")
EASY = "easy"
"""The ``--split`` value that means each env's own easy evaluation split."""


def easy_split(env_id: str, role: str, fallback: str) -> str:
    """The easy split a registered env's class declares for ``role`` (``"train"``, ``"val"``,
    ``"test"``; its ``easy_splits``), else ``fallback``. Nothing is built."""
    import gymnasium as gym
    from gymnasium.envs.registration import load_env_creator

    import sdgym  # noqa: F401  (registers the env ids)

    declared = getattr(load_env_creator(gym.spec(env_id).entry_point), "easy_splits", {})
    return next((split for split, its_role in declared.items() if its_role == role), fallback)


def evaluation_split(split: str, env_id: str) -> str:
    """``split``, or for ``"easy"`` the env's easy evaluation split (see the module docstring)."""
    return easy_split(env_id, "val", "test") if split == EASY else split


def ppo_train_split(env_id: str, env_kwargs: dict | None = None) -> str:
    """The split MaskablePPO trains on by default (see the module docstring): the env's easy
    train split, or ``train`` when ``env_kwargs`` leave the easy one without tasks (e.g.
    ScienceWorld restricted by ``task_names`` to tasks outside its easy curriculum)."""
    split = easy_split(env_id, "train", "train")
    if split == "train" or env_kwargs is None:
        return split
    import gymnasium as gym

    env = gym.make(env_id, **env_kwargs)
    try:
        return split if env.unwrapped.task_count(split) > 0 else "train"
    finally:
        env.close()


def make_policy(algo: str, env_id: str, env_kwargs: dict, ppo_timesteps: int = 20_000,
                ppo_split: str | None = None):
    """The policy for ``algo`` (MaskablePPO is trained first, on ``ppo_split`` or the easy one)."""
    if algo not in ALGOS:
        raise ValueError(f"unknown algo {algo!r}; choose from {sorted(ALGOS)}")
    if algo != "maskable_ppo":
        return POLICIES[algo]()
    from baselines.reference.maskable_ppo import MaskablePPOPolicy, train_maskable_ppo

    split = ppo_split or ppo_train_split(env_id, env_kwargs)
    return MaskablePPOPolicy(train_maskable_ppo(env_id, env_kwargs, split, ppo_timesteps))


def run_baseline(
    env_id: str,
    algo: str,
    env_kwargs: dict[str, Any],
    *,
    split: str = "test",
    episodes: int = 16,
    seeds: Sequence[int] = tuple(range(8)),
    ppo_timesteps: int = 20_000,
    ppo_split: str | None = None,
    progress: Callable[[int], None] | None = None,
) -> dict[str, Any]:
    """Train (MaskablePPO only) and evaluate one reference baseline; its result record.

    The record is :meth:`EvaluationResult.to_record` plus the fields the benchmark report reads
    (``kind="baseline"``, ``method``, ``seed``, ``validation``, ``auc``, ``train_seconds``) and
    ``env_kwargs``. ``split`` may be ``"easy"`` (:func:`evaluation_split`).
    """
    started = time.perf_counter()
    policy = make_policy(algo, env_id, env_kwargs, ppo_timesteps, ppo_split)
    train_seconds = time.perf_counter() - started
    result = evaluate_policy(env_id, policy, split=evaluation_split(split, env_id),
                             episodes=episodes, seeds=seeds, env_kwargs=env_kwargs,
                             progress=progress)
    record = result.to_record()
    record.update(kind="baseline", method=algo, seed=0, env_kwargs=env_kwargs, validation=[],
                  auc=None, train_seconds=train_seconds)
    return record
