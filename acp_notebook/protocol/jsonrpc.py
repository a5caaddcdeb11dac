"""JSON-RPC 2.0 over newline-delimited UTF-8: message model, parsing and encoding.

Sans-I/O: ``parse_line`` turns one received line into messages plus diagnostics (never raises);
a line that is not JSON is a diagnostic only (agents' stray log lines), unless it looks like a
batch, which gets the transports page's single ``-32700`` reply;
``encode`` turns a message into one line of bytes. Batches (JSON arrays) are accepted as the v2
transports page allows; an invalid entry in a batch gets its own ``-32600`` reply.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from .diagnostics import Diagnostic

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
REQUEST_CANCELLED = -32800
AUTH_REQUIRED = -32000
RESOURCE_NOT_FOUND = -32002

RequestId = int | str | None


@dataclass(frozen=True, slots=True)
class Request:
    """An incoming or outgoing call that expects a response."""

    id: RequestId
    method: str
    params: Any = None


@dataclass(frozen=True, slots=True)
class Notification:
    """A one-way message: never answered."""

    method: str
    params: Any = None


@dataclass(frozen=True, slots=True)
class ErrorObject:
    """The ``error`` member of an error response."""

    code: int
    message: str
    data: Any = None

    def to_dict(self) -> dict[str, Any]:
        """Wire shape of this error."""
        out: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            out["data"] = self.data
        return out


@dataclass(frozen=True, slots=True)
class Response:
    """A reply to a request: exactly one of ``result`` or ``error`` is meaningful."""

    id: RequestId
    result: Any = None
    error: ErrorObject | None = None


Message = Request | Notification | Response


@dataclass(slots=True)
class Parsed:
    """What one received line held: messages, replies owed for bad entries, diagnostics."""

    messages: list[Message] = field(default_factory=list)
    replies: list[Response] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)


def parse_line(line: bytes | str) -> Parsed:
    """Parse one newline-delimited line (without or with its newline)."""
    out = Parsed()
    text = line.decode("utf-8", errors="replace") if isinstance(line, bytes) else line
    text = text.strip()
    if not text:
        return out
    try:
        data = json.loads(text)
    except ValueError as exc:
        out.diagnostics.append(Diagnostic("invalid-json", f"not JSON ({exc})", _clip(text)))
        if text.startswith("["):  # an invalid batch gets one Parse error (v2 transports page)
            out.replies.append(Response(None, error=ErrorObject(PARSE_ERROR, "Parse error")))
        return out
    if isinstance(data, list):
        if not data:
            out.diagnostics.append(Diagnostic("invalid-jsonrpc", "empty batch", text))
            out.replies.append(_invalid_request())
        for entry in data:
            _parse_entry(entry, out, in_batch=True)
    elif isinstance(data, dict):
        _parse_entry(data, out, in_batch=False)
    else:
        out.diagnostics.append(
            Diagnostic("invalid-jsonrpc", "line is neither an object nor an array", _clip(text))
        )
    return out


def parse_message(data: Any) -> Message | None:
    """Classify one decoded JSON value as a message, or None if it is not JSON-RPC 2.0."""
    if not isinstance(data, dict) or data.get("jsonrpc") != "2.0":
        return None
    method = data.get("method")
    if isinstance(method, str):
        if "id" not in data:
            return Notification(method, data.get("params"))
        if not _valid_id(data["id"]):
            return None
        return Request(data["id"], method, data.get("params"))
    if "id" in data and _valid_id(data["id"]):
        if "error" in data:
            return _error_response(data)
        if "result" in data:
            return Response(data["id"], data["result"])
    return None


def _parse_entry(data: Any, out: Parsed, *, in_batch: bool) -> None:
    message = parse_message(data)
    if message is not None:
        out.messages.append(message)
        return
    out.diagnostics.append(Diagnostic("invalid-jsonrpc", "not a JSON-RPC 2.0 message", data))
    if in_batch:  # v2 transports: each invalid batch entry gets its own -32600 with id null
        out.replies.append(_invalid_request())


def _invalid_request() -> Response:
    return Response(None, error=ErrorObject(INVALID_REQUEST, "Invalid Request"))


def _error_response(data: dict[str, Any]) -> Response | None:
    err = data["error"]
    if not isinstance(err, dict) or not isinstance(err.get("code"), int):
        return None
    message = err.get("message")
    return Response(
        data["id"],
        error=ErrorObject(err["code"], message if isinstance(message, str) else "", err.get("data")),
    )


def _valid_id(value: Any) -> bool:
    return value is None or (isinstance(value, int | str) and not isinstance(value, bool))


def to_wire(message: Message) -> dict[str, Any]:
    """The JSON object for a message."""
    if isinstance(message, Request):
        out: dict[str, Any] = {"jsonrpc": "2.0", "id": message.id, "method": message.method}
        if message.params is not None:
            out["params"] = message.params
        return out
    if isinstance(message, Notification):
        out = {"jsonrpc": "2.0", "method": message.method}
        if message.params is not None:
            out["params"] = message.params
        return out
    if message.error is not None:
        return {"jsonrpc": "2.0", "id": message.id, "error": message.error.to_dict()}
    return {"jsonrpc": "2.0", "id": message.id, "result": message.result}


def encode(message: Message | list[Message]) -> bytes:
    """One line of UTF-8 JSON, newline-terminated (a list encodes as a batch)."""
    obj: Any = [to_wire(m) for m in message] if isinstance(message, list) else to_wire(message)
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"


def _clip(text: str, limit: int = 500) -> str:
    return text if len(text) <= limit else text[:limit] + "…"
