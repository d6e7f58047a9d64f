"""The premise table from hand-made paired records: met, not met, not measured, and the marks."""

from __future__ import annotations

from benchmarks.protocol.premise import premise_rows, premise_table_lines, unmet_heads
from benchmarks.protocol.report import write_report


def _outcomes(successes: dict[int, list[int]]) -> list[dict]:
    return [{"task_index": t, "task_id": f"t{t}", "rollout_seed": s, "success": bool(v),
             "score": float(v), "turns": 1}
            for t, values in successes.items() for s, v in enumerate(values)]


def _record(env_id: str = "sdgym/ALFWorld-v0") -> dict:
    tasks = list(range(40))
    student = {t: [t % 4 == 0, t % 5 == 0] for t in tasks}  # about 0.23
    return {
        "kind": "premise", "method": "premise", "env_id": env_id, "seed": 0, "split": "easy_val",
        "tasks": tasks, "rollout_seeds": [0, 1], "student": {"outcomes": _outcomes(student)},
        "contexts": {
            "privileged": {"covered_tasks": tasks,  # wins everything the student did and more
                           "outcomes": _outcomes({t: [True, t % 2 == 0] for t in tasks})},
            "skills": {"covered_tasks": tasks, "outcomes": _outcomes(student)},  # no better
            "sibling": {"covered_tasks": []},  # no pool success: nothing to measure
        },
    }


def test_rows_pair_teacher_and_student_on_the_same_tasks() -> None:
    rows = {r.context: r for r in premise_rows(_record(), ["opsd", "skill_sd", "sdpo"])}
    privileged, skills, sibling = rows["privileged"], rows["skills"], rows["sibling"]
    assert privileged.met and privileged.heads == ["opsd"] and privileged.tasks == 40
    assert privileged.difference.point == privileged.teacher.point - privileged.student.point
    assert privileged.difference.low > 0
    assert not skills.met and skills.difference.point == 0 and "skill_sd" in skills.heads
    assert not sibling.met and sibling.difference is None and sibling.heads == ["sdpo"]
    lines = "\n".join(premise_table_lines(_record(), ["opsd", "skill_sd", "sdpo"]))
    assert "| privileged | opsd | 40 of 40 |" in lines and "| met |" in lines
    assert "**not met**" in lines and "not measured" in lines


def test_heads_are_marked_only_where_a_measured_premise_fails() -> None:
    unmet = unmet_heads([_record()], ["grpo", "opsd", "skill_sd", "sdpo"])
    assert unmet == {("sdgym/ALFWorld-v0", "skill_sd")}


def test_report_marks_the_head_and_shows_the_table(tmp_path) -> None:
    def trained(method: str) -> dict:
        return {"kind": "train", "env_id": "sdgym/ALFWorld-v0", "method": method, "seed": 0,
                "outcomes": _outcomes({t: [1, 0] for t in range(10)}), "validation": [[0, 0.5]],
                "auc": 0.5, "train_flops_estimate": 1.0}
    result = {"records": [_record(), trained("grpo"), trained("skill_sd"), trained("opsd")],
              "failures": [], "notes": [], "planned": 4}
    text = write_report(result, tmp_path, "t").read_text()
    assert "| skill_sd (premise not met) |" in text and "| opsd |" in text
    assert "Teacher premise at step 0" in text and "| privileged | opsd |" in text


def test_a_premise_becomes_a_warm_start_measurement_and_its_model_card(tmp_path) -> None:
    """The measured entry carries the table's intervals and verdicts; recording it rewrites the
    card from the record and leaves the weights (and their hash) as they were."""
    import json
    import shutil

    from agents.warm_starts import RECORD_FILE, shipped_warm_starts, weights_digest
    from agents.warm_starts.model_card import CARD_FILE, add_measurement
    from benchmarks.protocol.premise import warm_start_measurement

    entry = warm_start_measurement(_record(), "2026-12-06", "abc1234", "sdgym benchmark --x")
    rows = {r.context: r for r in premise_rows(_record())}
    assert entry["split"] == "easy_val" and entry["tasks"] == 40 and entry["rollout_seeds"] == 2
    assert entry["teachers"]["privileged"]["premise"] == "met"
    assert entry["teachers"]["skills"]["premise"] == "not met"
    assert entry["teachers"]["sibling"]["premise"] == "not measured"
    difference = rows["privileged"].difference
    assert entry["teachers"]["privileged"]["difference"] == [difference.point, difference.low,
                                                             difference.high]
    folder = tmp_path / "alfworld-easy-sft"
    shutil.copytree(shipped_warm_starts()["alfworld-easy-sft"], folder)
    before = weights_digest(folder)
    card = add_measurement(folder, entry).read_text()
    assert json.loads((folder / RECORD_FILE).read_text())["measured"][-1] == entry
    assert weights_digest(folder) == before == json.loads(
        (folder / RECORD_FILE).read_text())["weights_sha256"]
    assert f"| privileged | 40 of 40 | {rows['privileged'].teacher.fmt(3)} | " in card
    assert f"{difference.fmt(3, signed=True)} | met |" in card
    assert "Measured 2026-12-06 on commit `abc1234`" in card and card == (folder / CARD_FILE
                                                                          ).read_text()
    add_measurement(folder, {**entry, "commit": "def5678"})  # same split: replaced, not added
    assert [m["commit"] for m in json.loads((folder / RECORD_FILE).read_text())["measured"]
            ] == ["def5678"]


def test_a_premise_only_run_reports_its_premise_tables(tmp_path) -> None:
    """cpu-premise has no trained cells: its report still shows each env's premise table, with
    the heads that read each context."""
    report = write_report({"records": [_record("sdgym/SearchQA-v0"), _record("sdgym/WebShop-v0")],
                           "failures": [], "notes": [], "planned": 2}, tmp_path, "premise only")
    text = report.read_text()
    assert "## sdgym/SearchQA-v0" in text and "## sdgym/WebShop-v0" in text
    assert text.count("Teacher premise at step 0") == 2
    assert "| privileged | opsd |" in text  # heads from the registry


def test_the_report_counts_unparsable_and_refused_test_turns_per_method() -> None:
    from benchmarks.protocol.report import action_share_lines

    def record(method: str, unparsable: int, refused: int) -> dict:
        return {"method": method, "outcomes": [
            {"turns": 10, "unparsable_turns": unparsable, "refused_turns": refused},
            {"turns": 10, "unparsable_turns": 0, "refused_turns": 0}]}

    lines = action_share_lines([record("grpo", 2, 1), record("opsd", 0, 5),
                                 {"method": "old", "outcomes": [{"turns": 3}]}])
    assert lines[0] == ("Test turns with no parsable action / refused by the env: "
                        "grpo 10.0% / 5.0%, opsd 0.0% / 25.0%.")
    assert action_share_lines([{"method": "old", "outcomes": [{"turns": 3}]}]) == []
