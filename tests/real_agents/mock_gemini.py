"""A local, scripted mock of the Gemini API (the Developer API ``@google/genai`` speaks), for gemini-cli.

``MockGemini(turns)`` serves HTTP on 127.0.0.1 (a random port) from a thread; ``configure(home,
mock)`` points a gemini-cli run at it: ``GOOGLE_GEMINI_BASE_URL`` + ``GEMINI_API_KEY`` and a
``~/.gemini/settings.json`` selecting API-key auth with telemetry, usage statistics, update
checks and IDE integration off.

``POST /v1beta/models/{model}:streamGenerateContent?alt=sse`` is a model turn: it gets the next
``Turn`` of the script as server-sent events (``data: {GenerateContentResponse}`` chunks whose
candidate content parts are ``text`` — split over a few chunks — or ``functionCall {name, args}``;
``finishReason: STOP`` and ``usageMetadata`` on the last). The script is honest: each turn says
what the request must show (``user_said(marker)``, ``answered(tool, containing)``); a request
that does not show it, or comes after the script ran out, gets HTTP 400 and is recorded in
``mismatches``. Side calls are answered by shape: ``:generateContent`` (gemini-cli's utility
calls, e.g. the model router's complexity classifier: a value of the JSON schema it asks for),
``:countTokens``, ``:embedContent``, the model listing, the Code Assist calls
(``:loadCodeAssist``...); anything else a 404 in the API's error shape.

Every request is logged (``requests``): method, path, query, headers (the key replaced by
whether it matched), JSON body, and what answered it. ``history_problems`` lists, per model
turn, the functionCalls the history left without a functionResponse (the real API rejects such
a history).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from tests.real_agents.harness import LocalServer

API_KEY = "test-key"
SECRET_HEADERS = frozenset({"x-goog-api-key", "authorization", "cookie", "proxy-authorization"})
Contents = list[dict[str, Any]]
Predicate = Callable[[Contents], bool]
SETTINGS: dict[str, Any] = {
    "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": False}},
    "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
    "privacy": {"usageStatisticsEnabled": False},
    "telemetry": {"enabled": False},
    "ide": {"enabled": False},
}


def configure(home: Path, mock: MockGemini | None = None, key: bool = True) -> dict[str, str]:
    """Write gemini-cli's user settings under ``home``; the env pointing it at ``mock`` (with a key)."""
    (home / ".gemini").mkdir(parents=True, exist_ok=True)
    (home / ".gemini" / "settings.json").write_text(json.dumps(SETTINGS, indent=2))
    env = {"GOOGLE_GEMINI_BASE_URL": mock.url} if mock is not None else {}
    return {**env, "GEMINI_API_KEY": API_KEY if key else ""}


# -- what the model says --------------------------------------------------------------------------
def text(value: str) -> dict[str, Any]:
    """A text part."""
    return {"text": value}


def call(name: str, **args: Any) -> dict[str, Any]:
    """A ``functionCall`` part (gemini-cli gives it its call id)."""
    return {"functionCall": {"name": name, "args": args}}


@dataclass
class Turn:
    """One scripted model turn: the parts it streams once a request shows ``expect``."""

    name: str
    expect: Predicate
    parts: list[dict[str, Any]]


# -- reading what gemini sent ----------------------------------------------------------------------
def last_user_parts(contents: Contents) -> list[dict[str, Any]]:
    """The parts of the last content (a ``user`` one: the prompt, or the turn's tool results)."""
    last = contents[-1] if contents else {}
    return list(last.get("parts") or []) if last.get("role") == "user" else []


def function_responses(contents: Contents, name: str | None = None) -> list[dict[str, Any]]:
    """The ``functionResponse`` objects of the last user content (of tool ``name``, if given)."""
    found = [p["functionResponse"] for p in last_user_parts(contents) if "functionResponse" in p]
    return [r for r in found if name is None or r.get("name") == name]


def response_text(response: dict[str, Any]) -> str:
    """A functionResponse's payload as text (its ``output`` or ``error``, else the JSON)."""
    payload = response.get("response")
    if isinstance(payload, dict):
        for key in ("output", "error"):
            if isinstance(payload.get(key), str):
                return payload[key]
    return json.dumps(payload, ensure_ascii=False)


def user_said(marker: str) -> Predicate:
    """The last user content is a prompt whose text contains ``marker``."""
    return lambda contents: any(marker in p.get("text", "") for p in last_user_parts(contents))


