"""Env options: admissible actions every step, simplifications, and no privileged channel."""

from __future__ import annotations

import gymnasium as gym
import pytest


def test_always_admissible_easy_simplifications_gold_replay() -> None:
    env = gym.make(
        "sdgym/ScienceWorld-v0",
        task_names=["boil", "power-component"],
        simplifications="easy",
        admissible_actions="always",
        max_episode_steps=200,
    )
    try:
        for task in ("boil", "power-component"):
            _, info = env.reset(options={"task_index": env.unwrapped.task_index_of(task, 0)})
            assert info["privileged"]["goal"]["simplifications"] == "easy"
            assert "look around" in info["admissible_actions"]
            if task == "boil":
                assert any(a.startswith("teleport to") for a in info["admissible_actions"])
            for action in info["privileged"]["gold_plan_from_start"]:
                _, _, terminated, _, info = env.step(action)  # upstream's gold under "easy"
                # holds a few commands the simulator rejects (e.g. "examine steam"): skipped
                assert isinstance(info["admissible_actions"], list)
            assert terminated and info["won"]
    finally:
        env.close()


def test_never_admissible_and_unprivileged() -> None:
    from sdgym.envs.scienceworld import gold_cache

    gold_cache.clear_memory()
    env = gym.make(
        "sdgym/ScienceWorld-v0",
        task_names=["find-plant"],
        admissible_actions="never",
        privileged=False,
    )
    try:
        _, info = env.reset(seed=1)
        assert "privileged" not in info and info["admissible_actions"] is None
        assert env.unwrapped.get_admissible_actions() is None
        assert gold_cache.memory_keys() == []  # no gold path computed
        _, _, _, _, info = env.step("look around")
        assert info["action_valid"] and info["admissible_actions"] is None
    finally:
        env.close()


@pytest.mark.parametrize("java_options", [("-Xmx64k",)])
def test_bad_java_options_fail_clearly(java_options: tuple[str, ...]) -> None:
    env = gym.make("sdgym/ScienceWorld-v0", task_names=["find-plant"], java_options=java_options)
    try:
        with pytest.raises(Exception, match="did not start"), pytest.warns(RuntimeWarning):
            env.reset(seed=0)
    finally:
        env.close()


def test_gold_sequences_come_from_the_disk_cache_in_a_new_process(tmp_path, monkeypatch) -> None:
    """A gold sequence computed once is written under $SDGYM_CACHE and read back (not
    recomputed) once the process's copy is gone; a damaged entry is recomputed and rewritten."""
    import json

    from sdgym.envs.scienceworld import gold_cache

    monkeypatch.setenv("SDGYM_CACHE", str(tmp_path))
    gold_cache.clear_memory()

    def gold_of_first_task() -> tuple[list[str], int]:
        env = gym.make("sdgym/ScienceWorld-v0", task_names=["find-plant"], jvm="own")
        computed = []
        try:
            simulator = env.unwrapped.simulator
            real = simulator._load

            def spying_load(server, task, variation, simplifications, gold):
                original = server.load

                class Spy:
                    def __getattr__(self, name):
                        return getattr(server, name)

                    def load(self, *args):
                        computed.append(args[-1])  # generateGoldPath
                        return original(*args)

                return real(Spy(), task, variation, simplifications, gold)

            simulator._load = spying_load
            _, info = env.reset(options={"split": "train", "task_index": 0})
            return info["privileged"]["gold_plan_from_start"], computed.count(True)
        finally:
            env.close()

    first, computed_first = gold_of_first_task()
    entries = list(tmp_path.glob("scienceworld/gold/*/*.json"))
    assert computed_first == 1 and len(entries) == 1
    gold_cache.clear_memory()
    second, computed_second = gold_of_first_task()
    assert second == first and computed_second == 0
    entries[0].write_text(json.dumps({"task": "boil", "variation": 0, "simplifications": "",
                                      "gold": ["wrong"]}))
    gold_cache.clear_memory()
    third, computed_third = gold_of_first_task()
    assert third == first and computed_third == 1
    assert json.loads(entries[0].read_text())["task"] == "find-plant"
