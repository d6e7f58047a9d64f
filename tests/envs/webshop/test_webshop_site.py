"""The WebShop Flask site (through Flask's test client), its loopback server and `sdgym serve`."""

from __future__ import annotations

import html
import re
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from html.parser import HTMLParser

import pytest

pytest.importorskip("flask")

from sdgym import cli  # noqa: E402
from sdgym.envs.webshop.engine import parse_action  # noqa: E402
from sdgym.envs.webshop.env import WebShopEnv  # noqa: E402
from sdgym.envs.webshop.server import HOST, BackgroundServer, check_host, is_loopback  # noqa: E402
from sdgym.envs.webshop.site import STORE_KEY, create_app, shop_engine  # noqa: E402


class _Elements(HTMLParser):
    """The texts of the elements that carry ``data-kind`` (what an agent observes)."""

    def __init__(self) -> None:
        super().__init__()
        self.texts: list[str] = []
        self._depth: int | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if any(name == "data-kind" for name, _ in attrs):
            self.texts.append("")
            self._depth = 0
        elif self._depth is not None:
            self._depth += 1

    def handle_endtag(self, tag: str) -> None:
        if self._depth is not None:
            self._depth -= 1
            if self._depth < 0:
                self._depth = None

    def handle_data(self, data: str) -> None:
        if self._depth is not None:
            self.texts[-1] += data


def _observed(document: str) -> str:
    parser = _Elements()
    parser.feed(document)
    return " [SEP] ".join(parser.texts)


@pytest.fixture(scope="module")
def shop():
    return shop_engine("tiny")


@pytest.fixture
def app(shop):
    engine, catalog = shop
    return create_app(engine, catalog.goals_by_split, seed=0)


def _start(client, task_index: int, split: str = "test") -> str:
    response = client.get(f"/?split={split}&task_index={task_index}")
    assert response.status_code == 303
    match = re.fullmatch(r"/([0-9a-f]{16})/", response.headers["Location"])
    assert match is not None
    return match.group(1)


def _act(client, session_id: str, command: str) -> str:
    verb, argument = parse_action(command)
    if verb == "search":
        response = client.post(f"/{session_id}/search", data={"search_query": argument})
    else:
        response = client.post(f"/{session_id}/click", data={"target": argument})
    assert response.status_code == 303 and response.headers["Location"] == f"/{session_id}/"
    return client.get(f"/{session_id}/").get_data(as_text=True)


@pytest.mark.parametrize("task_index", [0, 1, 2, 5])
def test_expert_purchase_scores_like_text_mode(app, task_index: int) -> None:
    env = WebShopEnv(size="tiny")
    client = app.test_client()
    obs, info = env.reset(options={"split": "test", "task_index": task_index})
    session_id = _start(client, task_index)
    document = client.get(f"/{session_id}/").get_data(as_text=True)
    assert _observed(document) == obs and 'id="search_input"' in document
    reward = 0.0
    for action in info["privileged"]["expert_plan"]:
        obs, reward, terminated, _, info = env.step(action)
        document = _act(client, session_id, action)
        assert _observed(document) == obs
    session = app.extensions[STORE_KEY].get(session_id)
    assert terminated and session.state.page == "done"
    assert session.state.reward == reward == info["score"]
    assert f"<p data-kind=\"text\" data-group=\"\" data-marked=\"0\">{reward}</p>" in document
    env.close()


def test_paging_sub_pages_and_back_to_search(app) -> None:
    client = app.test_client()
    session_id = _start(client, 0)
    document = _act(client, session_id, "search[rug]")
    assert "Page 1 (Total results:" in document and "&lt; Prev" not in document
    document = _act(client, session_id, "click[next >]")
    assert "Page 2 (Total results:" in document and "&lt; Prev" in document
    document = _act(client, session_id, "click[< prev]")
    assert "Page 1 (Total results:" in document
    asin = app.extensions[STORE_KEY].engine.results(
        app.extensions[STORE_KEY].get(session_id).state
    )[0]
    document = _act(client, session_id, f"click[{asin.lower()}]")
    assert "Buy Now" in document and "Description" in document and "Reviews" in document
    document = _act(client, session_id, "click[description]")
    assert app.extensions[STORE_KEY].get(session_id).state.sub_page == "Description"
    document = _act(client, session_id, "click[back to search]")
    assert 'id="search_input"' in document


def test_refused_action_changes_nothing_and_says_why(app) -> None:
    client = app.test_client()
    session_id = _start(client, 0)
    store = app.extensions[STORE_KEY]
    before = store.get(session_id).state
    for command in ("click[buy now]", "click[search]", "search[   ]"):
        document = _act(client, session_id, command)
        assert 'class="error"' in document and store.get(session_id).state == before
    document = _act(client, session_id, "search[rug]")
    assert 'class="error"' not in document and store.get(session_id).error is None


def test_sessions_are_separate_and_unknown_ones_404(app) -> None:
    client = app.test_client()
    first, second = _start(client, 0), _start(client, 1)
    _act(client, first, "search[rug]")
    store = app.extensions[STORE_KEY]
    assert store.get(first).state.page == "results" and store.get(second).state.page == "search"
    assert client.get("/0123456789abcdef/").status_code == 404
    assert client.post("/0123456789abcdef/click", data={"target": "x"}).status_code == 404
    assert client.get("/?split=test&task_index=999").status_code == 404
    assert client.get("/?split=nope").status_code == 404
    random_session = client.get("/")
    assert random_session.status_code == 303
    assert client.get("/favicon.ico").status_code == 204


