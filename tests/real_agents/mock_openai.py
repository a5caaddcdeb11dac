"""A local mock of the OpenAI Responses API, scripted turn by turn, for the real Codex agent.

Codex (through a custom ``model_provider`` whose ``base_url`` is ``MockOpenAI.base_url`` and
``wire_api = "responses"``) posts each model turn to ``POST /v1/responses`` and reads the answer as
server-sent events (measured with codex 0.166 under codex-acp 2.6: plain HTTP + SSE, no websocket,
no ``/models``). The mock serves a list of ``Step``: every ``/responses`` request takes the next
step, whose ``when`` predicate must hold for the input the request carried (else the mock answers
``response.failed`` and records the mismatch in ``failures``) — so a script cannot run ahead of
what codex really sent. A step's reply is a list of output items (``message``,
``function_call``, ``custom_tool_call``), streamed the way the real API does:
``response.created``, per item ``response.output_item.added``, the deltas
(``response.output_text.delta`` / ``response.function_call_arguments.delta`` + ``.done``),
``response.output_item.done``, then ``response.completed`` with usage.

Codex 0.166 also asks the model, after a thread's first turn, for a title ("Your task is to
generate a very short title ..."): those requests take no step; the mock answers them with
``title`` (``title_requests()`` lists them).

Every request is logged (``requests``: method, path, headers with secrets redacted, JSON body);
``GET .../models`` gets an empty list, any other path a 404 (tests assert codex asks for nothing
but ``/v1/responses``). The server binds 127.0.0.1 on a random port and runs in a daemon thread;
``close()`` stops it.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.real_agents.harness import LocalServer

TITLE_PROMPT = "Your task is to generate a very short title"
SECRET_HEADERS = frozenset({"authorization", "cookie", "openai-api-key", "x-api-key", "chatgpt-account-id"})
Item = dict[str, Any]
Predicate = Callable[["Request"], bool]


# -- what codex sent -------------------------------------------------------------------------------
@dataclass(frozen=True)
class Request:
    """One HTTP request the mock received."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any

    @property
    def input(self) -> list[Item]:
        """The ``input`` items of a ``/responses`` request (empty otherwise)."""
        items = self.body.get("input") if isinstance(self.body, dict) else None
        return [i for i in items or [] if isinstance(i, dict)]

    def outputs(self, call_id: str) -> list[str]:
        """The ``output`` text of each ``function_call_output``/``custom_tool_call_output`` of a call."""
        kinds = ("function_call_output", "custom_tool_call_output")
        found = [i for i in self.input if i.get("type") in kinds and i.get("call_id") == call_id]
        return [_output_text(i.get("output")) for i in found]

    def user_texts(self) -> list[str]:
        """Every ``input_text`` of the user's messages, in order."""
        return [
            part.get("text", "")
            for i in self.input
            if i.get("type") == "message" and i.get("role") == "user"
            for part in i.get("content") or []
            if isinstance(part, dict) and part.get("type") == "input_text"
        ]

    @property
    def last(self) -> Item:
        """The last input item (what this turn answers)."""
        return self.input[-1] if self.input else {}

    @property
    def is_title(self) -> bool:
        """Whether this is codex's request for a thread title (not a turn of the script)."""
        texts = self.user_texts()
        return bool(texts) and texts[-1].startswith(TITLE_PROMPT)

    def tool_names(self) -> list[str]:
        """The names of the tools codex offered the model."""
        tools = self.body.get("tools") if isinstance(self.body, dict) else None
        return [t.get("name") or t.get("type") for t in tools or [] if isinstance(t, dict)]


def _output_text(output: Any) -> str:
    if isinstance(output, str):
        return output
    if isinstance(output, list):  # content items
        return "".join(p.get("text", "") for p in output if isinstance(p, dict))
    if isinstance(output, dict):
        return str(output.get("content", ""))
    return ""


# -- the script -----------------------------------------------------------------------------------
def user_said(text: str) -> Predicate:
    """The newest user message contains ``text``."""
    return lambda r: bool(r.user_texts()) and text in r.user_texts()[-1]


