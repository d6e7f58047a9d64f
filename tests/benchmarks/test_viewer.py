"""``sdgym view``: the run-folder viewer over a real cpu-smoke run (Flask test client and a real
headless Chromium), recorded training and test-panel episodes, and folders that are missing or
half-written."""

from __future__ import annotations

import html
import json
import re
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest
from markupsafe import escape

from agents.prompts import PublicTurn
from agents.rollout import TurnRow
from baselines.episode_log import (
    EPISODES_FILE,
    TEACHER_FIELDS,
    TEST_EPISODES_FILE,
    EpisodeLog,
    PanelEpisodeLog,
    panel_episode_records,
    read_episodes,
)
from benchmarks.protocol.run_folders import (
    cell_test_episodes,
    grid_cells,
    read_run_folder,
    split_key,
    task_grid,
)
from benchmarks.protocol.viewer import NO_TEST_EPISODES, create_app
from sdgym.cli import main


def _client(*folders: Path):
    app = create_app(list(folders))
    app.testing = False  # errors become pages, as for a user
    return app.test_client()


def _teacher_episode(run: Path) -> tuple[str, int, dict]:
    """A training cell of a teacher head and one of its recorded episodes with a context."""
    folder = read_run_folder(run)
    for cell in folder.cells:
        if cell.kind != "train" or cell.run_dir is None:
            continue
        for number, episode in enumerate(read_episodes(cell.run_dir)):
            if episode["context_kind"] and any(t["context"] for t in episode["turns"]):
                return cell.key, number, episode
    raise AssertionError("cpu-smoke recorded no teacher episode with a context")


def test_the_smoke_run_records_episodes_with_student_and_teacher_prompts(smoke_run) -> None:
    out, _ = smoke_run
    key, _, episode = _teacher_episode(out)
    turn = next(t for t in episode["turns"] if t["context"])
    student = "\n".join(m["content"] for m in turn["prompt"])
    teacher = "\n".join(m["content"] for m in turn["teacher_prompt"])
    assert turn["context"] in teacher and turn["context"] not in student
    assert turn["action"] or not turn["action_valid"]
    steps = {e["step"] for e in read_episodes(read_run_folder(out).cell(key).run_dir)}
    assert steps == {1, 2}  # cpu-smoke trains 2 steps, one recorded episode each


def _hrefs(page: str, pattern: str) -> list[str]:
    """The link targets in ``page`` matching ``pattern``, unescaped."""
    return [html.unescape(href) for href in re.findall(r'href="([^"]*)"', page)
            if re.search(pattern, html.unescape(href))]


def test_the_smoke_run_records_every_test_panel_episode_without_privileged_fields(
        smoke_run) -> None:
    out, _ = smoke_run
    cells = grid_cells(read_run_folder(out), "SearchQA-v0")
    assert {c.kind for c in cells} == {"train", "start"}
    for cell in cells:
        assert (cell.run_dir / TEST_EPISODES_FILE).exists(), cell.key
        episodes = cell_test_episodes(cell)
        outcomes = cell.record["outcomes"]  # cpu-smoke: 4 tasks x 2 rollout seeds, all recorded
        assert len(episodes) == len(outcomes) == 8
        assert {(e["task_index"], e["rollout_seed"], e["task_id"], e["won"], len(e["turns"]))
                for e in episodes} == {(o["task_index"], o["rollout_seed"], o["task_id"],
                                        o["success"], o["turns"]) for o in outcomes}
        for episode in episodes:
            assert episode["panel"] == "test" and episode["split"] == "test"
            for record in (episode, *episode["turns"]):
                assert not set(record) & {*TEACHER_FIELDS, "privileged"}, cell.key
            assert all(t["prompt"][-1]["role"] == "user" for t in episode["turns"])


