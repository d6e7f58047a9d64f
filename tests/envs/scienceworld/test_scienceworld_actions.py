"""ScienceWorld's action words without a JVM: gold aliases, candidate pruning and ranking,
expert aliases, the expert-plan cache."""

from __future__ import annotations

import json

from sdgym.envs.scienceworld import gold_cache
from sdgym.envs.scienceworld.candidates import rank_candidates
from sdgym.envs.scienceworld.goal import ExpertPath
from sdgym.envs.scienceworld.plan_words import PLAN_FORMAT, alias_candidates
from sdgym.envs.scienceworld.valid_actions import ValidAction, command_verb, parse_valid_actions


def listed(*texts: str) -> list[ValidAction]:
    return [ValidAction(text, 0, (i,)) for i, text in enumerate(texts)]


def test_each_alias_kind_finds_its_listed_form_first() -> None:
    cases = {  # gold words -> (listed commands, the listed form of the same action)
        "focus on thermometer in inventory": (
            ["focus on orange in inventory", "focus on inventory", "focus on thermometer"],
            "focus on thermometer"),
        "open door to bathroom": (["open door to outside", "open bathroom door"],
                                  "open bathroom door"),
        "examine substance in metal pot": (["look at metal pot", "look at substance in metal pot"],
                                           "look at substance in metal pot"),
        "connect battery anode to blue wire terminal 1": (
            ["connect battery cathode to blue wire terminal 1",
             "connect blue wire terminal 1 to anode in battery"],
            "connect blue wire terminal 1 to anode in battery"),
        "pour metal pot in jug": (["pour jug into metal pot", "pour metal pot into jug"],
                                  "pour metal pot into jug"),
        "drop aluminum foil": (["put down orange", "put down aluminum foil"],
                               "put down aluminum foil"),
    }
    for gold, (texts, expected) in cases.items():
        found = alias_candidates(gold, listed(*texts))
        assert found and found[0] == expected, (gold, found)
    # only names the gold words cover, unless a prompt showed the gold words to be too vague
    assert alias_candidates("pick up seed", listed("pick up seed jar")) == []
    assert alias_candidates("pick up seed", listed("pick up seed jar"), narrower=True) == [
        "pick up seed jar"]


def test_parse_valid_actions_keeps_ids_and_sorts_by_text() -> None:
    payload = json.dumps({"validActions": [
        {"action": "open door", "template_id": 0, "obj_ids": [7], "type_ids": [1]},
        {"action": "look around", "template_id": 3, "obj_ids": [], "type_ids": []},
    ]})
    assert parse_valid_actions(payload) == [ValidAction("look around", 3, ()),
                                            ValidAction("open door", 0, (7,))]
    assert [command_verb(t) for t in ("look around", "look at x", "wait1", "wait", "go to y",
                                      "pick up z", "0")] == [
        "look around", "look at", "wait1", "wait", "go to", "pick up", "0"]


def test_candidates_leave_out_what_is_never_worth_a_step_and_rank_from_public_text() -> None:
    actions = [
        ValidAction("look around", 3, ()), ValidAction("wait1", 18, ()),
        ValidAction("look at agent", 4, (1,)), ValidAction("look at thermometer", 4, (2,)),
        ValidAction("look at kitchen", 4, (3,)), ValidAction("look at apple", 4, (4,)),
        ValidAction("look at red box", 4, (5,)),
        ValidAction("go to kitchen", 2, (3,)), ValidAction("go to door to kitchen", 2, (6,)),
        ValidAction("move apple to kitchen", 9, (4, 3)),
        ValidAction("move apple to red box", 9, (4, 5)),
        ValidAction("focus on kitchen", 11, (3,)), ValidAction("focus on apple", 11, (4,)),
        ValidAction("connect apple to red box", 16, (4, 5)),
        ValidAction("dunk apple into red box", 26, (4, 5)),
        ValidAction("inventory", 20, ()), ValidAction("reset task", 12, ()),
    ]
    kwargs = {"task": "Your task is to find an apple and move it to the red box.",
              "observation": "You see an apple, a thermometer and a red box.",
              "inventory": "In your inventory, you see:\n\tan orange", "recent": []}
    ranked = rank_candidates(actions, electrical=False, **kwargs)
    assert set(ranked) == {"look around", "wait1", "look at agent", "look at thermometer",
                           "look at apple", "look at red box", "go to kitchen",
                           "move apple to red box", "focus on apple"}
    assert ranked.index("look at apple") < ranked.index("look at thermometer")
    assert "connect apple to red box" in rank_candidates(actions, electrical=True, **kwargs)
    again = rank_candidates(actions, electrical=False, **{**kwargs, "recent": [
        "look at thermometer", "go to kitchen"]})  # a probe the agent repeats comes first
    assert again.index("look at thermometer") < again.index("look at apple")


def test_the_expert_takes_its_alias_as_following_the_plan() -> None:
    path = ExpertPath(["focus on thermometer", "open bathroom door"],
                      ["focus on thermometer in inventory", None])
    path.advance("Focus on thermometer in inventory", "You focus on the thermometer.")
    assert path.on_path and path.next_action == "open bathroom door"
    path.advance("open door to bathroom", "The door is now open.")  # no alias at this step
    assert not path.on_path


def test_expert_plans_are_cached_per_gold_sequence_and_format(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("SDGYM_CACHE", str(tmp_path))
    monkeypatch.setattr(gold_cache, "_jar_digest", lambda: "jar")
    gold_cache.clear_memory()
    key = gold_cache.plan_key("boil", 3, "", True, ["open door to kitchen"], PLAN_FORMAT)
    record = {"plan": ["open door"], "aliases": ["open door to kitchen"], "counts": {}}
    gold_cache.remember_plan(key, record)
    [entry] = tmp_path.glob(f"scienceworld/plans-v{PLAN_FORMAT}/jar/*.json")
    gold_cache.clear_memory()
    assert gold_cache.cached_plan(key)["plan"] == ["open door"]
    other = gold_cache.plan_key("boil", 3, "", True, ["open door to hallway"], PLAN_FORMAT)
    assert gold_cache.cached_plan(other) is None  # another gold sequence: another entry
    newer = gold_cache.plan_key("boil", 3, "", True, ["open door to kitchen"], PLAN_FORMAT + 1)
    assert gold_cache.cached_plan(newer) is None  # another rewrite algorithm: another folder
    entry.write_text(json.dumps({**json.loads(entry.read_text()), "gold_sha256": "x"}))
    gold_cache.clear_memory()
    assert gold_cache.cached_plan(key) is None  # not the entry it claims to be
    gold_cache.clear_memory()
