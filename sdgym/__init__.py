"""sdgym: Gymnasium text environments with privileged training-time information.

``import sdgym`` registers ``sdgym/ALFWorld-v0``, ``sdgym/ScienceWorld-v0``,
``sdgym/SearchQA-v0`` and ``sdgym/WebShop-v0``; engines load only on ``gym.make``.
"""

from sdgym.core import PRIVILEGED_KEYS, PUBLIC_INFO_KEYS, EngineStep, InvalidAction, TextEnv
from sdgym.registration import ENVIRONMENTS, register_envs
from sdgym.spaces import UnicodeText

__version__ = "0.1.0"
__all__ = [
    "ENVIRONMENTS",
    "PRIVILEGED_KEYS",
    "PUBLIC_INFO_KEYS",
    "EngineStep",
    "InvalidAction",
    "TextEnv",
    "UnicodeText",
    "register_envs",
    "wrappers",
]

_LAZY_SUBMODULES = ("wrappers",)


def __getattr__(name: str):
    """``sdgym.wrappers`` without an explicit import, loaded on first use (keeps the import light)."""
    if name in _LAZY_SUBMODULES:
        import importlib

        return importlib.import_module(f"sdgym.{name}")
    raise AttributeError(f"module 'sdgym' has no attribute {name!r}")


register_envs()
