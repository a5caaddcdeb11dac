"""A local, scripted mock of the Anthropic Messages API, for running the real Claude agent offline.

``MockAnthropic(script)`` serves HTTP on 127.0.0.1 (a random port) from a thread; point the
agent at it with ``ANTHROPIC_BASE_URL=mock.url`` and any ``ANTHROPIC_API_KEY``. ``POST
/v1/messages`` answers in the streaming wire format (``message_start``, ``ping``,
``content_block_start``/``_delta``/``_stop`` for text and ``tool_use`` blocks, ``message_delta``
with the stop reason and usage, ``message_stop``), or with one JSON message when the request
does not ask to stream. ``/v1/messages/count_tokens`` gets a token estimate; anything else a
404 in the API's error shape. Every request is logged (``mock.requests``): method, path, headers
(credentials redacted), JSON body, and which scripted step answered it.

The script is honest: a reply is chosen from the conversation the agent sent, never from a
request counter. ``Script.prompt(marker, ...)`` answers the request whose last user message
has a text block containing ``marker``; ``Script.after(tool_use_id, ...)`` answers the request
whose last user message carries the ``tool_result`` of that tool use (so the step after a read
only runs once the agent really sent the read's result). A main-loop request (one that offers
tools) that matches no step is answered with a visible "no scripted reply" text and counted in
``mock.unmatched``. Requests without tools are the agent's side calls (titles, summaries); they
get ``Script.side_reply``. A prompt-suggestion request (``[SUGGESTION MODE: ...]``, which offers
tools) gets an empty text: no suggestion. A step given ``hold=event`` answers only once the test
sets the event (at most ``HOLD`` seconds later): a test can pace one session of the agent's (a
subagent's) against another.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.real_agents.harness import LocalServer

SECRET_HEADERS = frozenset({"x-api-key", "authorization", "cookie", "proxy-authorization"})
NO_REPLY = "(mock anthropic: no scripted reply for this request)"
HOLD = 120.0  # seconds a held step waits for its event at most
SUGGESTION = "[SUGGESTION MODE:"


def text(value: str) -> dict[str, Any]:
    """A text content block."""
    return {"type": "text", "text": value}


def tool_use(tool_use_id: str, name: str, tool_input: dict[str, Any]) -> dict[str, Any]:
    """A ``tool_use`` content block (``tool_use_id`` like ``toolu_...``)."""
    return {"type": "tool_use", "id": tool_use_id, "name": name, "input": tool_input}


@dataclass
class Step:
    """One scripted model turn: what triggers it and the content blocks it answers with."""

    trigger: tuple[str, str]  # ("prompt", marker) or ("after", tool_use_id)
    blocks: list[dict[str, Any]]
    used: int = 0
    hold: threading.Event | None = None  # answer once it is set

    @property
    def stop_reason(self) -> str:
        """``tool_use`` when the reply calls a tool, else ``end_turn``."""
        return "tool_use" if any(b["type"] == "tool_use" for b in self.blocks) else "end_turn"


@dataclass
class Script:
    """The model's scripted turns, looked up from the conversation of each request."""

    steps: list[Step] = field(default_factory=list)
    side_reply: str = "Scripted session"

    def prompt(self, marker: str, *blocks: dict[str, Any], hold: threading.Event | None = None) -> Script:
        """Answer the user prompt containing ``marker`` with ``blocks`` (once ``hold`` is set)."""
        self.steps.append(Step(("prompt", marker), list(blocks), hold=hold))
        return self

    def after(self, tool_use_id: str, *blocks: dict[str, Any]) -> Script:
        """Answer the request carrying the ``tool_result`` of ``tool_use_id`` with ``blocks``."""
        self.steps.append(Step(("after", tool_use_id), list(blocks)))
        return self

    def choose(self, body: dict[str, Any]) -> Step | None:
        """The step the conversation in ``body`` calls for, if any."""
        last = _last_user_message(body.get("messages"))
        texts = [b.get("text", "") for b in last if b.get("type") == "text"]
        results = [b.get("tool_use_id") for b in last if b.get("type") == "tool_result"]
        for step in self.steps:  # a new prompt starts a new turn, even beside an interrupted tool's result
            if step.trigger[0] == "prompt" and any(step.trigger[1] in t for t in texts):
                return step
        after = {s.trigger[1]: s for s in self.steps if s.trigger[0] == "after"}
        return next((after[i] for i in reversed(results) if i in after), None)

    def unused(self) -> list[Step]:
        """Steps no request has triggered yet."""
        return [s for s in self.steps if not s.used]