def test_grid_squares_open_the_tasks_test_episodes_turn_by_turn(smoke_run) -> None:
    out, _ = smoke_run
    client = _client(out)
    grid = client.get("/grid?env=SearchQA-v0").get_data(as_text=True)
    links = _hrefs(grid, r"^/task\?.*method=rlsd")
    assert len(links) == len(task_grid([read_run_folder(out)], "SearchQA-v0").tasks)
    page = client.get(links[0])
    text = page.get_data(as_text=True)
    assert page.status_code == 200 and "test-episodes" in text
    episodes = _hrefs(text, r"^/episode/0/train-SearchQA-v0-rlsd-seed0/test/\d+$")
    assert len(episodes) == 2  # one training seed, both rollout seeds
    won = _hrefs(client.get(links[0] + "&outcome=won").get_data(as_text=True), "/test/")
    lost = _hrefs(client.get(links[0] + "&outcome=lost").get_data(as_text=True), "/test/")
    assert sorted(won + lost) == sorted(episodes)
    number = int(episodes[0].rsplit("/", 1)[1])
    record = cell_test_episodes(read_run_folder(out).cell("train-SearchQA-v0-rlsd-seed0"))[number]
    shown = client.get(episodes[0]).get_data(as_text=True)
    assert "Test panel episode" in shown and '<mark class="privileged">' not in shown
    assert "<h3>teacher</h3>" not in shown
    assert shown.count('<div class="turn"') == len(record["turns"])
    assert str(escape(record["turns"][0]["response"])) in shown
    cell_page = client.get("/cell/0/train-SearchQA-v0-rlsd-seed0?outcome=lost").get_data(as_text=True)
    assert 'id="test-episodes"' in cell_page
    assert len(_hrefs(cell_page, "/test/")) == sum(
        not e["won"] for e in cell_test_episodes(read_run_folder(out).cell(
            "train-SearchQA-v0-rlsd-seed0")))


def test_index_grid_cell_and_episode_pages(smoke_run) -> None:
    out, _ = smoke_run
    client = _client(out)
    folder = read_run_folder(out)
    assert {c.status for c in folder.cells} == {"finished"}
    index = client.get("/").get_data(as_text=True)
    assert all(f'data-cell="{cell.key}"' in index for cell in folder.cells)
    assert "curves-SearchQA-v0.png" in index
    only_grpo = client.get("/?method=grpo").get_data(as_text=True)
    assert 'data-cell="train-SearchQA-v0-grpo-seed0"' in only_grpo
    assert 'data-cell="train-SearchQA-v0-rlsd-seed0"' not in only_grpo

    grid = task_grid([folder], "SearchQA-v0")
    assert grid.methods[0] == "grpo" and "rlsd" in grid.methods
    page = client.get("/grid?env=SearchQA-v0").get_data(as_text=True)
    tally = grid.tally("rlsd")
    assert f"{tally['win']} / {tally['tie']} / {tally['loss']}" in page
    assert sum(tally.values()) == len(grid.tasks)

    key, number, episode = _teacher_episode(out)
    cell_page = client.get(f"/cell/0/{key}").get_data(as_text=True)
    assert f"/episode/0/{key}/{number}" in cell_page
    episode_page = client.get(f"/episode/0/{key}/{number}").get_data(as_text=True)
    marked = re.findall(r'<mark class="privileged">(.*?)</mark>', episode_page, re.DOTALL)
    assert marked and str(escape(episode["turns"][0]["response"][:20])) in episode_page
    assert client.get(f"/figure/0/{folder.figures()[0]}").status_code == 200
    assert client.get("/figure/0/../plan.json").status_code == 404


