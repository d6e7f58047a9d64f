"""``sdgym view``: the run-folder viewer over a real cpu-smoke run (Flask test client and a real
headless Chromium), recorded training episodes, and folders that are missing or half-written."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from markupsafe import escape

from baselines.episode_log import EPISODES_FILE, EpisodeLog, read_episodes
from benchmarks.protocol.run_folders import read_run_folder, split_key, task_grid
from benchmarks.protocol.viewer import create_app
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
                "/grid?env=Nope-v0", "/figure/9/x.png"):
        answer = client.get(url)
        assert answer.status_code == 404 and "Traceback" not in answer.get_data(as_text=True)


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
