"""What agents need to know about an env is declared with the env, for every installed env; an env
left out of the build (its folder deleted) does not break the others' tests or the trainer."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import pytest
from sdgym_test_params import AVAILABLE_IDS, FAST_KWARGS

from agents.prompts import PublicTurn, history_window, student_messages, system_prompt
from baselines.skills import skill_text
from sdgym.core import TextEnv
from sdgym.registration import ENVIRONMENTS, env_class

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("env_id", AVAILABLE_IDS)
def test_each_installed_env_declares_its_prompt_window_skills_and_test_kwargs(env_id) -> None:
    cls = env_class(env_id)
    assert issubclass(cls, TextEnv)
    assert cls.agent_role and system_prompt(env_id).startswith(cls.agent_role)
    assert history_window(env_id) == cls.history_window >= 1
    assert skill_text(env_id, "no-such-task-type") == cls.skills["default"]
    assert all(skill_text(env_id, kind) == text for kind, text in cls.skills.items())
    assert FAST_KWARGS[env_id]  # registration.py gives small kwargs for unit tests
    turn = PublicTurn(env_id, "the task", 1, observation="what the env shows")
    assert student_messages(turn)[0]["content"] == system_prompt(env_id)


class BareEnv(TextEnv):
    """An env that declares nothing an agent needs (a newcomer's first draft)."""


@pytest.fixture
def bare_env_id():
    env_id = "sdgym-test/Bare-v0"
    gym.register(env_id, entry_point=BareEnv)
    env_class.cache_clear()
    yield env_id
    del gym.registry[env_id]
    env_class.cache_clear()


def test_a_missing_role_or_skills_is_an_error_naming_the_env_and_the_window_a_default(
        bare_env_id) -> None:
    with pytest.raises(ValueError, match=r"sdgym-test/Bare-v0 declares no agent_role"):
        system_prompt(bare_env_id)
    with pytest.raises(ValueError, match=r"sdgym-test/Bare-v0 declares no skills"):
        skill_text(bare_env_id, "anything")
    assert history_window(bare_env_id) == 2  # the documented default (TextEnv.history_window)
    with pytest.raises(ValueError, match="unknown environment 'sdgym/Nope-v0'"):
        env_class("sdgym/Nope-v0")


HIDE = """
import importlib.abc, sys
class LeftOut(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == {package!r} or name.startswith({package!r} + "."):
            raise ModuleNotFoundError(f"No module named {{name!r}}")
        return None
sys.meta_path.insert(0, LeftOut())
import pytest
sys.exit(pytest.main({args!r}))
"""


def run_with_env_left_out(env_id: str, tests: list[str]) -> subprocess.CompletedProcess:
    """``pytest tests`` in a fresh interpreter that cannot import ``env_id``'s folder."""
    entry = next(e for e in ENVIRONMENTS if e.env_id == env_id)
    package = entry.entry_point.split(":")[0].rsplit(".", 1)[0]
    args = [*tests, "-v", "-p", "no:cacheprovider", "-k", "not left_out"]
    return subprocess.run([sys.executable, "-c", HIDE.format(package=package, args=args)],
                          cwd=ROOT, capture_output=True, text=True, timeout=280)


@pytest.mark.parametrize("env_id", AVAILABLE_IDS)
def test_with_one_env_left_out_the_others_tests_pass(env_id) -> None:
    result = run_with_env_left_out(env_id, ["tests/test_env_knowledge.py",
                                            "tests/agents/test_prompts.py"])
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert f"[{env_id}]" not in result.stdout  # not installed there, so not parametrised over
    others = [e for e in AVAILABLE_IDS if e != env_id]
    assert all(f"[{other}] PASSED" in result.stdout for other in others)


@pytest.mark.slow
def test_with_an_env_left_out_the_trainer_still_trains() -> None:
    others = [e for e in AVAILABLE_IDS if e != "sdgym/SearchQA-v0"]  # the trainer tests' env
    if not others or "sdgym/SearchQA-v0" not in AVAILABLE_IDS:
        pytest.skip("needs Search-QA and one other installed env")
    result = run_with_env_left_out(others[0], [
        "tests/baselines/test_trainer.py::test_smoke_run_logs_phases_validation_and_summary"])
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert "1 passed" in result.stdout and others[0] not in result.stdout
