"""``state.records(kind)`` and ``state.frame(kind)``: the state as tables, hand-fed and live."""

from __future__ import annotations

import asyncio
import json
import sys

import pytest

from acp_notebook import start_agent
from acp_notebook.protocol import PermissionRequest, SessionState
from acp_notebook.protocol.elicitation import Elicitation
from acp_notebook.protocol.tables import COLUMNS, KINDS
from acp_notebook.widgets.actions import Actions, SessionActions

from .support import b64, item, until_async

TIMEOUT = 30
OPTIONS = [
    {"optionId": "yes", "name": "Allow", "kind": "allow_once"},
    {"optionId": "always", "name": "Always", "kind": "allow_always"},
    {"optionId": "no", "name": "Reject", "kind": "reject_once"},
]


class Clock:
    """A clock the test sets: every reading until the next ``at`` is the same time."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def fed(clock: Clock, *timed: tuple[float, dict]) -> SessionState:
    """A state fed ``(time, update)`` pairs, the clock set to each time first."""
    state = SessionState(clock=clock)
    for now, update in timed:
        clock.now = now
        state.apply(update)
    return state


def permission(key: str, request_id: int, subject: dict, title: str = "May I?") -> PermissionRequest:
    params = {"sessionId": "s1", "title": title, "subject": subject, "options": OPTIONS}
    return PermissionRequest(key, request_id, params)


def tc_subject(tc_id: str) -> dict:
    return {"type": "tool_call", "toolCall": {"toolCallId": tc_id}}


def ask(state: SessionState, clock: Clock, now: float, perm: PermissionRequest) -> PermissionRequest:
    clock.now = now
    state.add_permission(perm)
    return perm


def answer(state: SessionState, clock: Clock, now: float, perm: PermissionRequest, option=None, by=None):
    clock.now = now
    if option is None:
        perm.cancel(by=by)
    else:
        perm.select(option, by=by)
    state.permission_answered(perm)


def session_of_everything() -> tuple[SessionState, Clock]:
    """Three tool calls (terminals, diffs of both shapes), two messages, a message to another
    session, three permissions."""
    clock = Clock()
    run = {"sessionUpdate": "tool_call_update", "toolCallId": "run", "title": "Run tests", "kind": "execute"}
    state = fed(
        clock,
        (10.0, {**run, "status": "in_progress", "locations": [{"path": "/w/tests"}, {"path": "/w/tests"}]}),
        (11.0, {"sessionUpdate": "tool_call_content_chunk", "toolCallId": "run", "content": term_item("t1")}),
        (12.0, {"sessionUpdate": "terminal_output_chunk", "terminalId": "t1", "data": b64(b"ok\r\n")}),
        (13.0, {"sessionUpdate": "terminal_update", "terminalId": "t1", "command": "pytest", "cwd": "/w"}),
        (15.0, {"sessionUpdate": "terminal_update", "terminalId": "t1", "exitStatus": exit_status(0)}),
        (16.0, {"sessionUpdate": "tool_call_update", "toolCallId": "run", "status": "completed"}),
        (20.0, edit_update()),
        (21.0, {"sessionUpdate": "tool_call", "toolCallId": "v1edit", "title": "Write", "kind": "edit"}),
        (22.0, {"sessionUpdate": "tool_call_update", "toolCallId": "v1edit", "content": [v1_diff()]}),
        (30.0, {"sessionUpdate": "user_message", "messageId": "u1", "content": [text("Fix it")]}),
        (31.0, {"sessionUpdate": "agent_message_chunk", "messageId": "a1", "content": text("Done ")}),
        (33.0, {"sessionUpdate": "agent_message_chunk", "messageId": "a1", "content": text("now.")}),
        (34.0, {"sessionUpdate": "session_message_chunk", "messageId": "sm1", "content": text("Look")}),
        (35.0, {"sessionUpdate": "session_message", "messageId": "sm1", "senderSessionId": "s1"}),
    )
    both = {"type": "terminal", "terminalId": "t2"}, {"type": "terminal", "terminalId": "t3"}
    clock.now = 40.0
    state.apply({"sessionUpdate": "tool_call_update", "toolCallId": "two", "content": list(both)})
    clock.now = 41.0
    state.apply(
        {"sessionUpdate": "terminal_update", "terminalId": "t3", "exitStatus": exit_status(None, "SIGKILL")}
    )
    edit = ask(state, clock, 50.0, permission("perm_1", 1, tc_subject("edit"), "Apply the edit?"))
    answer(state, clock, 52.0, edit, "always", by="user")
    command = {"type": "command", "command": "pytest", "cwd": "/w", "toolCallId": "run"}
    ask(state, clock, 53.0, permission("perm_2", "r2", command, "Run pytest?"))
    v1 = ask(state, clock, 54.0, permission("perm_3", 3, tc_subject("v1edit")))
    answer(state, clock, 55.0, v1, by="cancel")
    clock.now = 60.0
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    form = Elicitation(
        "elic_1", 9, {"sessionId": "s", "mode": "form", "message": "N?", "requestedSchema": schema}
    )
    state.add_elicitation(form)
    clock.now = 61.0
    form.accept({"n": 4.0}, by="user")
    state.elicitation_changed(form)
    url = {
        "sessionId": "s",
        "mode": "url",
        "message": "Log in",
        "elicitationId": "e",
        "url": "https://a.b/c?t=1",
    }
    state.add_elicitation(Elicitation("elic_2", 10, url))
    return state, clock


def term_item(terminal_id: str) -> dict:
    return {"type": "terminal", "terminalId": terminal_id}


def exit_status(code, signal=None) -> dict:
    return {"exitCode": code, "signal": signal}


def text(value: str) -> dict:
    return {"type": "text", "text": value}


def edit_update() -> dict:
    changes = [
        {"operation": "modify", "path": "/w/app.py", "oldText": "a", "newText": "b"},
        {"operation": "move", "path": "/w/new.md", "oldPath": "/w/old.md"},
    ]
    return {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "edit",
        "title": "Edit",
        "kind": "edit",
        "status": "completed",
        "locations": [{"path": "/w/app.py", "line": 3}],
        "content": [{"type": "diff", "changes": changes}],
    }


def v1_diff() -> dict:
    return {"type": "diff", "path": "/w/v1.py", "oldText": None, "newText": "x = 1\n"}


# -- each kind, exact rows ------------------------------------------------------------------------
def test_tool_call_rows():
    state, _ = session_of_everything()
    rows = state.records("tool_calls")
    assert [list(row) for row in rows] == [list(COLUMNS["tool_calls"])] * 4
    assert rows[0] == {
        "id": "run",
        "title": "Run tests",
        "kind": "execute",
        "status": "completed",
        "first_seen": 10.0,
        "last_seen": 16.0,
        "duration": 6.0,
        "updates": 3,
        "files": ["/w/tests"],
        "exit_code": 0,
        "permission": True,  # a command subject naming the tool call
        "decision": None,
        "decided_by": None,
    }
    assert rows[1] == {
        "id": "edit",
        "title": "Edit",
        "kind": "edit",
        "status": "completed",
        "first_seen": 20.0,
        "last_seen": 50.0,  # the permission's tool_call subject is an upsert too
        "duration": 0.0,
        "updates": 2,
        "files": ["/w/app.py", "/w/new.md", "/w/old.md"],
        "exit_code": None,
        "permission": True,
        "decision": "allow_always",
        "decided_by": "user",
    }
    v1edit = rows[2]
    assert (v1edit["first_seen"], v1edit["last_seen"], v1edit["updates"]) == (21.0, 54.0, 3)
    assert v1edit["files"] == ["/w/v1.py"] and v1edit["status"] == "pending" and v1edit["duration"] is None
    assert (v1edit["decision"], v1edit["decided_by"]) == ("cancelled", "cancel")
    two = rows[3]
    assert two["exit_code"] == [None, None] and two["permission"] is False and two["decision"] is None
    assert json.loads(json.dumps(rows)) == rows


def test_tool_call_updates_count_chunks_and_survive_a_v1_replace():
    clock = Clock()
    create = {"sessionUpdate": "tool_call", "toolCallId": "c", "title": "Read", "kind": "read"}
    chunk = {"sessionUpdate": "tool_call_content_chunk", "toolCallId": "c", "content": item("x")}
    state = fed(clock, (1.0, create), (2.0, chunk), (3.0, chunk), (4.0, {**create, "status": "completed"}))
    (row,) = state.records("tool_calls")
    assert row["updates"] == 4 and row["status"] == "completed"
    bad_chunk = {**chunk, "content": None}  # appends nothing: not an update of it
    clock.now = 5.0
    state.apply(bad_chunk)
    assert state.records("tool_calls")[0]["updates"] == 4 and state.tool_calls["c"].updated_at == 4.0


def test_exit_code_of_several_terminals_is_a_list_in_reference_order():
    clock = Clock()
    refs = [term_item("b"), term_item("a"), term_item("b")]
    state = fed(
        clock,
        (1.0, {"sessionUpdate": "tool_call_update", "toolCallId": "c", "content": refs}),
        (2.0, {"sessionUpdate": "terminal_update", "terminalId": "a", "exitStatus": exit_status(0)}),
        (3.0, {"sessionUpdate": "terminal_update", "terminalId": "b", "exitStatus": exit_status(2)}),
    )
    assert state.records("tool_calls")[0]["exit_code"] == [2, 0]


def test_message_rows():
    state, _ = session_of_everything()
    assert state.records("messages") == [
        {"id": "u1", "role": "user", "text": "Fix it", "blocks": 1, "first_seen": 30.0, "last_seen": 30.0},
        {
            "id": "a1",
            "role": "agent",
            "text": "Done now.",
            "blocks": 2,
            "first_seen": 31.0,
            "last_seen": 33.0,
        },
    ]


def test_v1_messages_get_their_synthesised_ids():
    clock = Clock()
    chunk = {"sessionUpdate": "agent_thought_chunk", "content": text("hmm")}
    state = fed(clock, (1.0, chunk), (2.0, chunk))
    assert state.records("messages") == [
        {
            "id": "_v1_thought_1",
            "role": "thought",
            "text": "hmmhmm",
            "blocks": 2,
            "first_seen": 1.0,
            "last_seen": 2.0,
        }
    ]


def test_terminal_rows():
    state, _ = session_of_everything()
    rows = state.records("terminals")
    assert [list(row) for row in rows] == [list(COLUMNS["terminals"])] * 3
    assert rows[0] == {
        "id": "t1",
        "command": "pytest",
        "cwd": "/w",
        "exit_code": 0,
        "signal": None,
        "bytes": 4,
        "first_seen": 11.0,
        "last_seen": 15.0,
        "duration": 4.0,
    }
    t2 = {"id": "t2", "command": None, "cwd": None, "exit_code": None, "signal": None, "bytes": 0}
    assert rows[1] == {**t2, "first_seen": 40.0, "last_seen": 40.0, "duration": None}  # still running
    assert rows[2] == {
        **t2,
        "id": "t3",
        "signal": "SIGKILL",
        "first_seen": 40.0,
        "last_seen": 41.0,
        "duration": 1.0,
    }


def test_terminal_bytes_count_what_the_cap_dropped_and_restart_at_a_snapshot():
    clock = Clock()
    state = SessionState(clock=clock, terminal_output_cap=8)
    for _ in range(5):
        state.apply({"sessionUpdate": "terminal_output_chunk", "terminalId": "t", "data": b64(b"0123456789")})
    assert len(state.terminals["t"].output) == 8
    assert state.records("terminals")[0]["bytes"] == 50
    state.apply({"sessionUpdate": "terminal_update", "terminalId": "t", "output": {"data": b64(b"abc")}})
    assert state.records("terminals")[0]["bytes"] == 3


def test_terminal_exit_time_is_the_first_exit_status_and_clears_with_it():
    clock = Clock()
    update = {"sessionUpdate": "terminal_update", "terminalId": "t"}
    state = fed(clock, (1.0, {**update, "command": "make"}), (3.0, {**update, "exitStatus": exit_status(1)}))
    clock.now = 4.0
    state.apply({**update, "exitStatus": exit_status(2)})
    assert state.records("terminals")[0]["duration"] == 2.0
    clock.now = 6.0
    state.apply({**update, "exitStatus": None})
    assert state.records("terminals")[0]["duration"] is None


def test_permission_rows():
    state, _ = session_of_everything()
    rows = state.records("permissions")
    assert [list(row) for row in rows] == [list(COLUMNS["permissions"])] * 3
    assert rows == [
        {
            "key": "perm_1",
            "request_id": 1,
            "tool_call_id": "edit",
            "title": "Apply the edit?",
            "subject_type": "tool_call",
            "options": ["yes", "always", "no"],
            "outcome": "selected",
            "option": "always",
            "decision": "allow_always",
            "decided_by": "user",
            "asked_at": 50.0,
            "answered_at": 52.0,
        },
        {
            "key": "perm_2",
            "request_id": "r2",
            "tool_call_id": "run",
            "title": "Run pytest?",
            "subject_type": "command",
            "options": ["yes", "always", "no"],
            "outcome": None,
            "option": None,
            "decision": None,
            "decided_by": None,
            "asked_at": 53.0,
            "answered_at": None,
        },
        {
            "key": "perm_3",
            "request_id": 3,
            "tool_call_id": "v1edit",
            "title": "May I?",
            "subject_type": "tool_call",
            "options": ["yes", "always", "no"],
            "outcome": "cancelled",
            "option": None,
            "decision": "cancelled",
            "decided_by": "cancel",
            "asked_at": 54.0,
            "answered_at": 55.0,
        },
    ]


def test_an_answer_without_by_is_unknown_and_a_click_is_the_user():
    clock = Clock()
    state = SessionState(clock=clock)
    first = ask(state, clock, 1.0, permission("perm_1", 1, tc_subject("c")))
    ask(state, clock, 2.0, permission("perm_2", 2, tc_subject("c")))
    first.select("no")
    state.permission_answered(first)
    clock.now = 3.0
    Actions(state).select("perm_2", "yes")  # the view's click path
    assert [(r["decision"], r["decided_by"]) for r in state.records("permissions")] == [
        ("reject_once", None),
        ("allow_once", "user"),
    ]
    assert state.permission_times == {"perm_1": (1.0, 2.0), "perm_2": (2.0, 3.0)}
    row = state.records("tool_calls")[0]  # the latest request about the tool call
    assert (row["permission"], row["decision"], row["decided_by"]) == (True, "allow_once", "user")


TRACE = [
    {
        "dir": "out",
        "t": 0.001,
        "kind": "message",
        "message": {"jsonrpc": "2.0", "id": 0, "method": "initialize"},
    },
    {
        "dir": "in",
        "t": 0.01,
        "kind": "message",
        "message": {"jsonrpc": "2.0", "id": 0, "result": {}},
        "size": 40,
    },
    {
        "dir": "in",
        "t": 0.02,
        "kind": "message",
        "message": {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {"sessionId": "s1", "update": {"sessionUpdate": "agent_message_chunk"}},
        },
        "session": "s1",
        "size": 99,
    },
    {"dir": "in", "t": 0.03, "kind": "message", "message": {"jsonrpc": "2.0", "id": 5, "error": {"code": 1}}},
    {"dir": "in", "t": 0.04, "kind": "stderr", "text": "héllo"},
    {"dir": "in", "t": 0.05, "kind": "stdout", "text": "not json", "size": 9},
    {"dir": "out", "t": 0.06, "kind": "message", "message": [{"jsonrpc": "2.0", "method": "x"}], "size": 30},
    "not an entry",
    {
        "dir": "out",
        "t": 0.07,
        "kind": "message",
        "message": {"id": 1, "method": "m"},
        "truncated": True,
        "size": 7,
    },
]


def test_traffic_rows_read_the_provider_in_the_trace_format():
    state = SessionState()
    assert state.records("traffic") == []
    state.traffic_source = lambda: iter(TRACE)
    rows = state.records("traffic")
    assert [tuple(row.values()) for row in rows] == [
        (0, "out", 0.001, "request", "initialize", None, 0, 46),
        (1, "in", 0.01, "response", None, None, 0, 40),
        (2, "in", 0.02, "notification", "session/update", "agent_message_chunk", None, 99),
        (3, "in", 0.03, "error", None, None, 5, 43),
        (4, "in", 0.04, "stderr", None, None, None, 6),
        (5, "in", 0.05, "stdout", None, None, None, 9),
        (6, "out", 0.06, "batch", None, None, None, 30),
        (8, "out", 0.07, "request", "m", None, 1, 7),
    ]
    assert [list(row) for row in rows] == [list(COLUMNS["traffic"])] * len(rows)


def test_traffic_rows_take_given_columns_as_they_are():
    state = SessionState()
    given = {"index": 41, "direction": "in", "time": 1.5, "kind": "request", "method": "fs/read", "id": 9}
    state.traffic_source = lambda: [given]
    assert state.records("traffic") == [{**given, "update": None, "size": None}]


def test_unknown_kind_lists_the_kinds():
    state = SessionState()
    for method in (state.records, state.frame):
        with pytest.raises(ValueError, match="unknown table 'tools'; choose one of " + ", ".join(KINDS)):
            method("tools")


def test_rows_are_json_friendly_for_every_kind():
    state, _ = session_of_everything()
    state.traffic_source = lambda: TRACE
    for kind in KINDS:
        rows = state.records(kind)
        assert rows and json.loads(json.dumps(rows)) == rows, kind


def test_elicitation_rows_keep_values_and_times_never_a_query():
    state, _ = session_of_everything()
    form, url = state.records("elicitations")
    assert (form["values"], form["action"], form["asked_at"], form["answered_at"]) == (
        {"n": 4},
        "accept",
        60.0,
        61.0,
    )
    assert (url["url"], url["status"], url["action"], url["answered_at"]) == (
        "https://a.b/c",
        "pending",
        None,
        None,
    )


# -- pandas -------------------------------------------------------------------------------------
@pytest.fixture
def pd():
    return pytest.importorskip("pandas")


def test_frames_have_the_columns_and_dtypes(pd):
    state, _ = session_of_everything()
    state.traffic_source = lambda: TRACE
    frames = {kind: state.frame(kind) for kind in KINDS}
    for kind, df in frames.items():
        assert list(df.columns) == list(COLUMNS[kind]) and len(df) == len(state.records(kind))
    calls = frames["tool_calls"]
    assert str(calls["first_seen"].dtype).startswith("datetime64") and str(calls["first_seen"].dt.tz) == "UTC"
    assert calls["first_seen"][0] == pd.Timestamp(10.0, unit="s", tz="UTC")
    assert calls["last_seen"][0] - calls["first_seen"][0] == pd.Timedelta(seconds=6)
    assert calls["duration"].dtype == "float64" and pd.isna(calls["duration"][2])
    assert calls["updates"].dtype == "Int64" and calls["permission"].dtype == "boolean"
    assert calls["exit_code"].dtype == object and calls["exit_code"][3] == [None, None]
    assert calls["files"][1] == ["/w/app.py", "/w/new.md", "/w/old.md"]
    terms = frames["terminals"]
    assert terms["exit_code"].dtype == "Int64" and terms["bytes"].dtype == "Int64"
    assert terms["exit_code"].tolist()[0] == 0 and pd.isna(terms["exit_code"][1])
    perms = frames["permissions"]
    assert str(perms["answered_at"].dtype).startswith("datetime64") and pd.isna(perms["answered_at"][1])
    assert frames["messages"]["blocks"].tolist() == [1, 2]
    sent = frames["session_messages"]
    assert sent["chunks"].tolist() == [1] and sent["last_seen"][0] == pd.Timestamp(35.0, unit="s", tz="UTC")
    traffic = frames["traffic"]
    assert traffic["time"].dtype == "float64" and traffic["size"].dtype == "Int64"


def test_frame_exit_codes_are_integers_when_no_tool_call_has_several(pd):
    state, _ = session_of_everything()
    del state.tool_calls["two"]
    calls = state.frame("tool_calls")
    assert calls["exit_code"].dtype == "Int64" and calls["exit_code"][0] == 0


def test_an_empty_state_gives_empty_frames_with_columns(pd):
    state = SessionState()
    for kind in KINDS:
        df = state.frame(kind)
        assert df.empty and list(df.columns) == list(COLUMNS[kind])


def test_frame_without_pandas_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)  # `import pandas` raises ImportError
    with pytest.raises(ImportError, match=r'pip install "acp_notebook\[pandas\]"'):
        SessionState().frame("tool_calls")
    assert SessionState().records("tool_calls") == []


# -- live: who decided, through the desk and the view ----------------------------------------------
DEMO = "python -m acp_notebook.demo_agent"
PROMPT = "Fix the failing test and run the test suite."


@pytest.fixture
async def agent(monkeypatch):
    monkeypatch.delenv("ACP_AUTO_ANSWER", raising=False)
    agent = await start_agent(DEMO, env={"ACP_DEMO_SPEED": "0"})
    yield agent
    await agent.close()


async def test_live_handler_answers_are_decided_by_the_handler(agent, tmp_path, pd):
    session = await agent.new_session(str(tmp_path))
    session.permission_handler = lambda request: "allow-once"
    assert await asyncio.wait_for(session.prompt(PROMPT), TIMEOUT) == "end_turn"
    perms = session.state.records("permissions")
    assert perms and {(p["decision"], p["decided_by"]) for p in perms} == {("allow_once", "handler")}
    assert all(p["asked_at"] <= p["answered_at"] for p in perms)
    calls = {row["id"]: row for row in session.state.records("tool_calls")}
    asked = {p["tool_call_id"] for p in perms}
    assert asked <= set(calls) and all(calls[i]["decided_by"] == "handler" for i in asked)
    assert all(row["permission"] is (row["id"] in asked) for row in calls.values())
    assert all(row["updates"] >= 1 and row["duration"] >= 0 for row in calls.values())
    run = next(row for row in calls.values() if row["kind"] == "execute")
    assert run["exit_code"] == 0
    (term,) = session.state.records("terminals")
    assert term["exit_code"] == 0 and term["bytes"] > 0 and term["duration"] >= 0
    assert session.state.frame("tool_calls")["decided_by"].dropna().unique().tolist() == ["handler"]


async def test_live_clicks_are_the_user_and_a_cancel_is_cancel(agent, tmp_path):
    session = await agent.new_session(str(tmp_path))
    turn = asyncio.ensure_future(session.prompt(PROMPT))
    await until_async(lambda: session.pending_permissions, TIMEOUT, message="a permission request")
    first = session.pending_permissions[0]
    SessionActions(session).select(first.key, "allow-once")  # what a click on the card does
    await until_async(
        lambda: [p for p in session.pending_permissions if p is not first],
        TIMEOUT,
        message="a second request",
    )
    await session.cancel()
    await asyncio.wait_for(turn, TIMEOUT)
    rows = session.state.records("permissions")
    assert [(r["key"], r["decision"], r["decided_by"]) for r in rows[:2]] == [
        (first.key, "allow_once", "user"),
        (rows[1]["key"], "cancelled", "cancel"),
    ]
    stamped = [r["answered_at"] for r in session.state.records("permissions")[:2]]
    assert all(isinstance(t, float) for t in stamped) and stamped == sorted(stamped)


# -- replays: the same tables -------------------------------------------------------------------
def test_a_replayed_session_has_the_same_tables(pd):
    import acp_notebook

    replay = acp_notebook.replay("demo_v2.jsonl")  # a shipped trace, at its end
    try:
        calls, perms = replay.state.records("tool_calls"), replay.state.records("permissions")
        columns = list(replay.state.frame("permissions").columns)
    finally:
        replay.close()
    assert [row["id"] for row in calls][:2] == ["call_read", "call_edit"]
    assert all(row["updates"] >= 1 for row in calls)
    assert perms and all(p["outcome"] == "selected" and p["answered_at"] is not None for p in perms)
    assert columns == list(COLUMNS["permissions"])


async def test_a_live_sessions_traffic_table_reads_its_recorded_messages():
    from acp_notebook import start_agent

    agent = await start_agent(
        "python -m acp_notebook.demo_agent --scenario echo", env={"ACP_DEMO_SPEED": "0"}
    )
    session = await agent.new_session()
    await session.prompt("hello")
    rows = session.state.records("traffic")
    assert rows and {"session/prompt", "session/update"} <= {r["method"] for r in rows}
    assert {r["direction"] for r in rows} == {"in", "out"}
    await agent.close()