@dataclass(frozen=True)
class Logged:
    """One request the agent sent."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    answer: str  # "step N", "unmatched", "side", "suggestion", "count_tokens", "head", "404"

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The conversation of a Messages request."""
        messages = self.body.get("messages") if isinstance(self.body, dict) else None
        return messages if isinstance(messages, list) else []

    def tool_results(self) -> dict[str, dict[str, Any]]:
        """Every ``tool_result`` block in the conversation, by ``tool_use_id``."""
        return {
            b["tool_use_id"]: b
            for m in self.messages
            for b in _blocks(m.get("content"))
            if b.get("type") == "tool_result" and isinstance(b.get("tool_use_id"), str)
        }

    @property
    def tool_names(self) -> list[str]:
        """The names of the tools offered to the model."""
        tools = self.body.get("tools") if isinstance(self.body, dict) else None
        return [t.get("name") for t in tools or [] if isinstance(t, dict)]


class MockAnthropic:
    """The mock server; use as a context manager (``with MockAnthropic(script) as mock``)."""

    def __init__(self, script: Script | None = None) -> None:
        self.script = script or Script()
        self.requests: list[Logged] = []
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._http = LocalServer(_handler(self), "mock-anthropic")

    @property
    def url(self) -> str:
        """The base URL to give the agent (``ANTHROPIC_BASE_URL``)."""
        return f"http://127.0.0.1:{self._http.port}"

    def __enter__(self) -> MockAnthropic:
        self._http.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._http.stop()

    # -- what the agent sent --------------------------------------------------------------------
    def messages_requests(self) -> list[Logged]:
        """The ``POST /v1/messages`` requests, in order."""
        return [r for r in self.requests if r.method == "POST" and r.path.split("?")[0] == "/v1/messages"]

    def main_requests(self) -> list[Logged]:
        """The Messages requests of the agent's main loop (those offering tools, not suggestions)."""
        return [r for r in self.messages_requests() if r.tool_names and r.answer != "suggestion"]

    @property
    def unmatched(self) -> list[Logged]:
        """Main-loop requests no scripted step answered."""
        return [r for r in self.requests if r.answer == "unmatched"]

    # -- answering (called from the server's threads) ---------------------------------------------
    def _log(self, entry: Logged) -> None:
        with self._lock:
            self.requests.append(entry)

    def _reply(self, body: dict[str, Any]) -> tuple[str, list[dict[str, Any]], str]:
        """(log label, blocks, stop reason) for one Messages request (a held step waits here)."""
        with self._lock:
            if not body.get("tools"):
                return "side", [text(self.script.side_reply)], "end_turn"
            if _is_suggestion(body):  # the CLI's guess at the user's next prompt: stay silent
                return "suggestion", [text("")], "end_turn"
            step = self.script.choose(body)
            if step is None:
                return "unmatched", [text(NO_REPLY)], "end_turn"
            step.used += 1
        if step.hold is not None:
            step.hold.wait(HOLD)
        return f"step {self.script.steps.index(step)}", step.blocks, step.stop_reason

    def _message_id(self) -> str:
        with self._lock:
            return f"msg_mock_{next(self._ids):04d}"


def message(message_id: str, model: str, blocks: list[dict[str, Any]], stop: str | None) -> dict[str, Any]:
    """A complete (non-streamed) Messages API response."""
    return {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": blocks,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": _usage(_output_tokens(blocks)),
    }


