"""The v2 rules an independent referee and real agents (issue 17) showed we read differently:
``background`` not reported, plan types replacing whole, v1 plans with bad ``entries``, strict
base64, repeated idles, work listed in ``background``, plans of every type, and the plan-mode
permission whose subject empties what a card showed."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from acp_notebook.protocol import PermissionRequest, SessionState
from acp_notebook.protocol.terminal import decode_base64

from .support import apply_all, plan, st

ENTRY = {"content": "step", "priority": "high", "status": "pending"}
TERM_BG = {"type": "terminal", "terminalId": "t1"}


# -- 1. background: omitted, null or malformed means "not reported" ---------------------------------
def test_background_is_none_until_reported() -> None:
    assert SessionState().background is None


BAD_BACKGROUNDS = [
    {},
    {"background": None},
    {"background": 5},
    {"background": {"terminalId": "t1"}},
    {"background": [7]},
]


def test_background_omitted_null_or_malformed_is_not_reported() -> None:
    """Omitted, null and malformed all mean "not reported" (None), which is not ``[]`` (nothing runs)."""
    for extra in BAD_BACKGROUNDS:
        state = SessionState()
        state.apply(st("running", **extra))
        assert state.background is None, extra
    state.apply(st("running", background=[TERM_BG]))
    assert state.background == [TERM_BG]
    state.apply(st("idle", stopReason="end_turn", background=[]))
    assert state.background == []


# -- 2. a plan that changes type replaces the earlier plan whole ----------------------------------
def test_plan_changing_type_leaves_no_stale_entries() -> None:
    state = apply_all(plan(type="items", entries=[ENTRY]), plan(type="markdown", content="# Plan"))
    assert state.plans["p1"].type == "markdown"
    assert state.plans["p1"].entries == []
    assert state.plans["p1"].to_dict() == {"planId": "p1", "type": "markdown", "content": "# Plan"}


# -- 3. a v1 plan whose entries is not an array reads as [] --------------------------------------
@pytest.mark.parametrize("entries", [None, 5, "x", {"a": 1}])
def test_v1_plan_with_non_array_entries_reads_empty(entries: Any) -> None:
    state = apply_all(
        {"sessionUpdate": "plan", "entries": [ENTRY]}, {"sessionUpdate": "plan", "entries": entries}
    )
    (only,) = state.plans.values()
    assert only.entries == []
    assert only.to_dict()["entries"] == []


# -- 4. strict base64 (RFC 4648 section 3.3) ---------------------------------------------------------
INVALID_B64 = [
    "YWJj=",
    "+/+/=",
    "YWJj====",
    "YQ===",
    "YW Jj",
    "YWJ",
    "=",
    "====",
    "YW=j",
    "YWJj\n",
    "Y===",
    "ÿÿÿÿ",
]
VALID_B64 = {"": b"", "YWJj": b"abc", "YWI=": b"ab", "YQ==": b"a", "+/+/": b"\xfb\xff\xbf", "YR==": b"a"}


def test_base64_strict() -> None:
    """Terminal ``output.data`` and ``terminal_output_chunk`` ``data`` follow the same rule."""
    assert [t for t in INVALID_B64 if decode_base64(t) is not None] == []
    state = SessionState()
    for text in INVALID_B64:
        state.apply({"sessionUpdate": "terminal_update", "terminalId": "t1", "output": {"data": "b2s="}})
        state.apply({"sessionUpdate": "terminal_update", "terminalId": "t1", "output": {"data": text}})
        state.apply({"sessionUpdate": "terminal_output_chunk", "terminalId": "t1", "data": text})
        assert state.terminals["t1"].output == b"ok", text
    assert [d.code for d in state.diagnostics] == ["invalid-base64"] * 2 * len(INVALID_B64)
    for text, raw in VALID_B64.items():
        assert decode_base64(text) == raw, text
        state.apply({"sessionUpdate": "terminal_update", "terminalId": "t1", "output": {"data": text}})
        state.apply({"sessionUpdate": "terminal_output_chunk", "terminalId": "t1", "data": text})
        assert state.terminals["t1"].output == raw + raw, text
    assert len(state.diagnostics) == 2 * len(INVALID_B64)
    every = bytes(range(256)) * 3
    assert decode_base64(base64.b64encode(every).decode()) == every


# -- a repeated idle is not a turn end ------------------------------------------------------------
def test_repeated_idle_keeps_the_stop_reason() -> None:
    error = {"code": 1, "message": "x"}
    state = apply_all(st("running"), st("idle", stopReason="error", error=error))
    state.apply(st("idle", background=[TERM_BG]))
    assert (state.stop_reason, state.stop_error) == ("error", error)
    assert state.background == [TERM_BG]
    state.apply(st("running"))
    state.apply(st("idle"))  # an idle that ends foreground work without a reason: None
    assert (state.stop_reason, state.stop_error) == (None, None)
    state.apply(st("running"))
    state.apply(st("idle", stopReason="cancelled"))
    assert state.stop_reason == "cancelled"


# -- work listed in background --------------------------------------------------------------------
def test_in_background_names_listed_terminals_and_tool_calls() -> None:
    state = apply_all(
        {"sessionUpdate": "tool_call_update", "toolCallId": "c1", "status": "completed"},
        {"sessionUpdate": "terminal_update", "terminalId": "t1", "command": "sleep 9"},
        st("idle", background=[TERM_BG, {"type": "tool_call", "toolCallId": "c2"}, {"type": "_x"}]),
    )
    assert state.in_background("t1") and state.in_background("c2")
    assert not state.in_background("c1")
    state.apply(st("idle", background=[]))
    assert not state.in_background("t1")


def test_background_changes_tell_observers_about_the_items() -> None:
    state = apply_all(
        {"sessionUpdate": "terminal_update", "terminalId": "t1", "command": "x"},
        {"sessionUpdate": "tool_call_update", "toolCallId": "c9", "status": "completed"},
    )
    seen: list[tuple[str, Any]] = []
    state.subscribe(lambda change: seen.append((change.kind, change.id)))
    state.apply(st("running", background=[TERM_BG, {"type": "tool_call", "toolCallId": "c9"}]))
    assert ("terminal", "t1") in seen and ("tool_call", "c9") in seen
    seen.clear()
    state.apply(st("running", background=[TERM_BG, {"type": "tool_call", "toolCallId": "c9"}]))
    assert ("terminal", "t1") not in seen  # unchanged membership: nothing to redraw
    state.apply(st("idle", stopReason="end_turn"))  # not reported: nothing is known to be listed
    assert state.background is None and not state.in_background("t1")
    assert ("terminal", "t1") in seen


# -- plans of every type --------------------------------------------------------------------------
def test_markdown_plan() -> None:
    state = apply_all(plan(type="markdown", content="# Steps\n- one"))
    assert state.plans["p1"].type == "markdown"
    assert state.plans["p1"].content == "# Steps\n- one"


def test_file_plan_keeps_only_the_uri() -> None:
    state = apply_all(plan(type="file", uri="file:///work/plan.md"))
    assert state.plans["p1"].uri == "file:///work/plan.md"
    assert state.plans["p1"].content is None


def test_plan_fields_of_the_wrong_type_are_reported() -> None:
    state = apply_all(plan(type="markdown", content=5), plan(type="file", uri=None))
    assert state.plans["p1"].uri is None
    assert [d.code for d in state.diagnostics] == ["invalid-field", "invalid-field"]


def test_plan_removed_deletes_the_plan() -> None:
    state = apply_all(plan(type="items", entries=[ENTRY]), {"sessionUpdate": "plan_removed", "planId": "p1"})
    assert "p1" not in state.plans
    assert state.diagnostics == []
    state.apply({"sessionUpdate": "plan_removed", "planId": "nope"})
    state.apply({"sessionUpdate": "plan_removed"})
    assert [d.code for d in state.diagnostics] == ["malformed-update"]


def test_unknown_plan_type_replaces_earlier_content_and_is_kept_raw() -> None:
    custom = {"type": "_graph", "planId": "p1", "nodes": [1, 2]}
    state = apply_all(plan(type="markdown", content="# x"), {"sessionUpdate": "plan_update", "plan": custom})
    assert state.plans["p1"].content is None
    assert state.plans["p1"].to_dict() == custom


# -- plan mode: a permission subject that empties what the card showed ----------------------------
def ready_to_code(key: str = "perm1") -> PermissionRequest:
    params = {
        "sessionId": "s1",
        "title": "Ready to code?",
        "subject": {"type": "tool_call", "toolCall": {"toolCallId": "c1", "content": [], "rawInput": {}}},
        "options": [{"optionId": "yes", "name": "Yes", "kind": "allow_once"}],
    }
    return PermissionRequest(key, 1, params)


SHOWN = [{"type": "content", "content": {"type": "text", "text": "## The plan\n1. edit"}}]


def test_plan_mode_permission_keeps_what_the_card_showed() -> None:
    state = apply_all(
        {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "c1",
            "title": "Plan",
            "content": SHOWN,
            "rawInput": {"plan": "## The plan"},
        },
    )
    request = ready_to_code()
    state.add_permission(request)
    assert state.tool_calls["c1"].content == []  # the upsert rule is the spec
    assert state.tool_calls["c1"].raw_input == {}
    assert request.shown_before == {"content": SHOWN, "rawInput": {"plan": "## The plan"}}


def test_a_permission_that_empties_nothing_keeps_no_snapshot() -> None:
    state = SessionState()
    request = ready_to_code()
    state.add_permission(request)
    assert request.shown_before is None


def test_background_marks_the_items_themselves() -> None:
    state = apply_all(
        {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "c1",
            "status": "completed",
            "content": [{"type": "terminal", "terminalId": "t1"}],
        },
        st("idle", stopReason="end_turn", background=[TERM_BG, {"type": "tool_call", "toolCallId": "c2"}]),
    )
    assert state.terminals["t1"].background and not state.tool_calls["c1"].background
    state.apply({"sessionUpdate": "tool_call_update", "toolCallId": "c2"})  # announced late: still marked
    assert state.tool_calls["c2"].background
    state.apply(st("idle", background=[]))
    assert not state.terminals["t1"].background and not state.tool_calls["c2"].background


# -- the doctor names the hazard --------------------------------------------------------------------
def _entries(version: int, subject_call: dict[str, Any], before: dict[str, Any]) -> list[dict[str, Any]]:
    def msg(direction: str, body: dict[str, Any]) -> dict[str, Any]:
        return {"dir": direction, "t": 0.0, "kind": "message", "message": {"jsonrpc": "2.0", **body}}

    def upd(fields: dict[str, Any]) -> dict[str, Any]:
        kind = "tool_call" if version == 1 else "tool_call_update"
        update = {"sessionUpdate": kind, "toolCallId": "c1", **fields}
        return msg("in", {"method": "session/update", "params": {"sessionId": "s", "update": update}})

    if version == 1:
        ask = {"sessionId": "s", "toolCall": {"toolCallId": "c1", **subject_call}, "options": []}
    else:
        subject = {"type": "tool_call", "toolCall": {"toolCallId": "c1", **subject_call}}
        ask = {"sessionId": "s", "title": "Ready to code?", "subject": subject, "options": []}
    return [
        msg("out", {"id": 0, "method": "initialize", "params": {"protocolVersion": 2}}),
        msg("in", {"id": 0, "result": {"protocolVersion": version}}),
        upd(before),
        msg("in", {"id": 7, "method": "session/request_permission", "params": ask}),
    ]


def test_doctor_names_a_permission_that_empties_the_card() -> None:
    from acp_notebook.playback.doctor_rules import diagnose

    shown = {"content": SHOWN, "rawInput": {"plan": "x"}}

    def codes(version: int, subject: dict[str, Any], before: dict[str, Any] = shown) -> list[str]:
        return [f.code for f in diagnose(_entries(version, subject, before))]

    (found,) = diagnose(_entries(2, {"content": [], "rawInput": {}}, shown))
    assert (found.code, found.severity, found.kind) == ("permission-empties-card", "warning", "hazard")
    assert "`content` and `rawInput`" in found.message and "Ready to code" in found.cite
    assert codes(2, {"content": None}) == ["permission-empties-card"]
    assert codes(1, {"rawInput": {}}) == ["permission-empties-card"]
    assert codes(1, {"content": None, "rawInput": None}) == []  # v1: null is "unchanged"
    assert codes(2, {"title": "Plan"}) == []  # omitted: unchanged
    assert codes(2, {"content": []}, {"content": []}) == []  # nothing was shown