def test_background_server_binds_loopback_and_stops(app) -> None:
    with BackgroundServer(app) as server:
        assert server.host == HOST == "127.0.0.1" and server.port > 0 and server.running
        assert server._server.socket.getsockname()[0] == "127.0.0.1"
        with urllib.request.urlopen(f"{server.url}/?task_index=0", timeout=10) as response:
            assert response.status == 200 and "WebShop" in response.read().decode()
    assert not server.running
    with pytest.raises(urllib.error.URLError):
        urllib.request.urlopen(f"{server.url}/", timeout=2)


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "127.0.0.2", "::1", "[::1]"])
def test_loopback_hosts_are_accepted(host: str) -> None:
    assert check_host(host) == host and is_loopback(host)


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.5", "10.0.0.1", "example.com"])
def test_non_loopback_hosts_are_refused_unless_allowed(app, host: str) -> None:
    assert not is_loopback(host)
    with pytest.raises(ValueError, match="allow_remote"):
        check_host(host)
    with pytest.raises(ValueError, match="not a loopback address"):
        BackgroundServer(app, host=host)
    assert check_host(host, allow_remote=True) == host  # explicitly asked: allowed
    with pytest.raises(ValueError):
        check_host("")


def test_background_server_on_localhost_binds_loopback(app) -> None:
    with BackgroundServer(app, host="localhost") as server:
        assert server._server.socket.getsockname()[0] == "127.0.0.1"
        assert server.url.startswith("http://localhost:")


def test_cli_serve_refuses_a_remote_host(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["serve", "webshop", "--size", "tiny", "--port", "0", "--host", "0.0.0.0"]
    assert cli.main(argv) == 2
    assert "refusing to serve on '0.0.0.0'" in capsys.readouterr().err


def test_text_mode_needs_neither_flask_nor_sockets() -> None:
    code = (
        "import socket, sys\n"
        "from sdgym.envs.webshop.env import WebShopEnv\n"
        "class Refused(socket.socket):\n"  # a class still: ssl, imported later, subclasses it
        "    def __init__(self, *a, **k): raise AssertionError('text mode opened a socket')\n"
        "socket.socket = Refused\n"
        "env = WebShopEnv(size='tiny')\n"
        "obs, info = env.reset(options={'split': 'test', 'task_index': 0})\n"
        "for action in info['privileged']['expert_plan']: env.step(action)\n"
        "env.close()\n"
        "bad = [m for m in ('flask', 'werkzeug', 'selenium') if m in sys.modules]\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


def test_cli_serve_prints_url_and_stops_on_ctrl_c() -> None:
    command = [sys.executable, "-m", "sdgym.cli", "serve", "webshop", "--port", "0"]
    inherited = signal.getsignal(signal.SIGINT)  # for the failure message
    process = subprocess.Popen(
        [*command, "--size", "tiny"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        text=True,
        # a SIGINT that this test process ignores (some library may have set that) would be
        # inherited across exec, and the server would never see the Ctrl-C
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        line = process.stdout.readline() if process.stdout else ""
        match = re.search(r"http://127\.0\.0\.1:\d+/", line)
        assert match is not None, line
        with urllib.request.urlopen(f"{match.group(0)}?task_index=1", timeout=10) as response:
            assert response.status == 200 and "search_input" in response.read().decode()
        process.send_signal(signal.SIGINT)
        try:
            code = process.wait(timeout=60)  # generous: CI machines can be heavily loaded
        except subprocess.TimeoutExpired:
            pytest.fail(f"server ignored Ctrl-C (this process's SIGINT handler: {inherited})")
        assert code == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


@pytest.mark.parametrize(
    "payload",
    ['<script>alert("x")</script>', '"><img src=x onerror=alert(1)>', "</div><b>bold</b>"],
)
def test_search_payloads_are_escaped_in_the_page(app, payload: str) -> None:
    client = app.test_client()
    session_id = _start(client, 0)
    client.post(f"/{session_id}/search", data={"search_query": payload})
    document = client.get(f"/{session_id}/").get_data(as_text=True)
    assert "<script>alert" not in document and "onerror=alert(1)>" not in document
    assert "<b>bold</b>" not in document
    response = client.post(f"/{session_id}/click", data={"target": payload})
    assert response.status_code == 303
    document = client.get(f"/{session_id}/").get_data(as_text=True)
    assert html.escape(payload) in document, "the refused target is echoed, escaped"
    assert "<script>alert" not in document and "<b>bold</b>" not in document


def test_oversized_bodies_and_queries_are_refused_unchanged(app) -> None:
    from sdgym.envs.webshop.site import MAX_REQUEST_BYTES

    client = app.test_client()
    session_id = _start(client, 0)
    store = app.extensions[STORE_KEY]
    before = store.get(session_id).state
    response = client.post(f"/{session_id}/search", data={"search_query": "rug " * 5_000_000})
    assert response.status_code == 413  # 20 MB: refused before it is read
    assert store.get(session_id).actions == 0
    long_query = "rug " * 600  # 2,400 characters: fits the body limit, not the action limit
    assert len(f"search[{long_query}]".encode()) * 3 < MAX_REQUEST_BYTES
    document = _act(client, session_id, f"search[{long_query}]")
    assert 'class="error"' in document and "limit is 2048" in store.get(session_id).error
    assert store.get(session_id).state == before
    document = _act(client, session_id, "search[rug]")
    assert store.get(session_id).error is None and store.get(session_id).state != before
