"""Bad input: each leaves a diagnostic, loses nothing else, and a valid update still applies after it."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from acp_notebook.protocol import Notification, PermissionRequest, Request, Response, SessionState, parse_line
from acp_notebook.protocol.jsonrpc import INTERNAL_ERROR, INVALID_REQUEST, PARSE_ERROR
from acp_notebook.protocol.patch import cancel_supported

from .support import b64, codes, item, tupd, upd

GOOD_TC = {
    "toolCallId": "c1",
    "title": "Run tests",
    "name": "bash",
    "kind": "execute",
    "status": "in_progress",
    "content": [item("collecting"), {"type": "terminal", "terminalId": "t1"}],
    "locations": [{"path": "/repo/a.py", "line": 1}],
    "rawInput": {"command": "pytest"},
    "capabilities": {"cancel": {}},
    "_meta": {"trace": "t1"},
}
GOOD_TERM = {
    "terminalId": "t1",
    "command": "pytest",
    "cwd": "/repo",
    "size": {"cols": 80, "rows": 24},
    "_meta": {"k": 1},
}
OPTIONS = [{"optionId": "allow", "name": "Allow", "kind": "allow_once"}]


def seeded() -> SessionState:
    """A state with one of everything, to check that bad input loses none of it."""
    state = SessionState()
    state.apply({"sessionUpdate": "tool_call_update", **GOOD_TC})
    state.apply({"sessionUpdate": "terminal_update", **GOOD_TERM, "output": {"data": b64("hello ")}})
    state.apply(
        {"sessionUpdate": "agent_message_chunk", "messageId": "m1", "content": {"type": "text", "text": "hi"}}
    )
    state.apply({"sessionUpdate": "plan_update", "plan": {"type": "items", "planId": "p1", "entries": []}})
    state.apply({"sessionUpdate": "state_update", "state": "running"})
    state.apply({"sessionUpdate": "available_commands_update", "availableCommands": []})
    state.apply({"sessionUpdate": "current_mode_update", "currentModeId": "code"})
    assert codes(state) == []
    return state


def everything(state: SessionState) -> dict[str, Any]:
    """All state except diagnostics, as plain data."""
    return {
        "tool_calls": {k: v.to_dict() for k, v in state.tool_calls.items()},
        "terminals": {k: v.to_dict() for k, v in state.terminals.items()},
        "text": {k: v.text for k, v in state.terminals.items()},
        "messages": {k: v.to_dict() for k, v in state.messages.items()},
        "plans": {k: v.to_dict() for k, v in state.plans.items()},
        "run_state": (state.run_state, state.stop_reason),
        "session": (
            state.available_commands,
            state.config_options,
            state.current_mode_id,
            state.session_info,
        ),
        "permissions": list(state.permissions),
        "other": list(state.other_updates),
    }


def still_works(state: SessionState) -> None:
    """A valid update after the bad input applies normally."""
    state.apply(upd("c1", status="completed"))
    state.apply({"sessionUpdate": "terminal_output_chunk", "terminalId": "t1", "data": b64("world")})
    assert state.tool_calls["c1"].status == "completed"
    assert state.terminals["t1"].output.endswith(b"world")
    state.apply(upd("fresh", title="Fresh"))
    assert state.tool_calls["fresh"].title == "Fresh"


def check_rejected(update: Any, code: str) -> SessionState:
    """``update`` is rejected whole: a diagnostic, nothing else changes, the session goes on."""
    state = seeded()
    before = everything(state)
    state.apply(update)
    assert code in codes(state)
    assert everything(state) == before
    still_works(state)
    return state


# -- lines: JSON and JSON-RPC framing -------------------------------------------------------------
@pytest.mark.parametrize(
    "line",
    [
        '{"jsonrpc": "2.0", "method": ',
        "not json at all",
        "{'single': 'quotes'}",
        '{"a": 1}}',
        b"\xff\xfe{\x00",
    ],
    ids=["truncated", "text", "single-quotes", "trailing", "binary"],
)
def test_line_not_json(line: str | bytes) -> None:
    parsed = parse_line(line)
    assert parsed.messages == []
    expected = ["invalid-utf8", "invalid-json"] if isinstance(line, bytes) else ["invalid-json"]
    assert [d.code for d in parsed.diagnostics] == expected
    assert parsed.replies == []


@pytest.mark.parametrize("line", ["42", '"session/update"', "null", "true", "3.5"])
def test_line_not_object_or_array(line: str) -> None:
    parsed = parse_line(line)
    assert parsed.messages == []
    assert [d.code for d in parsed.diagnostics] == ["invalid-jsonrpc"]


@pytest.mark.parametrize(
    "obj",
    [
        {"method": "session/update", "params": {}},
        {"jsonrpc": "1.0", "method": "session/update", "params": {}},
        {"jsonrpc": 2.0, "method": "session/update"},
        {"jsonrpc": "2.0"},
        {"jsonrpc": "2.0", "method": 5},
        {"id": 3, "level": "info", "msg": "a JSON log line"},
    ],
    ids=["no-version", "version-1.0", "version-number", "empty", "method-number", "log-line"],
)
def test_line_not_jsonrpc_and_not_a_request(obj: dict[str, Any]) -> None:
    parsed = parse_line(json.dumps(obj))
    assert parsed.messages == []
    assert len(parsed.diagnostics) == 1
    assert parsed.replies == []  # no id: nobody is waiting, and a stray line gets no answer


@pytest.mark.parametrize(
    ("obj", "reply_id"),
    [
        ({"jsonrpc": "2.0", "id": {"a": 1}, "method": "session/request_permission"}, None),
        ({"jsonrpc": "2.0", "id": True, "method": "x"}, None),
        ({"jsonrpc": "2.0", "id": 1.5, "method": "x"}, None),
        ({"id": 7, "method": "x"}, 7),
        ({"jsonrpc": "1.0", "id": "a", "method": "x"}, "a"),
        ({"jsonrpc": "2.0", "id": 8, "method": 5}, 8),
    ],
    ids=["id-object", "id-bool", "id-fraction", "no-version", "version-1.0", "method-number"],
)
def test_invalid_request_is_answered(obj: dict[str, Any], reply_id: Any) -> None:
    parsed = parse_line(json.dumps(obj))
    assert parsed.messages == []
    assert [d.code for d in parsed.diagnostics] == ["invalid-request"]
    assert parsed.replies == [Response(reply_id, error=parsed.replies[0].error)]
    assert parsed.replies[0].error.code == INVALID_REQUEST


@pytest.mark.parametrize(
    "obj",
    [
        {"jsonrpc": "2.0", "id": 1},
        {"jsonrpc": "2.0", "id": 1, "error": "oops"},
        {"jsonrpc": "2.0", "id": 1, "error": {"message": "no code"}},
        {"jsonrpc": "2.0", "id": 1, "result": {}, "error": {"code": 1, "message": "both"}},
    ],
    ids=["response-no-result", "error-string", "error-no-code", "both"],
)
def test_malformed_response_still_settles(obj: dict[str, Any]) -> None:
    parsed = parse_line(json.dumps(obj))
    (response,) = parsed.messages
    assert isinstance(response, Response) and response.id == 1
    assert response.error is not None and response.error.code == INTERNAL_ERROR
    assert response.error.message.startswith("malformed")
    assert [d.code for d in parsed.diagnostics] == ["malformed-response"]
    assert parsed.replies == []  # a response is never answered


@pytest.mark.parametrize("line", ["", "   ", "\n", "\r\n"])
def test_blank_line_is_nothing(line: str) -> None:
    parsed = parse_line(line)
    assert parsed.messages == [] and parsed.replies == []


def test_valid_line_with_newline_and_bytes() -> None:
    obj = {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s", "update": {"x": "é"}}}
    for line in (json.dumps(obj) + "\n", json.dumps(obj, ensure_ascii=False).encode("utf-8") + b"\r\n"):
        parsed = parse_line(line)
        assert parsed.messages == [Notification("session/update", obj["params"])]
        assert parsed.diagnostics == []


def test_batch_with_invalid_entries() -> None:
    note = {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s", "update": {}}}
    request = {"jsonrpc": "2.0", "id": 1, "method": "session/request_permission", "params": {}}
    response = {"jsonrpc": "2.0", "id": 2, "result": {}}
    invalid = [
        {"jsonrpc": "1.0", "id": 3, "method": "x"},
        7,
        {"jsonrpc": "2.0", "id": True, "method": "x"},
        {"foo": "boo"},
        "text",
    ]
    parsed = parse_line(json.dumps([note, invalid[0], request, invalid[1], response, *invalid[2:]]))
    assert parsed.messages == [
        Notification("session/update", note["params"]),
        Request(1, "session/request_permission", {}),
        Response(2, {}),
    ]
    # v2 transports: each invalid entry gets its own Invalid Request reply, with id null unless
    # the entry is a request whose id is valid; valid notifications (and requests, which are
    # dispatched) get none from the parser
    assert parsed.batch
    assert [reply.id for reply in parsed.replies] == [3, None, None, None, None]
    for reply in parsed.replies:
        assert reply.error is not None and reply.error.code == INVALID_REQUEST
    assert len(parsed.diagnostics) == len(invalid)


def test_batch_of_notifications_gets_no_reply() -> None:
    note = {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s", "update": {}}}
    parsed = parse_line(json.dumps([note, note, note]))
    assert len(parsed.messages) == 3
    assert parsed.replies == [] and parsed.diagnostics == []


def test_empty_batch_gets_one_invalid_request_reply() -> None:
    parsed = parse_line("[]")
    assert parsed.messages == []
    assert len(parsed.replies) == 1
    assert parsed.replies[0].id is None and parsed.replies[0].error.code == INVALID_REQUEST
    assert parsed.diagnostics


def test_batch_that_is_invalid_json_gets_one_parse_error_reply() -> None:
    """v2 transports: "If the batch itself is invalid JSON, return a single Parse error response"."""
    parsed = parse_line('[{"jsonrpc": "2.0", "method": "session/update", "params": {}}, {"jsonrpc"')
    assert parsed.messages == []
    assert [d.code for d in parsed.diagnostics] == ["invalid-json"]
    assert len(parsed.replies) == 1
    assert parsed.replies[0].id is None and parsed.replies[0].error.code == PARSE_ERROR


def test_bad_lines_then_good_line_through_the_full_path() -> None:
    state = seeded()
    before = everything(state)
    for line in ["{oops", "[1, 2]", '{"jsonrpc": "2.0", "method": 1}', "[]"]:
        for msg in parse_line(line).messages:
            state.apply(msg.params["update"])
    assert everything(state) == before
    good = {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": "s", "update": upd(title="New")},
    }
    for msg in parse_line(json.dumps(good)).messages:
        state.apply(msg.params["update"])
    assert state.tool_calls["c1"].title == "New"


# -- updates rejected whole -------------------------------------------------------------------------
@pytest.mark.parametrize("update", [None, 5, "tool_call_update", [], [upd(title="X")], 1.5, True])
def test_update_not_an_object(update: Any) -> None:
    check_rejected(update, "malformed-update")


@pytest.mark.parametrize(
    "update",
    [
        {"toolCallId": "c1", "title": "X"},
        {"sessionUpdate": None, "toolCallId": "c1", "title": "X"},
        {"sessionUpdate": 5, "toolCallId": "c1", "title": "X"},
        {"sessionUpdate": ["tool_call_update"], "toolCallId": "c1", "title": "X"},
    ],
    ids=["missing", "null", "number", "array"],
)
def test_update_without_string_session_update(update: dict[str, Any]) -> None:
    check_rejected(update, "malformed-update")


@pytest.mark.parametrize(
    "update",
    [
        {"sessionUpdate": "tool_call_update", "title": "X", "status": "completed"},
        upd(None, title="X"),
        upd(5, title="X"),
        upd(["c1"], title="X"),
        {"sessionUpdate": "tool_call", "title": "X"},
        {"sessionUpdate": "tool_call_content_chunk", "content": item("x")},
        {"sessionUpdate": "tool_call_content_chunk", "toolCallId": "c1"},
        {"sessionUpdate": "terminal_update", "command": "rm -rf /"},
        tupd(7, command="x"),
        {"sessionUpdate": "terminal_output_chunk", "data": b64("x")},
        {"sessionUpdate": "state_update"},
        {"sessionUpdate": "state_update", "state": 5},
        {"sessionUpdate": "plan_update"},
        {"sessionUpdate": "plan_update", "plan": {"type": "items", "entries": []}},
        {"sessionUpdate": "agent_message_chunk", "messageId": "m1"},
        {"sessionUpdate": "agent_message", "content": []},
    ],
    ids=[
        "tool-call-no-id",
        "tool-call-null-id",
        "tool-call-number-id",
        "tool-call-array-id",
        "v1-tool-call-no-id",
        "chunk-no-id",
        "chunk-no-content",
        "terminal-no-id",
        "terminal-number-id",
        "output-chunk-no-id",
        "state-no-state",
        "state-number",
        "plan-no-plan",
        "plan-no-id",
        "message-chunk-no-content",
        "message-no-id",
    ],
)
def test_update_missing_required_field(update: dict[str, Any]) -> None:
    check_rejected(update, "malformed-update")


# -- wrong-typed fields count as omitted --------------------------------------------------------------
WRONG_TC_FIELDS = [
    ("title", 5),
    ("title", ["x"]),
    ("name", 3),
    ("kind", 7),
    ("kind", {"k": 1}),
    ("status", True),
    ("status", 1),
    ("content", "x"),
    ("content", {"type": "content", "content": {"type": "text", "text": "x"}}),
    ("locations", "x"),
    ("locations", {"path": "/a"}),
    ("_meta", 3),
    ("_meta", "x"),
    ("_meta", []),
]
WRONG_IDS = [f"{k}={json.dumps(v)}" for k, v in WRONG_TC_FIELDS]


@pytest.mark.parametrize(("key", "value"), WRONG_TC_FIELDS, ids=WRONG_IDS)
def test_wrong_typed_tool_call_field_counts_as_omitted(key: str, value: Any) -> None:
    state = seeded()
    before = everything(state)
    state.apply(upd("c1", **{key: value}, rawOutput={"done": True}))
    assert "invalid-field" in codes(state)
    after = everything(state)
    after_tc = after["tool_calls"]["c1"]
    assert after_tc.pop("rawOutput") == {"done": True}  # the rest of the update still applies
    assert after_tc == before["tool_calls"]["c1"]
    after["tool_calls"]["c1"] = before["tool_calls"]["c1"]
    assert after == before
    still_works(state)


@pytest.mark.parametrize(("key", "value"), WRONG_TC_FIELDS, ids=WRONG_IDS)
def test_wrong_typed_field_on_new_tool_call_gives_default(key: str, value: Any) -> None:
    state = SessionState()
    state.apply(upd("new", **{key: value}))
    assert "invalid-field" in codes(state)
    assert state.tool_calls["new"].to_dict() == {
        "toolCallId": "new",
        "kind": "other",
        "status": "pending",
        "content": [],
        "locations": [],
    }


WRONG_TERM_FIELDS = [
    ("command", 5),
    ("command", ["pytest"]),
    ("cwd", 5),
    ("exitStatus", "done"),
    ("exitStatus", 0),
    ("capabilities", 1),
    ("_meta", 3),
    ("_meta", "x"),
]


@pytest.mark.parametrize(
    ("key", "value"), WRONG_TERM_FIELDS, ids=[f"{k}={v!r}" for k, v in WRONG_TERM_FIELDS]
)
def test_wrong_typed_terminal_field_counts_as_omitted(key: str, value: Any) -> None:
    state = seeded()
    before = everything(state)
    state.apply(
        tupd("t1", **{key: value}, exitStatus={"exitCode": 0})
        if key != "exitStatus"
        else tupd(**{key: value})
    )
    assert "invalid-field" in codes(state)
    term = state.terminals["t1"].to_dict()
    if key != "exitStatus":
        assert term.pop("exitStatus") == {"exitCode": 0}  # the rest of the update still applies
    assert term == before["terminals"]["t1"]
    still_works(state)


# -- malformed capabilities fall back to no controls (schema ToolCallCapabilities) ----------------------
@pytest.mark.parametrize(
    "bad",
    ["yes", [], 5, True, {"cancel": True}, {"cancel": "yes"}, {"cancel": []}, {"cancel": 1}],
    ids=lambda v: json.dumps(v),
)
def test_malformed_capabilities_mean_no_controls(bad: Any) -> None:
    state = seeded()
    state.apply(tupd("t1", capabilities={"cancel": {}}))
    assert state.tool_calls["c1"].cancellable and state.terminals["t1"].capabilities == {"cancel": {}}
    state.apply(upd("c1", capabilities=bad, title="Still applied"))
    state.apply(tupd("t1", capabilities=bad, command="still applied"))
    assert codes(state) == ["invalid-field", "invalid-field"]
    tc, term = state.tool_calls["c1"], state.terminals["t1"]
    assert not tc.cancellable and not cancel_supported(term.capabilities)
    assert "cancel" not in (tc.to_dict().get("capabilities") or {})
    assert "cancel" not in (term.to_dict().get("capabilities") or {})
    assert (tc.title, term.command) == ("Still applied", "still applied")
    still_works(state)


# -- invalid items are skipped (schema: x-deserialize-skip-invalid-items) --------------------------------
SKIPPED_ITEMS = [
    5,
    "text",
    None,
    [],
    {},
    {"type": 5},
    {"type": "content"},
    {"type": "content", "content": "hi"},
    {"type": "content", "content": {"text": "no type"}},
    {"type": "content", "content": {"type": "text"}},
    {"type": "content", "content": {"type": "text", "text": 5}},
    {"type": "content", "content": {"type": "image", "data": "iVBO"}},
    {"type": "content", "content": {"type": "audio", "mimeType": "audio/wav"}},
    {"type": "content", "content": {"type": "resource_link", "uri": "file:///a"}},
    {"type": "content", "content": {"type": "resource", "resource": {"text": "x"}}},
    {"type": "content", "content": {"type": "resource", "resource": {"uri": "file:///a"}}},
    {"type": "terminal"},
    {"type": "terminal", "terminalId": 7},
    {"type": "diff"},
    {"type": "diff", "changes": "x"},
    {"type": "diff", "path": "/a.py"},
    {"type": "diff", "path": "/a.py", "newText": "x", "oldText": 5},
]
ITEM_IDS = [json.dumps(i)[:48] for i in SKIPPED_ITEMS]


@pytest.mark.parametrize("bad", SKIPPED_ITEMS, ids=ITEM_IDS)
def test_invalid_content_item_skipped_via_update(bad: Any) -> None:
    state = seeded()
    state.apply(upd("c1", content=[item("ok"), bad, item("also ok")]))
    assert codes(state) == ["malformed-content"]
    assert state.diagnostics[0].detail == bad  # the diagnostic keeps what was skipped
    assert state.tool_calls["c1"].to_dict()["content"] == [item("ok"), item("also ok")]
    still_works(state)


@pytest.mark.parametrize("bad", SKIPPED_ITEMS, ids=ITEM_IDS)
def test_invalid_content_item_skipped_via_chunk(bad: Any) -> None:
    state = seeded()
    before = everything(state)
    state.apply({"sessionUpdate": "tool_call_content_chunk", "toolCallId": "c1", "content": bad})
    assert codes(state) == ["malformed-content"]
    assert everything(state) == before  # a chunk whose item is invalid (or null) appends nothing
    still_works(state)


def test_invalid_chunk_for_unknown_tool_call_creates_nothing() -> None:
    state = SessionState()
    state.apply({"sessionUpdate": "tool_call_content_chunk", "toolCallId": "new", "content": None})
    assert state.tool_calls == {} and codes(state) == ["malformed-content"]


OK_CHANGE = {"operation": "modify", "path": "/repo/a.py"}
# (received item, item stored, diagnostic codes): a valid diff keeps its valid changes
REPAIRED_ITEMS = [
    (
        {"type": "diff", "changes": [5, OK_CHANGE]},
        {"type": "diff", "changes": [OK_CHANGE]},
        ["malformed-content"],
    ),
    (
        {"type": "diff", "changes": [{"path": "/a.py"}]},
        {"type": "diff", "changes": []},
        ["malformed-content"],
    ),
    (
        {"type": "diff", "changes": [{"operation": "move", "path": "/b.py"}]},
        {"type": "diff", "changes": []},
        ["malformed-content"],
    ),
    (
        {"type": "diff", "changes": [{"operation": "add", "path": 5}, OK_CHANGE]},
        {"type": "diff", "changes": [OK_CHANGE]},
        ["malformed-content"],
    ),
    (
        {"type": "diff", "changes": [], "patch": {"format": "git_patch"}},
        {"type": "diff", "changes": []},
        ["malformed-content"],
    ),
    (
        {"type": "diff", "changes": [], "patch": "diff --git"},
        {"type": "diff", "changes": []},
        ["malformed-content"],
    ),
    (
        {"type": "diff", "changes": [{"operation": "modify", "path": "relative/x.py"}]},
        {"type": "diff", "changes": [{"operation": "modify", "path": "relative/x.py"}]},
        ["relative-path"],
    ),
    (
        {"type": "diff", "changes": [{"operation": "copy", "path": "/b.py", "oldPath": "a.py"}]},
        {"type": "diff", "changes": [{"operation": "copy", "path": "/b.py", "oldPath": "a.py"}]},
        ["relative-path"],
    ),
    (
        {"type": "diff", "changes": [{"operation": "_acme_touch"}]},
        {"type": "diff", "changes": [{"operation": "_acme_touch"}]},
        [],
    ),
]


@pytest.mark.parametrize(("received", "stored", "expected"), REPAIRED_ITEMS, ids=lambda v: json.dumps(v)[:40])
def test_diff_keeps_its_valid_parts(received: Any, stored: Any, expected: list[str]) -> None:
    for how in ("update", "chunk"):
        state = seeded()
        sent = copy.deepcopy(received)
        if how == "update":
            state.apply(upd("c1", content=[sent]))
            assert state.tool_calls["c1"].content == [stored]
        else:
            state.apply({"sessionUpdate": "tool_call_content_chunk", "toolCallId": "c1", "content": sent})
            assert state.tool_calls["c1"].content[-1] == stored
        assert codes(state) == expected
        assert sent == received  # the received item itself is never changed
        still_works(state)


# (received location, stored location or None when skipped, diagnostic codes)
LOCATIONS = [
    ({"line": 3}, None, ["malformed-location"]),
    ("x", None, ["malformed-location"]),
    (5, None, ["malformed-location"]),
    (None, None, ["malformed-location"]),
    ({"path": 5}, None, ["malformed-location"]),
    ({"path": "/a.py", "line": 0}, {"path": "/a.py"}, ["malformed-location"]),
    ({"path": "/a.py", "line": -1}, {"path": "/a.py"}, ["malformed-location"]),
    ({"path": "/a.py", "line": "3"}, {"path": "/a.py"}, ["malformed-location"]),
    ({"path": "/a.py", "line": True}, {"path": "/a.py"}, ["malformed-location"]),
    ({"path": "/a.py", "line": 2.5}, {"path": "/a.py"}, ["malformed-location"]),
    ({"path": "/a.py", "line": 2**32}, {"path": "/a.py"}, ["malformed-location"]),
    ({"path": "/a.py", "line": None}, {"path": "/a.py", "line": None}, []),
    ({"path": "/a.py", "line": 2**32 - 1}, {"path": "/a.py", "line": 2**32 - 1}, []),
    ({"path": "src/main.py", "line": 1}, {"path": "src/main.py", "line": 1}, ["relative-path"]),
]


@pytest.mark.parametrize(("bad", "stored", "expected"), LOCATIONS, ids=[json.dumps(x[0]) for x in LOCATIONS])
def test_location_fallbacks(bad: Any, stored: Any, expected: list[str]) -> None:
    state = seeded()
    good = {"path": "/repo/b.py", "line": 2}
    state.apply(upd("c1", locations=[good, bad]))
    assert codes(state) == expected
    assert state.tool_calls["c1"].to_dict()["locations"] == [good] + ([] if stored is None else [stored])
    still_works(state)


# -- terminal bytes ----------------------------------------------------------------------------------
BAD_BASE64 = [
    "not base64!",
    "YQ",
    "YQ==YQ==",
    "Y Q==",
    "YQ==\n",
    "aGVsbG8=x",
    5,
    None,
    ["YQ=="],
    {"data": "YQ=="},
]
B64_IDS = [repr(x) for x in BAD_BASE64]


@pytest.mark.parametrize("data", BAD_BASE64, ids=B64_IDS)
def test_invalid_base64_chunk_skipped(data: Any) -> None:
    state = seeded()
    before = everything(state)
    state.apply({"sessionUpdate": "terminal_output_chunk", "terminalId": "t1", "data": data})
    assert codes(state) == ["invalid-base64"]
    assert everything(state) == before
    state.apply({"sessionUpdate": "terminal_output_chunk", "terminalId": "t1", "data": b64("after")})
    assert state.terminals["t1"].output == b"hello after"
    still_works(state)


def test_output_chunk_without_data_skipped() -> None:
    state = seeded()
    before = everything(state)
    state.apply({"sessionUpdate": "terminal_output_chunk", "terminalId": "t1"})
    assert codes(state) == ["invalid-base64"]
    assert everything(state) == before


@pytest.mark.parametrize(
    "output",
    [{"data": "!!"}, {"data": 5}, {"data": None}, {}, {"_meta": {}}, "aGk=", 5, []],
    ids=["bad-chars", "number", "null-data", "empty", "meta-only", "string", "int", "array"],
)
def test_invalid_snapshot_skipped_previous_bytes_intact(output: Any) -> None:
    state = seeded()
    state.apply(tupd("t1", output=output, command="pytest -x"))
    assert codes(state) == ["invalid-base64"]
    term = state.terminals["t1"]
    assert term.output == b"hello "
    assert term.text == "hello "
    assert term.command == "pytest -x"  # the rest of the update still applies
    still_works(state)
    assert term.output == b"hello world"


@pytest.mark.parametrize(
    "size",
    [
        {"cols": 0, "rows": 24},
        {"cols": 80, "rows": -1},
        {"cols": "80", "rows": 24},
        {"cols": 80},
        {"rows": 24},
        {"cols": True, "rows": 24},
        {"cols": 80.5, "rows": 24},
        {"cols": 65536, "rows": 24},
        {"cols": 80, "rows": 70000},
        {"cols": 80, "rows": None},
        {"cols": 80.0, "rows": 24},
        5,
        "80x24",
        [80, 24],
    ],
    ids=lambda s: json.dumps(s),
)
def test_invalid_size_counts_as_omitted(size: Any) -> None:
    state = seeded()
    state.apply(tupd("t1", size=size, command="make"))
    assert codes(state) == ["invalid-field"]
    assert state.terminals["t1"].size == {"cols": 80, "rows": 24}
    assert state.terminals["t1"].command == "make"
    still_works(state)


def test_size_at_the_uint16_limits_is_kept() -> None:
    state = seeded()
    state.apply(tupd("t1", size={"cols": 65535, "rows": 1}))
    assert codes(state) == []
    assert state.terminals["t1"].size == {"cols": 65535, "rows": 1}


INT64 = 2**63
EXIT_CODES = [0, 1, 255, -1, -(2**31), 2**32, INT64 - 1, -INT64]
BAD_EXIT_CODES = [INT64, -INT64 - 1, 1.5, 0.0, True, False, "0", [0], {"c": 0}]


@pytest.mark.parametrize("code", EXIT_CODES)
def test_exit_code_in_int64_range_kept(code: int) -> None:
    """v2 schema: ``exitCode`` is int64 (negative values allowed: signed Windows exit codes)."""
    state = seeded()
    state.apply(tupd("t1", exitStatus={"exitCode": code, "signal": None}))
    assert codes(state) == []
    assert state.terminals["t1"].exit_status == {"exitCode": code, "signal": None}


@pytest.mark.parametrize("code", BAD_EXIT_CODES, ids=repr)
def test_malformed_exit_code_reads_as_unknown(code: Any) -> None:
    state = seeded()
    received = {"exitCode": code, "signal": "SIGTERM", "_meta": {"k": 1}}
    state.apply(tupd("t1", exitStatus=received))
    assert codes(state) == ["invalid-field"]
    term = state.terminals["t1"]
    assert term.exited  # the object's presence still marks the terminal as exited
    assert term.exit_status == {"exitCode": None, "signal": "SIGTERM", "_meta": {"k": 1}}
    assert received["exitCode"] == code  # the received object is not changed
    still_works(state)


@pytest.mark.parametrize("signal", [9, True, ["SIGTERM"], {"name": "SIGTERM"}], ids=repr)
def test_malformed_signal_reads_as_unknown(signal: Any) -> None:
    state = seeded()
    state.apply(tupd("t1", exitStatus={"exitCode": 137, "signal": signal}))
    assert codes(state) == ["invalid-field"]
    assert state.terminals["t1"].exit_status == {"exitCode": 137, "signal": None}


@pytest.mark.parametrize("cwd", ["project/src", "./build", "~/work", "src\\win"])
def test_relative_cwd_diagnosed_and_kept(cwd: str) -> None:
    state = seeded()
    state.apply(tupd("t1", cwd=cwd, command="make"))
    assert codes(state) == ["relative-path"]
    assert state.terminals["t1"].cwd == cwd  # kept as received: nothing is dropped
    assert state.terminals["t1"].command == "make"
    still_works(state)


@pytest.mark.parametrize("cwd", ["/home/user/project", "C:\\work", "D:/repo", "\\\\server\\share"])
def test_absolute_cwd_without_diagnostic(cwd: str) -> None:
    state = seeded()
    state.apply(tupd("t1", cwd=cwd))
    assert codes(state) == []
    assert state.terminals["t1"].cwd == cwd


# -- permission requests -------------------------------------------------------------------------------
GOOD_PERMISSION = {
    "sessionId": "s",
    "title": "Approve?",
    "subject": {"type": "tool_call", "toolCall": {"toolCallId": "c1"}},
    "options": OPTIONS,
}
BAD_PERMISSIONS = {
    "no-title": {k: v for k, v in GOOD_PERMISSION.items() if k != "title"},
    "title-number": {**GOOD_PERMISSION, "title": 5},
    "no-options": {k: v for k, v in GOOD_PERMISSION.items() if k != "options"},
    "options-empty": {**GOOD_PERMISSION, "options": []},
    "options-string": {**GOOD_PERMISSION, "options": "allow"},
    "option-no-kind": {**GOOD_PERMISSION, "options": [*OPTIONS, {"optionId": "x", "name": "X"}]},
    "option-number": {**GOOD_PERMISSION, "options": [*OPTIONS, 5]},
    "subject-number": {**GOOD_PERMISSION, "subject": 5},
    "subject-no-type": {**GOOD_PERMISSION, "subject": {"command": "ls"}},
    "command-no-command": {**GOOD_PERMISSION, "subject": {"type": "command", "cwd": "/p"}},
    "command-relative-cwd": {**GOOD_PERMISSION, "subject": {"type": "command", "command": "ls", "cwd": "p"}},
    "command-no-cwd": {**GOOD_PERMISSION, "subject": {"type": "command", "command": "ls"}},
    "tool-call-no-toolcall": {**GOOD_PERMISSION, "subject": {"type": "tool_call"}},
    "tool-call-no-id": {**GOOD_PERMISSION, "subject": {"type": "tool_call", "toolCall": {"title": "Hijack"}}},
}


@pytest.mark.parametrize("params", list(BAD_PERMISSIONS.values()), ids=list(BAD_PERMISSIONS))
def test_malformed_permission_request(params: dict[str, Any]) -> None:
    state = seeded()
    before = everything(state)
    perm = PermissionRequest("perm_1", 9, params)
    state.add_permission(perm)
    assert "malformed-permission" in codes(state)
    assert state.pending_permissions == [perm]  # recorded, still answerable
    assert isinstance(perm.title, str) and perm.title
    assert perm.raw == params  # kept as received
    if "subject" in params:
        assert perm.subject == params["subject"]
    if isinstance(params.get("options"), list):
        assert perm.options == params["options"]
    after = everything(state)
    assert after.pop("permissions") == ["perm_1"]
    before.pop("permissions")
    assert after == before  # no tool call created or changed by a bad subject
    still_works(state)


def test_malformed_v1_permission_request() -> None:
    state = seeded()
    perm = PermissionRequest("perm_1", 9, {"sessionId": "s", "options": OPTIONS}, version=1)
    state.add_permission(perm)
    assert "malformed-permission" in codes(state)
    assert state.pending_permissions == [perm]
    still_works(state)


def test_answering_unknown_option_keeps_request_pending() -> None:
    perm = PermissionRequest("perm_1", 9, GOOD_PERMISSION)
    with pytest.raises(ValueError):
        perm.select("reject")
    assert perm.pending


# -- other kinds ----------------------------------------------------------------------------------------
def test_message_content_wrong_type_counts_as_omitted() -> None:
    state = seeded()
    state.apply({"sessionUpdate": "agent_message", "messageId": "m1", "content": "hi"})
    assert "invalid-field" in codes(state)
    assert state.messages["m1"].content == [{"type": "text", "text": "hi"}]
    still_works(state)


def test_message_meta_wrong_type_leaves_diagnostic() -> None:
    state = seeded()
    state.apply({"sessionUpdate": "agent_message", "messageId": "m1", "_meta": 3})
    assert "invalid-field" in codes(state)
    assert state.messages["m1"].meta is None


def test_message_id_wrong_type() -> None:
    state = seeded()
    state.apply(
        {"sessionUpdate": "agent_message_chunk", "messageId": 5, "content": {"type": "text", "text": "x"}}
    )
    assert "invalid-field" in codes(state)
    assert state.messages["m1"].content == [{"type": "text", "text": "hi"}]
    assert any(m.text == "x" for m in state.messages.values())  # the chunk is not lost


@pytest.mark.parametrize(
    "bad",
    [
        "bare",
        None,
        5,
        {},
        {"type": 5},
        {"type": "text"},
        {"type": "image", "data": "x"},
        {"type": "resource"},
    ],
    ids=lambda v: json.dumps(v),
)
def test_invalid_message_block_appends_nothing(bad: Any) -> None:
    state = seeded()
    before = everything(state)
    state.apply({"sessionUpdate": "agent_message_chunk", "messageId": "m1", "content": bad})
    state.apply({"sessionUpdate": "agent_message_chunk", "messageId": "m9", "content": bad})
    assert codes(state) == ["malformed-content", "malformed-content"]
    assert everything(state) == before  # not appended, and no message created for it
    state.apply(
        {"sessionUpdate": "agent_message", "messageId": "m1", "content": [bad, {"type": "text", "text": "x"}]}
    )
    assert state.messages["m1"].content == [{"type": "text", "text": "x"}]  # skipped in a whole message


def test_unknown_message_block_type_kept() -> None:
    state = seeded()
    custom = {"type": "_acme_card", "fields": [1]}
    state.apply({"sessionUpdate": "agent_message_chunk", "messageId": "m1", "content": custom})
    assert codes(state) == []
    assert state.messages["m1"].content[-1] == custom


def test_session_list_wrong_type_keeps_previous() -> None:
    state = seeded()
    state.apply({"sessionUpdate": "available_commands_update", "availableCommands": "x"})
    state.apply({"sessionUpdate": "config_option_update", "configOptions": {"a": 1}})
    assert codes(state) == ["invalid-field", "invalid-field"]
    assert (state.available_commands, state.config_options) == ([], [])
    still_works(state)


def test_current_mode_wrong_type_keeps_previous() -> None:
    state = seeded()
    state.apply({"sessionUpdate": "current_mode_update", "currentModeId": 5})
    assert codes(state), "a non-string currentModeId left no diagnostic"
    assert state.current_mode_id == "code"


def test_session_info_meta_wrong_type() -> None:
    state = seeded()
    state.apply({"sessionUpdate": "session_info_update", "title": "T", "_meta": 5})
    assert codes(state) == ["invalid-field"]
    assert state.session_info == {"title": "T"}


def test_v1_plan_entries_not_a_list() -> None:
    state = seeded()
    state.apply({"sessionUpdate": "plan", "entries": "x"})
    assert "invalid-field" in codes(state)
    still_works(state)


def test_diagnostics_keep_the_offending_value() -> None:
    state = SessionState()
    state.apply(upd("c1", title=5))
    (diag,) = state.diagnostics
    assert diag.detail == 5
    assert diag.code in str(diag)


@pytest.mark.parametrize(
    "fields",
    [
        {"used": "10", "size": 100},
        {"used": 10},
        {"used": -1, "size": 100},
        {"used": 1.5, "size": 2},
        {"size": True},
    ],
    ids=lambda f: json.dumps(f),
)
def test_usage_without_integer_used_and_size_is_ignored(fields: dict[str, Any]) -> None:
    state = seeded()
    state.apply({"sessionUpdate": "usage_update", "used": 5, "size": 100})
    state.apply({"sessionUpdate": "usage_update", **fields})
    assert codes(state) == ["malformed-update"]
    assert state.usage == {"used": 5, "size": 100}


def test_wrong_typed_session_info_and_cost_count_as_omitted() -> None:
    state = seeded()
    state.apply({"sessionUpdate": "session_info_update", "title": "T", "updatedAt": "2026-01-01T00:00:00Z"})
    state.apply({"sessionUpdate": "session_info_update", "title": 5, "updatedAt": ["x"]})
    cost = {"amount": 1.0, "currency": "USD"}
    state.apply({"sessionUpdate": "usage_update", "used": 1, "size": 2, "cost": cost})
    state.apply({"sessionUpdate": "usage_update", "used": 2, "size": 2, "cost": "free"})
    assert codes(state) == ["invalid-field"] * 3
    assert state.session_info == {"title": "T", "updatedAt": "2026-01-01T00:00:00Z"}
    assert state.usage == {"used": 2, "size": 2, "cost": cost}


def test_error_stop_details_must_be_an_object() -> None:
    state = seeded()
    state.apply({"sessionUpdate": "state_update", "state": "idle", "stopReason": "error", "error": "boom"})
    assert (state.stop_reason, state.stop_error) == ("error", None)


@pytest.mark.parametrize(
    ("update", "kept"),
    [
        (
            {"sessionUpdate": "available_commands_update", "availableCommands": [{"name": "a"}, 5, {"x": 1}]},
            1,
        ),
        (
            {
                "sessionUpdate": "config_option_update",
                "configOptions": [{"configId": "m", "name": "M"}, [], {}],
            },
            1,
        ),
        ({"sessionUpdate": "config_option_update", "configOptions": [{"id": "v1", "name": "V1"}, "x"]}, 1),
    ],
    ids=["commands", "options", "v1-options"],
)
def test_invalid_session_list_entries_skipped(update: dict[str, Any], kept: int) -> None:
    state = seeded()
    state.apply(update)
    values = state.available_commands if "availableCommands" in update else state.config_options
    assert len(values) == kept
    assert codes(state) and set(codes(state)) == {"invalid-field"}


@pytest.mark.parametrize(
    "entries",
    [[5], [{"content": "a"}], [{"content": 1, "priority": "high", "status": "pending"}], [None, []]],
    ids=lambda e: json.dumps(e),
)
def test_invalid_plan_entries_skipped(entries: list[Any]) -> None:
    good = {"content": "step", "priority": "high", "status": "pending"}
    state = seeded()
    state.apply(
        {
            "sessionUpdate": "plan_update",
            "plan": {"type": "items", "planId": "p1", "entries": [good, *entries]},
        }
    )
    assert set(codes(state)) == {"malformed-plan-entry"}
    assert state.plans["p1"].entries == [good]
    assert state.plans["p1"].to_dict()["entries"] == [good]
    state.apply({"sessionUpdate": "plan", "entries": [*entries, good]})
    assert state.plans["plan"].entries == [good]