def answered(name: str, containing: str = "") -> Predicate:
    """The last user content carries the functionResponse of ``name``, its text containing ``containing``."""
    return lambda contents: any(containing in response_text(r) for r in function_responses(contents, name))


def unanswered_calls(contents: Contents) -> list[dict[str, Any]]:
    """The functionCalls of model contents that the next content does not answer (by id or name)."""
    problems = []
    for index, content in enumerate(contents):
        calls = [p["functionCall"] for p in content.get("parts") or [] if "functionCall" in p]
        after = contents[index + 1] if index + 1 < len(contents) else {}
        answers = [p["functionResponse"] for p in after.get("parts") or [] if "functionResponse" in p]
        keys = {(a.get("id"), a.get("name")) for a in answers}
        problems += [c for c in calls if (c.get("id"), c.get("name")) not in keys]
    return problems


@dataclass
class Logged:
    """One request as the mock received it, and what answered it."""

    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: Any
    answered: str = ""

    @property
    def action(self) -> str:
        """The ``:verb`` of a models call (``streamGenerateContent``, ``countTokens``...), else ''."""
        last = self.path.rsplit("/", 1)[-1]
        return last.split(":", 1)[1] if ":" in last else ""

    @property
    def contents(self) -> Contents:
        """The conversation sent to the model."""
        return (self.body.get("contents") if isinstance(self.body, dict) else None) or []


# -- the server ------------------------------------------------------------------------------------
@dataclass
class MockGemini:
    """The mock API server; a context manager (``start``/``stop``)."""

    script: list[Turn] = field(default_factory=list)
    model: str = "gemini-2.5-pro"

    def __post_init__(self) -> None:
        self.requests: list[Logged] = []
        self.mismatches: list[str] = []
        self._next = 0
        self._lock = threading.Lock()
        self._http = LocalServer(_handler(self), "mock-gemini")

    def __enter__(self) -> MockGemini:
        self._http.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._http.stop()

    @property
    def url(self) -> str:
        """The base URL for ``GOOGLE_GEMINI_BASE_URL``."""
        return f"http://127.0.0.1:{self._http.port}"

    def add(self, *turns: Turn) -> None:
        """Append model turns to the script."""
        with self._lock:
            self.script.extend(turns)

    @property
    def unused(self) -> list[str]:
        """The names of the scripted turns no request has reached yet."""
        with self._lock:
            return [t.name for t in self.script[self._next :]]

    def turn_requests(self) -> list[Logged]:
        """The model turns (``streamGenerateContent``), in order."""
        return [r for r in list(self.requests) if r.action == "streamGenerateContent"]

    def answered_by(self, name: str) -> Logged:
        """The request the turn ``name`` answered."""
        return next(r for r in self.turn_requests() if r.answered == name)

    def history_problems(self) -> dict[str, list[dict[str, Any]]]:
        """Per answered model turn, the functionCalls its history left unanswered (none is valid)."""
        found = {r.answered: unanswered_calls(r.contents) for r in self.turn_requests()}
        return {name: calls for name, calls in found.items() if calls}

    def take(self, contents: Contents) -> Turn | None:
        """The next turn, if the request shows what it expects (else recorded in ``mismatches``)."""
        with self._lock:
            if self._next >= len(self.script):
                self.mismatches.append(f"no turn left for: {json.dumps(last_user_parts(contents))[:500]}")
                return None
            turn = self.script[self._next]
            if not turn.expect(contents):
                self.mismatches.append(
                    f"{turn.name}: not shown by {json.dumps(last_user_parts(contents))[:500]}"
                )
                return None
            self._next += 1
            return turn

    def log(self, entry: Logged) -> None:
        """Record one request."""
        with self._lock:
            self.requests.append(entry)

    def candidate(self, parts: list[dict[str, Any]]) -> dict[str, Any]:
        """One ``GenerateContentResponse`` with a single model candidate."""
        content = {"role": "model", "parts": parts}
        return {"candidates": [{"content": content, "index": 0}], "modelVersion": self.model}

    def stream(self, turn: Turn) -> list[dict[str, Any]]:
        """The SSE payloads of a turn: each text part in two chunks, a call whole, then STOP."""
        events = []
        for part in turn.parts:
            pieces = _halves(part["text"]) if "text" in part else [part]
            events += [self.candidate([{"text": p} if isinstance(p, str) else p]) for p in pieces]
        last = events[-1] if events else self.candidate([{"text": ""}])
        last["candidates"][0]["finishReason"] = "STOP"
        last["usageMetadata"] = {"promptTokenCount": 100, "candidatesTokenCount": 10, "totalTokenCount": 110}
        return events or [last]

    def utility(self, body: Any) -> dict[str, Any]:
        """A ``:generateContent`` answer: a value of the requested JSON schema, else a short text."""
        config = (body.get("generationConfig") if isinstance(body, dict) else None) or {}
        if config.get("responseMimeType") == "application/json":
            schema = config.get("responseJsonSchema") or config.get("responseSchema")
            answer = json.dumps(_sample(schema))
        else:
            answer = "Mock reply."
        response = self.candidate([{"text": answer}])
        response["candidates"][0]["finishReason"] = "STOP"
        response["usageMetadata"] = {"promptTokenCount": 10, "candidatesTokenCount": 2, "totalTokenCount": 12}
        return response


