"""JSON-RPC 2.0 over newline-delimited UTF-8: message model, parsing and encoding.

Sans-I/O: ``parse_line`` turns one received line into messages, the replies owed and diagnostics;
it never raises, and no request or response is left unsettled (``rpccheck`` has the rules):

- not JSON (``NaN``/``Infinity`` included, invalid UTF-8 after a diagnostic) is a diagnostic only
  — agents' stray log lines get no reply — except that a line starting with ``[`` (a batch) gets
  one ``-32700``, and a request with a valid id (its params holding ``NaN``) gets ``-32600``;
- an invalid request gets ``-32600`` to its id, or to id null when the id itself is invalid
  (JSON-RPC §5); an invalid entry of a batch without an id gets ``-32600`` with id null;
- a response whose ``error`` is malformed, or that has neither or both of ``result`` and
  ``error``, still settles its request: as a ``Response`` with an ``INTERNAL_ERROR`` error;
- nothing replies to a response or to a notification, and no parser reply is ever a result.

Batches (JSON arrays, v2 transports page) set ``Parsed.batch``: their replies go out together,
as one array (``encode_batch``). The message model and ``encode`` live in ``rpcmessages``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .depth import Decoded
from .diagnostics import Diagnostic
from .patch import type_name
from .rpccheck import RequestId, clip, error_problem, load_json, read_id, request_problem
from .rpcmessages import (
    AUTH_REQUIRED,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    REQUEST_CANCELLED,
    RESOURCE_NOT_FOUND,
    ErrorObject,
    Message,
    Notification,
    Request,
    Response,
    encode,
    encode_batch,
    encode_plain,
    to_wire,
)

__all__ = [
    "AUTH_REQUIRED",
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "METHOD_NOT_FOUND",
    "PARSE_ERROR",
    "REQUEST_CANCELLED",
    "RESOURCE_NOT_FOUND",
    "ErrorObject",
    "Message",
    "Notification",
    "Parsed",
    "Request",
    "RequestId",
    "Response",
    "encode",
    "encode_batch",
    "encode_plain",
    "parse_line",
    "parse_message",
    "to_wire",
]


@dataclass(slots=True)
class Parsed:
    """What one received line held: messages, replies owed for bad entries, diagnostics.

    ``batch`` is True when the line was a non-empty JSON array: its replies (and the responses
    to its requests) are sent together as one array line. An empty array's single ``-32600``
    is not a batch reply (the transports page: "not a response array"). ``plain`` is the line's
    JSON value and cuts as plain ``json.loads`` reads them (``rpccheck.load_json``), so that a
    recorder need not decode the line again; None when it would read them differently.
    """

    messages: list[Message] = field(default_factory=list)
    replies: list[Response] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    batch: bool = False
    plain: Decoded | None = None


def parse_line(line: bytes | str, *, null_ids: bool = True) -> Parsed:
    """Parse one newline-delimited line (without or with its newline); never raises.

    ``null_ids``: whether a request id may be null (v1: yes; v2's ``RequestId``: never).
    """
    out = Parsed()
    data, problem, text, out.plain = load_json(line, out.diagnostics)
    if problem is not None:
        _not_json(data, problem, text, out, null_ids)
    elif isinstance(data, list):
        out.batch = bool(data)
        if not data:
            out.diagnostics.append(Diagnostic("invalid-jsonrpc", "empty batch", text))
            out.replies.append(_invalid(None))
        for entry in data:
            _parse_entry(entry, out, null_ids, in_batch=True)
    elif isinstance(data, dict):
        _parse_entry(data, out, null_ids, in_batch=False)
    elif text:
        out.diagnostics.append(
            Diagnostic("invalid-jsonrpc", "line is neither an object nor an array", clip(text))
        )
    return out


def parse_message(data: Any, *, null_ids: bool = True) -> Message | None:
    """Classify one decoded JSON value as a message, or None if it is not a valid one."""
    out = Parsed()
    _parse_entry(data, out, null_ids, in_batch=False)
    return out.messages[0] if out.messages else None


def _not_json(data: Any, problem: str, text: str, out: Parsed, null_ids: bool) -> None:
    out.diagnostics.append(Diagnostic("invalid-json", f"not JSON ({problem})", clip(text)))
    if isinstance(data, dict) and "id" in data:
        valid, message_id = read_id(data["id"], null_ids or "method" not in data)
        if valid and "method" in data:  # NaN in a request with a valid id: answer it
            out.replies.append(_invalid(message_id))
        elif valid:  # NaN in a response: settle the request it answers
            out.messages.append(Response(message_id, error=_malformed("malformed response", problem, text)))
    elif text.startswith("["):  # an invalid batch gets one Parse error (v2 transports page)
        out.replies.append(Response(None, error=ErrorObject(PARSE_ERROR, "Parse error")))


def _parse_entry(data: Any, out: Parsed, null_ids: bool, *, in_batch: bool) -> None:
    if isinstance(data, dict) and "id" not in data and type(data.get("method")) is str:
        params = data.get("params")  # the common case, a well-formed notification, goes first
        if data.get("jsonrpc") == "2.0" and (params is None or type(params) is dict or type(params) is list):
            out.messages.append(Notification(data["method"], params))
            return
    kind = _kind(data)
    if kind == "response":
        _parse_response(data, out)
    elif kind == "request":
        _parse_request(data, out, null_ids, in_batch)
    else:
        what = "an object" if isinstance(data, dict) else type_name(data)
        out.diagnostics.append(Diagnostic("invalid-jsonrpc", f"not a JSON-RPC 2.0 message ({what})", data))
        if in_batch:  # v2 transports: each invalid batch entry gets its own -32600 with id null
            out.replies.append(_invalid(None))


def _kind(data: Any) -> str | None:
    """``request`` (has ``method``), ``response`` (has ``id``, ``result`` or ``error``), or None.

    A null ``method`` next to ``result``/``error`` is a serialised struct's None: a response.
    """
    if not isinstance(data, dict):
        return None
    answers = "result" in data or "error" in data
    if "method" in data:
        return "response" if data["method"] is None and answers else "request"
    return "response" if answers or "id" in data else None


def _parse_request(data: dict[str, Any], out: Parsed, null_ids: bool, in_batch: bool) -> None:
    has_id = "id" in data
    valid_id, request_id = read_id(data["id"], null_ids) if has_id else (True, None)
    problem = request_problem(data)
    if problem is None and not valid_id:
        problem = f"invalid request id {data['id']!r}"
    if problem is None:
        params = data.get("params")
        out.messages.append(
            Request(request_id, data["method"], params) if has_id else Notification(data["method"], params)
        )
        return
    out.diagnostics.append(Diagnostic("invalid-request", problem, data))
    if has_id or in_batch:  # a lone invalid notification is not answered
        out.replies.append(_invalid(request_id))


def _parse_response(data: dict[str, Any], out: Parsed) -> None:
    valid_id, response_id = read_id(data.get("id"), True)
    if not valid_id:
        out.diagnostics.append(Diagnostic("invalid-jsonrpc", f"response id {data['id']!r} is invalid", data))
        return
    has_result, has_error = "result" in data, "error" in data
    if has_result and has_error and (data["error"] is None or data["result"] is None):
        has_error = data["error"] is not None  # a null member next to the other counts as absent
        has_result = not has_error
    if data.get("jsonrpc") != "2.0":
        if not (has_result or has_error):  # e.g. a JSON log line with an "id" field
            out.diagnostics.append(Diagnostic("invalid-jsonrpc", "not a JSON-RPC 2.0 message", data))
            return
        out.diagnostics.append(Diagnostic("invalid-jsonrpc", "response without jsonrpc 2.0 (accepted)", data))
    if not has_result or has_error:
        out.messages.append(Response(response_id, error=_error_of(data, has_result, out.diagnostics)))
    elif "id" in data:
        out.messages.append(Response(response_id, data["result"]))
    else:
        out.diagnostics.append(Diagnostic("invalid-jsonrpc", "result without an `id` (ignored)", data))


def _error_of(data: dict[str, Any], has_result: bool, diagnostics: list[Diagnostic]) -> ErrorObject:
    """The error a response settles its request with: its own, or one saying what was wrong."""
    if "error" in data and not has_result:
        why, received, prefix = error_problem(data["error"]), data["error"], "malformed error response"
    else:
        why = "both `result` and `error`" if has_result else "neither `result` nor `error`"
        received, prefix = data, "malformed response"
    if why is None:
        err = data["error"]
        return ErrorObject(int(err["code"]), err["message"], err.get("data"))
    diagnostics.append(Diagnostic("malformed-response", f"{prefix}: {why}", data))
    return _malformed(prefix, why, received)


def _malformed(prefix: str, why: str, received: Any) -> ErrorObject:
    return ErrorObject(INTERNAL_ERROR, f"{prefix}: {why}", {"received": received})


def _invalid(request_id: RequestId) -> Response:
    return Response(request_id, error=ErrorObject(INVALID_REQUEST, "Invalid Request"))
