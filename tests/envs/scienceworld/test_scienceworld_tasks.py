"""Task catalogue: splits, task indices, names and simplifications (pure Python, no JVM)."""

from __future__ import annotations

import pytest

from sdgym.envs.scienceworld.tasks import (
    TASK_NAMES,
    TASK_VARIATIONS,
    TaskCatalog,
    resolve_task_name,
    simplification_string,
    task_simplification_string,
    upstream_splits,
)


def test_thirty_tasks_and_7207_variations() -> None:
    assert len(TASK_NAMES) == 30
    assert sum(TASK_VARIATIONS.values()) == 7207


@pytest.mark.parametrize("n", [5, 10, 14, 30, 125, 1386])
def test_splits_partition_variations(n: int) -> None:
    splits = upstream_splits(n)
    merged = sorted(splits["train"] + splits["dev"] + splits["test"])
    assert merged == list(range(n))
    assert len(splits["train"]) >= len(splits["dev"])


def test_catalog_enumerates_pairs_task_major() -> None:
    catalog = TaskCatalog()
    total = sum(catalog.count(split) for split in ("train", "val", "test"))
    assert total == 7207
    assert catalog.pair("train", 0) == ("boil", 0)
    assert catalog.pair("val", 0) == ("boil", 14)
    last = catalog.pair("test", catalog.count("test") - 1)
    assert last == ("use-thermometer", 539)
    for split in ("train", "val", "test"):
        for index in (0, 17, catalog.count(split) - 1):
            task, variation = catalog.pair(split, index)
            assert catalog.index(split, task, variation) == index
    with pytest.raises(IndexError):
        catalog.pair("train", catalog.count("train"))


def test_task_names_restrict_and_resolve() -> None:
    catalog = TaskCatalog(["melt", "task-1-boil", "1-1"])
    assert catalog.task_names == ("boil", "melt")
    assert catalog.count("train") == 28
    assert resolve_task_name("mendellian-genetics-known-plant") == "mendelian-genetics-known-plant"
    with pytest.raises(ValueError, match="unknown ScienceWorld task"):
        TaskCatalog(["no-such-task"])


def test_simplifications() -> None:
    assert simplification_string(None) == ""
    assert simplification_string("easy") == "easy"
    assert simplification_string(["openDoors", "teleportAction"]) == "teleportAction,openDoors"
    assert simplification_string("openDoors, noElectricalAction") == "openDoors,noElectricalAction"
    assert task_simplification_string("openDoors,noElectricalAction", "power-component") == (
        "openDoors"
    )
    with pytest.raises(ValueError):
        simplification_string("easy,openDoors")
    with pytest.raises(ValueError):
        simplification_string("flyingAction")


def test_easy_splits_keep_the_find_tasks_of_each_split_and_share_no_variation() -> None:
    from sdgym.envs.scienceworld.env import ScienceWorldEnv
    from sdgym.envs.scienceworld.tasks import EASY_SPLITS, EASY_TASKS

    assert ScienceWorldEnv.easy_splits == EASY_SPLITS
    assert set(EASY_SPLITS) <= set(ScienceWorldEnv.splits)
    catalog = TaskCatalog()
    pairs = {split: {catalog.pair(split, i) for i in range(catalog.count(split))}
             for split in EASY_SPLITS}
    for easy, source in EASY_SPLITS.items():
        assert {task for task, _ in pairs[easy]} == set(EASY_TASKS)
        assert pairs[easy] == {catalog.pair(source, i) for i in range(catalog.count(source))
                               if catalog.pair(source, i)[0] in EASY_TASKS}
    assert not pairs["easy_train"] & pairs["easy_val"]
    assert not pairs["easy_train"] & pairs["easy_test"]
    assert not pairs["easy_val"] & pairs["easy_test"]
    assert [catalog.count(s) for s in EASY_SPLITS] == [600, 300, 300]
    assert TaskCatalog(["boil"]).count("easy_train") == 0  # no find task chosen: empty
    with pytest.raises(ValueError, match="unknown ScienceWorld split 'nope'"):
        catalog.count("nope")
