"""ALFWorld (Shridhar et al., 2021) behind the sdgym contract: ``sdgym/ALFWorld-v0``.

Modules: :mod:`.env` (the Gymnasium env), :mod:`.splits` (fixed splits), :mod:`.layouts` (the
wheel's floor plans), :mod:`.scene` (random tasks in a room), :mod:`.problem` (PDDL writer),
:mod:`.generator` (verified, cached games), :mod:`.capped` (planner calls under a memory cap),
:mod:`.game_io` (upstream file format and official data loader), :mod:`.engine` (TextWorld's
PDDL engine), :mod:`.speedups` (memoisation), :mod:`.expert` (privileged plans),
:mod:`.handcoded` (the expert after a deviation), :mod:`.generate` (command line). Importing this package does
not import textworld or alfworld.
"""

from typing import Any

__all__ = ["ALFWorldEnv"]


def __getattr__(name: str) -> Any:
    if name == "ALFWorldEnv":
        from sdgym.envs.alfworld.env import ALFWorldEnv

        return ALFWorldEnv
    raise AttributeError(name)
