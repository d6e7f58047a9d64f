"""The on-disk cache of fast-downward's PDDL -> SAS translation, and the goal-factored grammar
parse: same translations and observations as the unmodified engine, torn entries rebuilt."""

from __future__ import annotations

import contextlib
import io
import json
import re
import warnings
import zlib

import pytest

pytest.importorskip("alfworld")
pytest.importorskip("textworld")

from sdgym.cache import CacheEntryWarning  # noqa: E402
from sdgym.envs.alfworld import speedups, translation_cache  # noqa: E402
from sdgym.envs.alfworld.env import ALFWorldEnv  # noqa: E402
from sdgym.envs.alfworld.game_io import game_logic  # noqa: E402
from sdgym.envs.alfworld.generator import load_generated  # noqa: E402


@pytest.fixture
def cache_folder(tmp_path, monkeypatch):
    """A private, empty translation cache; in-memory memos cleared before and after."""
    monkeypatch.setattr(translation_cache, "cache_dir", lambda *parts: tmp_path)
    _forget_in_memory()
    yield tmp_path
    _forget_in_memory()


def _forget_in_memory() -> None:
    speedups._memo_pddl2sas.cache_clear()
    translation_cache.parsed_task.cache_clear()


def _no_translator(monkeypatch) -> None:
    """Make any call of the real translator fail the test."""
    import fast_downward.interface

    def refuse(*args, **kwargs):
        raise AssertionError("the translator ran although its result was cached on disk")

    monkeypatch.setattr(fast_downward.interface, "pddl2sas", refuse)


def _dump(task) -> str:
    stream = io.StringIO()
    with contextlib.redirect_stdout(stream):
        task.dump()
    return stream.getvalue()


@pytest.fixture(scope="module")
def small_game() -> dict:
    return load_generated("easy", 1, size="small").game


def _upstream(game: dict, optimize: bool):
    from fast_downward.interface import pddl2sas

    with translation_cache.preserved_argv():
        return pddl2sas(game["pddl_domain"], game["pddl_problem"], optimize=optimize)


@pytest.mark.parametrize("optimize", [False, True])
def test_a_hit_returns_what_the_translator_returns(cache_folder, small_game, monkeypatch,
                                                   optimize: bool) -> None:
    domain, problem = small_game["pddl_domain"], small_game["pddl_problem"]
    task, sas = _upstream(small_game, optimize)
    path = translation_cache.entry_path(domain, problem, optimize)
    assert not path.exists()
    assert translation_cache.translate(domain, problem, optimize=optimize)[1] == sas
    assert path.exists()
    translation_cache.parsed_task.cache_clear()
    _no_translator(monkeypatch)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cached_task, cached_sas = translation_cache.translate(domain, problem, optimize=optimize)
    assert cached_sas == sas
    assert _dump(cached_task) == _dump(task)


def test_key_covers_problem_options_and_engine_version(cache_folder, small_game,
                                                       monkeypatch) -> None:
    domain, problem = small_game["pddl_domain"], small_game["pddl_problem"]
    paths = {
        translation_cache.entry_path(domain, problem, False),
        translation_cache.entry_path(domain, problem, True),
        translation_cache.entry_path(domain, problem + "\n", False),
    }
    monkeypatch.setattr(translation_cache, "engine_version", lambda: "0.0.0-other")
    paths.add(translation_cache.entry_path(domain, problem, False))
    assert len(paths) == 4


@pytest.mark.parametrize("damage", ["truncate", "flip", "empty", "other_text", "no_header"])
def test_a_torn_entry_is_rebuilt_with_a_warning_naming_it(cache_folder, small_game,
                                                          damage: str) -> None:
    domain, problem = small_game["pddl_domain"], small_game["pddl_problem"]
    _, sas = translation_cache.translate(domain, problem)
    path = translation_cache.entry_path(domain, problem)
    whole = path.read_bytes()
    header, _, payload = whole.partition(b"\n")
    broken = {
        "truncate": whole[: len(whole) // 2],
        "flip": whole[:-40] + bytes([whole[-40] ^ 0xFF]) + whole[-39:],
        "empty": b"",
        "other_text": header + b"\n" + zlib.compress(sas.replace("begin", "bEgin", 1).encode()),
        "no_header": payload,
    }[damage]
    path.write_bytes(broken)
    translation_cache.parsed_task.cache_clear()
    with pytest.warns(CacheEntryWarning, match=re.escape(str(path))):
        _, rebuilt = translation_cache.translate(domain, problem)
    assert rebuilt == sas
    assert path.read_bytes() == whole  # the entry was rewritten whole
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert translation_cache.read_entry(path) == sas


def test_an_unwritable_cache_warns_and_still_translates(cache_folder, small_game,
                                                        monkeypatch) -> None:
    def fail(path, sas):
        raise PermissionError("read-only")

    monkeypatch.setattr(translation_cache, "write_entry", fail)
    with pytest.warns(CacheEntryWarning, match="could not cache"):
        _, sas = translation_cache.translate(small_game["pddl_domain"], small_game["pddl_problem"])
    assert sas == _upstream(small_game, False)[1]


def test_goal_template_round_trips_and_refuses_what_it_cannot_factor() -> None:
    template = game_logic()[1]
    text = template.replace(speedups.GOAL_PLACEHOLDER, "put a clean mug 2 in coffeemachine")
    assert speedups.goal_template(text) == (template, "put a clean mug 2 in coffeemachine")
    assert speedups.goal_template(template) is None  # placeholder still there
    assert speedups.goal_template(text.replace("Your task is to:", "Task:")) is None
    doubled = text + '\n"Your task is to: something else."'
    assert speedups.goal_template(doubled) is None
    quoted = template.replace(speedups.GOAL_PLACEHOLDER, 'say \\"hi')
    assert speedups.goal_template(quoted) is None


def _trace(env: ALFWorldEnv, tasks: list[tuple[str, int]]) -> str:
    """Observations and admissible actions of a fixed action pattern over several tasks."""
    trace = []
    for split, index in tasks:
        obs, info = env.reset(options={"split": split, "task_index": index})
        trace.append((obs, info["admissible_actions"]))
        for step in range(5):
            actions = info["admissible_actions"]
            obs, _, terminated, _, info = env.step(actions[(7 * step + 3) % len(actions)])
            trace.append((obs, info["admissible_actions"]))
            if terminated:
                break
    return json.dumps(trace)


@pytest.mark.slow
def test_observations_are_identical_with_and_without_the_cache(cache_folder, monkeypatch) -> None:
    """Unmodified engine; sdgym filling an empty disk cache; sdgym in a 'new process' (memos
    cleared) reading the disk cache, the translator forbidden. Two games: two goal sentences
    through the one shared grammar parse."""
    tasks = [("easy", 3), ("easy", 1), ("easy", 3)]
    traces = []
    for fast in (False, True):
        env = ALFWorldEnv(fast=fast, size="small", privileged=False)
        try:
            traces.append(_trace(env, tasks))
        finally:
            env.close()
    assert any(cache_folder.glob("*.sas.z"))
    _forget_in_memory()
    speedups._document_model.cache_clear()
    _no_translator(monkeypatch)
    env = ALFWorldEnv(fast=True, size="small", privileged=False)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", CacheEntryWarning)
            traces.append(_trace(env, tasks))
    finally:
        env.close()
    assert traces[0] == traces[1] == traces[2]
    assert "Your task is to:" in traces[0]