def stream_events(message_id: str, model: str, blocks: list[dict[str, Any]], stop: str) -> Iterator[dict]:
    """The streaming events of one response, in the order the real API sends them."""
    start = message(message_id, model, [], None)
    start["usage"] = _usage(1)
    yield {"type": "message_start", "message": start}
    yield {"type": "ping"}
    for index, block in enumerate(blocks):
        if block["type"] == "tool_use":
            opening = {**block, "input": {}}
            raw = json.dumps(block["input"], ensure_ascii=False)
            deltas = [
                {"type": "input_json_delta", "partial_json": raw[i : i + 24]} for i in range(0, len(raw), 24)
            ]
        else:
            opening = {"type": "text", "text": ""}
            words = block["text"].split(" ")
            deltas = [
                {"type": "text_delta", "text": w + (" " if i < len(words) - 1 else "")}
                for i, w in enumerate(words)
            ]
        yield {"type": "content_block_start", "index": index, "content_block": opening}
        for delta in deltas:
            yield {"type": "content_block_delta", "index": index, "delta": delta}
        yield {"type": "content_block_stop", "index": index}
    usage = {"output_tokens": _output_tokens(blocks)}
    yield {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None}, "usage": usage}
    yield {"type": "message_stop"}


def _usage(output_tokens: int) -> dict[str, int]:
    return {
        "input_tokens": 100,
        "output_tokens": output_tokens,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    }


def _output_tokens(blocks: list[dict[str, Any]]) -> int:
    return max(1, len(json.dumps(blocks)) // 4)


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [text(content)]
    return [b for b in content or [] if isinstance(b, dict)] if isinstance(content, list) else []


def _last_user_message(messages: Any) -> list[dict[str, Any]]:
    users = [m for m in messages or [] if isinstance(m, dict) and m.get("role") == "user"]
    return _blocks(users[-1].get("content")) if users else []


def _is_suggestion(body: dict[str, Any]) -> bool:
    """A prompt-suggestion request (claude-agent-acp >= 0.95 asks after a turn, with tools)."""
    last = _last_user_message(body.get("messages"))
    return any(b.get("text", "").startswith(SUGGESTION) for b in last if b.get("type") == "text")


def _handler(mock: MockAnthropic) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        server_version = "mock-anthropic/1"

        def log_message(self, format: str, *args: Any) -> None:  # the log is ``mock.requests``
            pass

        def do_GET(self) -> None:
            self._log(None, "404")
            self._json(404, _error("not_found_error", f"mock: no {self.path}"))

        def do_HEAD(self) -> None:
            self._log(None, "head")
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw) if raw else None
            except ValueError:
                body = raw.decode("utf-8", "replace")
            path = self.path.split("?")[0]
            if path == "/v1/messages/count_tokens":
                self._log(body, "count_tokens")
                self._json(200, {"input_tokens": max(1, len(raw) // 4)})
            elif path == "/v1/messages" and isinstance(body, dict):
                label, blocks, stop = mock._reply(body)
                self._log(body, label)
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # aborted (a cancel)
                    self._answer(body, blocks, stop)
            else:
                self._log(body, "404")
                self._json(404, _error("not_found_error", f"mock: no {self.path}"))

        def _log(self, body: Any, answer: str) -> None:
            headers = {
                k.lower(): ("<redacted>" if k.lower() in SECRET_HEADERS else v)
                for k, v in self.headers.items()
            }
            mock._log(Logged(self.command, self.path, headers, body, answer))

        def _answer(self, body: dict[str, Any], blocks: list[dict[str, Any]], stop: str) -> None:
            model, message_id = str(body.get("model") or "claude-mock"), mock._message_id()
            if not body.get("stream"):
                self._json(200, message(message_id, model, blocks, stop))
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream; charset=utf-8")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("request-id", f"req_{message_id}")
            self.end_headers()
            for event in stream_events(message_id, model, blocks, stop):
                data = json.dumps(event, ensure_ascii=False)
                self.wfile.write(f"event: {event['type']}\ndata: {data}\n\n".encode())
            self.wfile.flush()

        def _json(self, status: int, payload: Any) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.send_header("request-id", "req_mock")
            self.end_headers()
            self.wfile.write(data)

    return Handler


def _error(kind: str, text_: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": text_}}
