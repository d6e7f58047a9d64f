"""The copy measure on hand-made turn records: the task's value from the first prompt, the first
action that names a value, its share with an interval, chance, and one-line errors."""

from __future__ import annotations

import json

import pytest

from benchmarks.protocol.copied_feature import copied_feature, main, read_turns

TASK = r"move it to the (\w+) box"
ACTION = r"move .* to (?:the )?(\w+) box"


def _episode(traj: int, colour: str, actions: list[str], *, messages: bool = False,
             seed: int = 0) -> list[dict]:
    prompt = f"Task: find a plant. Then, move it to the {colour} box in the bedroom."
    turns = []
    for turn, action in enumerate(actions):
        record = {"rollout_seed": seed, "task_id": f"find/{traj}", "traj_id": traj, "turn": turn,
                  "response": f"<think>move the pot to the yellow box?</think><action>{action}"
                              "</action>"}
        if messages:
            record["messages"] = [{"role": "system", "content": "You are an agent."},
                                  {"role": "user", "content": prompt}]
        else:
            record["prompt"] = prompt
        turns.append(record)
    return turns


def test_the_first_naming_action_of_each_episode_is_compared_with_its_task() -> None:
    turns = (_episode(0, "red", ["look around", "move pot 1 to red box", "move pot 1 to blue box"])
             + _episode(1, "blue", ["move pot 2 to the blue box"], messages=True)
             + _episode(2, "blue", ["move pot 3 to red box", "move pot 3 to blue box"])
             + _episode(3, "green", ["focus on pot 4"])  # never names a box
             + _episode(0, "red", ["move pot 1 to red box"], seed=1)  # same traj id, other seed
             + _episode(4, "red", ["move pot 5 to red box"]))
    turns[-1]["response"] = turns[-1]["response"].replace("action>", "ACTION>")  # as the env reads
    turns.reverse()  # records out of order: the turn field orders them
    result = copied_feature(turns, TASK, ACTION)
    assert (result.episodes, result.untagged, result.named, result.copied_count) == (6, 0, 5, 4)
    # per task: find/0 2 of 2 (two rollout seeds), find/1 1 of 1, find/2 0 of 1, find/4 1 of 1
    assert result.copied.point == pytest.approx(3 / 4)
    assert result.copied.low is not None and result.copied.low < 0.75 < result.copied.high
    assert result.named_values == {"red": 4, "blue": 1}  # the <think> text's yellow is not read
    assert result.task_values == {"red": 3, "blue": 2}
    assert result.chance == pytest.approx((4 * 3 + 1 * 2) / 25)  # not 1/2: red is named more


def test_one_turn_twice_is_refused() -> None:
    turns = _episode(0, "red", ["move pot to red box"])
    with pytest.raises(ValueError, match="turn 0 of episode .* appears twice"):
        copied_feature(turns + turns, TASK, ACTION)


def test_episodes_without_a_task_value_are_left_out_and_counted() -> None:
    turns = _episode(0, "red", ["move pot to red box"])
    turns[0]["prompt"] = "Task: boil water."
    result = copied_feature(turns + _episode(1, "red", ["move pot to red box"]), TASK, ACTION)
    assert (result.episodes, result.untagged, result.named) == (2, 1, 1)
    assert result.copied.point == 1.0


def test_bad_input_is_one_line_with_exit_2(tmp_path, capsys) -> None:
    good = tmp_path / "turns.jsonl"
    turns = _episode(0, "red", ["move a to red box"])
    good.write_text("".join(json.dumps(t) + "\n" for t in turns))
    assert main([str(good), "--task-pattern", TASK, "--action-pattern", ACTION]) == 0
    assert "1/1" in capsys.readouterr().out
    assert main([str(good), "--task-pattern", "(", "--action-pattern", ACTION]) == 2
    assert "--task-pattern '(' is not a regular expression" in capsys.readouterr().err
    broken = tmp_path / "broken.jsonl"
    broken.write_text(good.read_text() + "{not json\n")
    with pytest.raises(ValueError, match=r"broken.jsonl:2 is not a JSON object"):
        read_turns(broken)
    other = tmp_path / "report.jsonl"
    other.write_text('{"method": "grpo"}\n')
    assert main([str(other), "--task-pattern", TASK, "--action-pattern", ACTION]) == 2
    err = capsys.readouterr().err
    assert "not an sdgym eval turn record" in err and err.count("\n") == 1
    assert main([str(tmp_path / "missing.jsonl"), "--task-pattern", TASK,
                 "--action-pattern", ACTION]) == 2
    assert "cannot read" in capsys.readouterr().err
