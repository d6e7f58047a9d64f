"""sdgym/WebShop-v0 in browser mode (headless Chromium on the Flask site) against text mode."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env

import sdgym  # noqa: F401  (registers the ids)
from sdgym.envs.webshop.chromium import browser_unavailable_reason
from sdgym.envs.webshop.env import WebShopEnv

psutil = pytest.importorskip("psutil")
REASON = browser_unavailable_reason()
pytestmark = pytest.mark.skipif(REASON is not None, reason=f"browser mode: {REASON}")


def _browser_children() -> list[str]:
    return [
        child.name()
        for child in psutil.Process(os.getpid()).children(recursive=True)
        if child.is_running()
        and child.status() != psutil.STATUS_ZOMBIE
        and "chrom" in child.name().lower()
    ]


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


@pytest.fixture(scope="module")
def browser_env():
    env = gym.make("sdgym/WebShop-v0", size="tiny", mode="browser")
    try:
        yield env
    finally:
        env.close()
    assert _browser_children() == [], "close() left Chromium processes running"


@pytest.fixture(scope="module")
def text_env():
    env = WebShopEnv(size="tiny")
    yield env
    env.close()


@pytest.mark.parametrize("task_index", [0, 1, 3])
def test_expert_plan_matches_text_mode(browser_env, text_env, task_index: int) -> None:
    options = {"split": "test", "task_index": task_index}
    text_obs, text_info = text_env.reset(options=options)
    obs, info = browser_env.reset(options=options)
    assert obs == text_obs and info == text_info
    total = 0.0
    for action in text_info["privileged"]["expert_plan"]:
        text_step = text_env.step(action)
        step = browser_env.step(action)
        assert step == text_step, action
        total += step[1]
    assert step[2] and step[4]["won"] and total == pytest.approx(text_step[4]["score"])
    assert step[4]["reward_info"] == text_step[4]["reward_info"]


def test_detour_then_purchase_matches_text_mode(browser_env, text_env) -> None:
    """Paging, a sub page, a wrong option and back to search: same states, same reward."""
    options = {"split": "test", "task_index": 2}
    text_env.reset(options=options)
    _, info = browser_env.reset(options=options)
    plan = info["privileged"]["expert_plan"]
    actions = [plan[0], "click[next >]", "click[< prev]", plan[1], "click[features]",
               "click[< prev]", "click[back to search]", plan[0], plan[1], "click[buy now]"]
    for action in actions:
        text_step = text_env.step(action)
        assert browser_env.step(action) == text_step, action
    assert text_step[2]


@pytest.mark.parametrize(
    "action",
    ["", "   ", "click[nothing like this]", "click[search]", "search[ ]", "foo[bar]",
     "no brackets", "click[buy now]", "search[" + "x" * 3000 + "]"],
)
def test_invalid_actions_change_nothing(browser_env, action: str) -> None:
    obs, _ = browser_env.reset(options={"split": "test", "task_index": 0})
    state = browser_env.unwrapped.state
    next_obs, reward, terminated, truncated, info = browser_env.step(action)
    assert not info["action_valid"] and next_obs.startswith("Invalid action")
    assert (reward, terminated, truncated) == (0.0, False, False)
    assert browser_env.unwrapped.state == state
    assert browser_env.unwrapped._render() == obs


def test_check_env_passes(browser_env) -> None:
    check_env(browser_env.unwrapped, skip_render_check=True)


def test_invalid_actions_on_results_page(browser_env, text_env) -> None:
    options = {"split": "test", "task_index": 0}
    text_env.reset(options=options)
    browser_env.reset(options=options)
    text_env.step("search[rug]")
    browser_env.step("search[rug]")
    for action in ("search[other]", "click[buy now]", "click[B0NOTTHERE]"):
        text_step, step = text_env.step(action), browser_env.step(action)
        assert step == text_step and not step[4]["action_valid"]


def test_non_bmp_query_is_typed_or_set(browser_env, text_env) -> None:
    options = {"split": "test", "task_index": 0}
    text_env.reset(options=options)
    browser_env.reset(options=options)
    action = "search[rug \U0001f9f6 été]"
    assert browser_env.step(action) == text_env.step(action)


SCRIPT_PAYLOADS = [
    "<script>window.sdgymPwned = 1</script>",
    '"><img src=x onerror="window.sdgymPwned = 2">',
    "<svg onload=window.sdgymPwned=3></svg> </div><b>bold</b>",
]


@pytest.mark.parametrize("payload", SCRIPT_PAYLOADS)
def test_script_payloads_never_run_in_the_browser(browser_env, text_env, payload: str) -> None:
    """A search query, and a forged click target echoed in the error banner, stay text."""
    from selenium.webdriver.common.by import By

    options = {"split": "test", "task_index": 0}
    text_env.reset(options=options)
    browser_env.reset(options=options)
    action = f"search[{payload}]"
    assert browser_env.step(action) == text_env.step(action)
    shop = browser_env.unwrapped._browser
    driver = shop.driver
    assert driver.execute_script("return window.sdgymPwned === undefined;")
    forge = (
        "var button = document.querySelector('form.click button');"
        "button.value = arguments[0]; button.click();"
    )
    shop._navigate(lambda: driver.execute_script(forge, payload))
    assert shop.session.error is not None, "the site refused the forged target"
    assert payload in driver.find_element(By.CSS_SELECTOR, ".error").text  # shown as text
    assert driver.execute_script("return window.sdgymPwned === undefined;")
    assert not driver.find_elements(By.CSS_SELECTOR, "b, img, svg, script:not([src])")


def test_rich_and_html_modes_and_close_leaves_nothing(text_env) -> None:
    env = WebShopEnv(size="tiny", mode="browser", observation_mode="text_rich")
    browser = env._browser
    assert browser is not None and browser.url.startswith("http://127.0.0.1:")
    pids, profile = browser.chromium.pids, browser.chromium.profile_dir
    try:
        rich = WebShopEnv(size="tiny", observation_mode="text_rich")
        options = {"split": "test", "task_index": 1}
        assert env.reset(options=options)[0] == rich.reset(options=options)[0]
        for action in env.unwrapped.expert_plan():
            assert env.step(action)[0] == rich.step(action)[0]
        env.observation_mode = "html"
        assert "Your score" in env._render() and "<html" in env._render()
    finally:
        env.close()
    assert len(pids) >= 2 and not os.path.exists(profile)
    assert not [pid for pid in pids if _alive(pid)], "close() left its processes running"
    with pytest.raises(urllib.error.URLError):
        urllib.request.urlopen(f"{browser.url}/", timeout=2)
    env.close()  # idempotent


def test_failed_start_cleans_up(monkeypatch: pytest.MonkeyPatch) -> None:
    from sdgym.envs.webshop import browser, server

    started: list[server.BackgroundServer] = []
    original = server.BackgroundServer

    def recording(app):
        started.append(original(app))
        return started[-1]

    def broken(*args, **kwargs):
        raise RuntimeError("no browser today")

    monkeypatch.setattr(browser, "BackgroundServer", recording)
    monkeypatch.setattr(browser, "Chromium", broken)
    with pytest.raises(RuntimeError, match="no browser today"):
        WebShopEnv(size="tiny", mode="browser")
    assert started and not started[0].running


OWNER_SCRIPT = """
import json, os, sys, time
from sdgym.envs.webshop.env import WebShopEnv
env = WebShopEnv(size="tiny", mode="browser")
env.reset(options={"split": "test", "task_index": 0})
chromium = env._browser.chromium
driver_pid = chromium.driver.service.process.pid
print(json.dumps({"session": os.getsid(driver_pid), "profile": chromium.profile_dir}), flush=True)
time.sleep(600)
"""


def _session_members(session: int) -> list[psutil.Process]:
    members = []
    for process in psutil.process_iter():
        try:
            if os.getsid(process.pid) == session and process.status() != psutil.STATUS_ZOMBIE:
                members.append(process)
        except (OSError, psutil.Error):
            continue
    return members


@pytest.mark.slow
@pytest.mark.parametrize("signal_name", ["SIGKILL", "SIGTERM"])
def test_killed_owner_leaves_no_browser_and_no_profile(tmp_path, signal_name: str) -> None:
    """The Python process owning a browser-mode env is killed: chromedriver, Chromium and its
    helpers go, the /tmp profile goes, and nothing was written under ~/.config/chromium."""
    home = tmp_path / "home"
    home.mkdir()
    environ = {k: v for k, v in os.environ.items() if not k.startswith("XDG_")}
    environ.update(HOME=str(home), PYTHONPATH=os.pathsep.join(sys.path))
    owner = subprocess.Popen(
        [sys.executable, "-c", OWNER_SCRIPT], stdout=subprocess.PIPE, env=environ, text=True
    )
    session = None
    try:
        line = owner.stdout.readline()
        assert line, "the owner process died before its browser started"
        started = json.loads(line)
        session, profile = started["session"], started["profile"]
        assert os.path.isdir(profile) and len(_session_members(session)) >= 2
        owner.send_signal(getattr(signal, signal_name))
        owner.wait(timeout=10)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and (_session_members(session) or os.path.exists(profile)):
            time.sleep(0.1)
        left = [p.name() for p in _session_members(session)]
        assert left == [], f"{signal_name} of the owner left {left} running"
        assert not os.path.exists(profile)
        assert not (home / ".config" / "chromium").exists()
        assert not (home / ".cache" / "chromium").exists()
    finally:
        if owner.poll() is None:
            owner.kill()
            owner.wait()
        for process in _session_members(session) if session else []:
            with contextlib.suppress(psutil.Error):
                process.kill()