def test_missing_half_written_and_running_folders_get_messages_not_tracebacks(
        smoke_run, tmp_path) -> None:
    out, _ = smoke_run
    running = tmp_path / "running"
    shutil.copytree(out, running)
    (running / "cells" / "train-SearchQA-v0-rlsd-seed0" / "result.json").unlink()
    torn = running / "cells" / "train-SearchQA-v0-grpo_opsd-seed0" / "result.json"
    torn.write_text(torn.read_text()[:40])  # being written
    half = tmp_path / "half"
    half.mkdir()
    (half / "plan.json").write_text('{"preset": "x", "cel')
    client = _client(running, tmp_path / "nope", half)
    page = client.get("/")
    text = page.get_data(as_text=True)
    assert page.status_code == 200 and "Traceback" not in text
    assert "nope is not a folder" in text and "plan.json is unreadable" in text
    statuses = {c.key: c.status for c in read_run_folder(running).cells}
    assert statuses["train-SearchQA-v0-rlsd-seed0"] == "running"  # its run folder has steps
    assert statuses["train-SearchQA-v0-grpo_opsd-seed0"] == "running"
    for url in ("/cell/2/anything", "/cell/0/no-such-cell", "/episode/0/train-SearchQA-v0-grpo-seed0/99",
                "/grid?env=Nope-v0", "/figure/9/x.png", "/episode/0/train-SearchQA-v0-grpo-seed0/test/99",
                "/task?env=SearchQA-v0&method=grpo&task=nope"):
        answer = client.get(url)
        assert answer.status_code == 404 and "Traceback" not in answer.get_data(as_text=True)

    # a run made before test episodes were recorded
    older = read_run_folder(running).cell("train-SearchQA-v0-grpo-seed0")
    (older.run_dir / TEST_EPISODES_FILE).unlink()
    for url in ("/cell/0/train-SearchQA-v0-grpo-seed0",
                _hrefs(client.get("/grid?env=SearchQA-v0").get_data(as_text=True),
                       r"method=grpo&")[0]):
        answer = client.get(url)
        text = answer.get_data(as_text=True)
        assert answer.status_code == 200 and NO_TEST_EPISODES in text and "Traceback" not in text
    answer = client.get("/episode/0/train-SearchQA-v0-grpo-seed0/test/0")
    assert answer.status_code == 404 and NO_TEST_EPISODES in answer.get_data(as_text=True)


def test_viewer_in_headless_chromium(smoke_run) -> None:
    from sdgym.envs.webshop.chromium import Chromium, browser_unavailable_reason
    from sdgym.envs.webshop.server import BackgroundServer

    reason = browser_unavailable_reason()
    if reason:
        pytest.skip(reason)
    out, _ = smoke_run
    key, number, episode = _teacher_episode(out)
    with BackgroundServer(create_app([out, out.parent / "missing"])) as server:
        browser = Chromium()
        try:
            driver = browser.driver
            driver.get(f"{server.url}/")
            assert driver.execute_script("return document.querySelectorAll('tr[data-cell]').length") \
                == len(read_run_folder(out).cells)
            assert "missing is not a folder" in driver.find_element("css selector", ".problem").text
            widths = driver.execute_script(
                "return Array.from(document.images).map(i => i.complete ? i.naturalWidth : 0)")
            assert widths and all(width > 0 for width in widths)  # the report figures load
            driver.find_element("link text", key).click()
            driver.find_element("css selector", f"a[href='/episode/0/{key}/{number}']").click()
            marks = driver.find_elements("css selector", "mark.privileged")
            contexts = {t["context"].strip() for t in episode["turns"] if t["context"]}
            assert marks and {m.text.strip() for m in marks} <= contexts
            assert driver.find_elements("css selector", ".turn")
            driver.get(f"{server.url}/grid?env=SearchQA-v0")
            assert driver.find_elements("css selector", "#grid td.sq")
            driver.find_element("css selector", "#grid tr[data-method='rlsd'] td.sq a").click()
            driver.find_element("css selector", "table.test-episodes a").click()
            assert "Test panel episode" in driver.find_element("css selector", "p.test-panel").text
            assert driver.find_elements("css selector", ".turn")
            assert not driver.find_elements("css selector", "mark.privileged")
        finally:
            browser.quit()


def test_episode_log_drops_steps_after_a_resume_point_and_skips_a_torn_line(tmp_path) -> None:
    log = EpisodeLog(tmp_path)
    log.write([{"step": step, "turns": []} for step in (1, 2, 3)])
    with (tmp_path / EPISODES_FILE).open("a") as handle:
        handle.write('{"step": 4, "tur')  # a writer killed mid-line
    assert [r["step"] for r in read_episodes(tmp_path)] == [1, 2, 3]
    log.truncate_after(2)
    assert [r["step"] for r in read_episodes(tmp_path)] == [1, 2]
    assert json.loads((tmp_path / EPISODES_FILE).read_text().splitlines()[-1])["step"] == 2


