"""``sdgym eval --backend openai`` against a stand-in OpenAI-compatible server on 127.0.0.1.

The stand-in knows the tiny Search-QA split's gold answers and answers every question it finds in
the prompt, so a run that wins every episode proves the prompt reached the server and the answer
came back into the env. It can also answer slowly or with a malformed body.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

pytest.importorskip("requests")
pytest.importorskip("transformers")

from sdgym.cli import main  # noqa: E402


class StandIn:
    """The server's behaviour and what it saw."""

    def __init__(self) -> None:
        from sdgym.envs.searchqa.dataset import generated_dataset

        questions = generated_dataset(0, "tiny").questions["test"]
        self.answers = {q.question: q.answers[0] for q in questions}
        self.paths: list[str] = []
        self.mode = "ok"  # "ok" | "slow" | "malformed" | "untagged"

    def reply_text(self, prompt: str) -> str:
        found = [a for q, a in self.answers.items() if q in prompt]
        if self.mode == "untagged":  # the right command without the env's tags
            return f"search[{found[0] if found else 'x'}]"
        return f"<answer>{found[0]}</answer>" if found else "<answer>no idea</answer>"


def _handler(state: StandIn) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args) -> None:
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            state.paths.append(self.path)
            if state.mode == "slow":
                time.sleep(1.5)
            if self.path == "/v1/chat/completions":
                text = state.reply_text(body["messages"][-1]["content"])
                reply = {"choices": [{"message": {"role": "assistant", "content": text},
                                      "finish_reason": "stop"}]}
            elif self.path == "/v1/completions":
                reply = {"choices": [{"text": state.reply_text(body["prompt"]),
                                      "finish_reason": "stop"}]}
            else:
                self.send_error(404)
                return
            data = json.dumps({"unexpected": 1} if state.mode == "malformed" else reply).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            with contextlib.suppress(OSError):  # the client gave up (slow mode)
                self.wfile.write(data)

    return Handler


@pytest.fixture
def stand_in() -> Iterator[tuple[StandIn, str]]:
    state = StandIn()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state, f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def eval_args(url: str, tmp_path, *extra: str) -> list[str]:
    return ["eval", "--env", "SearchQA-v0", "--env-kwarg", "size=tiny", "--episodes", "3",
            "--seeds", "1", "--backend", "openai", "--base-url", url, "--model", "stand-in",
            "--max-retries", "0", "--out", str(tmp_path / "traj.jsonl"), *extra]


def test_chat_mode_wins_through_the_server(stand_in, tmp_path, capsys) -> None:
    state, url = stand_in
    assert main(eval_args(url, tmp_path)) == 0
    assert "success 1.000" in capsys.readouterr().out
    assert set(state.paths) == {"/v1/chat/completions"}  # a chat-only server is enough
    rows = [json.loads(line) for line in (tmp_path / "traj.jsonl").read_text().splitlines()]
    assert len(rows) == 3 and all(r["won"] for r in rows)
    assert all("Gold answer" not in json.dumps(r["messages"]) for r in rows)


def test_a_policy_that_never_tags_its_action_is_told_so(stand_in, tmp_path, capsys) -> None:
    state, url = stand_in
    state.mode = "untagged"
    assert main(eval_args(url, tmp_path)) == 0
    out = capsys.readouterr().out
    assert "success 0.000" in out
    rows = [json.loads(line) for line in (tmp_path / "traj.jsonl").read_text().splitlines()]
    assert rows and all(r["parse_error"] for r in rows)
    assert (f"{len(rows)} of {len(rows)} turns had no parsable action (no complete "
            "<search>...</search> or <answer>...</answer> block in the response); first such "
            "response: 'search[") in out
    state.mode = "ok"
    assert main(eval_args(url, tmp_path)) == 0
    assert "parsable" not in capsys.readouterr().out  # nothing to say when every turn parsed


def test_completions_mode_renders_with_the_warm_starts_template(stand_in, tmp_path, capsys) -> None:
    state, url = stand_in
    args = eval_args(url, tmp_path, "--openai-api", "completions", "--tokenizer",
                     "searchqa-easy-sft")
    assert main(args) == 0
    assert "success 1.000" in capsys.readouterr().out
    assert set(state.paths) == {"/v1/completions"}
    prompt = json.loads((tmp_path / "traj.jsonl").read_text().splitlines()[0])["prompt"]
    assert "<|im_start|>user" in prompt  # rendered here with the warm start's chat template


def test_completions_mode_without_a_tokenizer_is_a_clear_error(tmp_path, capsys) -> None:
    assert main(eval_args("http://127.0.0.1:9/v1", tmp_path, "--openai-api", "completions")) == 2
    assert "give --tokenizer" in capsys.readouterr().err


def test_a_url_as_hf_model_says_which_options_to_use(tmp_path, capsys) -> None:
    args = ["eval", "--env", "SearchQA-v0", "--model", "http://127.0.0.1:8000/v1"]
    assert main(args) == 2
    assert "use --backend openai --base-url URL --model NAME" in capsys.readouterr().err


def _one_error_line(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    return err


def test_server_down_slow_or_malformed_is_a_one_line_error(stand_in, tmp_path, capsys) -> None:
    state, url = stand_in
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        down = f"http://127.0.0.1:{probe.getsockname()[1]}/v1"
    assert main(eval_args(down, tmp_path)) == 1
    assert "cannot connect (server down?)" in _one_error_line(capsys)
    state.mode = "slow"
    assert main(eval_args(url, tmp_path, "--request-timeout", "0.3")) == 1
    assert "no reply within 0.3 s" in _one_error_line(capsys)
    state.mode = "malformed"
    assert main(eval_args(url, tmp_path)) == 1
    assert "malformed reply (no choices[0].message)" in _one_error_line(capsys)
