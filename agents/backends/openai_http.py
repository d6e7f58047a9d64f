"""Client for OpenAI-compatible HTTP servers (``/v1/completions`` and ``/v1/chat/completions``).

Works with vLLM / SGLang / llama.cpp servers and hosted APIs. Log-probs are filled in when
the server returns them (completions: ``logprobs.token_logprobs``; chat:
``logprobs.content[*].logprob``); what they mean is up to the server (vLLM reports raw-model
log-probs, the convention of :mod:`agents.backends.base`). Token ids come from the server
when it returns tokens as ``"token_id:<n>"`` (vLLM's ``return_tokens_as_token_ids``), else
from ``tokenizer`` when one is given, else they are left empty.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import requests

from agents.backends.base import Generation, PolicyBackend, SamplingParams

RETRY_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})
"""HTTP statuses that are retried; other 4xx errors fail at once."""


class OpenAIHTTPError(RuntimeError):
    """A request to an OpenAI-compatible server failed (after any retries)."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


def _token_ids_from_strings(tokens: Sequence[str] | None) -> list[int] | None:
    """Parse vLLM's ``"token_id:123"`` token strings; None if they are plain text tokens."""
    if not tokens:
        return None
    ids = []
    for tok in tokens:
        if not isinstance(tok, str) or not tok.startswith("token_id:"):
            return None
        ids.append(int(tok.removeprefix("token_id:")))
    return ids


def _reason(error: Exception) -> str:
    """The innermost reason of a ``requests`` connection error (e.g. "Connection refused")."""
    text = str(error)
    for marker in ("] ", "Errno"):
        if marker in text:
            text = text.rsplit(marker, 1)[-1]
    return " ".join(text.rstrip(")'\"").split())[:160]


