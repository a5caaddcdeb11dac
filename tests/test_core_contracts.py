"""Contracts of the pure core that hold for any input.

- The reducer never mutates what it is given: update dicts (nor anything in them, nor what an
  earlier update handed it) and permission requests.
- Every ``to_dict`` is a snapshot: changing the returned dict, at any depth, never changes state.
- ``Terminal.plain_text`` strips ECMA-48 control sequences and never shows half of one, however
  the bytes are split.
- Answering a permission sends before it records: a failed send leaves the request pending.
"""

from __future__ import annotations

import copy
import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from acp_notebook.protocol import (
    ErrorObject,
    PermissionAlreadyAnswered,
    PermissionRequest,
    SessionState,
    Terminal,
)
from tests.test_bad_input import BAD_PERMISSIONS, LOCATIONS, REPAIRED_ITEMS, SKIPPED_ITEMS
from tests.test_property import any_update

from .support import b64

GOLDEN = Path(__file__).parent / "golden"
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def golden_updates() -> list[Any]:
    """Every ``session/update`` of the golden fixtures, in order."""
    updates = []
    for path in sorted(GOLDEN.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            message = json.loads(line)
            if message.get("method") == "session/update":
                updates.append(message["params"]["update"])
    return updates


def hostile_updates() -> list[Any]:
    """Malformed and repaired input: the reducer's fallbacks must not touch it either."""
    tc = {"sessionUpdate": "tool_call_update", "toolCallId": "c1"}
    term = {"sessionUpdate": "terminal_update", "terminalId": "t1"}
    out: list[Any] = [{**tc, "content": [bad, {"type": "_x", "k": [1]}]} for bad in SKIPPED_ITEMS]
    out += [
        {"sessionUpdate": "tool_call_content_chunk", "toolCallId": "c1", "content": r}
        for r, _, _ in REPAIRED_ITEMS
    ]
    out += [{**tc, "content": [r for r, _, _ in REPAIRED_ITEMS]}]
    out += [{**tc, "locations": [loc for loc, _, _ in LOCATIONS]}]
    out += [
        {**tc, "capabilities": {"cancel": True, "_meta": {"a": [1]}}},
        {**term, "capabilities": {"cancel": 1}},
    ]
    out += [
        {**term, "exitStatus": {"exitCode": 1.5, "signal": 9, "_meta": {"k": {}}}},
        {**term, "size": {"cols": 0}},
    ]
    out += [
        {
            "sessionUpdate": "agent_message",
            "messageId": "m",
            "content": [{"type": "text"}, {"type": "text", "text": "x"}],
        },
        {"sessionUpdate": "agent_message_chunk", "messageId": "m", "content": {"type": "image", "data": "x"}},
        {
            "sessionUpdate": "plan_update",
            "plan": {"type": "items", "planId": "p", "entries": [5, {"content": "a"}]},
        },
        {
            "sessionUpdate": "plan",
            "entries": [{"content": "a", "priority": "high", "status": "pending"}, None],
        },
        {"sessionUpdate": "available_commands_update", "availableCommands": [{"name": "a"}, 5, {"x": 1}]},
        {"sessionUpdate": "config_option_update", "configOptions": [{"configId": "m", "name": "M"}, []]},
        {"sessionUpdate": "session_info_update", "title": "T", "_meta": {"a": {"b": 1}}},
        {"sessionUpdate": "usage_update", "used": 1, "size": 2, "cost": {"amount": 1, "currency": "USD"}},
        {"sessionUpdate": "state_update", "state": "idle", "stopReason": "error", "error": {"code": 1}},
        {"sessionUpdate": "state_update", "state": "running", "background": [{"terminalId": "t1"}]},
        {"sessionUpdate": "notice", "severity": "info", "title": "n", "_meta": {"x": [1]}},
        {"sessionUpdate": "_custom", "payload": {"deep": [[1]]}},
    ]
    return out


def apply_and_check_untouched(updates: list[Any]) -> SessionState:
    """Apply ``updates`` in order; none of them (checked at the end) was changed."""
    state = SessionState()
    copies = [copy.deepcopy(u) for u in updates]
    for update in updates:
        state.apply(update)
    for update, original in zip(updates, copies, strict=True):
        assert update == original
    return state


def test_golden_updates_are_never_mutated() -> None:
    apply_and_check_untouched(golden_updates())


def test_hostile_updates_are_never_mutated() -> None:
    apply_and_check_untouched(hostile_updates() + golden_updates() + hostile_updates())


@SETTINGS
@given(st.lists(any_update, min_size=1, max_size=30))
def test_generated_updates_are_never_mutated(updates: list[dict[str, Any]]) -> None:
    apply_and_check_untouched(updates)


@pytest.mark.parametrize(
    "params", [*BAD_PERMISSIONS.values(), BAD_PERMISSIONS["no-title"]], ids=[*BAD_PERMISSIONS, "again"]
)
@pytest.mark.parametrize("version", [1, 2])
def test_permission_requests_are_never_mutated(params: dict[str, Any], version: int) -> None:
    state = SessionState()
    request = PermissionRequest("p1", 1, params, version)
    before = {k: copy.deepcopy(v) for k, v in vars(request).items()}
    sent_params = copy.deepcopy(params)
    state.add_permission(request)
    assert vars(request) == before  # in particular `on_answer` is still None: the state never sets it
    assert request.on_answer is None
    assert params == sent_params


# -- to_dict is a snapshot -------------------------------------------------------------------------------
def scribble(value: Any) -> None:
    """Change every container in ``value``, at every depth."""
    if isinstance(value, dict):
        for item in list(value.values()):
            scribble(item)
        for key in list(value):
            value[key] = "scribbled" if not isinstance(value[key], dict | list) else value[key]
        value["scribbled"] = True
    elif isinstance(value, list):
        for item in value:
            scribble(item)
        value.append("scribbled")


def rich_state() -> SessionState:
    state = apply_and_check_untouched(golden_updates())
    for update in [
        {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "rich",
            "title": "T",
            "content": [{"type": "content", "content": {"type": "text", "text": "x", "_meta": {"a": [1]}}}],
            "locations": [{"path": "/a", "line": 1, "_meta": {"b": {}}}],
            "rawInput": {"cmd": ["ls", {"deep": [1, 2]}]},
            "rawOutput": [{"o": {"p": []}}],
            "capabilities": {"cancel": {"_meta": {"c": 1}}},
            "_meta": {"m": {"n": [1]}},
            "_extra": {"x": [1]},
        },
        {
            "sessionUpdate": "terminal_update",
            "terminalId": "rich",
            "command": "ls",
            "size": {"cols": 80, "rows": 24, "_meta": {"s": [1]}},
            "capabilities": {"cancel": {}},
            "exitStatus": {"exitCode": 0, "_meta": {"e": [1]}},
            "output": {"data": b64("hi"), "_meta": {"o": [1]}},
            "_meta": {"t": {"u": 1}},
            "_extra": [1, [2]],
        },
        {
            "sessionUpdate": "agent_message",
            "messageId": "rich",
            "content": [{"type": "text", "text": "a"}],
            "_meta": {"m": [1]},
        },
        {
            "sessionUpdate": "plan_update",
            "plan": {"type": "_custom", "planId": "rich", "nodes": [{"n": [1]}]},
        },
    ]:
        state.apply(update)
    return state


def snapshots(state: SessionState) -> dict[str, Any]:
    return {
        "tool_calls": {k: v.to_dict() for k, v in state.tool_calls.items()},
        "terminals": {k: v.to_dict() for k, v in state.terminals.items()},
        "messages": {k: v.to_dict() for k, v in state.messages.items()},
        "plans": {k: v.to_dict() for k, v in state.plans.items()},
    }


def test_to_dict_is_a_deep_snapshot() -> None:
    state = rich_state()
    first = snapshots(state)
    expected = copy.deepcopy(first)
    scribble(first)
    assert snapshots(state) == expected
    assert state.tool_calls["rich"].raw_input == {"cmd": ["ls", {"deep": [1, 2]}]}
    assert state.terminals["rich"].size == {"cols": 80, "rows": 24, "_meta": {"s": [1]}}


@SETTINGS
@given(st.lists(any_update, min_size=1, max_size=20))
def test_to_dict_is_a_snapshot_for_any_updates(updates: list[dict[str, Any]]) -> None:
    state = apply_and_check_untouched(updates)
    first = snapshots(state)
    expected = copy.deepcopy(first)
    scribble(first)
    assert snapshots(state) == expected


def test_to_dict_of_deeply_nested_values() -> None:
    deep: Any = []
    for _ in range(900):
        deep = [deep]
    state = SessionState()
    state.apply({"sessionUpdate": "tool_call_update", "toolCallId": "c", "rawInput": deep})
    data = state.tool_calls["c"].to_dict()
    assert data["rawInput"] == deep and data["rawInput"] is not deep


# -- Terminal.plain_text: ECMA-48, split anywhere -----------------------------------------------------------
SEQUENCES = {
    "csi-sgr": "\x1b[31m",
    "csi-reset": "\x1b[0m",
    "csi-params": "\x1b[1;32;40m",
    "csi-private": "\x1b[?25l",
    "csi-private-gt": "\x1b[>0c",
    "csi-erase": "\x1b[2J",
    "csi-cursor": "\x1b[10;20H",
    "csi-intermediate": "\x1b[2 q",
    "csi-no-params": "\x1b[K",
    "csi-8bit": "\x9b31m",
    "csi-8bit-private": "\x9b?1049h",
    "osc-bel": "\x1b]0;window title\x07",
    "osc-st": "\x1b]8;;https://example.com\x1b\\",
    "osc-8bit-st": "\x9d0;title\x9c",
    "osc-7bit-8bit-st": "\x1b]2;t\x9c",
    "osc-8bit-bel": "\x9d0;t\x07",
    "osc-empty": "\x1b]\x07",
    "dcs": "\x1bPq#0;2;0;0;0#1~~\x1b\\",
    "dcs-8bit": '\x90$q"p\x9c',
    "sos": "\x1bXstart of string\x1b\\",
    "sos-8bit": "\x98sos\x9c",
    "pm": "\x1b^privacy\x1b\\",
    "pm-8bit": "\x9epm\x9c",
    "apc": "\x1b_application\x1b\\",
    "apc-8bit": "\x9fapc\x9c",
    "charset-g0-ascii": "\x1b(B",
    "charset-g1-graphics": "\x1b)0",
    "charset-g0-graphics": "\x1b(0",
    "charset-g2": "\x1b*A",
    "charset-utf8": "\x1b%G",
    "dec-alignment": "\x1b#8",
    "save-cursor": "\x1b7",
    "restore-cursor": "\x1b8",
    "keypad-application": "\x1b=",
    "keypad-numeric": "\x1b>",
    "reset": "\x1bc",
    "reverse-index": "\x1bM",
    "index": "\x1bD",
    "next-line": "\x1bE",
    "tab-set": "\x1bH",
    "string-terminator": "\x1b\\",
    "c1-nel": "\x85",
    "c1-ri": "\x8d",
    "c1-st-alone": "\x9c",
}
BEFORE, AFTER = "før ", " ✓ after\r\n"


def feed(parts: list[bytes]) -> tuple[Terminal, list[str]]:
    term, seen = Terminal("t"), []
    for part in parts:
        term.append(part)
        seen.append(term.plain_text)
    return term, seen


@pytest.mark.parametrize("name", list(SEQUENCES))
def test_plain_text_strips_sequence_split_at_every_position(name: str) -> None:
    raw = (BEFORE + SEQUENCES[name] + AFTER).encode("utf-8")
    expected = BEFORE + AFTER
    for cut in range(len(raw) + 1):
        term, seen = feed([raw[:cut], raw[cut:]])
        assert seen[-1] == expected, (cut, seen)
        assert expected.startswith(seen[0]), (cut, seen)  # never half a sequence mid-stream
        assert term.text == raw.decode("utf-8")  # the text itself is untouched


@pytest.mark.parametrize("name", ["csi-params", "osc-st", "dcs", "charset-g1-graphics", "osc-8bit-st"])
def test_plain_text_split_at_every_pair_of_positions(name: str) -> None:
    raw = (BEFORE + SEQUENCES[name] + AFTER).encode("utf-8")
    for a in range(len(raw) + 1):
        for b in range(a, len(raw) + 1):
            _, seen = feed([raw[:a], raw[a:b], raw[b:]])
            assert seen[-1] == BEFORE + AFTER
            assert all((BEFORE + AFTER).startswith(s) for s in seen)


ODD = [
    ("\x1b]0;title\x1b[31mred", "red"),  # an ESC aborts a control string and starts a sequence
    ("\x1b[12\x1b[0mx", "x"),  # an ESC inside a CSI: the broken CSI is dropped
    ("\x1b[1;2\nnext", "\nnext"),  # a C0 control inside a CSI ends it, and is kept
    ("a\x1b\x1b[0mb", "ab"),  # ESC ESC: the first one is dropped alone
    ("a\x1bbc", "ac"),  # ESC b is a two-character escape (Fs)
    ("a\x1b\nb", "a\nb"),  # a lone ESC before a newline
    ("a\x1béb", "aéb"),  # ESC before a non-ASCII character
    ("tab\tbell\x07bs\x08", "tab\tbell\x07bs\x08"),  # other C0 controls are kept
    ("\x1b[31m\x1b[1m\x1b]0;t\x07\x1b(Bok\x1b[0m", "ok"),
    ("50%\r\x1b[K75%\r\x1b[K100%\n", "50%\r75%\r100%\n"),  # progress redraws
    ("\x9b\x9b31mx", "x"),  # a C1 CSI right after another
]


@pytest.mark.parametrize(("text", "plain"), ODD, ids=[repr(t)[:30] for t, _ in ODD])
def test_plain_text_odd_sequences_any_split(text: str, plain: str) -> None:
    raw = text.encode("utf-8")
    for cut in range(len(raw) + 1):
        _, seen = feed([raw[:cut], raw[cut:]])
        assert seen[-1] == plain
        assert plain.startswith(seen[0])


def test_plain_text_holds_an_unfinished_sequence_until_it_ends() -> None:
    _, seen = feed([b"ok \x1b]0;still a ti", b"tle", b"\x07done"])
    assert seen == ["ok ", "ok ", "ok done"]
    _, seen = feed([b"x\x1b", b"[", b"3", b"1", b"m", b"y"])
    assert seen == ["x", "x", "x", "x", "x", "xy"]


def test_plain_text_after_snapshot_and_cap() -> None:
    term = Terminal("t", cap=16)
    term.append(b"\x1b[31m" + b"a" * 30)
    assert "\x1b" not in term.plain_text
    term.replace(b"\x1b[1mnew\x1b[0m")
    assert term.plain_text == "new"


@SETTINGS
@given(
    st.data(), st.lists(st.sampled_from([*SEQUENCES.values(), "plain ", "é", "\r\n", "日本"]), max_size=12)
)
def test_plain_text_is_the_same_for_any_chunking(data: st.DataObject, pieces: list[str]) -> None:
    raw = "".join(pieces).encode("utf-8")
    cuts = sorted(data.draw(st.sets(st.integers(0, len(raw)), max_size=6)))
    bounds = [0, *cuts, len(raw)]
    parts = [raw[a:b] for a, b in itertools.pairwise(bounds)]
    whole, _ = feed([raw])
    _, seen = feed(parts)
    assert seen[-1] == whole.plain_text
    assert all(whole.plain_text.startswith(s) for s in seen)
    assert not any(c == "\x1b" or "\x80" <= c <= "\x9f" for c in whole.plain_text)


# -- answering a permission: send first, then record ------------------------------------------------------
OPTIONS = [{"optionId": "ok", "name": "OK", "kind": "allow_once"}]
PARAMS = {"sessionId": "s", "title": "May I?", "options": OPTIONS}


class SendFailed(Exception):
    pass


def test_failed_send_leaves_the_request_pending() -> None:
    attempts: list[dict[str, Any]] = []

    def send(request: PermissionRequest, outcome: dict[str, Any]) -> None:
        attempts.append(outcome)
        assert request.pending  # the outcome is recorded only once it was sent
        if len(attempts) == 1:
            raise SendFailed("pipe closed")

    request = PermissionRequest("p1", 1, PARAMS, on_answer=send)
    with pytest.raises(SendFailed):
        request.select("ok")
    assert request.pending and request.outcome is None
    request.cancel()  # a later answer is still possible, and is sent
    assert request.outcome == {"outcome": "cancelled"}
    assert attempts == [{"outcome": "selected", "optionId": "ok"}, {"outcome": "cancelled"}]


def test_answering_twice_raises_and_sends_nothing() -> None:
    sent: list[dict[str, Any]] = []
    request = PermissionRequest("p1", 1, PARAMS, on_answer=lambda _r, outcome: sent.append(outcome))
    request.select("ok")
    for again in (request.cancel, lambda: request.select("ok")):
        with pytest.raises(PermissionAlreadyAnswered):
            again()
    assert sent == [{"outcome": "selected", "optionId": "ok"}]


def test_answering_from_inside_the_send_raises() -> None:
    sent: list[dict[str, Any]] = []
    errors: list[Exception] = []

    def send(request: PermissionRequest, outcome: dict[str, Any]) -> None:
        sent.append(outcome)
        try:
            request.cancel()
        except PermissionAlreadyAnswered as exc:
            errors.append(exc)

    request = PermissionRequest("p1", 1, PARAMS, on_answer=send)
    request.select("ok")
    assert sent == [{"outcome": "selected", "optionId": "ok"}] and len(errors) == 1
    assert request.selected_option == "ok"


def test_state_tells_observers_only_when_told() -> None:
    state, changes = SessionState(), []
    state.subscribe(changes.append)
    request = PermissionRequest("p1", 1, PARAMS)
    state.add_permission(request)
    request.select("ok")  # without a callback: recorded locally
    assert [c.fields for c in changes if c.kind == "permission"] == [()]
    state.permission_answered(request)
    assert [c.fields for c in changes if c.kind == "permission"] == [(), ("outcome",)]
    assert state.pending_permissions == []


def test_error_object_to_dict_is_a_snapshot() -> None:
    error = ErrorObject(-32603, "malformed", {"received": {"deep": [1]}})
    data = error.to_dict()
    scribble(data)
    assert error.to_dict() == {"code": -32603, "message": "malformed", "data": {"received": {"deep": [1]}}}
