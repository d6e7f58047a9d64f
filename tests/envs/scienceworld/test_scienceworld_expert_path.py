"""The expert path's bookkeeping, without a JVM: following, deviating, prompt answers."""

from __future__ import annotations

from sdgym.envs.scienceworld.goal import (
    FIRST_CHOICE,
    ExpertPath,
    is_choice,
    short_final_move,
    teleport_shortcut,
)

AMBIGUOUS = "Ambiguous request: Please enter the number for the action you intended:\n0:\ta\n1:\tb"


def test_following_and_deviating() -> None:
    path = ExpertPath(["open door", "go to kitchen", "focus on apple"])
    assert path.plan == ["open door", "go to kitchen", "focus on apple"]
    path.advance("OPEN  door", "The door is now open.")
    assert path.next_action == "go to kitchen" and path.on_path
    path.advance("look around", "This room is called the hallway.")
    assert path.plan is None and path.next_action is None and path.deviations == ["look around"]
    path.advance("go to kitchen", "You move to the kitchen.")  # off the path for good
    assert path.plan is None


def test_gold_answer_with_the_prompt_is_kept() -> None:
    path = ExpertPath(["move seed to pot", "0", "water pot"])
    path.advance("move seed to pot", AMBIGUOUS)
    assert path.plan == ["0", "water pot"]
    path.advance("0", "You move the seed to the pot.")
    assert path.plan == ["water pot"]


def test_gold_answer_without_a_prompt_is_dropped() -> None:
    path = ExpertPath(["move seed to pot", "0", "1", "water pot"])
    path.advance("move seed to pot", "You move the seed to the pot.")
    assert path.plan == ["water pot"] and path.position == 3


def test_unanswered_prompt_gets_the_first_choice() -> None:
    path = ExpertPath(["move seed to cup", "move plant to cup", "0", "water pot"])
    path.advance("move seed to cup", AMBIGUOUS)
    assert path.plan == [FIRST_CHOICE, "move plant to cup", "0", "water pot"]
    path.advance(FIRST_CHOICE, "You move the seed to the cup.")
    assert path.plan == ["move plant to cup", "0", "water pot"]  # gold position unchanged
    path.advance("move plant to cup", "You move the plant to the cup.")
    assert path.plan == ["water pot"]  # its stale answer dropped
    path.advance("water pot", "You water the pot.")
    assert path.plan == [] and path.next_action is None and path.on_path


def test_rejected_gold_step_is_skipped_but_an_inserted_choice_is_not() -> None:
    path = ExpertPath(["pick up thing", "look", "0"])
    path.skip_rejected("pick up thing")
    assert path.plan == ["look", "0"]
    path.advance("look", AMBIGUOUS)
    assert path.plan == ["0"]
    path.skip_rejected("other")  # not the expert's action: nothing changes
    assert path.plan == ["0"]
    assert is_choice(" 12 ") and not is_choice("0 apples") and not is_choice("")


def test_teleport_shortcut_replaces_each_walk_by_one_teleport() -> None:
    gold = ["open door to hallway", "go to hallway", "Open door to kitchen", "go to kitchen",
            "pick up apple", "open door to hallway", "look around", "go to hallway", "go to bedroom",
            "move apple to box", "open door to greenhouse"]
    assert teleport_shortcut(gold) == [
        "teleport to kitchen", "pick up apple", "open door to hallway", "look around",
        "teleport to bedroom", "move apple to box", "open door to greenhouse"]
    assert teleport_shortcut([]) == [] and teleport_shortcut(["focus on x"]) == ["focus on x"]


def test_short_final_move_names_the_thing_as_the_plan_picked_it_up() -> None:
    plant = ["teleport to greenhouse", "look around", "focus on adult apple tree",
             "pick up flower pot 9", "teleport to bathroom",
             "move flower pot 9 containing apple tree and soil in inventory to orange box"]
    assert short_final_move(plant) == [*plant[:-1], "move flower pot 9 to orange box"]
    # no pick up: the focus names it; several: the last one does
    assert short_final_move(["focus on painting", "move painting in kitchen to purple box"]) == [
        "focus on painting", "move painting to purple box"]
    assert short_final_move(["pick up a", "Pick Up  b", "move b in inventory to red box"])[-1] == (
        "move b to red box")
    assert short_final_move(["pick up common toad", "move egg common toad in inventory to box"])[
        -1] == "move common toad to box"
    assert short_final_move(["pick up frog", "move living thing in inventory to blue box"])[
        -1] == "move frog to blue box"  # the one thing it carries, named by its kind
    # nothing to shorten, or the move is about something else: the plan is returned as it was
    for plan in ([], ["focus on x"], ["pick up x", "look around"], ["move x to y"],
                 ["focus on animal", "pick up x", "move y to red box"],
                 ["pick up x", "pick up y", "move thing in inventory to red box"]):
        assert short_final_move(plan) == plan
