"""An adversarial corpus for the JSON-RPC framing: nothing leaves a peer waiting, nothing raises.

Each case is one received line and what ``parse_line`` must make of it, derived from JSON-RPC 2.0
§4 (request objects, notifications, parameters), §5 (response and error objects, ``id: null``
when the id cannot be detected), §6 (batches), RFC 8259 (what JSON is: no ``NaN``, no raw control
characters, UTF-8), the ACP transports pages (newline-delimited UTF-8, the batch rules) and the
schemas' ``RequestId`` (string or int64; v2: never null) and ``Error`` (integer ``code``, string
``message``). Every case is also checked against the invariants in ``test_invariants``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import pytest

from acp_notebook.protocol import ErrorObject, Notification, Request, Response, encode, parse_line
from acp_notebook.protocol.jsonrpc import INTERNAL_ERROR, INVALID_REQUEST, PARSE_ERROR, encode_batch

IR, PE, IE = INVALID_REQUEST, PARSE_ERROR, INTERNAL_ERROR
INT64_MAX, INT64_MIN = 2**63 - 1, -(2**63)


@dataclass
class Case:
    """One received line and what must come of it (messages as compact tuples)."""

    line: str | bytes
    messages: list[tuple[Any, ...]] = field(default_factory=list)
    replies: list[tuple[Any, int]] = field(default_factory=list)
    codes: list[str] = field(default_factory=list)
    batch: bool = False
    null_ids: bool = True


def j(obj: Any) -> str:
    """A JSON line (compact)."""
    return json.dumps(obj, separators=(",", ":"))


def req(request_id: Any, method: str = "x", **extra: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": method, **extra}


def note(method: str = "session/update", **extra: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": method, **extra}


def res(response_id: Any, **extra: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": response_id, **extra}


def err(response_id: Any, error: Any, **extra: Any) -> dict[str, Any]:
    return res(response_id, error=error, **extra)


def summary(message: Any) -> tuple[Any, ...]:
    """A compact, comparable form of one parsed message."""
    if isinstance(message, Request):
        return ("req", message.id, message.method)
    if isinstance(message, Notification):
        return ("note", message.method)
    if message.error is not None:
        return ("err", message.id, message.error.code)
    return ("ok", message.id)


BAD = "malformed-response"
DEEP = 100_000

CASES: dict[str, Case] = {
    # -- blank lines and lines that are not JSON (RFC 8259; ACP: agents' log lines get no reply) ---------
    "empty": Case(""),
    "spaces": Case("   \t "),
    "crlf": Case("\r\n"),
    "log-line": Case("Starting agent v1.2 ...", codes=["invalid-json"]),
    "log-line-bracket": Case("[INFO] starting", replies=[(None, PE)], codes=["invalid-json"]),
    "truncated-object": Case('{"jsonrpc": "2.0", "method": ', codes=["invalid-json"]),
    "single-quotes": Case("{'jsonrpc': '2.0'}", codes=["invalid-json"]),
    "trailing-brace": Case('{"a": 1}}', codes=["invalid-json"]),
    "two-objects": Case(j(note()) + " " + j(note()), codes=["invalid-json"]),
    "trailing-comma": Case('{"jsonrpc":"2.0","method":"x",}', codes=["invalid-json"]),
    "comment": Case('{"jsonrpc":"2.0","method":"x"} // hi', codes=["invalid-json"]),
    "unquoted-key": Case('{jsonrpc:"2.0",method:"x"}', codes=["invalid-json"]),
    "truncated-batch": Case('[{"jsonrpc":"2.0","method":"x"}', replies=[(None, PE)], codes=["invalid-json"]),
    "open-bracket": Case("[", replies=[(None, PE)], codes=["invalid-json"]),
    "batch-trailing-comma": Case("[1,2,]", replies=[(None, PE)], codes=["invalid-json"]),
    "close-bracket": Case("]", codes=["invalid-json"]),
    "raw-tab-in-string": Case('{"jsonrpc":"2.0","method":"a\tb"}', codes=["invalid-json"]),
    "raw-newline-escape-ok": Case('{"jsonrpc":"2.0","method":"a\\nb"}', messages=[("note", "a\nb")]),
    "raw-nul": Case('{"jsonrpc":"2.0","method":"a\x00"}', codes=["invalid-json"]),
    "lowercase-nan": Case(j(req(1))[:-1] + ',"params":[nan]}', codes=["invalid-json"]),
    "hex-number": Case('{"jsonrpc":"2.0","id":0x10,"method":"x"}', codes=["invalid-json"]),
    "leading-zero": Case('{"jsonrpc":"2.0","id":01,"method":"x"}', codes=["invalid-json"]),
    "huge-int-digits": Case(j(req(1))[:-1] + ',"params":[' + "9" * 5000 + "]}", codes=["invalid-json"]),
    # nested deeper than depth.MAX_DEPTH: the deep part is cut, the rest handled (a request answered)
    "deep-array": Case(
        "[" * DEEP + "]" * DEEP, replies=[(None, IR)], codes=["too-deep", "invalid-jsonrpc"], batch=True
    ),
    "deep-object": Case('{"a":' * DEEP + "1" + "}" * DEEP, codes=["too-deep", "invalid-jsonrpc"]),
    "deep-params": Case(
        j(req(1))[:-1] + ',"params":' + "[" * DEEP + "]" * DEEP + "}", [("req", 1, "x")], codes=["too-deep"]
    ),
    "deep-unclosed": Case("[" * DEEP, replies=[(None, PE)], codes=["invalid-json"]),
    "deep-nan-request": Case(
        j(req(4))[:-1] + ',"params":[NaN,' + "[" * 3000 + "]" * 3000 + "]}",
        replies=[(4, IR)],
        codes=["too-deep", "invalid-json"],
    ),
    # -- NaN and Infinity are not JSON: answered only where someone waits ------------------------------------
    "nan": Case("NaN", codes=["invalid-json"]),
    "infinity": Case("Infinity", codes=["invalid-json"]),
    "minus-infinity": Case("-Infinity", codes=["invalid-json"]),
    "nan-in-request": Case(
        j(req(1))[:-1] + ',"params":{"v":NaN}}', replies=[(1, IR)], codes=["invalid-json"]
    ),
    "inf-in-request": Case(
        j(req("a"))[:-1] + ',"params":{"v":Infinity}}', replies=[("a", IR)], codes=["invalid-json"]
    ),
    "minus-inf-in-request": Case(
        j(req(2))[:-1] + ',"params":[-Infinity]}', replies=[(2, IR)], codes=["invalid-json"]
    ),
    "overflow-in-request": Case(
        j(req(3))[:-1] + ',"params":[1e400]}', replies=[(3, IR)], codes=["invalid-json"]
    ),
    "nan-in-notification": Case(j(note())[:-1] + ',"params":{"v":NaN}}', codes=["invalid-json"]),
    "nan-as-id": Case('{"jsonrpc":"2.0","id":NaN,"method":"x"}', codes=["invalid-json"]),
    "overflow-as-id": Case('{"jsonrpc":"2.0","id":1e400,"method":"x"}', codes=["invalid-json"]),
    "nan-in-null-id-request-v2": Case(
        '{"jsonrpc":"2.0","id":null,"method":"x","params":[NaN]}', codes=["invalid-json"], null_ids=False
    ),
    "nan-in-null-id-request-v1": Case(
        '{"jsonrpc":"2.0","id":null,"method":"x","params":[NaN]}',
        replies=[(None, IR)],
        codes=["invalid-json"],
    ),
    "nan-in-result": Case(
        '{"jsonrpc":"2.0","id":5,"result":{"v":NaN}}', [("err", 5, IE)], codes=["invalid-json"]
    ),
    "nan-as-error-code": Case(
        '{"jsonrpc":"2.0","id":6,"error":{"code":NaN,"message":"x"}}',
        [("err", 6, IE)],
        codes=["invalid-json"],
    ),
    "nan-in-batch": Case(
        "[" + j(req(1))[:-1] + ',"params":[NaN]}]', replies=[(None, PE)], codes=["invalid-json"]
    ),
    "infinity-in-batch-of-notes": Case(
        "[" + j(note()) + "," + j(note())[:-1] + ',"params":[Infinity]}]',
        replies=[(None, PE)],
        codes=["invalid-json"],
    ),
    # -- encodings (ACP: messages MUST be UTF-8) ----------------------------------------------------------
    "utf8-ok": Case(j(note("é/ü/日本")).encode(), messages=[("note", "é/ü/日本")]),
    "utf8-raw": Case(json.dumps(note("é"), ensure_ascii=False).encode(), messages=[("note", "é")]),
    "invalid-utf8-in-string": Case(
        b'{"jsonrpc":"2.0","method":"session/update","params":{"t":"\xff"}}',
        messages=[("note", "session/update")],
        codes=["invalid-utf8"],
    ),
    "invalid-utf8-in-method": Case(
        b'{"jsonrpc":"2.0","method":"a\xfe"}', [("note", "a\ufffd")], codes=["invalid-utf8"]
    ),
    "overlong-utf8": Case(
        b'{"jsonrpc":"2.0","method":"\xc0\xaf"}', [("note", "\ufffd\ufffd")], codes=["invalid-utf8"]
    ),
    "surrogate-bytes": Case(
        b'{"jsonrpc":"2.0","method":"\xed\xa0\x80"}', [("note", "\ufffd" * 3)], codes=["invalid-utf8"]
    ),
    "truncated-utf8": Case(
        b'{"jsonrpc":"2.0","method":"\xe2\x82"}', [("note", "\ufffd")], codes=["invalid-utf8"]
    ),
    "latin1-line": Case(
        '{"jsonrpc":"2.0","method":"café"}'.encode("latin-1"), [("note", "caf\ufffd")], codes=["invalid-utf8"]
    ),
    "utf16-line": Case(j(note()).encode("utf-16"), codes=["invalid-utf8", "invalid-json"]),
    "binary-garbage": Case(b"\x00\x01\x02\xff", codes=["invalid-utf8", "invalid-json"]),
    "bom": Case(
        b"\xef\xbb\xbf" + j(note()).encode(), messages=[("note", "session/update")], codes=["utf8-bom"]
    ),
    "bom-only": Case(b"\xef\xbb\xbf", codes=["utf8-bom"]),
    "lone-surrogate-id": Case(
        '{"jsonrpc":"2.0","id":"\\ud800","method":"x"}', messages=[("req", "\ud800", "x")]
    ),
    "lone-surrogate-method": Case(
        '{"jsonrpc":"2.0","id":1,"method":"\\udfff"}', messages=[("req", 1, "\udfff")]
    ),
    "surrogate-pair-escape": Case('{"jsonrpc":"2.0","method":"\\ud83d\\ude00"}', messages=[("note", "😀")]),
    "escaped-key": Case('{"json\\u0072pc":"2.0","method":"x"}', messages=[("note", "x")]),
    "crlf-ending": Case(j(note()) + "\r\n", messages=[("note", "session/update")]),
    "padded": Case(" \t" + j(note()) + " \t\n", messages=[("note", "session/update")]),
    "u2028-in-string": Case(
        json.dumps(note("a\u2028b"), ensure_ascii=False), messages=[("note", "a\u2028b")]
    ),
    # -- top-level values that are not objects or arrays ---------------------------------------------
    "scalar-int": Case("42", codes=["invalid-jsonrpc"]),
    "scalar-string": Case('"session/update"', codes=["invalid-jsonrpc"]),
    "scalar-null": Case("null", codes=["invalid-jsonrpc"]),
    "scalar-true": Case("true", codes=["invalid-jsonrpc"]),
    "scalar-false": Case("false", codes=["invalid-jsonrpc"]),
    "scalar-float": Case("3.5", codes=["invalid-jsonrpc"]),
    "scalar-negative-zero": Case("-0", codes=["invalid-jsonrpc"]),
    # -- requests (§4) and their ids (schemas' RequestId) ---------------------------------------------
    "request": Case(
        j(req(1, "session/request_permission", params={})), [("req", 1, "session/request_permission")]
    ),
    "request-id-zero": Case(j(req(0)), [("req", 0, "x")]),
    "request-id-negative": Case(j(req(-7)), [("req", -7, "x")]),
    "request-id-int64-max": Case(j(req(INT64_MAX)), [("req", INT64_MAX, "x")]),
    "request-id-int64-min": Case(j(req(INT64_MIN)), [("req", INT64_MIN, "x")]),
    "request-id-over-int64": Case(j(req(INT64_MAX + 1)), replies=[(None, IR)], codes=["invalid-request"]),
    "request-id-under-int64": Case(j(req(INT64_MIN - 1)), replies=[(None, IR)], codes=["invalid-request"]),
    "request-id-huge": Case(j(req(2**70)), replies=[(None, IR)], codes=["invalid-request"]),
    "request-id-string": Case(j(req("abc")), [("req", "abc", "x")]),
    "request-id-empty-string": Case(j(req("")), [("req", "", "x")]),
    "request-id-numeric-string": Case(j(req("1")), [("req", "1", "x")]),
    "request-id-integral-float": Case('{"jsonrpc":"2.0","id":1.0,"method":"x"}', [("req", 1, "x")]),
    "request-id-exponent": Case('{"jsonrpc":"2.0","id":1e2,"method":"x"}', [("req", 100, "x")]),
    "request-id-negative-zero": Case('{"jsonrpc":"2.0","id":-0.0,"method":"x"}', [("req", 0, "x")]),
    "request-id-fraction": Case(j(req(1.5)), replies=[(None, IR)], codes=["invalid-request"]),
    "request-id-small-fraction": Case(j(req(1e-9)), replies=[(None, IR)], codes=["invalid-request"]),
    "request-id-true": Case(j(req(True)), replies=[(None, IR)], codes=["invalid-request"]),
    "request-id-false": Case(j(req(False)), replies=[(None, IR)], codes=["invalid-request"]),
    "request-id-object": Case(j(req({"a": 1})), replies=[(None, IR)], codes=["invalid-request"]),
    "request-id-empty-object": Case(j(req({})), replies=[(None, IR)], codes=["invalid-request"]),
    "request-id-array": Case(j(req([1])), replies=[(None, IR)], codes=["invalid-request"]),
    "request-id-empty-array": Case(j(req([])), replies=[(None, IR)], codes=["invalid-request"]),
    "request-id-null-v1": Case(j(req(None)), [("req", None, "x")]),
    "request-id-null-v2": Case(j(req(None)), replies=[(None, IR)], codes=["invalid-request"], null_ids=False),
    "request-id-string-v2": Case(j(req("s")), [("req", "s", "x")], null_ids=False),
    "request-id-bool-v2": Case(j(req(True)), replies=[(None, IR)], codes=["invalid-request"], null_ids=False),
    "request-no-version": Case(j({"id": 1, "method": "x"}), replies=[(1, IR)], codes=["invalid-request"]),
    "request-version-1.0": Case(
        j({**req(2), "jsonrpc": "1.0"}), replies=[(2, IR)], codes=["invalid-request"]
    ),
    "request-version-number": Case(
        j({**req(3), "jsonrpc": 2.0}), replies=[(3, IR)], codes=["invalid-request"]
    ),
    "request-version-int": Case(j({**req(3), "jsonrpc": 2}), replies=[(3, IR)], codes=["invalid-request"]),
    "request-version-space": Case(
        j({**req(4), "jsonrpc": "2.0 "}), replies=[(4, IR)], codes=["invalid-request"]
    ),
    "request-version-null": Case(
        j({**req(5), "jsonrpc": None}), replies=[(5, IR)], codes=["invalid-request"]
    ),
    "request-version-2": Case(j({**req(5), "jsonrpc": "2"}), replies=[(5, IR)], codes=["invalid-request"]),
    "request-method-number": Case(j(req(6, method=5)), replies=[(6, IR)], codes=["invalid-request"]),
    "request-method-null": Case(j({**req(7), "method": None}), replies=[(7, IR)], codes=["invalid-request"]),
    "request-method-array": Case(
        j({**req(8), "method": ["x"]}), replies=[(8, IR)], codes=["invalid-request"]
    ),
    "request-method-object": Case(j({**req(9), "method": {}}), replies=[(9, IR)], codes=["invalid-request"]),
    "request-method-bool": Case(
        j({**req(10), "method": True}), replies=[(10, IR)], codes=["invalid-request"]
    ),
    "request-method-empty": Case(j(req(11, "")), [("req", 11, "")]),
    "request-method-rpc-reserved": Case(j(req(12, "rpc.discover")), [("req", 12, "rpc.discover")]),
    "request-method-extension": Case(j(req(13, "_acme/ping")), [("req", 13, "_acme/ping")]),
    "request-bad-method-bad-id": Case(
        j({**req(True), "method": 1}), replies=[(None, IR)], codes=["invalid-request"]
    ),
    "request-bad-version-bad-id": Case(
        j({"id": [], "method": "x"}), replies=[(None, IR)], codes=["invalid-request"]
    ),
    "request-params-string": Case(j(req(14, params="bar")), replies=[(14, IR)], codes=["invalid-request"]),
    "request-params-number": Case(j(req(15, params=5)), replies=[(15, IR)], codes=["invalid-request"]),
    "request-params-bool": Case(j(req(16, params=False)), replies=[(16, IR)], codes=["invalid-request"]),
    "request-params-null": Case(j(req(17, params=None)), [("req", 17, "x")]),
    "request-params-array": Case(j(req(18, params=[1, 2])), [("req", 18, "x")]),
    "request-params-object": Case(j(req(19, params={"a": 1})), [("req", 19, "x")]),
    "request-extra-members": Case(j(req(20, extra=1, result=5)), [("req", 20, "x")]),
    "request-duplicate-id": Case('{"jsonrpc":"2.0","id":1,"id":2,"method":"x"}', [("req", 2, "x")]),
    "request-duplicate-version": Case(
        '{"jsonrpc":"1.0","jsonrpc":"2.0","id":1,"method":"x"}', [("req", 1, "x")]
    ),
    "acp-permission-request": Case(
        j(req(0, "session/request_permission", params={"sessionId": "s", "options": []})),
        [("req", 0, "session/request_permission")],
    ),
    "acp-fs-request": Case(
        j(req("r1", "fs/read_text_file", params={"path": "/a"})), [("req", "r1", "fs/read_text_file")]
    ),
    # -- notifications (§4.1): never answered -------------------------------------------------------------
    "notification": Case(j(note(params={"sessionId": "s", "update": {}})), [("note", "session/update")]),
    "notification-no-params": Case(j(note("x")), [("note", "x")]),
    "notification-params-null": Case(j(note("x", params=None)), [("note", "x")]),
    "notification-cancel-request": Case(
        j(note("$/cancel_request", params={"requestId": 1})), [("note", "$/cancel_request")]
    ),
    "notification-no-version": Case(j({"method": "session/update", "params": {}}), codes=["invalid-request"]),
    "notification-version-1.0": Case(j({**note(), "jsonrpc": "1.0"}), codes=["invalid-request"]),
    "notification-method-number": Case(j({"jsonrpc": "2.0", "method": 5}), codes=["invalid-request"]),
    "notification-method-null": Case(j({"jsonrpc": "2.0", "method": None}), codes=["invalid-request"]),
    "notification-params-string": Case(j(note(params="bar")), codes=["invalid-request"]),
    "spec-invalid-request-object": Case(
        j({"jsonrpc": "2.0", "method": 1, "params": "bar"}), codes=["invalid-request"]
    ),
    "empty-object": Case("{}", codes=["invalid-jsonrpc"]),
    "version-only": Case(j({"jsonrpc": "2.0"}), codes=["invalid-jsonrpc"]),
    "foo-boo": Case(j({"foo": "boo"}), codes=["invalid-jsonrpc"]),
    "params-only": Case(j({"jsonrpc": "2.0", "params": {}}), codes=["invalid-jsonrpc"]),
    # -- responses (§5): they settle a waiting request, and are never answered ------------------------------
    "result": Case(j(res(1, result={"ok": True})), [("ok", 1)]),
    "result-null": Case(j(res(1, result=None)), [("ok", 1)]),
    "result-string-id": Case(j(res("q", result=[])), [("ok", "q")]),
    "result-integral-float-id": Case('{"jsonrpc":"2.0","id":3.0,"result":{}}', [("ok", 3)]),
    "result-huge-id": Case(j(res(2**70, result={})), codes=["invalid-jsonrpc"]),
    "result-fraction-id": Case(j(res(1.5, result={})), codes=["invalid-jsonrpc"]),
    "result-bool-id": Case(j(res(True, result={})), codes=["invalid-jsonrpc"]),
    "result-object-id": Case(j(res({}, result={})), codes=["invalid-jsonrpc"]),
    "result-array-id": Case(j(res([1], result={})), codes=["invalid-jsonrpc"]),
    "result-null-id": Case(j(res(None, result={})), [("ok", None)]),
    "result-no-id": Case(j({"jsonrpc": "2.0", "result": {}}), codes=["invalid-jsonrpc"]),
    "result-no-version": Case(j({"id": 1, "result": {}}), [("ok", 1)], codes=["invalid-jsonrpc"]),
    "result-version-1.0": Case(
        j({"jsonrpc": "1.0", "id": 1, "result": {}}), [("ok", 1)], codes=["invalid-jsonrpc"]
    ),
    "json-log-line-with-id": Case(j({"id": 3, "level": "info", "msg": "x"}), codes=["invalid-jsonrpc"]),
    "error": Case(j(err(1, {"code": -32601, "message": "Method not found"})), [("err", 1, -32601)]),
    "error-with-data": Case(
        j(err(1, {"code": -32000, "message": "Auth", "data": {"m": 1}})), [("err", 1, -32000)]
    ),
    "error-data-null": Case(j(err(1, {"code": 5, "message": "x", "data": None})), [("err", 1, 5)]),
    "error-extra-member": Case(j(err(1, {"code": 5, "message": "x", "hint": "y"})), [("err", 1, 5)]),
    "error-positive-code": Case(j(err(2, {"code": 42, "message": "x"})), [("err", 2, 42)]),
    "error-code-integral-float": Case(j(err(2, {"code": -32000.0, "message": "x"})), [("err", 2, -32000)]),
    "error-code-fraction": Case(j(err(2, {"code": -32000.5, "message": "x"})), [("err", 2, IE)], codes=[BAD]),
    "error-code-string": Case(j(err(3, {"code": "-32000", "message": "x"})), [("err", 3, IE)], codes=[BAD]),
    "error-code-true": Case(j(err(3, {"code": True, "message": "x"})), [("err", 3, IE)], codes=[BAD]),
    "error-code-false": Case(j(err(3, {"code": False, "message": "x"})), [("err", 3, IE)], codes=[BAD]),
    "error-code-null": Case(j(err(3, {"code": None, "message": "x"})), [("err", 3, IE)], codes=[BAD]),
    "error-code-missing": Case(j(err(4, {"message": "no code"})), [("err", 4, IE)], codes=[BAD]),
    "error-code-array": Case(j(err(4, {"code": [1], "message": "x"})), [("err", 4, IE)], codes=[BAD]),
    "error-code-object": Case(j(err(4, {"code": {}, "message": "x"})), [("err", 4, IE)], codes=[BAD]),
    "error-message-missing": Case(j(err(5, {"code": 1})), [("err", 5, IE)], codes=[BAD]),
    "error-message-number": Case(j(err(5, {"code": 1, "message": 5})), [("err", 5, IE)], codes=[BAD]),
    "error-message-null": Case(j(err(5, {"code": 1, "message": None})), [("err", 5, IE)], codes=[BAD]),
    "error-message-object": Case(j(err(5, {"code": 1, "message": {}})), [("err", 5, IE)], codes=[BAD]),
    "error-string": Case(j(err(6, "oops")), [("err", 6, IE)], codes=[BAD]),
    "error-number": Case(j(err(6, 500)), [("err", 6, IE)], codes=[BAD]),
    "error-array": Case(j(err(6, [])), [("err", 6, IE)], codes=[BAD]),
    "error-true": Case(j(err(6, True)), [("err", 6, IE)], codes=[BAD]),
    "error-null": Case(j(err(6, None)), [("err", 6, IE)], codes=[BAD]),
    "error-empty-object": Case(j(err(6, {})), [("err", 6, IE)], codes=[BAD]),
    "error-string-id": Case(j(err("s", "oops")), [("err", "s", IE)], codes=[BAD]),
    "error-null-id": Case(j(err(None, {"code": -32700, "message": "Parse error"})), [("err", None, -32700)]),
    "error-null-id-malformed": Case(j(err(None, "oops")), [("err", None, IE)], codes=[BAD]),
    "error-null-id-v2": Case(
        j(err(None, {"code": -32600, "message": "x"})), [("err", None, -32600)], null_ids=False
    ),
    "error-no-id": Case(
        j({"jsonrpc": "2.0", "error": {"code": -32700, "message": "x"}}), [("err", None, -32700)]
    ),
    "error-bool-id": Case(j(err(True, {"code": 1, "message": "x"})), codes=["invalid-jsonrpc"]),
    "error-fraction-id": Case(j(err(0.5, {"code": 1, "message": "x"})), codes=["invalid-jsonrpc"]),
    "error-no-version": Case(
        j({"id": 7, "error": {"code": 1, "message": "x"}}), [("err", 7, 1)], codes=["invalid-jsonrpc"]
    ),
    "error-no-version-malformed": Case(
        j({"id": 7, "error": 5}), [("err", 7, IE)], codes=["invalid-jsonrpc", BAD]
    ),
    "neither-result-nor-error": Case(j(res(8)), [("err", 8, IE)], codes=[BAD]),
    "neither-with-extra": Case(j(res(8, data={})), [("err", 8, IE)], codes=[BAD]),
    "both-result-and-error": Case(
        j(res(9, result={}, error={"code": 1, "message": "x"})), [("err", 9, IE)], codes=[BAD]
    ),
    "both-with-malformed-error": Case(j(res(9, result=1, error="x")), [("err", 9, IE)], codes=[BAD]),
    "result-with-null-error": Case(j(res(10, result={"a": 1}, error=None)), [("ok", 10)]),
    "error-with-null-result": Case(
        j(res(11, result=None, error={"code": 2, "message": "x"})), [("err", 11, 2)]
    ),
    "null-result-null-error": Case(j(res(12, result=None, error=None)), [("ok", 12)]),
    "response-with-null-method": Case(j(res(13, method=None, result={})), [("ok", 13)]),
    "response-with-null-method-bad-error": Case(
        j(res(13, method=None, error=1)), [("err", 13, IE)], codes=[BAD]
    ),
    "id-and-null-method-only": Case(j(res(14, method=None)), replies=[(14, IR)], codes=["invalid-request"]),
    # -- batches (§6, ACP transports) -----------------------------------------------------------------------
    "batch-empty": Case("[]", replies=[(None, IR)], codes=["invalid-jsonrpc"]),
    "batch-empty-spaced": Case("[ \t ]", replies=[(None, IR)], codes=["invalid-jsonrpc"]),
    "batch-one-int": Case("[1]", replies=[(None, IR)], codes=["invalid-jsonrpc"], batch=True),
    "batch-spec-1-2-3": Case("[1,2,3]", replies=[(None, IR)] * 3, codes=["invalid-jsonrpc"] * 3, batch=True),
    "batch-foo-boo": Case(j([{"foo": "boo"}]), replies=[(None, IR)], codes=["invalid-jsonrpc"], batch=True),
    "batch-null-entry": Case("[null]", replies=[(None, IR)], codes=["invalid-jsonrpc"], batch=True),
    "batch-string-entry": Case('["text"]', replies=[(None, IR)], codes=["invalid-jsonrpc"], batch=True),
    "batch-nested-batch": Case(j([[note()]]), replies=[(None, IR)], codes=["invalid-jsonrpc"], batch=True),
    "batch-nested-empty": Case("[[]]", replies=[(None, IR)], codes=["invalid-jsonrpc"], batch=True),
    "batch-notifications": Case(
        j([note(), note("y")]), [("note", "session/update"), ("note", "y")], batch=True
    ),
    "batch-requests": Case(j([req(1), req("b", "y")]), [("req", 1, "x"), ("req", "b", "y")], batch=True),
    "batch-duplicate-ids": Case(j([req(1), req(1, "y")]), [("req", 1, "x"), ("req", 1, "y")], batch=True),
    "batch-spec-mixed": Case(
        j(
            [
                req("1", "sum", params=[1, 2, 4]),
                note("notify_hello", params=[7]),
                req("2", "subtract", params=[42, 23]),
                {"foo": "boo"},
                req("5", "foo.get", params={"name": "myself"}),
                req("9", "get_data"),
            ]
        ),
        [
            ("req", "1", "sum"),
            ("note", "notify_hello"),
            ("req", "2", "subtract"),
            ("req", "5", "foo.get"),
            ("req", "9", "get_data"),
        ],
        replies=[(None, IR)],
        codes=["invalid-jsonrpc"],
        batch=True,
    ),
    "batch-invalid-request-valid-id": Case(
        j([req(1), {**req(2), "jsonrpc": "1.0"}]),
        [("req", 1, "x")],
        [(2, IR)],
        ["invalid-request"],
        batch=True,
    ),
    "batch-invalid-request-bad-id": Case(
        j([req(True)]), replies=[(None, IR)], codes=["invalid-request"], batch=True
    ),
    "batch-invalid-notification": Case(
        j([note(), {"jsonrpc": "1.0", "method": "x"}]),
        [("note", "session/update")],
        [(None, IR)],
        ["invalid-request"],
        batch=True,
    ),
    "batch-notification-bad-params": Case(
        j([note(params=3)]), replies=[(None, IR)], codes=["invalid-request"], batch=True
    ),
    "batch-null-id-v2": Case(
        j([req(None)]), replies=[(None, IR)], codes=["invalid-request"], batch=True, null_ids=False
    ),
    "batch-null-id-v1": Case(j([req(None)]), [("req", None, "x")], batch=True),
    "batch-with-response": Case(
        j([res(1, result={}), note()]), [("ok", 1), ("note", "session/update")], batch=True
    ),
    "batch-with-malformed-response": Case(j([res(2, error="x")]), [("err", 2, IE)], codes=[BAD], batch=True),
    "batch-with-neither-response": Case(j([res(3)]), [("err", 3, IE)], codes=[BAD], batch=True),
    "batch-with-bad-response-id": Case(j([res(True, result=1)]), codes=["invalid-jsonrpc"], batch=True),
    "batch-log-line-entry": Case(j([{"id": 4, "msg": "x"}]), codes=["invalid-jsonrpc"], batch=True),
    "batch-lone-surrogate-id": Case(
        '[{"jsonrpc":"2.0","id":"\\ud800","method":"x"}]', [("req", "\ud800", "x")], batch=True
    ),
    "batch-invalid-utf8": Case(
        b"[" + j(note()).encode()[:-1] + b',"params":{"t":"\xff"}}]',
        [("note", "session/update")],
        codes=["invalid-utf8"],
        batch=True,
    ),
    "batch-many-invalid": Case(
        j([1, "a", None, True, {}, [], {"jsonrpc": "2.0"}]),
        replies=[(None, IR)] * 7,
        codes=["invalid-jsonrpc"] * 7,
        batch=True,
    ),
    "batch-large": Case(j([note()] * 1000), [("note", "session/update")] * 1000, batch=True),
}


@pytest.mark.parametrize("name", list(CASES))
def test_corpus(name: str) -> None:
    case = CASES[name]
    parsed = parse_line(case.line, null_ids=case.null_ids)
    assert [summary(m) for m in parsed.messages] == case.messages
    assert [(r.id, r.error.code if r.error else None) for r in parsed.replies] == case.replies
    assert [d.code for d in parsed.diagnostics] == case.codes
    assert parsed.batch is case.batch


@pytest.mark.parametrize("name", list(CASES))
def test_invariants(name: str) -> None:
    """Whatever the line: replies are errors that encode and re-parse, and settle what they name."""
    case = CASES[name]
    parsed = parse_line(case.line, null_ids=case.null_ids)
    for reply in parsed.replies:
        assert reply.error is not None and reply.result is None  # the parser never replies a result
        assert reply.id is None or (isinstance(reply.id, int | str) and not isinstance(reply.id, bool))
        (echo,) = parse_line(encode(reply)).messages
        assert echo == reply
    if parsed.batch and parsed.replies:
        line = encode_batch(parsed.replies)
        assert line.endswith(b"\n") and line.count(b"\n") == 1
        assert [m.id for m in parse_line(line).messages] == [r.id for r in parsed.replies]
    for message in parsed.messages:
        if isinstance(message, Response):
            assert (message.error is None) or message.result is None
            if message.error is not None and message.error.code == INTERNAL_ERROR:
                assert message.error.message.startswith("malformed")
                assert "received" in message.error.data
        encode(message)  # anything parsed can be sent back (lone surrogates included)
    for diagnostic in parsed.diagnostics:
        assert str(diagnostic)


def test_corpus_size() -> None:
    assert len(CASES) >= 150


# -- encoding: any id can be echoed; what JSON cannot carry raises ValueError before anything is sent ----
ECHOED_IDS = [
    "\ud800",
    "\udfff",
    "a\ud800b",
    "\udc00\ud800",
    "é",
    "😀",
    "",
    "line\nbreak",
    "\u2028",
    0,
    -1,
    INT64_MAX,
]


@pytest.mark.parametrize("request_id", ECHOED_IDS, ids=[repr(i) for i in ECHOED_IDS])
def test_any_received_id_is_echoed_exactly(request_id: Any) -> None:
    line = j(req(request_id, "x"))  # ensure_ascii: a lone surrogate travels as \ud800
    (request,) = parse_line(line).messages
    for reply in (Response(request.id, {"ok": True}), Response(request.id, error=ErrorObject(IR, "no"))):
        data = encode(reply)
        assert data.endswith(b"\n") and data.count(b"\n") == 1  # one line, whatever the id holds
        data.decode("utf-8")  # always valid UTF-8 (ASCII JSON when a lone surrogate forbids UTF-8)
        (echo,) = parse_line(data).messages
        assert echo == reply and echo.id == request_id


@pytest.mark.parametrize(
    "message",
    [
        Request("\ud800", "\udfff", {"k\ud800": ["\ud801"]}),
        Notification("session/update", {"t": "x\udc00"}),
        Response(1, error=ErrorObject(-32000, "\ud800", {"d": "\udfff"})),
    ],
    ids=["request", "notification", "error"],
)
def test_lone_surrogates_anywhere_encode_as_ascii_json(message: Any) -> None:
    data = encode(message)
    assert data.isascii() and b"\\ud" in data
    assert parse_line(data).messages == [message]


def circular() -> dict[str, Any]:
    value: dict[str, Any] = {}
    value["me"] = value
    return value


def nested(depth: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(depth):
        value = [value]
    return value


UNENCODABLE = {
    "nan-result": Response(1, float("nan")),
    "inf-result": Response(1, {"v": float("inf")}),
    "minus-inf-params": Request(1, "x", [float("-inf")]),
    "nan-error-data": Response(1, error=ErrorObject(1, "x", float("nan"))),
    "set": Response(1, {1, 2}),
    "bytes": Request(1, "x", {"b": b"\x00"}),
    "object": Notification("x", {"o": object()}),
    "tuple-key": Response(1, {(1, 2): 3}),
    "circular": Response(1, circular()),
    "too-deep": Response(1, nested(DEEP)),
}


@pytest.mark.parametrize("name", list(UNENCODABLE))
def test_unencodable_values_raise_value_error(name: str) -> None:
    with pytest.raises(ValueError):
        encode(UNENCODABLE[name])
    with pytest.raises(ValueError):
        encode_batch([Response(0, {}), UNENCODABLE[name]])


def test_empty_batch_is_never_encoded() -> None:
    with pytest.raises(ValueError):
        encode_batch([])
    with pytest.raises(ValueError):
        encode([])


def test_batch_replies_are_one_array_line() -> None:
    parsed = parse_line(j([1, req(2, "x"), {**req(3), "jsonrpc": "1"}]))
    assert parsed.batch
    line = encode_batch(parsed.replies)
    assert json.loads(line) == [
        {"jsonrpc": "2.0", "id": None, "error": {"code": IR, "message": "Invalid Request"}},
        {"jsonrpc": "2.0", "id": 3, "error": {"code": IR, "message": "Invalid Request"}},
    ]
    assert encode(parsed.replies) == line