class OpenAICompatBackend(PolicyBackend):
    """Sample from an OpenAI-compatible server over HTTP.

    Args:
        base_url: API root such as ``http://localhost:8000/v1`` (``/v1`` is appended when
            missing). Default: ``$OPENAI_BASE_URL``.
        model: Model name sent with every request.
        api_key: Bearer token; default: the ``api_key_env`` environment variable (may be unset
            for local servers).
        api_key_env: Environment variable holding the key.
        timeout: Seconds per HTTP request (connect and read).
        max_retries: Extra attempts after a connection error, timeout or retryable status.
        backoff_s: First retry delay; doubled after each failed attempt (capped at 30 s).
        tokenizer: Optional tokenizer to fill ``prompt_ids``/``response_ids`` locally.
        concurrency: Number of requests in flight at once.
        extra_body: Extra JSON fields for every request (e.g. vLLM's
            ``{"return_tokens_as_token_ids": True}``).
        api: ``"completions"`` (the rollout engine renders prompts with a local chat template
            and calls ``/completions``) or ``"chat"`` (it sends the turn's messages to
            ``/chat/completions`` and the server applies its template: chat-only servers).
    """

    APIS = ("completions", "chat")

    def __init__(
        self,
        base_url: str | None = None,
        model: str = "default",
        *,
        api_key: str | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        timeout: float = 60.0,
        max_retries: int = 3,
        backoff_s: float = 0.5,
        tokenizer: Any = None,
        concurrency: int = 8,
        extra_body: Mapping[str, Any] | None = None,
        api: str = "completions",
    ) -> None:
        if api not in self.APIS:
            raise ValueError(f"api must be one of {self.APIS}, got {api!r}")
        self.api = api
        base_url = base_url or os.environ.get("OPENAI_BASE_URL")
        if not base_url:
            raise ValueError("base_url is required (or set OPENAI_BASE_URL)")
        base_url = base_url.rstrip("/")
        self.base_url = base_url if base_url.endswith("/v1") else base_url + "/v1"
        self.model = model
        self.api_key = api_key if api_key is not None else os.environ.get(api_key_env)
        self.timeout = timeout
        self.max_retries = max_retries
        self.backoff_s = backoff_s
        self.tokenizer = tokenizer
        self.concurrency = max(1, concurrency)
        self.extra_body = dict(extra_body or {})
        self._local = threading.local()

    @property
    def wants_messages(self) -> bool:  # type: ignore[override]
        """True in ``api="chat"`` mode: the rollout engine sends messages, not prompts."""
        return self.api == "chat"

    # -- HTTP -------------------------------------------------------------------------------

    def _session(self) -> requests.Session:
        session = getattr(self._local, "session", None)
        if session is None:
            session = requests.Session()
            if self.api_key:
                session.headers["Authorization"] = f"Bearer {self.api_key}"
            self._local.session = session
        return session

    def post(self, endpoint: str, body: Mapping[str, Any]) -> dict[str, Any]:
        """POST JSON to ``base_url + endpoint`` with retries; return the decoded reply."""
        url = f"{self.base_url}/{endpoint.lstrip('/')}"
        attempts = self.max_retries + 1
        last_error = ""
        last_status: int | None = None
        for attempt in range(attempts):
            if attempt:
                time.sleep(min(self.backoff_s * 2 ** (attempt - 1), 30.0))
            try:
                resp = self._session().post(url, json=dict(body), timeout=self.timeout)
            except requests.Timeout:
                last_error, last_status = f"no reply within {self.timeout:g} s (timeout)", None
                continue
            except requests.ConnectionError as err:
                last_error, last_status = f"cannot connect (server down?): {_reason(err)}", None
                continue
            if resp.status_code == 200:
                try:
                    return resp.json()
                except ValueError as err:
                    raise OpenAIHTTPError(
                        f"POST {url}: malformed reply (not JSON): {resp.text[:200]!r}"
                    ) from err
            last_status = resp.status_code
            last_error = f"HTTP {resp.status_code}: {' '.join(resp.text[:500].split())}"
            if resp.status_code not in RETRY_STATUS:
                raise OpenAIHTTPError(f"POST {url} failed: {last_error}", resp.status_code)
        raise OpenAIHTTPError(
            f"POST {url} failed after {attempts} attempts; last error: {last_error}", last_status
        )

    def _map(self, fn: Any, items: Sequence[Any]) -> list[Any]:
        if len(items) <= 1 or self.concurrency == 1:
            return [fn(item) for item in items]
        with ThreadPoolExecutor(max_workers=min(self.concurrency, len(items))) as pool:
            return list(pool.map(fn, items))

    # -- request bodies ---------------------------------------------------------------------

    def _common_body(self, params: SamplingParams) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model,
            "max_tokens": params.max_new_tokens,
            "temperature": params.temperature,
            "top_p": params.top_p,
            "n": 1,
        }
        if params.seed is not None:
            body["seed"] = params.seed
        if params.stop:
            body["stop"] = list(params.stop)
        body.update(self.extra_body)
        return body

    def _encode(self, text: str) -> list[int]:
        if self.tokenizer is None:
            return []
        return list(self.tokenizer.encode(text, add_special_tokens=False))

    @staticmethod
    def _finish_text(text: str, choice: Mapping[str, Any], params: SamplingParams) -> str:
        stop_reason = choice.get("stop_reason")  # vLLM: the matched stop string, if any
        if (
            params.include_stop_str_in_output
            and isinstance(stop_reason, str)
            and not text.endswith(stop_reason)
        ):
            return text + stop_reason
        return text

    # -- completions ------------------------------------------------------------------------

    def generate(self, prompts: Sequence[str], params: SamplingParams) -> list[Generation]:
        """Complete each rendered prompt via ``POST /completions``."""

        def one(item: tuple[str, SamplingParams]) -> Generation:
            prompt, row = item
            body = self._common_body(row) | {"prompt": prompt, "logprobs": 1}
            choice = self._first_choice(self.post("completions", body), "text")
            text = choice["text"]
            lp = choice.get("logprobs") or {}
            tokens = lp.get("tokens")
            logprobs = [float(x) for x in lp.get("token_logprobs") or [] if x is not None]
            response_ids = _token_ids_from_strings(tokens)
            if response_ids is None:
                response_ids = self._encode(text)
            return Generation(
                text=self._finish_text(text, choice, params),
                prompt_ids=self._encode(prompt),
                response_ids=response_ids,
                logprobs=logprobs,
                finish_reason="length" if choice.get("finish_reason") == "length" else "stop",
            )

        return self._map(one, list(zip(prompts, params.per_row(len(prompts)))))

    # -- chat -------------------------------------------------------------------------------

    def chat(
        self, conversations: Sequence[Sequence[Mapping[str, str]]], params: SamplingParams
    ) -> list[Generation]:
        """Answer each conversation via ``POST /chat/completions`` (server-side template).

        ``prompt_ids`` stay empty: the server renders the chat template.
        """

        def one(item: tuple[Sequence[Mapping[str, str]], SamplingParams]) -> Generation:
            messages, row = item
            body = self._common_body(row) | {
                "messages": [dict(m) for m in messages],
                "logprobs": True,
            }
            choice = self._first_choice(self.post("chat/completions", body), "message")
            text = choice["message"].get("content") or ""
            content = (choice.get("logprobs") or {}).get("content") or []
            tokens = [c.get("token") for c in content]
            response_ids = _token_ids_from_strings(tokens)
            if response_ids is None:
                response_ids = self._encode(text)
            return Generation(
                text=self._finish_text(text, choice, params),
                prompt_ids=[],
                response_ids=response_ids,
                logprobs=[float(c["logprob"]) for c in content if c.get("logprob") is not None],
                finish_reason="length" if choice.get("finish_reason") == "length" else "stop",
            )

        return self._map(one, list(zip(conversations, params.per_row(len(conversations)))))

    def _first_choice(self, reply: Any, field: str) -> Mapping[str, Any]:
        """``choices[0]`` of a reply, checked to hold ``field`` (``text`` or ``message``)."""
        choices = reply.get("choices") if isinstance(reply, Mapping) else None
        choice = choices[0] if isinstance(choices, list) and choices else None
        expected = str if field == "text" else Mapping
        if not isinstance(choice, Mapping) or not isinstance(choice.get(field), expected):
            raise OpenAIHTTPError(f"{self.base_url}: malformed reply (no choices[0].{field}): "
                                  f"{' '.join(str(reply)[:200].split())}")
        return choice

    def score(
        self, prompt_ids: Sequence[Sequence[int]], response_ids: Sequence[Sequence[int]]
    ) -> list[list[float]]:
        """Not supported: OpenAI-compatible APIs have no portable way to score given tokens."""
        raise NotImplementedError(
            "OpenAICompatBackend cannot score token ids; use HFBackend or VLLMBackend"
        )
