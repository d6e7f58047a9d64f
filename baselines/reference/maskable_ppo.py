"""MaskablePPO (sb3-contrib) on any sdgym env through :class:`~sdgym.wrappers.AdmissibleDiscrete`.

The agent sees hashed bag-of-words features of the task, the observation and each candidate
command (the env's own discrete candidates where it defines them, e.g. Search-QA and WebShop,
else the admissible list) and picks a slot with :class:`~baselines.reference.slot_policy.SlotScoringPolicy`
(one scorer shared by every slot); ``action_masks()`` hides empty slots. Privileged info is
hidden.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym

import sdgym  # noqa: F401  (registers the env ids)
from sdgym.wrappers import AdmissibleDiscrete, HidePrivileged


class FixedSplit(gym.Wrapper):
    """Resets into ``split`` when the caller (e.g. sb3) passes no options."""

    def __init__(self, env: gym.Env, split: str) -> None:
        super().__init__(env)
        self.split = split

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        return self.env.reset(seed=seed, options={"split": self.split, **(options or {})})


def make_discrete_env(env_id: str, env_kwargs: dict[str, Any], split: str,
                      max_actions: int = 32) -> AdmissibleDiscrete:
    """``AdmissibleDiscrete(FixedSplit(HidePrivileged(gym.make(env_id))))``."""
    env = HidePrivileged(gym.make(env_id, **env_kwargs))
    return AdmissibleDiscrete(FixedSplit(env, split), max_actions=max_actions)


def quiet_logger() -> Any:
    """An sb3 logger that writes nothing and creates no folder."""
    from stable_baselines3.common.logger import Logger

    return Logger(folder=None, output_formats=[])


def train_maskable_ppo(env_id: str, env_kwargs: dict[str, Any], split: str, timesteps: int,
                       seed: int = 0, max_actions: int = 32) -> Any:
    """Train MaskablePPO for ``timesteps`` env steps on ``split``; return the sb3 model."""
    from sb3_contrib import MaskablePPO

    from baselines.reference.slot_policy import SlotScoringPolicy

    env = make_discrete_env(env_id, env_kwargs, split, max_actions)
    layout = {"obs_dim": env.obs_dim, "max_actions": env.max_actions,
              "action_dim": env.action_dim}
    model = MaskablePPO(SlotScoringPolicy, env, seed=seed, n_steps=256, batch_size=64,
                        n_epochs=4, learning_rate=3e-4, ent_coef=0.01, gamma=0.99, verbose=0,
                        device="cpu", policy_kwargs={"features_extractor_kwargs": layout})
    model.set_logger(quiet_logger())  # sb3's default makes a /tmp/SB3-<time> folder per run
    model.learn(total_timesteps=timesteps)
    env.close()
    return model


class MaskablePPOPolicy:
    """A trained MaskablePPO model as a text policy (for :func:`baselines.evaluation.evaluate_policy`)."""

    name = "maskable_ppo"
    needs_privileged = False

    def __init__(self, model: Any, max_actions: int = 32, deterministic: bool = True) -> None:
        self.model = model
        self.max_actions = max_actions
        self.deterministic = deterministic
        self._featuriser: AdmissibleDiscrete | None = None
        self._task_text: str | None = None

    def reset(self, seed: int) -> None:
        self.model.set_random_seed(seed)
        self._task_text = None  # the next observation starts an episode

    def act(self, observation: str, info: dict[str, Any], env: gym.Env) -> str:
        if self._featuriser is None or self._featuriser.env is not env:
            self._featuriser = AdmissibleDiscrete(env, max_actions=self.max_actions)
        if self._task_text is None:
            self._task_text = observation
        self._featuriser.task_text = self._task_text
        features = self._featuriser.featurise(observation, info)
        action, _ = self.model.predict(features, action_masks=self._featuriser.action_masks(),
                                       deterministic=self.deterministic)
        candidates = self._featuriser.candidates
        return candidates[int(action)] if int(action) < len(candidates) else ""