def answered(call_id: str) -> Predicate:
    """The input ends with the output of tool call ``call_id``."""
    return lambda r: r.last.get("call_id") == call_id and r.last.get("type", "").endswith("_output")


@dataclass
class Step:
    """One model turn: served to the next ``/responses`` request, if ``when`` holds for it.

    ``hold`` (optional) is the model thinking: the reply waits until ``hold()`` is true (at most
    ``hold_timeout`` s, then it goes anyway and ``failures`` says so) — for an event the agent
    sends in the background, which it drops if the model answers first.
    """

    when: Predicate
    reply: Sequence[Item]
    label: str = ""
    hold: Callable[[], bool] | None = None
    hold_timeout: float = 15.0
    request: Request | None = field(default=None, init=False)  # the request it answered


def message(text: str) -> Item:
    """An assistant message output item."""
    return {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]}


def function_call(call_id: str, name: str, arguments: dict[str, Any]) -> Item:
    """A ``function_call`` output item (``arguments`` are JSON-encoded as the API does)."""
    return {"type": "function_call", "call_id": call_id, "name": name, "arguments": json.dumps(arguments)}


def custom_tool_call(call_id: str, name: str, text: str) -> Item:
    """A freeform ``custom_tool_call`` output item (e.g. ``apply_patch`` with the patch as input)."""
    return {"type": "custom_tool_call", "call_id": call_id, "name": name, "input": text}


# -- the wire format ------------------------------------------------------------------------------
def sse(events: list[dict[str, Any]]) -> bytes:
    """Server-sent events, ``event: <type>`` + ``data: <json>`` each."""
    return b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events)


def stream_events(response_id: str, items: Sequence[Item], chunk: int = 12) -> list[dict[str, Any]]:
    """The Responses API event stream that outputs ``items``, text and arguments in deltas."""
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": {"id": response_id, "status": "in_progress", "output": []}}
    ]
    for index, item in enumerate(items):
        item = {"id": f"{response_id}_item{index}", "status": "completed", **item}
        events += _item_events(item, index, chunk)
    usage = {
        "input_tokens": 100,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 10,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 110,
    }
    events.append(
        {"type": "response.completed", "response": {"id": response_id, "status": "completed", "usage": usage}}
    )
    return events


def _pieces(text: str, chunk: int) -> list[str]:
    return [text[i : i + chunk] for i in range(0, len(text), chunk)] or [""]


def _item_events(item: Item, index: int, chunk: int) -> list[dict[str, Any]]:
    where = {"item_id": item["id"], "output_index": index}
    kind = item["type"]
    if kind == "message":
        text = "".join(p["text"] for p in item["content"])
        started = {**item, "status": "in_progress", "content": []}
        deltas = [
            {"type": "response.output_text.delta", **where, "content_index": 0, "delta": piece}
            for piece in _pieces(text, chunk)
        ]
        deltas.append({"type": "response.output_text.done", **where, "content_index": 0, "text": text})
    elif kind == "function_call":
        started = {**item, "status": "in_progress", "arguments": ""}
        args = item["arguments"]
        deltas = [
            {"type": "response.function_call_arguments.delta", **where, "delta": piece}
            for piece in _pieces(args, chunk)
        ]
        deltas.append({"type": "response.function_call_arguments.done", **where, "arguments": args})
    else:  # custom_tool_call
        started = {**item, "status": "in_progress", "input": ""}
        deltas = [
            {"type": "response.custom_tool_call_input.delta", **where, "delta": piece}
            for piece in _pieces(item["input"], chunk)
        ]
        deltas.append({"type": "response.custom_tool_call_input.done", **where, "input": item["input"]})
    return [
        {"type": "response.output_item.added", "output_index": index, "item": started},
        *deltas,
        {"type": "response.output_item.done", "output_index": index, "item": item},
    ]


