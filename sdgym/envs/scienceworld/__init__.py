"""ScienceWorld (Wang et al., 2022) behind the sdgym contract: ``sdgym/ScienceWorld-v0``.

Modules: :mod:`.env` (the Gymnasium env), :mod:`.tasks` (tasks, variations, splits),
:mod:`.simulator` (fast stepping, crash recovery, gold-sequence cache), :mod:`.jvm` (the JVM's
lifecycle), :mod:`.goal` (goal progress, expert path, privileged text). Importing this package
does not import ``scienceworld`` or start Java; ``reset`` does.
"""

from sdgym.envs.scienceworld.env import ScienceWorldEnv

__all__ = ["ScienceWorldEnv"]
