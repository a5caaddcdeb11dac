"""JSON-RPC 2.0 messages: the model, and encoding to one newline-terminated line of bytes.

``encode`` writes UTF-8 JSON; a string holding a lone surrogate (which UTF-8 cannot carry) makes
it fall back to ASCII JSON with ``\\ud800`` escapes, so any received id can be echoed exactly.
It refuses, with ``ValueError`` and before anything is written, what JSON cannot carry (NaN,
Infinity, non-JSON types, cycles) and an empty batch. ``encode_batch`` writes one batch's replies.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .depth import MAX_DEPTH, Decoded
from .patch import json_copy
from .rpccheck import RequestId

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
REQUEST_CANCELLED = -32800
AUTH_REQUIRED = -32000
RESOURCE_NOT_FOUND = -32002


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
        """Wire shape of this error (``data`` deep-copied)."""
        out: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            out["data"] = json_copy(self.data)
        return out


@dataclass(frozen=True, slots=True)
class Response:
    """A reply to a request: exactly one of ``result`` or ``error`` is meaningful."""

    id: RequestId
    result: Any = None
    error: ErrorObject | None = None


Message = Request | Notification | Response


# -- encoding ---------------------------------------------------------------------------------------
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
    """One newline-terminated line of JSON; a list encodes as a batch array.

    UTF-8 first; a string holding a lone surrogate (UTF-8 cannot carry it) falls back to ASCII
    JSON with ``\\ud800`` escapes, so any id can be echoed exactly. Raises ``ValueError`` for
    what JSON cannot carry — NaN or Infinity, a non-JSON type, a cycle — and an empty batch.
    """
    return encode_plain(message)[0]


def encode_plain(message: Message | list[Message]) -> tuple[bytes, Decoded | None]:
    """``encode``'s line, and the object it encodes as ``(value, 0)`` (what reading the line back
    gives, and writes the same JSON), so a recorder need not decode it again; None when a reader
    would read it differently (nested deeper than ``depth.MAX_DEPTH``: it would cut parts)."""
    obj = _wire_object(message)
    try:
        text = json.dumps(obj, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    except (TypeError, RecursionError) as exc:
        raise ValueError(f"cannot encode as JSON: {exc}") from exc
    try:
        line = text.encode("utf-8") + b"\n"
    except UnicodeEncodeError:
        line = json.dumps(obj, allow_nan=False, separators=(",", ":")).encode("ascii") + b"\n"
    shallow = line.count(b"{") + line.count(b"[") <= MAX_DEPTH
    return line, (obj, 0) if shallow else None


def _wire_object(message: Message | list[Message]) -> Any:
    if not isinstance(message, list):
        return to_wire(message)
    if not message:
        raise ValueError("an empty batch is never sent")
    return [to_wire(m) for m in message]


def encode_batch(responses: Sequence[Response]) -> bytes:
    """The replies to one batch, as one array line (``ValueError`` when there are none)."""
    return encode(list(responses))
