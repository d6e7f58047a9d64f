"""TextWorld interns every ``Proposition`` in a table that never forgets, and every ALFWorld game
names its objects differently, so a process that played many games kept all their facts (~6 MB
per 1,000 soak steps, ``benchmarks/soak.py``). Envs now drop the entries nothing else holds."""

from __future__ import annotations

import pytest

pytest.importorskip("alfworld")
pytest.importorskip("textworld")

import gymnasium as gym  # noqa: E402
from textworld.logic import Proposition, Variable  # noqa: E402

import sdgym  # noqa: E402, F401
from sdgym.envs.alfworld.engine import (  # noqa: E402
    _interning_table,
    interned_count,
    release_interned,
)


def _interned_names() -> set[str]:
    return {key[1] for key in list(_interning_table()) if key[0] is Proposition}


def test_release_keeps_held_propositions_interned_and_drops_the_rest() -> None:
    held = Proposition("sdgym_test_held", [Variable("apple_1", "object")])
    Proposition("sdgym_test_unheld", [Variable("apple_2", "object")])
    assert {"sdgym_test_held", "sdgym_test_unheld"} <= _interned_names()
    assert release_interned() >= 1
    names = _interned_names()
    assert "sdgym_test_held" in names and "sdgym_test_unheld" not in names
    # what is still held is still the interned instance; a dropped one comes back equal
    assert Proposition("sdgym_test_held", [Variable("apple_1", "object")]) is held
    again = Proposition("sdgym_test_unheld", [Variable("apple_2", "object")])
    assert again == Proposition("sdgym_test_unheld", (Variable("apple_2", "object"),))
    del held, again
    release_interned()
    assert not {"sdgym_test_held", "sdgym_test_unheld"} & _interned_names()


def _play(env: gym.Env, index: int) -> bool:
    _, info = env.reset(options={"split": "easy", "task_index": index})
    for action in info["privileged"]["expert_plan"]:
        _, _, _, _, info = env.step(action)
    return bool(info["won"])


@pytest.mark.slow
def test_interned_facts_do_not_grow_with_the_games_played() -> None:
    """Fresh envs one after another, then one env switching games: the table holds what is
    shared plus the facts of about one or two games (the live one, and the last closed one until
    TextWorld's parser drops its last parse), not those of every game played. Before, each new
    game added ~130 entries for good (3 games: +240, 5 games: +520); with this fix the spread
    over these 8 episodes is ~160."""
    counts, won = [], []
    for index in (0, 1, 2):
        env = gym.make("sdgym/ALFWorld-v0", size="small")
        won.append(_play(env, index))
        env.close()
        del env
        counts.append(interned_count())
    env = gym.make("sdgym/ALFWorld-v0", size="small")
    try:
        for index in (3, 4, 0, 1, 2):  # each switch loads another game into the same engine
            won.append(_play(env, index))
            counts.append(interned_count())
    finally:
        env.close()
    assert all(won)
    assert max(counts) <= counts[0] + 250, counts