def _row(group_id: int, traj_id: int, turn: int, task_id: str) -> TurnRow:
    public = PublicTurn("sdgym/SearchQA-v0", "Question: q?", turn, observation="obs")
    return TurnRow(group_id, traj_id, turn, task_id, "single_hop", public, [], [], [],
                   "<answer>a</answer>", 1.0, True, None, True, {"answer": "secret"},
                   won=True, score=1.0, action="<answer>a</answer>", next_observation="done")


def _batch(*groups: str) -> SimpleNamespace:
    """A panel call's rollout batch: one one-turn episode per group, of task ``groups[g]``."""
    return SimpleNamespace(rows=[_row(g, g, 0, task) for g, task in enumerate(groups)])


def test_panel_episode_records_skip_padding_and_hold_no_privileged_field() -> None:
    rows = [_row(0, 0, 1, "t5"), _row(0, 0, 0, "t5"), _row(1, 1, 0, "t5"), _row(2, 2, 0, "t5")]
    records = panel_episode_records(rows, [(5, 0), (5, 1), None], "test", step=2)  # 2: padding
    assert [(r["task_index"], r["rollout_seed"], r["traj_id"]) for r in records] == [
        (5, 0, 0), (5, 1, 1)]
    assert [t["turn"] for t in records[0]["turns"]] == [0, 1]
    assert records[0]["panel"] == "test" and records[0]["step"] == 2
    assert "secret" not in json.dumps(records)
    keys = {k for r in records for k in r} | {k for r in records for t in r["turns"] for k in t}
    assert not keys & {*TEACHER_FIELDS, "privileged"}


def test_test_episodes_keep_whole_tasks_in_panel_order_within_the_budget(tmp_path) -> None:
    """Whole tasks (every rollout seed, even across two panel calls) in panel order, none after
    the first that does not fit; a panel run again (a resumed or retried cell) rewrites the
    file, never adds to it; a torn last line is skipped."""
    def run(max_bytes: int) -> list[tuple[int, int]]:
        log = PanelEpisodeLog(tmp_path, "test", 3, seeds=2, max_bytes=max_bytes)
        log(_batch("a", "a", "b"), [(7, 0), (7, 1), (2, 0)])  # task 2's second seed comes next
        log(_batch("b", "c", "c"), [(2, 1), (9, 0), (9, 1)])
        log(_batch("d", "d", "d"), [(4, 0), (4, 1), None])
        return [(r["task_index"], r["rollout_seed"])
                for r in read_episodes(tmp_path, TEST_EPISODES_FILE)]

    everything = run(10**6)
    assert everything == [(7, 0), (7, 1), (2, 0), (2, 1), (9, 0), (9, 1), (4, 0), (4, 1)]
    assert run(10**6) == everything  # run again: rewritten, not appended
    task_bytes = (tmp_path / TEST_EPISODES_FILE).stat().st_size // 4
    assert run(2 * task_bytes + 10) == everything[:4]
    assert run(0) == [] and not (tmp_path / TEST_EPISODES_FILE).exists()
    run(10**6)
    with (tmp_path / TEST_EPISODES_FILE).open("a") as handle:
        handle.write('{"task_index": 5, "tu')  # killed mid-line
    assert len(read_episodes(tmp_path, TEST_EPISODES_FILE)) == 8


def test_cell_keys_split_back_into_their_parts() -> None:
    assert split_key("train-SearchQA-v0-grpo_opsd-seed2") == ("train", "SearchQA-v0", "grpo_opsd", 2)
    assert split_key("start-ALFWorld-v0-sft-start-seed0") == ("start", "ALFWorld-v0", "sft-start", 0)
    with pytest.raises(ValueError, match="not a cell key"):
        split_key("nonsense")


def test_view_command_refuses_bad_folders_and_remote_hosts(tmp_path, capsys) -> None:
    assert main(["view", str(tmp_path / "nope")]) == 2
    assert "is not a folder" in capsys.readouterr().err
    assert main(["view", str(tmp_path), "--host", "0.0.0.0"]) == 2
    assert "allow-remote" in capsys.readouterr().err
