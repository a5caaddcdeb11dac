"""Direct unit tests of the reducer's rules (the seed, the v2 schema and DESIGN.md's API contract)."""

from __future__ import annotations

from typing import Any

import pytest

from acp_notebook.protocol import Change, PermissionAlreadyAnswered, PermissionRequest, SessionState, Terminal
from acp_notebook.protocol.v1 import normalize_v1_update, unified_patch

from .support import apply_all, b64, codes, item, st, tupd, upd


# -- helpers ------------------------------------------------------------------------------------
def block(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def chunk(tool_call_id: str, content: Any, **extra: Any) -> dict[str, Any]:
    return {
        "sessionUpdate": "tool_call_content_chunk",
        "toolCallId": tool_call_id,
        "content": content,
        **extra,
    }


def tchunk(terminal_id: str, data: bytes | str, **extra: Any) -> dict[str, Any]:
    return {"sessionUpdate": "terminal_output_chunk", "terminalId": terminal_id, "data": b64(data), **extra}


DEFAULT_TC = {"toolCallId": "c1", "kind": "other", "status": "pending", "content": [], "locations": []}

# Every tool-call field: (wire name, a value, another value, the cleared state after null)
FIELDS = [
    ("title", "Read file", "Write file", None),
    ("name", "read_file", "write_file", None),
    ("kind", "read", "edit", "other"),
    ("status", "in_progress", "completed", "pending"),
    ("content", [item("a")], [item("b"), item("c")], []),
    ("locations", [{"path": "/a.py"}], [{"path": "/b.py", "line": 3}], []),
    ("rawInput", {"path": "/a.py", "opts": {"x": 1}}, {"path": "/b.py"}, None),
    ("rawOutput", {"ok": True, "lines": [1, 2]}, "plain text", None),
    ("capabilities", {"cancel": {}}, {}, None),
]
FIELD_IDS = [f[0] for f in FIELDS]


def field_of(state: SessionState, key: str) -> Any:
    """The field as ``to_dict`` shows it (None when absent)."""
    return state.tool_calls["c1"].to_dict().get(key)


# -- tool calls: omit / null / replace ------------------------------------------------------------
def test_new_tool_call_starts_from_defaults() -> None:
    state = apply_all(upd())
    assert state.tool_calls["c1"].to_dict() == DEFAULT_TC
    tc = state.tool_calls["c1"]
    assert (tc.title, tc.kind, tc.status, tc.content, tc.locations) == (None, "other", "pending", [], [])
    assert (tc.raw_input, tc.raw_output, tc.meta) == (None, None, None)
    assert codes(state) == []


@pytest.mark.parametrize(("key", "value", "other", "cleared"), FIELDS, ids=FIELD_IDS)
def test_new_tool_call_null_field_is_default(key: str, value: Any, other: Any, cleared: Any) -> None:
    state = apply_all(upd(**{key: None}))
    assert state.tool_calls["c1"].to_dict() == DEFAULT_TC


@pytest.mark.parametrize(("key", "value", "other", "cleared"), FIELDS, ids=FIELD_IDS)
def test_omitted_field_keeps_value(key: str, value: Any, other: Any, cleared: Any) -> None:
    state = apply_all(upd(**{key: value}), upd(), upd(title="x") if key != "title" else upd(kind="read"))
    assert field_of(state, key) == value


@pytest.mark.parametrize(("key", "value", "other", "cleared"), FIELDS, ids=FIELD_IDS)
def test_null_clears_field(key: str, value: Any, other: Any, cleared: Any) -> None:
    state = apply_all(upd(**{key: value}), upd(**{key: None}))
    data = state.tool_calls["c1"].to_dict()
    if cleared is None:
        assert key not in data  # unset optional fields are absent from the wire shape
    else:
        assert data[key] == cleared


@pytest.mark.parametrize(("key", "value", "other", "cleared"), FIELDS, ids=FIELD_IDS)
def test_value_replaces_field(key: str, value: Any, other: Any, cleared: Any) -> None:
    state = apply_all(upd(**{key: value}), upd(**{key: other}))
    assert field_of(state, key) == other


def test_objects_are_replaced_not_merged() -> None:
    state = apply_all(
        upd(rawInput={"a": 1, "b": 2}, capabilities={"cancel": {}, "_meta": {"x": 1}}),
        upd(rawInput={"c": 3}, capabilities={"_meta": {"y": 2}}),
    )
    tc = state.tool_calls["c1"]
    assert tc.raw_input == {"c": 3}
    assert tc.capabilities == {"_meta": {"y": 2}}


@pytest.mark.parametrize("clear", [[], None], ids=["empty", "null"])
def test_content_and_locations_cleared_by_empty_or_null(clear: Any) -> None:
    state = apply_all(
        upd(content=[item("a"), item("b")], locations=[{"path": "/a"}]),
        chunk("c1", item("c")),
        upd(content=clear, locations=clear),
    )
    assert state.tool_calls["c1"].content == []
    assert state.tool_calls["c1"].locations == []


def test_arrays_replaced_whole_not_appended() -> None:
    state = apply_all(
        upd(content=[item("a"), item("b")], locations=[{"path": "/a"}, {"path": "/b"}]),
        upd(content=[item("c")], locations=[{"path": "/c"}]),
    )
    assert state.tool_calls["c1"].content == [item("c")]
    assert state.tool_calls["c1"].locations == [{"path": "/c"}]


def test_kind_null_resets_to_other_status_to_pending_title_unset() -> None:
    state = apply_all(upd(title="T", kind="search", status="failed"))
    state.apply(upd(kind=None))
    assert state.tool_calls["c1"].kind == "other"
    assert state.tool_calls["c1"].status == "failed"
    state.apply(upd(status=None))
    assert state.tool_calls["c1"].status == "pending"
    assert state.tool_calls["c1"].title == "T"
    state.apply(upd(title=None))
    assert state.tool_calls["c1"].title is None
    assert "title" not in state.tool_calls["c1"].to_dict()


def test_unknown_fields_kept_and_patched_alike() -> None:
    state = apply_all(upd(_acme={"x": 1}, futureField=[1]))
    assert state.tool_calls["c1"].to_dict()["_acme"] == {"x": 1}
    state.apply(upd(_acme=None))
    data = state.tool_calls["c1"].to_dict()
    assert "_acme" not in data
    assert data["futureField"] == [1]


# -- content chunks -----------------------------------------------------------------------------
def test_chunks_append_in_order() -> None:
    state = apply_all(chunk("c1", item("a")), chunk("c1", item("b")), chunk("c1", item("c")))
    assert state.tool_calls["c1"].content == [item("a"), item("b"), item("c")]


def test_chunk_creates_tool_call_with_defaults() -> None:
    state = apply_all(chunk("c1", item("a")))
    assert state.tool_calls["c1"].to_dict() == {**DEFAULT_TC, "content": [item("a")]}


def test_update_replaces_chunked_content_then_chunks_append() -> None:
    state = apply_all(chunk("c1", item("a")), chunk("c1", item("b")), upd(content=[item("C")]))
    assert state.tool_calls["c1"].content == [item("C")]
    state.apply(chunk("c1", item("d")))
    assert state.tool_calls["c1"].content == [item("C"), item("d")]


def test_update_without_content_keeps_chunked_content() -> None:
    state = apply_all(chunk("c1", item("a")), upd(status="in_progress"), chunk("c1", item("b")))
    assert state.tool_calls["c1"].content == [item("a"), item("b")]


def test_chunk_meta_is_chunk_scoped() -> None:
    state = apply_all(upd(_meta={"owner": "agent"}))
    state.apply(chunk("c1", item("x"), _meta={"chunk": 1, "owner": None}))
    state.apply(chunk("c1", item("y"), _meta=None))
    tc = state.tool_calls["c1"]
    assert tc.meta == {"owner": "agent"}
    assert tc.content == [item("x"), item("y")]  # the chunk's _meta is not folded into the item
    state.apply(chunk("c2", item("z"), _meta={"chunk": 2}))
    assert "_meta" not in state.tool_calls["c2"].to_dict()


def test_chunks_for_different_tool_calls_do_not_mix() -> None:
    state = apply_all(chunk("c1", item("a")), chunk("c2", item("b")), chunk("c1", item("c")))
    assert state.tool_calls["c1"].content == [item("a"), item("c")]
    assert state.tool_calls["c2"].content == [item("b")]


# -- _meta ----------------------------------------------------------------------------------------
def test_meta_patches_by_top_level_key() -> None:
    state = apply_all(upd(_meta={"a": 1, "nested": {"x": 1, "y": 2}, "keep": True}))
    state.apply(upd(_meta={"b": 2, "nested": {"z": 3}}))
    assert state.tool_calls["c1"].meta == {"a": 1, "nested": {"z": 3}, "keep": True, "b": 2}
    state.apply(upd(_meta={"a": None, "missing": None}))
    assert state.tool_calls["c1"].meta == {"nested": {"z": 3}, "keep": True, "b": 2}
    state.apply(upd(title="unrelated"))
    assert state.tool_calls["c1"].to_dict()["_meta"] == {"nested": {"z": 3}, "keep": True, "b": 2}


def test_meta_null_clears_and_is_absent() -> None:
    state = apply_all(upd(_meta={"a": 1}), upd(_meta=None))
    assert state.tool_calls["c1"].meta is None
    assert "_meta" not in state.tool_calls["c1"].to_dict()
    state.apply(upd(_meta={"b": 2}))
    assert state.tool_calls["c1"].to_dict()["_meta"] == {"b": 2}


def test_meta_patch_does_not_mutate_earlier_snapshot() -> None:
    state = apply_all(upd(_meta={"a": 1}))
    before = state.tool_calls["c1"].to_dict()
    state.apply(upd(_meta={"b": 2}))
    assert before["_meta"] == {"a": 1}


# -- statuses, kinds, content types ---------------------------------------------------------------
@pytest.mark.parametrize("status", ["pending", "in_progress", "paused", "completed", "failed", "cancelled"])
def test_known_statuses_without_diagnostic(status: str) -> None:
    state = apply_all(upd(status=status))
    assert state.tool_calls["c1"].status == status
    assert codes(state) == []


@pytest.mark.parametrize(
    "kind", ["read", "edit", "delete", "move", "search", "execute", "think", "fetch", "switch_mode", "other"]
)
def test_known_kinds_without_diagnostic(kind: str) -> None:
    state = apply_all(upd(kind=kind))
    assert state.tool_calls["c1"].display_kind == kind
    assert codes(state) == []


def test_custom_status_and_kind_kept_without_diagnostic() -> None:
    state = apply_all(upd(status="_queued", kind="_browser"))
    tc = state.tool_calls["c1"]
    assert (tc.status, tc.kind) == ("_queued", "_browser")
    assert codes(state) == []
    # schema: clients show an unrecognized kind as `other` and an unrecognized status as in progress
    assert tc.display_kind == "other"
    assert tc.phase == "in_progress"
    assert not tc.finished


def test_unknown_status_kept_with_diagnostic() -> None:
    state = apply_all(upd(status="frobnicating"))
    assert state.tool_calls["c1"].status == "frobnicating"
    assert state.tool_calls["c1"].to_dict()["status"] == "frobnicating"
    assert state.tool_calls["c1"].phase == "in_progress"
    assert codes(state) == ["unknown-status"]


def test_unknown_kind_kept_with_diagnostic() -> None:
    state = apply_all(upd(kind="teleport"))
    assert state.tool_calls["c1"].kind == "teleport"
    assert state.tool_calls["c1"].display_kind == "other"
    assert codes(state) == ["unknown-kind"]


@pytest.mark.parametrize("status", ["completed", "failed", "cancelled"])
def test_final_statuses_finish(status: str) -> None:
    state = apply_all(upd(status="in_progress"))
    assert not state.tool_calls["c1"].finished
    state.apply(upd(status=status))
    assert state.tool_calls["c1"].finished


def test_unknown_content_types_kept_verbatim() -> None:
    items = [{"type": "_acme/chart", "spec": {"bars": [1, 2]}}, {"type": "hologram", "frames": 3}]
    state = apply_all(upd(content=items[:1]), chunk("c1", items[1]))
    assert state.tool_calls["c1"].to_dict()["content"] == items
    assert codes(state) == []


def test_content_items_exactly_as_received_in_either_version() -> None:
    v2_diff = {
        "type": "diff",
        "changes": [{"operation": "move", "path": "/b.py", "oldPath": "/a.py", "_meta": {"k": 1}}],
        "patch": None,
    }
    v1_diff = {"type": "diff", "path": "/a.py", "oldText": None, "newText": "x\n"}
    terminal = {"type": "terminal", "terminalId": "t1", "_meta": None}
    state = apply_all(upd(content=[v2_diff, v1_diff, terminal]))
    assert state.tool_calls["c1"].to_dict()["content"] == [v2_diff, v1_diff, terminal]
    assert codes(state) == []


@pytest.mark.parametrize(
    ("capabilities", "cancellable"),
    [({"cancel": {}}, True), ({"cancel": {"_meta": {}}}, True), ({}, False), ({"cancel": None}, False)],
)
def test_cancellable_follows_capabilities(capabilities: dict[str, Any], cancellable: bool) -> None:
    state = apply_all(upd(capabilities=capabilities))
    assert state.tool_calls["c1"].cancellable is cancellable
    state.apply(upd(capabilities=None))
    assert state.tool_calls["c1"].cancellable is False


def test_malformed_cancel_capability_means_unsupported() -> None:
    """Schema (ToolCallCapabilities): a malformed value falls back to no controls."""
    state = apply_all(upd(capabilities={"cancel": 5}))
    assert state.tool_calls["c1"].cancellable is False


# -- to_dict shape --------------------------------------------------------------------------------
def test_tool_call_to_dict_optional_keys_only_while_set() -> None:
    state = apply_all(
        upd(
            title="T",
            name="n",
            rawInput={"i": 1},
            rawOutput={"o": 1},
            capabilities={"cancel": {}},
            _meta={"m": 1},
        )
    )
    assert set(state.tool_calls["c1"].to_dict()) == {
        "toolCallId",
        "kind",
        "status",
        "content",
        "locations",
        "title",
        "name",
        "rawInput",
        "rawOutput",
        "capabilities",
        "_meta",
    }
    state.apply(upd(title=None, name=None, rawInput=None, rawOutput=None, capabilities=None, _meta=None))
    assert set(state.tool_calls["c1"].to_dict()) == {"toolCallId", "kind", "status", "content", "locations"}
    assert "sessionUpdate" not in state.tool_calls["c1"].to_dict()


def test_falsy_values_are_set_not_absent() -> None:
    state = apply_all(upd(title="", rawInput={}, rawOutput=0, _meta={}))
    data = state.tool_calls["c1"].to_dict()
    assert (data["title"], data["rawInput"], data["rawOutput"], data["_meta"]) == ("", {}, 0, {})


def test_to_dict_is_a_copy_of_arrays() -> None:
    state = apply_all(upd(content=[item("a")]))
    data = state.tool_calls["c1"].to_dict()
    data["content"].append(item("b"))
    assert state.tool_calls["c1"].content == [item("a")]


def test_tool_calls_in_first_seen_order() -> None:
    state = apply_all(upd("c3"), chunk("c1", item("x")), upd("c2"), upd("c3", status="completed"))
    assert list(state.tool_calls) == ["c3", "c1", "c2"]


def test_tool_call_attributes() -> None:
    state = apply_all(
        upd(
            title="T",
            kind="read",
            status="in_progress",
            content=[item("a")],
            locations=[{"path": "/a"}],
            rawInput={"i": 1},
            rawOutput={"o": 2},
            _meta={"m": 3},
        )
    )
    tc = state.tool_calls["c1"]
    assert tc.tool_call_id == "c1"
    assert (tc.title, tc.kind, tc.status) == ("T", "read", "in_progress")
    assert (tc.content, tc.locations) == ([item("a")], [{"path": "/a"}])
    assert (tc.raw_input, tc.raw_output, tc.meta) == ({"i": 1}, {"o": 2}, {"m": 3})


def test_duration_from_first_report_to_final_status() -> None:
    clock = iter([10.0, 12.5, 15.0, 20.0])
    state = SessionState(clock=lambda: next(clock))
    state.apply(upd(status="pending"))
    state.apply(upd(status="in_progress"))
    assert state.tool_calls["c1"].duration is None
    state.apply(upd(status="completed"))
    assert state.tool_calls["c1"].duration == 5.0


# -- terminals ------------------------------------------------------------------------------------
def test_new_terminal_to_dict() -> None:
    state = apply_all(tupd())
    assert state.terminals["t1"].to_dict() == {"terminalId": "t1", "output": {"data": ""}}
    term = state.terminals["t1"]
    assert (term.command, term.cwd, term.size, term.capabilities, term.exit_status, term.meta) == (None,) * 6
    assert term.output == b""


def test_terminal_to_dict_full_shape() -> None:
    state = apply_all(
        tupd(
            command="make",
            cwd="/w",
            size={"cols": 80, "rows": 24},
            capabilities={"cancel": {}},
            exitStatus={"exitCode": 0, "signal": None},
            output={"data": b64("hi"), "_meta": {"snap": 1}},
            _meta={"m": 1},
        )
    )
    assert state.terminals["t1"].to_dict() == {
        "terminalId": "t1",
        "command": "make",
        "cwd": "/w",
        "size": {"cols": 80, "rows": 24},
        "capabilities": {"cancel": {}},
        "exitStatus": {"exitCode": 0, "signal": None},
        "output": {"data": b64("hi"), "_meta": {"snap": 1}},
        "_meta": {"m": 1},
    }


TERMINAL_FIELDS = [
    ("command", "command", "cargo test", "cargo build"),
    ("cwd", "cwd", "/home/user/project", "/tmp"),
    ("size", "size", {"cols": 80, "rows": 24}, {"cols": 120, "rows": 40}),
    ("capabilities", "capabilities", {"cancel": {}}, {}),
    ("exitStatus", "exit_status", {"exitCode": 0, "signal": None}, {"signal": "SIGTERM"}),
]


@pytest.mark.parametrize(
    ("key", "attr", "value", "other"), TERMINAL_FIELDS, ids=[f[0] for f in TERMINAL_FIELDS]
)
def test_terminal_fields_patch(key: str, attr: str, value: Any, other: Any) -> None:
    state = apply_all(tupd(**{key: value}))
    term = state.terminals["t1"]
    assert getattr(term, attr) == value
    state.apply(tupd(command="unrelated") if key != "command" else tupd(cwd="/x"))
    assert getattr(term, attr) == value  # omitted: unchanged
    state.apply(tupd(**{key: other}))
    assert getattr(term, attr) == other  # value: replaced whole
    state.apply(tupd(**{key: None}))
    assert getattr(term, attr) is None  # null: cleared
    assert key not in term.to_dict()
    assert codes(state) == []


def test_terminal_exit_status_as_received_and_exited() -> None:
    state = apply_all(tupd(command="sleep 9"))
    assert not state.terminals["t1"].exited
    state.apply(tupd(exitStatus={"signal": "SIGTERM"}))
    assert state.terminals["t1"].exit_status == {"signal": "SIGTERM"}
    assert state.terminals["t1"].exited
    state.apply(tupd(exitStatus={}))  # presence alone marks the terminal as exited
    assert state.terminals["t1"].exited


def test_terminal_meta_patches_by_key() -> None:
    state = apply_all(tupd(_meta={"a": 1, "n": {"x": 1}}), tupd(_meta={"b": 2, "n": {"y": 2}}))
    assert state.terminals["t1"].meta == {"a": 1, "b": 2, "n": {"y": 2}}
    state.apply(tupd(_meta={"a": None}))
    assert state.terminals["t1"].meta == {"b": 2, "n": {"y": 2}}
    state.apply(tupd(_meta=None))
    assert "_meta" not in state.terminals["t1"].to_dict()


def test_output_chunks_decoded_separately_and_appended() -> None:
    # "YQ==" + "Yg==" concatenated before decoding would not be valid base64: each is decoded alone
    state = apply_all(
        {"sessionUpdate": "terminal_output_chunk", "terminalId": "t1", "data": "YQ=="},
        {"sessionUpdate": "terminal_output_chunk", "terminalId": "t1", "data": "Yg=="},
    )
    assert state.terminals["t1"].output == b"ab"
    assert state.terminals["t1"].to_dict()["output"] == {"data": b64(b"ab")}


def test_output_bytes_kept_exactly() -> None:
    raw = bytes(range(256))
    state = apply_all(tchunk("t1", raw[:100]), tchunk("t1", raw[100:]))
    assert state.terminals["t1"].output == raw


def test_snapshot_replaces_all_bytes_then_chunks_append() -> None:
    state = apply_all(tchunk("t1", "abc"), tchunk("t1", "def"))
    state.apply(tupd(output={"data": b64("XYZ")}))
    assert state.terminals["t1"].output == b"XYZ"
    state.apply(tchunk("t1", "123"))
    assert state.terminals["t1"].output == b"XYZ123"
    state.apply(tupd(output={"data": b64("")}))
    assert state.terminals["t1"].output == b""


def test_snapshot_omitted_keeps_bytes_null_clears() -> None:
    state = apply_all(tchunk("t1", "abc"), tupd(command="ls"))
    assert state.terminals["t1"].output == b"abc"
    state.apply(tupd(output=None))
    assert state.terminals["t1"].output == b""
    assert state.terminals["t1"].text == ""


def test_output_meta_is_snapshot_scoped() -> None:
    state = apply_all(tupd(output={"data": b64("a"), "_meta": {"s": 1}}))
    assert state.terminals["t1"].to_dict()["output"] == {"data": b64("a"), "_meta": {"s": 1}}
    state.apply(tupd(output={"data": b64("b")}))
    assert state.terminals["t1"].to_dict()["output"] == {"data": b64("b")}
    assert state.terminals["t1"].meta is None  # never leaks into the terminal's _meta


def test_output_chunk_meta_is_chunk_scoped() -> None:
    state = apply_all(tupd(_meta={"k": 1}), tchunk("t1", "x", _meta={"k": None, "c": 2}))
    assert state.terminals["t1"].meta == {"k": 1}
    assert state.terminals["t1"].to_dict() == {
        "terminalId": "t1",
        "output": {"data": b64("x")},
        "_meta": {"k": 1},
    }


def test_terminal_first_seen_via_content_item_then_update() -> None:
    state = apply_all(upd(content=[{"type": "terminal", "terminalId": "t9"}]))
    assert state.terminals["t9"].to_dict() == {"terminalId": "t9", "output": {"data": ""}}
    state.apply(tupd("t9", command="npm test"))
    state.apply(tchunk("t9", "ok"))
    assert state.terminals["t9"].to_dict() == {
        "terminalId": "t9",
        "command": "npm test",
        "output": {"data": b64("ok")},
    }


def test_terminal_item_in_chunk_creates_terminal() -> None:
    state = apply_all(chunk("c1", {"type": "terminal", "terminalId": "t2"}))
    assert list(state.terminals) == ["t2"]


def test_output_chunk_before_tool_call_kept() -> None:
    state = apply_all(tchunk("t5", "early "), tchunk("t5", "bytes"))
    state.apply(upd("c5", content=[{"type": "terminal", "terminalId": "t5"}]))
    state.apply(tupd("t5", command="ls"))
    assert state.terminals["t5"].output == b"early bytes"
    assert state.terminals["t5"].command == "ls"


def test_terminal_reference_later_does_not_reset_terminal() -> None:
    state = apply_all(tupd("t1", command="ls"), tchunk("t1", "out"))
    state.apply(upd(content=[{"type": "terminal", "terminalId": "t1"}]))
    state.apply(chunk("c2", {"type": "terminal", "terminalId": "t1"}))
    assert state.terminals["t1"].output == b"out"
    assert state.terminals["t1"].command == "ls"


def test_terminal_id_independent_of_tool_call_id() -> None:
    state = apply_all(upd("x", title="Build", status="completed"), tupd("x", command="make"))
    assert state.tool_calls["x"].title == "Build"
    assert state.terminals["x"].command == "make"
    state.apply(tupd("x", exitStatus={"exitCode": 1}))
    assert state.tool_calls["x"].status == "completed"  # terminal exit and tool status are independent


def test_terminals_in_first_seen_order() -> None:
    state = apply_all(tchunk("t3", "x"), upd(content=[{"type": "terminal", "terminalId": "t1"}]), tupd("t2"))
    assert list(state.terminals) == ["t3", "t1", "t2"]


# -- Terminal.text --------------------------------------------------------------------------------
def test_text_joins_utf8_split_across_chunks() -> None:
    raw = "café € 😀\n".encode()
    state = SessionState()
    texts = []
    for i in range(len(raw)):  # one byte per chunk, reading text after each
        state.apply(tchunk("t1", raw[i : i + 1]))
        texts.append(state.terminals["t1"].text)
    assert texts[-1] == "café € 😀\n"
    assert "\ufffd" not in "".join(texts)
    assert all(texts[-1].startswith(t) for t in texts)


def test_text_marks_invalid_bytes() -> None:
    state = apply_all(tchunk("t1", b"ok \xff\xfe end"))
    assert state.terminals["t1"].text == "ok \ufffd\ufffd end"


def test_text_after_snapshot_is_the_snapshot() -> None:
    state = apply_all(tchunk("t1", "old \xe2".encode("latin-1")))
    state.terminals["t1"].text  # noqa: B018 - decode (and hold the partial character)
    state.apply(tupd(output={"data": b64("new")}))
    assert state.terminals["t1"].text == "new"
    state.apply(tchunk("t1", " more"))
    assert state.terminals["t1"].text == "new more"


def test_plain_text_strips_ansi_even_when_split() -> None:
    state = apply_all(tchunk("t1", "\x1b[3"), tchunk("t1", "2mPASS\x1b[0m done\r\n"))
    assert state.terminals["t1"].plain_text == "PASS done\r\n"


# -- output cap -----------------------------------------------------------------------------------
def test_output_cap_keeps_newest_bytes() -> None:
    state = SessionState(terminal_output_cap=10)
    received = b""
    for i in range(30):
        data = f"{i:02d}|".encode()
        received += data
        state.apply({"sessionUpdate": "terminal_output_chunk", "terminalId": "t1", "data": b64(data)})
        term = state.terminals["t1"]
        assert term.output == received[-10:]
        assert term.to_dict()["output"]["data"] == b64(received[-10:])
        assert term.dropped_bytes == len(received) - len(term.output)


def test_output_cap_applies_to_snapshots() -> None:
    state = SessionState(terminal_output_cap=8)
    state.apply(tupd(output={"data": b64("0123456789abcdef")}))
    assert state.terminals["t1"].output == b"89abcdef"


def test_default_cap_is_large() -> None:
    state = apply_all(tchunk("t1", b"x" * 1_000_000))
    assert len(state.terminals["t1"].output) == 1_000_000


@pytest.mark.parametrize("read_between", [False, True], ids=["read-at-end", "read-after-each"])
def test_text_is_the_capped_output_decoded(read_between: bool) -> None:
    """``text`` is "the output decoded": it must not keep bytes the cap dropped from ``output``."""
    state = SessionState(terminal_output_cap=10)
    for part in ("abcdefgh", "ijklm", "nopqrstu", "vwxyz", "AB"):
        state.apply(tchunk("t1", part))
        if read_between:
            state.terminals["t1"].text  # noqa: B018
    term = state.terminals["t1"]
    assert term.output == b"stuvwxyzAB"
    assert term.text == term.output.decode("utf-8", "replace")


def test_terminal_class_standalone() -> None:
    term = Terminal("t", cap=4)
    term.append(b"ab")
    term.append(b"cdef")
    assert term.output == b"cdef"
    term.replace(b"xy")
    assert (term.output, term.text, term.generation) == (b"xy", "xy", 1)


# -- messages -------------------------------------------------------------------------------------
def msg_chunk(kind: str, text: str, message_id: str | None = None) -> dict[str, Any]:
    update = {"sessionUpdate": f"{kind}_chunk", "content": block(text)}
    if message_id is not None:
        update["messageId"] = message_id
    return update


def test_message_chunks_append_by_message_id() -> None:
    state = apply_all(
        msg_chunk("agent_message", "Hel", "m1"),
        msg_chunk("agent_message", "Other", "m2"),
        msg_chunk("agent_message", "lo", "m1"),
    )
    assert state.messages["m1"].content == [block("Hel"), block("lo")]
    assert state.messages["m1"].text == "Hello"
    assert state.messages["m2"].text == "Other"
    assert list(state.messages) == ["m1", "m2"]


@pytest.mark.parametrize(
    ("kind", "role"), [("user_message", "user"), ("agent_message", "agent"), ("agent_thought", "thought")]
)
def test_message_roles(kind: str, role: str) -> None:
    state = apply_all(msg_chunk(kind, "a", "m"), {"sessionUpdate": kind, "messageId": "n", "content": []})
    assert state.messages["m"].role == role
    assert state.messages["n"].role == role


def test_whole_message_upsert_replace_clear_omit() -> None:
    state = apply_all(msg_chunk("agent_message", "a", "m1"), msg_chunk("agent_message", "b", "m1"))
    state.apply({"sessionUpdate": "agent_message", "messageId": "m1", "content": [block("X")]})
    assert state.messages["m1"].content == [block("X")]
    state.apply(msg_chunk("agent_message", "y", "m1"))
    assert state.messages["m1"].content == [block("X"), block("y")]
    state.apply({"sessionUpdate": "agent_message", "messageId": "m1", "_meta": {"k": 1}})
    assert state.messages["m1"].content == [block("X"), block("y")]  # omitted: unchanged
    assert state.messages["m1"].meta == {"k": 1}
    state.apply({"sessionUpdate": "agent_message", "messageId": "m1", "content": None})
    assert state.messages["m1"].content == []
    state.apply({"sessionUpdate": "agent_message", "messageId": "m1", "content": [block("z")]})
    state.apply({"sessionUpdate": "agent_message", "messageId": "m1", "content": []})
    assert state.messages["m1"].content == []


def test_message_meta_patches_by_key() -> None:
    state = apply_all(
        {"sessionUpdate": "user_message", "messageId": "u", "_meta": {"a": 1, "n": {"x": 1}}},
        {"sessionUpdate": "user_message", "messageId": "u", "_meta": {"a": None, "n": {"y": 1}}},
    )
    assert state.messages["u"].to_dict() == {
        "messageId": "u",
        "role": "user",
        "content": [],
        "_meta": {"n": {"y": 1}},
    }
    state.apply({"sessionUpdate": "user_message", "messageId": "u", "_meta": None})
    assert "_meta" not in state.messages["u"].to_dict()


def test_message_chunk_meta_is_chunk_scoped() -> None:
    state = apply_all({**msg_chunk("agent_message", "a", "m"), "_meta": {"c": 1}})
    assert state.messages["m"].meta is None


def test_v1_chunks_grouped_by_consecutive_role() -> None:
    state = apply_all(
        msg_chunk("user_message", "Fix it"),
        msg_chunk("agent_message", "On "),
        msg_chunk("agent_message", "it."),
        msg_chunk("agent_thought", "hmm"),
        msg_chunk("agent_message", "Done."),
    )
    messages = list(state.messages.values())
    assert [(m.role, m.text) for m in messages] == [
        ("user", "Fix it"),
        ("agent", "On it."),
        ("thought", "hmm"),
        ("agent", "Done."),
    ]
    assert all(m.synthetic for m in messages)
    assert len({m.message_id for m in messages}) == 4


def test_v1_tool_call_between_chunks_starts_a_new_message() -> None:
    state = apply_all(
        msg_chunk("agent_message", "Reading."),
        {"sessionUpdate": "tool_call", "toolCallId": "c1", "title": "Read"},
        msg_chunk("agent_message", "Read it."),
    )
    assert [m.text for m in state.messages.values()] == ["Reading.", "Read it."]


def test_v1_synthetic_ids_do_not_capture_v2_ids() -> None:
    state = apply_all(msg_chunk("agent_message", "a", "m1"), msg_chunk("agent_message", "b"))
    assert state.messages["m1"].content == [block("a")]
    assert len(state.messages) == 2


# -- plans ------------------------------------------------------------------------------------------
def test_plan_update_replaces_by_plan_id() -> None:
    entry = {"content": "step", "priority": "high", "status": "pending"}
    done = {**entry, "status": "completed"}
    state = apply_all(
        {
            "sessionUpdate": "plan_update",
            "plan": {"type": "items", "planId": "p1", "entries": [entry, entry]},
        },
        {"sessionUpdate": "plan_update", "plan": {"type": "items", "planId": "p2", "entries": [entry]}},
        {"sessionUpdate": "plan_update", "plan": {"type": "items", "planId": "p1", "entries": [done]}},
    )
    assert state.plans["p1"].entries == [done]
    assert state.plans["p2"].entries == [entry]
    assert list(state.plans) == ["p1", "p2"]


def test_unknown_plan_type_kept_raw_and_replaces() -> None:
    custom = {"type": "_mindmap", "planId": "p1", "nodes": [1]}
    state = apply_all(
        {"sessionUpdate": "plan_update", "plan": {"type": "items", "planId": "p1", "entries": []}},
        {"sessionUpdate": "plan_update", "plan": custom},
    )
    assert state.plans["p1"].to_dict() == custom


def test_v1_plan_is_one_plan_replaced_completely() -> None:
    a = {"content": "a", "priority": "high", "status": "pending"}
    b = {"content": "b", "priority": "low", "status": "pending"}
    state = apply_all({"sessionUpdate": "plan", "entries": [a, b]}, {"sessionUpdate": "plan", "entries": [b]})
    assert len(state.plans) == 1
    (plan,) = state.plans.values()
    assert plan.entries == [b]


# -- run state --------------------------------------------------------------------------------------
def test_run_state_defaults_to_idle() -> None:
    state = SessionState()
    assert (state.run_state, state.stop_reason) == ("idle", None)


def test_run_state_and_stop_reason() -> None:
    state = apply_all(st("running"))
    assert state.run_state == "running"
    state.apply(st("requires_action"))
    assert state.run_state == "requires_action"
    state.apply(st("idle", stopReason="cancelled"))
    assert (state.run_state, state.stop_reason) == ("idle", "cancelled")
    assert codes(state) == []


@pytest.mark.parametrize(
    "extra",
    [{}, {"stopReason": None}, {"stopReason": 5}, {"stopReason": {"x": 1}}],
    ids=["omitted", "null", "number", "object"],
)
def test_missing_or_malformed_stop_reason_is_none(extra: dict[str, Any]) -> None:
    state = apply_all(st("running"), st("idle", stopReason="end_turn"))
    state.apply(st("running"))
    state.apply(st("idle", **extra))
    assert state.stop_reason is None


def test_error_stop_keeps_details() -> None:
    error = {"code": -32603, "message": "model timeout"}
    state = apply_all(st("running"), st("idle", stopReason="error", error=error))
    assert (state.stop_reason, state.stop_error) == ("error", error)


def test_unknown_run_state_is_kept_and_not_idle() -> None:
    state = apply_all(st("running"), st("hibernating"))
    assert state.run_state == "hibernating"
    assert state.run_state != "idle"
    assert "unknown-state" in codes(state)


def test_custom_run_state_without_diagnostic() -> None:
    state = apply_all(st("_warming_up"))
    assert state.run_state == "_warming_up"
    assert codes(state) == []


def test_tool_call_updates_while_idle_do_not_change_state() -> None:
    state = apply_all(st("idle", stopReason="end_turn"), upd(status="in_progress"), tchunk("t1", "x"))
    assert (state.run_state, state.stop_reason) == ("idle", "end_turn")


# -- session-wide kinds, notices, unknown kinds ----------------------------------------------------
def test_available_commands_and_config_options_replace() -> None:
    cmd = {"type": "command", "name": "test", "description": "Run tests"}
    opt = {"id": "model", "name": "Model", "type": "select", "currentValue": "a", "options": []}
    state = apply_all(
        {"sessionUpdate": "available_commands_update", "availableCommands": [cmd, cmd]},
        {"sessionUpdate": "available_commands_update", "availableCommands": [cmd]},
        {"sessionUpdate": "config_option_update", "configOptions": [opt]},
    )
    assert state.available_commands == [cmd]
    assert state.config_options == [opt]


def test_session_info_patches() -> None:
    state = apply_all(
        {"sessionUpdate": "session_info_update", "title": "A", "updatedAt": "2026-01-01T00:00:00Z"},
        {"sessionUpdate": "session_info_update", "title": "B", "_meta": {"a": 1, "b": 2}},
        {"sessionUpdate": "session_info_update", "updatedAt": None, "_meta": {"a": None}},
    )
    assert state.session_info == {"title": "B", "_meta": {"b": 2}}
    state.apply({"sessionUpdate": "session_info_update", "_meta": None, "title": None})
    assert state.session_info == {}


def test_usage_latest_value() -> None:
    state = apply_all(
        {"sessionUpdate": "usage_update", "used": 10, "size": 100},
        {"sessionUpdate": "usage_update", "used": 20, "size": 100},
    )
    assert state.usage["used"] == 20
    assert state.usage["size"] == 100


def test_usage_cost_omitted_keeps_null_clears() -> None:
    """Schema (UsageUpdate.cost): omitted leaves the last reported cost unchanged; null clears it."""
    cost = {"amount": 0.42, "currency": "USD"}
    state = apply_all(
        {"sessionUpdate": "usage_update", "used": 10, "size": 100, "cost": cost},
        {"sessionUpdate": "usage_update", "used": 20, "size": 100},
    )
    assert state.usage["used"] == 20
    assert state.usage.get("cost") == cost
    state.apply({"sessionUpdate": "usage_update", "used": 30, "size": 100, "cost": None})
    assert state.usage.get("cost") is None


def test_current_mode_update() -> None:
    state = apply_all(
        {"sessionUpdate": "current_mode_update", "currentModeId": "ask"},
        {"sessionUpdate": "current_mode_update", "currentModeId": "code"},
    )
    assert state.current_mode_id == "code"


def test_notices_kept_in_order() -> None:
    state = apply_all(
        {"sessionUpdate": "notice", "severity": "info", "title": "One"},
        {"sessionUpdate": "notice", "severity": "warning", "title": "Two", "description": None},
    )
    assert [n["title"] for n in state.notices] == ["One", "Two"]
    assert state.notices[1]["severity"] == "warning"


def test_unknown_update_kinds_kept_raw() -> None:
    future = {"sessionUpdate": "brand_new_update", "payload": {"x": [1, 2]}}
    custom = {"sessionUpdate": "_acme_progress", "percent": 40}
    compaction = {"sessionUpdate": "compaction_update", "compactionId": "k1"}
    state = apply_all(future, custom, compaction)
    assert state.other_updates == [future, custom, compaction]
    assert codes(state) == ["unknown-update"]  # only the non-underscore, non-schema kind
    assert state.tool_calls == {}


# -- permissions ------------------------------------------------------------------------------------
PERM_PARAMS = {
    "sessionId": "s",
    "title": "Approve file edit?",
    "description": "Allow the agent to edit src/main.rs?",
    "subject": {"type": "tool_call", "toolCall": {"toolCallId": "c1", "status": "pending"}},
    "options": [
        {"optionId": "allow-once", "name": "Allow once", "kind": "allow_once"},
        {"optionId": "reject-once", "name": "Reject", "kind": "reject_once"},
    ],
}


def test_permission_recorded_and_applied_as_upsert() -> None:
    state = apply_all(upd(title="Edit main.rs", kind="edit"))
    perm = PermissionRequest("p1", 5, PERM_PARAMS)
    state.add_permission(perm)
    tc = state.tool_calls["c1"]
    assert tc.title == "Edit main.rs"  # the permission title never replaces the tool call's
    assert tc.content == []  # nor does its description become content
    assert state.pending_permissions == [perm]
    assert (perm.title, perm.description, perm.tool_call_id) == (
        "Approve file edit?",
        "Allow the agent to edit src/main.rs?",
        "c1",
    )
    assert perm.option_ids == ["allow-once", "reject-once"]
    assert perm.options == PERM_PARAMS["options"]


def test_permission_select_and_cancel() -> None:
    sent: list[dict[str, Any]] = []
    perm = PermissionRequest("p1", 5, PERM_PARAMS)
    perm.on_answer = lambda p, outcome: sent.append(outcome)
    with pytest.raises(ValueError):
        perm.select("no-such-option")
    assert perm.pending and sent == []
    perm.select("allow-once")
    assert sent == [{"outcome": "selected", "optionId": "allow-once"}]
    assert perm.selected_option == "allow-once"
    with pytest.raises(PermissionAlreadyAnswered):
        perm.cancel()
    with pytest.raises(PermissionAlreadyAnswered):
        perm.select("reject-once")
    assert len(sent) == 1  # answering twice sends nothing

    other = PermissionRequest("p2", 6, PERM_PARAMS)
    other.on_answer = lambda p, outcome: sent.append(outcome)
    other.cancel()
    assert sent[-1] == {"outcome": "cancelled"}
    assert other.selected_option is None


def test_pending_permissions_drop_answered() -> None:
    state = SessionState()
    first, second = PermissionRequest("p1", 1, PERM_PARAMS), PermissionRequest("p2", 2, PERM_PARAMS)
    state.add_permission(first)
    state.add_permission(second)
    first.select("allow-once")
    assert state.pending_permissions == [second]


def test_command_subject_kept_raw_and_creates_nothing() -> None:
    subject = {
        "type": "command",
        "command": "cargo test",
        "cwd": "/p",
        "toolCallId": None,
        "terminalId": None,
    }
    perm = PermissionRequest("p1", 1, {**PERM_PARAMS, "subject": subject})
    state = SessionState()
    state.add_permission(perm)
    assert perm.subject == subject
    assert perm.tool_call_id is None
    assert state.tool_calls == {} and state.terminals == {}
    assert codes(state) == []


def test_custom_subject_kept_without_diagnostic() -> None:
    subject = {"type": "_acme_deploy", "target": "prod"}
    perm = PermissionRequest("p1", 1, {**PERM_PARAMS, "subject": subject})
    state = SessionState()
    state.add_permission(perm)
    assert perm.subject == subject and perm.subject_type == "_acme_deploy"
    assert codes(state) == []


def test_v1_permission_nulls_mean_unchanged() -> None:
    state = apply_all({"sessionUpdate": "tool_call", "toolCallId": "c1", "title": "Write", "kind": "edit"})
    params = {
        "sessionId": "s",
        "toolCall": {"toolCallId": "c1", "title": None, "kind": None, "status": "pending"},
        "options": PERM_PARAMS["options"],
    }
    perm = PermissionRequest("p1", 1, params, version=1)
    state.add_permission(perm)
    tc = state.tool_calls["c1"]
    assert (tc.title, tc.kind) == ("Write", "edit")
    assert perm.subject_type == "tool_call" and perm.tool_call_id == "c1"
    assert isinstance(perm.title, str) and perm.title


# -- subscribe ---------------------------------------------------------------------------------------
def test_change_records() -> None:
    state = SessionState()
    changes: list[Change] = []
    state.subscribe(changes.append)
    state.apply(upd(title="T", status="pending"))
    state.apply(upd(status="in_progress", content=[item("a")]))
    state.apply(chunk("c1", item("b")))
    state.apply(chunk("c2", item("c")))
    assert [(c.kind, c.id, c.created) for c in changes] == [
        ("tool_call", "c1", True),
        ("tool_call", "c1", False),
        ("tool_call", "c1", False),
        ("tool_call", "c2", True),
    ]
    assert set(changes[0].fields) == {"title", "status"}
    assert set(changes[1].fields) == {"status", "content"}
    assert changes[2].fields == ("content",)


def test_change_fields_skip_wrong_typed_values() -> None:
    state = SessionState()
    changes: list[Change] = []
    state.subscribe(changes.append)
    state.apply(upd(title=5, status="completed"))
    tool_changes = [c for c in changes if c.kind == "tool_call"]
    assert [c.fields for c in tool_changes] == [("status",)]
    assert any(c.kind == "diagnostic" for c in changes)


def test_terminal_change_records_carry_bytes() -> None:
    state = SessionState()
    changes: list[Change] = []
    state.subscribe(changes.append)
    state.apply(tchunk("t1", b"ab"))
    state.apply(tchunk("t1", b"cd"))
    state.apply(tupd(output={"data": b64(b"XY")}, command="ls"))
    state.apply(tupd(cwd="/w"))
    assert [(c.kind, c.id, c.created, c.data, c.replaced) for c in changes] == [
        ("terminal", "t1", True, b"ab", False),
        ("terminal", "t1", False, b"cd", False),
        ("terminal", "t1", False, b"XY", True),
        ("terminal", "t1", False, None, False),
    ]
    assert set(changes[2].fields) == {"output", "command"}
    assert changes[3].fields == ("cwd",)


def test_terminal_created_by_reference_is_announced() -> None:
    state = SessionState()
    changes: list[Change] = []
    state.subscribe(changes.append)
    state.apply(upd(content=[{"type": "terminal", "terminalId": "t7"}]))
    assert ("terminal", "t7", True) in [(c.kind, c.id, c.created) for c in changes]


def test_created_only_the_first_time_an_item_is_seen() -> None:
    """``created`` is True once per item: a message first made by an upsert is not created again."""
    state = SessionState()
    changes: list[Change] = []
    state.subscribe(changes.append)
    state.apply({"sessionUpdate": "agent_message", "messageId": "m1", "content": []})
    state.apply(msg_chunk("agent_message", "hello", "m1"))
    state.apply(msg_chunk("agent_message", " again", "m1"))
    assert [(c.kind, c.id, c.created) for c in changes] == [
        ("message", "m1", True),
        ("message", "m1", False),
        ("message", "m1", False),
    ]


def test_other_change_kinds() -> None:
    state = SessionState()
    changes: list[Change] = []
    state.subscribe(changes.append)
    state.apply(msg_chunk("agent_message", "hi", "m1"))
    state.apply({"sessionUpdate": "plan_update", "plan": {"type": "items", "planId": "p", "entries": []}})
    state.apply(st("running"))
    state.apply({"sessionUpdate": "notice", "severity": "info", "title": "n"})
    state.apply({"sessionUpdate": "_custom"})
    state.apply({"sessionUpdate": "current_mode_update", "currentModeId": "code"})
    perm = PermissionRequest("p1", 1, PERM_PARAMS)
    state.add_permission(perm)
    assert [c.kind for c in changes] == [
        "message",
        "plan",
        "run_state",
        "notice",
        "other",
        "session",
        "tool_call",
        "permission",
    ]
    assert changes[0].created and changes[1].created
    assert changes[-1].id == "p1" and changes[-1].created


def test_raising_observer_does_not_break_apply() -> None:
    state = SessionState()
    seen: list[Change] = []

    def bad(change: Change) -> None:
        raise RuntimeError("boom")

    state.subscribe(bad)
    state.subscribe(seen.append)
    state.apply(upd(title="T"))
    assert state.tool_calls["c1"].title == "T"  # applied
    assert [c.id for c in seen] == ["c1"]  # later observers still called
    assert "observer-error" in codes(state)
    state.apply(upd(status="completed"))
    assert state.tool_calls["c1"].status == "completed"


def test_unsubscribe() -> None:
    state = SessionState()
    seen: list[Change] = []
    unsubscribe = state.subscribe(seen.append)
    state.apply(upd())
    unsubscribe()
    state.apply(upd(status="completed"))
    assert len(seen) == 1
    unsubscribe()  # twice is harmless


# -- v1 helpers ---------------------------------------------------------------------------------------
def test_normalize_v1_update_drops_top_level_nulls() -> None:
    update = {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "c1",
        "title": None,
        "status": "completed",
        "rawOutput": {"x": None},
    }
    assert normalize_v1_update(update) == {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "c1",
        "status": "completed",
        "rawOutput": {"x": None},
    }
    other = {"sessionUpdate": "tool_call", "toolCallId": "c1", "content": None}
    assert normalize_v1_update(other) == other
    assert normalize_v1_update("not a dict") == "not a dict"


def test_v1_tool_call_replaces_whole() -> None:
    state = apply_all(
        {"sessionUpdate": "tool_call", "toolCallId": "c1", "title": "A", "kind": "edit", "_meta": {"a": 1}},
        {"sessionUpdate": "tool_call", "toolCallId": "c1", "title": "B"},
    )
    assert state.tool_calls["c1"].to_dict() == {**DEFAULT_TC, "title": "B"}


def test_unified_patch_modify() -> None:
    patch = unified_patch(
        {"type": "diff", "path": "/src/a.txt", "oldText": "one\ntwo\n", "newText": "one\n2\n"}
    )
    assert patch == (
        "diff --git a/src/a.txt b/src/a.txt\n"
        "--- a/src/a.txt\n"
        "+++ b/src/a.txt\n"
        "@@ -1,2 +1,2 @@\n"
        " one\n"
        "-two\n"
        "+2\n"
    )


def test_unified_patch_new_file() -> None:
    patch = unified_patch({"type": "diff", "path": "/new.py", "oldText": None, "newText": "print('hi')\n"})
    assert patch == (
        "diff --git a/new.py b/new.py\n"
        "new file mode 100644\n"
        "--- /dev/null\n"
        "+++ b/new.py\n"
        "@@ -0,0 +1 @@\n"
        "+print('hi')\n"
    )


def test_unified_patch_without_final_newline() -> None:
    patch = unified_patch(
        {"type": "diff", "path": "/c.json", "oldText": '{"debug": false}', "newText": '{"debug": true}'}
    )
    assert patch.endswith(
        '@@ -1 +1 @@\n-{"debug": false}\n\\ No newline at end of file\n'
        '+{"debug": true}\n\\ No newline at end of file\n'
    )
