"""The task pools ScienceWorld's protocols cut from its easy splits (easy_train's halves for a warm
start and RL; easy_val's parts for RL and validation): no task in common, every find task and
every box colour in each (pure Python: the task catalogue, no JVM)."""

from __future__ import annotations

from collections import Counter

from agents.warm_starts import warm_start_record
from baselines.config import load_preset
from sdgym.envs.scienceworld.tasks import TaskCatalog
from sdgym.splits import parse_split

COLOURS = ("red", "green", "blue", "orange", "yellow", "purple")
"""A find task's box colour is ``COLOURS[variation % 6]`` (checked against the simulator's gold
sequences of all 1,200 easy find variations, 2026-12-07)."""


def _pairs(split: str) -> list[tuple[str, int]]:
    catalog = TaskCatalog()
    return [catalog.pair(base, index) for base, index in parse_split(split).tasks(catalog.count)]


def _colours_and_tasks(split: str) -> tuple[Counter, Counter]:
    pairs = _pairs(split)
    return Counter(COLOURS[v % 6] for _, v in pairs), Counter(task for task, _ in pairs)


def test_parity_halves_split_the_box_colours_three_and_three() -> None:
    colours, _ = _colours_and_tasks("easy_train[0::2]")
    assert sorted(colours) == ["blue", "red", "yellow"]  # why the presets do not cut by parity


def test_the_presets_halves_share_no_task_and_keep_every_colour_and_find_task() -> None:
    demo = load_preset("scienceworld-swap-colours-half-warm-start").train_split
    rl = load_preset("cpu-mini-scienceworld-unseen-half").train_split
    demo_pairs, rl_pairs = set(_pairs(demo)), set(_pairs(rl))
    assert not demo_pairs & rl_pairs
    assert demo_pairs | rl_pairs == set(_pairs("easy_train"))
    for split in (demo, rl):
        colours, tasks = _colours_and_tasks(split)
        assert set(tasks.values()) == {75} and len(tasks) == 4 and len(colours) == 6
        assert max(colours.values()) - min(colours.values()) <= 4


def test_the_val_halves_protocol_trains_on_tasks_no_start_validation_or_test_panel_holds() -> None:
    """cpu-mini-scienceworld-val-halves: GRPO trains on part of easy_val, validates on the rest;
    neither part meets its warm start's demonstration tasks or the test split, and the
    validation part holds every find task and every box colour equally often."""
    config = load_preset("cpu-mini-scienceworld-val-halves")
    rl, val = set(_pairs(config.train_split)), set(_pairs(config.evaluation.val_split))
    assert not rl & val and rl | val == set(_pairs("easy_val"))
    demonstrated = warm_start_record(config.model.name)["config"]["train_split"]  # the shipped start's
    assert not (rl | val) & (set(_pairs(demonstrated)) | set(_pairs(config.evaluation.test_split)))
    colours, tasks = _colours_and_tasks(config.evaluation.val_split)
    assert len(tasks) == 4 and set(tasks.values()) == {36} and set(colours.values()) == {24}
    colours, tasks = _colours_and_tasks(config.train_split)
    assert len(tasks) == 4 and set(tasks.values()) == {39} and len(colours) == 6
