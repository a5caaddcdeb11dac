"""The protocol doctor: each finding on a hand-written trace that triggers it and one that does
not, the ``doctor(source)`` front (path, list, Replay, session), and the shipped traces."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

import acp_notebook
from acp_notebook.playback import doctor_spec
from acp_notebook.playback.doctor_rules import Finding, Findings, diagnose
from acp_notebook.playback.findings import line_size, negotiated_version
from acp_notebook.traces import path

SID = "sess_1"
SCHEMAS = Path(__file__).parent / "schema"


def out(message: dict[str, Any]) -> dict[str, Any]:
    return {"dir": "out", "t": 0.0, "kind": "message", "message": {"jsonrpc": "2.0", **message}}


def inn(message: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"dir": "in", "t": 0.0, "kind": "message", "message": {"jsonrpc": "2.0", **message}, **extra}


def init(version: int) -> list[dict[str, Any]]:
    return [
        out({"id": 0, "method": "initialize", "params": {"protocolVersion": 2}}),
        inn({"id": 0, "result": {"protocolVersion": version}}),
    ]


def prompt(n: int = 1) -> dict[str, Any]:
    return out({"id": n, "method": "session/prompt", "params": {"sessionId": SID, "prompt": []}})


def cancel() -> dict[str, Any]:
    return out({"method": "session/cancel", "params": {"sessionId": SID}})


def answer(n: int = 1, reason: str | None = "end_turn") -> dict[str, Any]:
    return inn({"id": n, "result": {"stopReason": reason} if reason else {}})


def update(**fields: Any) -> dict[str, Any]:
    return inn({"method": "session/update", "params": {"sessionId": SID, "update": fields}})


def state(value: str, reason: str | None = None) -> dict[str, Any]:
    return update(sessionUpdate="state_update", state=value, **({"stopReason": reason} if reason else {}))


def codes(entries: list[dict[str, Any]]) -> list[str]:
    return [f.code for f in diagnose(entries)]


# -- reserved values -------------------------------------------------------------------------------
def test_reserved_values_are_flagged_and_underscore_ones_are_not() -> None:
    v2 = [
        *init(2),
        update(sessionUpdate="tool_call_update", toolCallId="c1", status="done", kind="shell"),
        state("thinking"),
        state("idle", "stopped"),
    ]
    found = diagnose(v2)
    assert [f.code for f in found] == ["reserved-value"] * 4
    assert all(f.severity == "error" and f.kind == "violation" for f in found)
    assert "'done'" in found[0].message and found[0].cite.startswith("v2/tool-calls.mdx")
    assert "'shell'" in found[1].message and "tool kinds **MUST** begin with `_`" in found[1].cite
    assert found[0].index == 2
    ok = [
        *init(2),
        update(sessionUpdate="tool_call_update", toolCallId="c1", status="_done", kind="_shell"),
        update(sessionUpdate="tool_call_update", toolCallId="c1", status="paused"),
        state("_thinking"),
        state("idle", "_paused_by_hook"),
        prompt(),
        state("running"),
        state("idle", "error"),
    ]
    assert codes(ok) == []


def test_v1_enums_are_closed() -> None:
    entries = [
        *init(1),
        prompt(),
        update(sessionUpdate="tool_call", toolCallId="c1", title="t", status="paused"),
        update(sessionUpdate="plan", entries=[{"content": "x", "priority": "high", "status": "cancelled"}]),
        answer(1, "stopped"),
    ]
    found = diagnose(entries)
    assert [(f.code, f.index) for f in found] == [("reserved-value", i) for i in (3, 4, 5)]
    assert "v1.schema.json (StopReason)" in found[2].cite
    assert codes([*init(1), prompt(), answer(1, "refusal")]) == []


def test_the_enums_match_the_schema_files() -> None:
    for version in (1, 2):
        defs = json.loads((SCHEMAS / f"v{version}.schema.json").read_text())["$defs"]
        for name, values in doctor_spec.ENUMS[version].items():
            if name in defs:
                variants = defs[name].get("oneOf") or defs[name].get("anyOf")
                assert {v["const"] for v in variants if "const" in v} == values, (version, name)
    idle = json.loads((SCHEMAS / "v2.schema.json").read_text())["$defs"]["IdleStateUpdate"]["anyOf"]
    reasons = {v["properties"]["stopReason"].get("const") for v in idle} - {None}
    assert reasons == doctor_spec.ENUMS[2]["StopReason"]


# -- a cancelled turn must end `cancelled` -----------------------------------------------------------
def test_end_turn_after_cancel_v1() -> None:
    found = diagnose([*init(1), prompt(), cancel(), answer(1, "end_turn")])
    assert [(f.code, f.index) for f in found] == [("cancel-not-cancelled", 4)]
    assert "`end_turn`" in found[0].message and "entry 3" in found[0].message
    assert "v1/prompt-turn.mdx (Cancellation)" in found[0].cite and "cancellation.mdx" in found[0].cite
    assert codes([*init(1), prompt(), cancel(), answer(1, "cancelled")]) == []
    assert codes([*init(1), prompt(), answer(1, "end_turn"), cancel()]) == []  # cancel after the turn


def test_error_after_cancel_v1() -> None:
    errored = inn({"id": 1, "error": {"code": -32603, "message": "aborted"}})
    found = diagnose([*init(1), prompt(), cancel(), errored])
    assert [f.code for f in found] == ["cancel-not-cancelled"]
    assert "Agents **MUST** catch these errors" in found[0].cite


def test_end_turn_after_cancel_v2() -> None:
    ack = inn({"id": 1, "result": {"messageId": "m1"}})
    found = diagnose([*init(2), prompt(), ack, state("running"), cancel(), state("idle", "end_turn")])
    assert [(f.code, f.index) for f in found] == [("cancel-not-cancelled", 6)]
    assert "v2/prompt-lifecycle.mdx (Cancellation)" in found[0].cite
    ok = [*init(2), prompt(), ack, state("running"), cancel(), state("idle", "cancelled")]
    assert codes(ok) == []
    assert codes([*init(2), prompt(), ack, state("running"), state("idle", "end_turn")]) == []


# -- terminals -------------------------------------------------------------------------------------
def terminal_call(call: str = "c1", tid: str = "term_1", kind: str = "tool_call") -> dict[str, Any]:
    return update(sessionUpdate=kind, toolCallId=call, content=[{"type": "terminal", "terminalId": tid}])


def test_unannounced_terminal_once_per_id() -> None:
    entries = [*init(1), prompt(), terminal_call("c1"), terminal_call("c2"), answer()]
    found = diagnose(entries)
    assert [(f.code, f.index) for f in found] == [("unannounced-terminal", 3)]
    assert "'term_1'" in found[0].message and found[0].cite.startswith("v1/terminals.mdx")
    created = [
        *init(1),
        prompt(),
        inn({"id": 7, "method": "terminal/create", "params": {"sessionId": SID, "command": "ls"}}),
        out({"id": 7, "result": {"terminalId": "term_1"}}),
        terminal_call("c1"),
        answer(),
    ]
    assert codes(created) == []


def test_unannounced_terminal_v2() -> None:
    found = diagnose([*init(2), terminal_call(kind="tool_call_update")])
    assert [f.code for f in found] == ["unannounced-terminal"] and "terminal_update" in found[0].message
    announced = [
        *init(2),
        terminal_call(kind="tool_call_update"),  # the reference may come first (v2/tool-calls.mdx)
        update(sessionUpdate="terminal_update", terminalId="term_1", command="ls"),
    ]
    assert codes(announced) == []


# -- mixed versions --------------------------------------------------------------------------------
def test_mixed_version_shapes_once_per_shape() -> None:
    entries = [
        *init(2),
        update(sessionUpdate="tool_call", toolCallId="c1", title="a"),
        update(sessionUpdate="tool_call", toolCallId="c2", title="b"),
        inn({"id": 9, "method": "fs/read_text_file", "params": {"sessionId": SID, "path": "/a"}}),
    ]
    found = diagnose(entries)
    assert [(f.code, f.index) for f in found] == [("mixed-version", 2), ("mixed-version", 4)]
    assert "(2 times)" in found[0].message and "`tool_call`" in found[0].message
    assert "exactly one negotiated version" in found[0].cite
    v1 = [
        *init(1),
        update(sessionUpdate="tool_call_content_chunk", toolCallId="c1", content={"type": "content"}),
        state("running"),
    ]
    assert codes(v1) == ["mixed-version", "mixed-version"]
    native = [*init(1), update(sessionUpdate="tool_call", toolCallId="c1", title="a"), answer(5)]
    assert codes(native) == []
    v2_answer = [*init(2), prompt(), answer(1, "end_turn")]
    assert codes(v2_answer) == ["mixed-version"]


# -- stdout ----------------------------------------------------------------------------------------
def test_non_json_stdout() -> None:
    noise = {"dir": "in", "t": 0.1, "kind": "stdout", "text": "Loading model..."}
    found = diagnose([*init(1), noise])
    assert [(f.code, f.index) for f in found] == [("non-json-stdout", 2)]
    assert "MUST NOT** write anything to its `stdout`" in found[0].cite
    assert codes([*init(1), {"dir": "in", "t": 0.1, "kind": "stderr", "text": "Loading model..."}]) == []


# -- updates after a cancelled turn ended -----------------------------------------------------------
def test_update_after_cancelled_turn_v1() -> None:
    late = update(sessionUpdate="tool_call_update", toolCallId="c1", status="failed")
    call = update(sessionUpdate="tool_call", toolCallId="c1", title="a", status="in_progress")
    found = diagnose([*init(1), prompt(), call, cancel(), answer(1, "cancelled"), late, late])
    assert [(f.code, f.index) for f in found] == [("update-after-turn", 6)]
    assert "(2 times)" in found[0].message and "before responding to the `session/prompt`" in found[0].cite
    assert codes([*init(1), prompt(), call, cancel(), late, answer(1, "cancelled")]) == []
    assert codes([*init(1), prompt(), call, answer(1, "end_turn"), late]) == []  # not forbidden


def test_update_after_cancelled_turn_v2() -> None:
    late = update(sessionUpdate="tool_call_update", toolCallId="c1", status="cancelled")
    call = update(sessionUpdate="tool_call_update", toolCallId="c1", title="a", status="in_progress")
    found = diagnose([*init(2), prompt(), state("running"), call, cancel(), state("idle", "cancelled"), late])
    assert [f.code for f in found] == ["update-after-turn"]
    assert "before sending the idle `state_update`" in found[0].cite
    background = [*init(2), prompt(), state("running"), call, state("idle", "end_turn"), late]
    assert codes(background) == []  # background activity while idle is allowed


# -- hazards ---------------------------------------------------------------------------------------
def permission(call: str = "c1") -> dict[str, Any]:
    params = {"sessionId": SID, "toolCall": {"toolCallId": call}, "options": []}
    return inn({"id": 4, "method": "session/request_permission", "params": params})


def test_v1_permission_before_its_tool_call() -> None:
    found = diagnose([*init(1), prompt(), permission()])
    assert [(f.code, f.severity, f.kind) for f in found] == [
        ("permission-before-tool-call", "warning", "hazard")
    ]
    assert "Codex and Gemini" in found[0].cite and "v2/tool-calls.mdx" in found[0].cite
    announced = [
        *init(1),
        prompt(),
        update(sessionUpdate="tool_call", toolCallId="c1", title="a"),
        permission(),
    ]
    assert codes(announced) == []
    assert codes([*init(2), prompt(), permission()]) == []  # v2 allows it


def test_lines_over_64_kib() -> None:
    big = update(sessionUpdate="agent_message_chunk", content={"type": "text", "text": "x" * 70_000})
    assert line_size(big) > 65_536
    found = diagnose([*init(1), big, {**answer(9), "size": 70_000}])
    assert [(f.code, f.index, f.severity) for f in found] == [("line-over-64k", i, "warning") for i in (2, 3)]
    assert "python-sdk" in found[0].cite and "64 KiB" in found[0].cite
    small = update(sessionUpdate="agent_message_chunk", content={"type": "text", "text": "x" * 1000})
    sent = out({"id": 3, "method": "session/prompt", "params": {"prompt": [{"text": "x" * 70_000}]}})
    assert codes([*init(1), small, sent]) == []  # only the agent's lines count


# -- the API and the front ----------------------------------------------------------------------------
def test_findings_are_frozen_rows() -> None:
    found = diagnose([*init(1), {"dir": "in", "t": 0, "kind": "stdout", "text": "hi"}])
    assert isinstance(found, Findings) and isinstance(found[0], Finding)
    with pytest.raises(AttributeError):
        found[0].code = "x"  # type: ignore[misc]
    assert list(found.records()[0]) == ["code", "severity", "kind", "message", "index", "cite"]
    assert found.errors() == found
    pd = pytest.importorskip("pandas")
    assert isinstance(found.frame(), pd.DataFrame) and len(found.frame()) == 1


def test_version_from_initialize_or_given() -> None:
    assert negotiated_version(init(1)) == 1
    assert negotiated_version([]) is None
    v1_only = [update(sessionUpdate="state_update", state="running")]
    assert [f.code for f in diagnose(v1_only, version=1)] == ["mixed-version"]
    assert diagnose(v1_only) == []  # version unknown: no shape is foreign


def test_shipped_traces() -> None:
    assert acp_notebook.doctor(path("demo_v1.jsonl")) == []
    assert acp_notebook.doctor(str(path("demo_v2.jsonl"))) == []
    assert acp_notebook.doctor(path("claude_v1.jsonl")) == []  # its terminal: the offered extension


def test_a_terminal_announced_by_an_extension_the_client_did_not_offer() -> None:
    entries = [json.loads(line) for line in path("claude_v1.jsonl").read_text().splitlines()[1:]]
    for entry in entries:
        message = entry.get("message")
        if isinstance(message, dict) and message.get("method") == "initialize":
            message["params"]["clientCapabilities"]["_meta"].pop("terminal_output")
    found = acp_notebook.doctor(entries)
    assert [(f.code, f.index) for f in found] == [("unannounced-terminal", 25)]
    assert "`_meta.terminal_info` extension, which this client did not offer" in found[0].message


def test_doctor_reads_a_list_a_replay_and_a_session() -> None:
    entries = [*init(1), {"dir": "in", "t": 0, "kind": "stdout", "text": "hi"}]
    assert [f.code for f in acp_notebook.doctor(entries)] == ["non-json-stdout"]
    replay = acp_notebook.replay(path("claude_v1.jsonl"))
    try:
        assert acp_notebook.doctor(replay) == []
    finally:
        replay.close()
    other = {**permission(), "session": "sess_2"}
    other["message"]["params"]["sessionId"] = "sess_2"
    traffic = [*init(1), {**prompt(), "session": SID}, other, entries[-1]]
    session = SimpleNamespace(session_id=SID, agent=SimpleNamespace(traffic=traffic), protocol_version=1)
    assert [f.code for f in acp_notebook.doctor(session)] == ["non-json-stdout"]  # not sess_2's
    agent = SimpleNamespace(traffic=traffic[2:])  # the ring lost `initialize`: its version is used
    agent.protocol_version = 1
    assert [f.code for f in acp_notebook.doctor(agent)] == ["permission-before-tool-call", "non-json-stdout"]
    with pytest.raises(TypeError):
        acp_notebook.doctor(42)