def _halves(value: str) -> list[str]:
    middle = len(value) // 2
    return [value[:middle], value[middle:]] if middle else [value]


def _sample(schema: Any) -> Any:
    """A small value of a JSON schema: the first enum value, every property, numbers >= 1."""
    if not isinstance(schema, dict):
        return None
    if schema.get("enum"):
        return schema["enum"][0]
    kind = str(schema.get("type", "object")).lower()
    if kind == "object":
        return {k: _sample(v) for k, v in (schema.get("properties") or {}).items()}
    if kind in ("number", "integer"):
        return schema.get("minimum", 1)  # the router's ``complexity_score`` is 1..100
    return {"string": "mock", "boolean": False, "array": []}.get(kind)


def _error(code: int, status: str, message: str) -> dict[str, Any]:
    return {"error": {"code": code, "message": f"mock gemini: {message}", "status": status}}


SIDE_CALLS: dict[str, Callable[[MockGemini, Any], Any]] = {
    "generateContent": lambda mock, body: mock.utility(body),
    "countTokens": lambda mock, body: {"totalTokens": 100},
    "embedContent": lambda mock, body: {"embedding": {"values": [0.0] * 8}},
    "loadCodeAssist": lambda mock, body: {"currentTier": {"id": "free-tier"}, "allowedTiers": []},
    "onboardUser": lambda mock, body: {"done": True, "response": {}},
    "retrieveUserQuota": lambda mock, body: {"buckets": []},
    "listExperiments": lambda mock, body: {"experimentIds": [], "flags": []},
}


def _handler(mock: MockGemini) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # the mock keeps its own log
            pass

        def do_GET(self) -> None:
            self._serve(None)

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            try:
                self._serve(json.loads(raw) if raw else None)
            except ValueError:
                self._serve(raw.decode("utf-8", "replace"))

        def _serve(self, body: Any) -> None:
            url = urlsplit(self.path)
            headers = {k.lower(): v for k, v in self.headers.items() if k.lower() not in SECRET_HEADERS}
            key = self.headers.get("x-goog-api-key")
            headers["x-goog-api-key"] = "<missing>" if key is None else f"<matches: {key == API_KEY}>"
            entry = Logged(self.command, url.path, parse_qs(url.query), headers, body)
            mock.log(entry)
            if entry.action == "streamGenerateContent":
                turn = mock.take(entry.contents)
                entry.answered = turn.name if turn else "mismatch"
                if turn is None:
                    return self._json(400, _error(400, "INVALID_ARGUMENT", "no scripted turn matches"))
                return self._sse(mock.stream(turn))
            if entry.action in SIDE_CALLS:
                entry.answered = entry.action
                return self._json(200, SIDE_CALLS[entry.action](mock, body))
            if url.path.rstrip("/").endswith("/models"):
                entry.answered = "models"
                model = {"name": f"models/{mock.model}", "supportedGenerationMethods": ["generateContent"]}
                return self._json(200, {"models": [model]})
            entry.answered = "not-found"
            self._json(404, _error(404, "NOT_FOUND", f"no route for {self.command} {url.path}"))

        def _json(self, status: int, payload: Any) -> None:
            self._send(status, "application/json; charset=utf-8", json.dumps(payload).encode())

        def _sse(self, events: list[dict[str, Any]]) -> None:
            data = b"".join(b"data: " + json.dumps(e).encode() + b"\r\n\r\n" for e in events)
            self._send(200, "text/event-stream", data)

        def _send(self, status: int, content_type: str, data: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Handler