# -- the server -----------------------------------------------------------------------------------
class MockOpenAI:
    """The mock server: ``steps`` are served in order; ``requests`` and ``failures`` are logged."""

    def __init__(self, steps: Sequence[Step] = (), title: str = "Mock title") -> None:
        self.steps: list[Step] = list(steps)
        self.title = title
        self.requests: list[Request] = []
        self.failures: list[str] = []
        self._served = 0
        self._lock = threading.Lock()
        self._http = LocalServer(_handler(self), "mock-openai")
        self._http.start()

    @property
    def base_url(self) -> str:
        """The provider ``base_url`` (``http://127.0.0.1:<port>/v1``)."""
        return f"http://127.0.0.1:{self._http.port}/v1"

    def add(self, *steps: Step) -> None:
        """Append further steps to the script."""
        with self._lock:
            self.steps += steps

    @property
    def pending(self) -> list[Step]:
        """The steps not served yet."""
        with self._lock:
            return self.steps[self._served :]

    def model_requests(self) -> list[Request]:
        """The ``/responses`` requests of the script (title requests left out), in order."""
        return [r for r in self._responses() if not r.is_title]

    def title_requests(self) -> list[Request]:
        """Codex's requests for a thread title, in order."""
        return [r for r in self._responses() if r.is_title]

    def _responses(self) -> list[Request]:
        return [r for r in list(self.requests) if r.path.split("?")[0].rstrip("/").endswith("/responses")]

    def close(self) -> None:
        """Stop serving."""
        self._http.stop()

    def answer(self, request: Request) -> tuple[int, str, bytes]:
        """Status, content type and body for one request (a step for ``/responses``)."""
        with self._lock:
            self.requests.append(request)
            path = request.path.split("?")[0].rstrip("/")
            if request.method == "GET" and path.endswith("/models"):
                return 200, "application/json", b'{"object": "list", "data": [], "models": []}'
            if request.method != "POST" or not path.endswith("/responses"):
                return 404, "application/json", b'{"error": {"message": "not mocked"}}'
            if request.is_title:
                reply = stream_events(f"resp_title_{len(self.title_requests())}", [message(self.title)])
                return 200, "text/event-stream", sse(reply)
            index = self._served
            step = self.steps[index] if index < len(self.steps) else None
            if step is None or not step.when(request):
                why = "no step left" if step is None else f"step {index} ({step.label}) does not match"
                self.failures.append(f"{why}; last input item: {json.dumps(request.last)[:500]}")
                failed = {"id": f"resp_{index}", "error": {"code": "mock_script", "message": why}}
                return 200, "text/event-stream", sse([{"type": "response.failed", "response": failed}])
            step.request = request
            self._served += 1
        if step.hold is not None and not _wait(step.hold, step.hold_timeout):
            with self._lock:
                self.failures.append(f"step {index} ({step.label}): still held after {step.hold_timeout:g}s")
        return 200, "text/event-stream", sse(stream_events(f"resp_{index}", step.reply))


def _wait(predicate: Callable[[], bool], timeout: float) -> bool:
    """Poll ``predicate`` (in the server's thread) until true or ``timeout`` s; an exception counts
    as not yet. Returns whether it came true."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            if predicate():
                return True
        except Exception:  # the test's state, read from this thread: try again
            pass
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.02)


def _handler(mock: MockOpenAI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _serve(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw) if raw else None
            except ValueError:
                body = raw.decode("utf-8", "replace")
            headers = {k.lower(): v for k, v in self.headers.items() if k.lower() not in SECRET_HEADERS}
            headers.update({k.lower(): "<redacted>" for k in self.headers if k.lower() in SECRET_HEADERS})
            try:
                status, kind, data = mock.answer(Request(self.command, self.path, headers, body))
            except Exception as exc:  # never leave codex waiting on a dead handler
                mock.failures.append(f"mock error on {self.command} {self.path}: {exc!r}")
                status, kind, data = 500, "application/json", b'{"error": {"message": "mock error"}}'
            self.send_response(status)
            self.send_header("content-type", kind)
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = do_PUT = do_DELETE = _serve

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            pass

    return Handler
