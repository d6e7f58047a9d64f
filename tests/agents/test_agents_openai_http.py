"""Tests for agents.backends.openai_http against a local stub server (127.0.0.1, any port)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

pytest.importorskip("requests")

from agents.backends.base import SamplingParams  # noqa: E402
from agents.backends.openai_http import OpenAICompatBackend, OpenAIHTTPError  # noqa: E402


class StubState:
    """What the stub server saw, and how it should answer."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, dict[str, Any], str | None]] = []
        self.fail_first = 0  # answer HTTP 500 to this many requests first
        self.status: int | None = None  # answer every request with this status
        self.token_ids = False  # return "token_id:<n>" tokens like vLLM
        self.lock = threading.Lock()


def _completion(body: dict[str, Any], state: StubState) -> dict[str, Any]:
    text = "<action>look</action>"
    tokens = ["token_id:7", "token_id:8"] if state.token_ids else ["<action>", "look"]
    return {
        "object": "text_completion",
        "choices": [
            {
                "index": 0,
                "text": f"{text}|{body['prompt']}",
                "logprobs": {"tokens": tokens, "token_logprobs": [-0.25, -0.5]},
                "finish_reason": "length" if body["max_tokens"] < 5 else "stop",
                "stop_reason": "]" if body.get("stop") else None,
            }
        ],
    }


def _chat(body: dict[str, Any]) -> dict[str, Any]:
    content = body["messages"][-1]["content"].upper()
    return {
        "object": "chat.completion",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "logprobs": {"content": [{"token": content, "logprob": -0.75}]},
                "finish_reason": "stop",
            }
        ],
    }


def _handler(state: StubState) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:  # keep test output quiet
            pass

        def _send(self, status: int, payload: Any) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_POST(self) -> None:  # noqa: N802 (http.server API)
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            with state.lock:
                state.requests.append((self.path, body, self.headers.get("Authorization")))
                failing = state.fail_first > 0
                state.fail_first -= int(failing)
            if state.status is not None:
                self._send(state.status, {"error": {"message": "boom"}})
            elif failing:
                self._send(500, {"error": {"message": "temporary"}})
            elif self.path == "/v1/completions":
                self._send(200, _completion(body, state))
            elif self.path == "/v1/chat/completions":
                self._send(200, _chat(body))
            else:
                self._send(404, {"error": {"message": "no such endpoint"}})

    return Handler


@pytest.fixture
def stub() -> Iterator[tuple[str, StubState]]:
    """Run the stub server in a thread; always shut it down, even when a test fails."""
    state = StubState()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.daemon = True
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", state
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def _backend(url: str, **kwargs: Any) -> OpenAICompatBackend:
    defaults: dict[str, Any] = {"model": "tiny", "timeout": 5.0, "max_retries": 2, "backoff_s": 0}
    return OpenAICompatBackend(url, **(defaults | kwargs))


def test_completions(stub, monkeypatch: pytest.MonkeyPatch) -> None:
    url, state = stub
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    backend = _backend(url)
    params = SamplingParams(max_new_tokens=16, temperature=0.5, top_p=0.9, seed=1, stop=("]",))
    gens = backend.generate(["p0", "p1", "p2"], params)
    assert [g.text for g in gens] == [f"<action>look</action>|p{i}]" for i in range(3)]
    assert all(g.logprobs == [-0.25, -0.5] and g.finish_reason == "stop" for g in gens)
    assert all(g.response_ids == [] and g.prompt_ids == [] for g in gens)  # no tokenizer
    path, body, auth = state.requests[0]
    assert path == "/v1/completions" and auth == "Bearer sk-test"
    assert {k: body[k] for k in ("model", "max_tokens", "temperature", "top_p", "seed")} == {
        "model": "tiny",
        "max_tokens": 16,
        "temperature": 0.5,
        "top_p": 0.9,
        "seed": 1,
    }
    assert body["stop"] == ["]"] and body["logprobs"] == 1
    assert sorted(b["prompt"] for _, b, _ in state.requests) == ["p0", "p1", "p2"]


def test_token_ids_and_length(stub) -> None:
    url, state = stub
    state.token_ids = True
    backend = _backend(url + "/v1/", extra_body={"return_tokens_as_token_ids": True})
    gen = backend.generate(["q"], SamplingParams(max_new_tokens=2))[0]
    assert gen.response_ids == [7, 8]
    assert gen.finish_reason == "length"
    assert state.requests[0][1]["return_tokens_as_token_ids"] is True
    assert state.requests[0][2] is None or state.requests[0][2].startswith("Bearer")


def test_tokenizer_fills_ids(stub) -> None:
    url, _ = stub

    class Bytes:
        def encode(self, text: str, add_special_tokens: bool = True) -> list[int]:
            return list(text.encode())

    gen = _backend(url, tokenizer=Bytes()).generate(["hi"], SamplingParams(max_new_tokens=8))[0]
    assert gen.prompt_ids == [104, 105]
    assert bytes(gen.response_ids).decode() == "<action>look</action>|hi"


def test_chat(stub) -> None:
    url, state = stub
    convs = [[{"role": "user", "content": "go"}], [{"role": "user", "content": "stop"}]]
    gens = _backend(url).chat(convs, SamplingParams(max_new_tokens=8))
    assert [g.text for g in gens] == ["GO", "STOP"]
    assert all(g.logprobs == [-0.75] for g in gens)
    assert all(path == "/v1/chat/completions" for path, _, _ in state.requests)
    assert state.requests[0][1]["logprobs"] is True


def test_retries_then_succeeds(stub) -> None:
    url, state = stub
    state.fail_first = 2
    gen = _backend(url).generate(["x"], SamplingParams(max_new_tokens=8))[0]
    assert gen.logprobs == [-0.25, -0.5]
    assert len(state.requests) == 3


def test_server_error_raises_after_retries(stub) -> None:
    url, state = stub
    state.status = 503
    start = time.perf_counter()
    with pytest.raises(OpenAIHTTPError, match="after 3 attempts.*HTTP 503") as info:
        _backend(url).generate(["x"], SamplingParams(max_new_tokens=8))
    assert info.value.status == 503
    assert len(state.requests) == 3
    assert time.perf_counter() - start < 5


def test_client_error_is_not_retried(stub) -> None:
    url, state = stub
    state.status = 400
    with pytest.raises(OpenAIHTTPError, match="HTTP 400") as info:
        _backend(url).generate(["x"], SamplingParams(max_new_tokens=8))
    assert info.value.status == 400
    assert len(state.requests) == 1


def test_unreachable_server_fails_fast() -> None:
    import socket

    with socket.socket() as sock:  # find a free port, then close it so nothing listens
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    backend = _backend(f"http://127.0.0.1:{port}", timeout=1.0, max_retries=1)
    with pytest.raises(OpenAIHTTPError, match="after 2 attempts.*cannot connect"):
        backend.generate(["x"], SamplingParams(max_new_tokens=8))


def test_score_not_supported(stub) -> None:
    with pytest.raises(NotImplementedError):
        _backend(stub[0]).score([[1]], [[2]])
