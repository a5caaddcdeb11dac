"""Subagents in everything that reads a session back (issue 19, item 8): the recorded wire folded
by session, replay, resume, the doctor, the tables, the export and the X-ray all carry the child
sessions — each child's items in its own state, never in its parent's."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import acp_notebook
from acp_notebook.client.agent import Agent
from acp_notebook.playback.memory import MemoryStream
from acp_notebook.playback.xray_source import XRaySource
from acp_notebook.protocol import trace
from acp_notebook.protocol.session_tree import tree_of
from acp_notebook.protocol.state import SessionState
from acp_notebook.widgets.session_view import SessionView
from tests.real_agents.referee import fold

from .support import b64, until_async, update
from .support import recording as recording  # the autouse recording comm (the view tests')
from .test_client_framing import Peer
from .test_replay import snapshot
from .test_subagents import announce, ask
from .test_xray import _replies, _reply

CHILD, GRANDCHILD = "child-1", "grand-1"
TASK = {"type": "text", "text": "Look around"}


def chunk(session_id: str, message_id: str = "m1", text: str = "hi") -> dict[str, Any]:
    """An agent message chunk of ``session_id`` (every session says ``m1``: ids are per session)."""
    body = {"sessionUpdate": "agent_message_chunk", "messageId": message_id}
    return update({**body, "content": {"type": "text", "text": text}}, session_id)


def talk(session_id: str, message_id: str, content: list[Any], **fields: Any) -> dict[str, Any]:
    """A ``session_message`` upsert in ``session_id``'s transcript."""
    body = {"sessionUpdate": "session_message", "messageId": message_id, "content": content, **fields}
    return update(body, session_id)


def call(session_id: str, call_id: str, **fields: Any) -> dict[str, Any]:
    return update({"sessionUpdate": "tool_call_update", "toolCallId": call_id, **fields}, session_id)


def terminal(session_id: str, terminal_id: str, data: bytes) -> dict[str, Any]:
    body = {"sessionUpdate": "terminal_update", "terminalId": terminal_id, "command": "ls"}
    return update({**body, "output": {"data": b64(data)}, "exitStatus": {"exitCode": 0}}, session_id)


def conversation() -> list[dict[str, Any]]:
    """A parent with a child (the task's two views, tool call, terminal, message, a report streamed
    before its upsert, permission) and a grandchild, each using ids another session uses too."""
    return [
        update({"sessionUpdate": "state_update", "state": "running"}),
        chunk("s1", text="root says"),
        call("s1", "c1", title="Read", kind="read", status="completed"),
        announce(title="Explore", description="Look around", capabilities={"cancel": {}}),
        talk("s1", "out-1", [TASK], recipientSessionId=CHILD, recipientMessageId="in-1"),
        talk(CHILD, "in-1", [TASK], senderSessionId="s1", senderMessageId="out-1"),
        call(CHILD, "c1", title="Bash", kind="execute", status="in_progress"),
        terminal(CHILD, "t1", "café\n".encode()),
        call(CHILD, "c1", content=[{"type": "terminal", "terminalId": "t1"}], status="completed"),
        chunk(CHILD, text="child says"),
        update({"sessionUpdate": "session_message_chunk", "messageId": "out-2", "content": TASK}, CHILD),
        update({"sessionUpdate": "session_message", "messageId": "out-2", "recipientSessionId": "s1"}, CHILD),
        announce(GRANDCHILD, CHILD, title="Deeper"),
        call(GRANDCHILD, "g1", title="Edit", kind="edit"),
        chunk(GRANDCHILD, text="grandchild says"),
        ask(41, CHILD, "c2"),
        chunk("s1", "m2", "root again"),
    ]


async def record(path: Path, script: list[dict[str, Any]], answer: bool = True) -> tuple[Agent, Any]:
    """Play ``script`` to a recording client (``answer``: the child's permission allowed once);
    the agent stays open (close it)."""
    peer = Peer(2)
    agent = Agent(peer.stream, record=path)
    await agent.initialize(2)
    session = await agent.new_session("/tmp")
    session.prompt_task("go")
    for message in script:
        peer.send(message)
    await peer.settled()
    for request in session.pending_permissions if answer else ():
        request.select("ok")
    peer.send(update({"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"}))
    await peer.settled()
    return agent, session


def tree_snapshot(node: Any) -> dict[str, Any]:
    """A session's (or a subagent's) state and every descendant's, by id."""
    return {
        "state": snapshot(node.state),
        "session_messages": [m.to_dict() for m in node.state.session_messages.values()],
        "children": {k: tree_snapshot(c) for k, c in node.subagents.items()},
    }


def wire_messages(path: Path) -> list[dict[str, Any]]:
    """Every message the agent sent, as the trace file holds it."""
    _, entries = trace.parse(path.read_text().splitlines())
    return [e["message"] for e in entries if e["dir"] == "in" and isinstance(e.get("message"), dict)]


# -- the fold of the recorded wire --------------------------------------------------------------------
async def test_child_state_is_separate(tmp_path: Path) -> None:
    """Folding the recorded wire by session id gives each session exactly its own state."""
    path = tmp_path / "sub.jsonl"
    agent, session = await record(path, conversation())
    try:  # compared while open: closing the agent ends the unfinished tool calls
        check_separate(session, wire_messages(path))
    finally:
        await agent.close()


def check_separate(session: Any, messages: list[dict[str, Any]]) -> None:
    child = session.subagents[CHILD]
    grandchild = child.subagents[GRANDCHILD]
    for node in (session, child, grandchild):
        folded = fold(messages, node.session_id, 2)
        state = node.state
        assert {k: tc.to_dict() for k, tc in state.tool_calls.items()} == folded.tool_calls, node
        terminals = {k: {**t.to_dict(), "output": t.output} for k, t in state.terminals.items()}
        assert terminals == folded.terminals, node
        got = [{k: m.to_dict()[k] for k in ("messageId", "role", "content")} for m in state.messages.values()]
        assert got == [m for m in folded.messages.values() if m["role"] == "agent"], node
        views = {k: m.to_dict() for k, m in state.session_messages.items()}
        assert views == folded.session_messages, node
    assert list(session.state.tool_calls) == ["c1"] and session.state.tool_calls["c1"].title == "Read"
    assert list(child.state.tool_calls) == ["c1", "c2"] and child.state.tool_calls["c1"].title == "Bash"
    assert session.state.terminals == {} and list(child.state.terminals) == ["t1"]
    assert [m.text for m in session.state.messages.values()] == ["root says", "root again"]
    assert [m.text for m in child.state.messages.values()] == ["child says"]
    assert list(grandchild.state.tool_calls) == ["g1"] and list(session.state.subagents) == [CHILD]
    assert list(session.state.session_messages) == ["out-1"]
    assert list(child.state.session_messages) == ["in-1", "out-2"]
    assert child.state.session_messages["out-2"].chunks == 1  # streamed before its upsert named "s1"
    (asked,) = session.state.permissions.values()  # the card is the root's; the subject the child's
    assert asked.session_id == CHILD and child.state.permissions == {}


# -- replay and resume -----------------------------------------------------------------------------------
async def test_replay_subagents(tmp_path: Path) -> None:
    """``replay(path)`` rebuilds the tree: each child's state equals the live child's."""
    path = tmp_path / "sub.jsonl"
    agent, session = await record(path, conversation())
    live = tree_snapshot(session)
    await agent.close()
    rep = acp_notebook.replay(path)
    try:
        assert rep.session is not None and tree_snapshot(rep.session) == live
        assert list(rep.subagents) == [CHILD] and rep.subagents[CHILD].title == "Explore"
        assert rep.session.subagents[CHILD].subagents[GRANDCHILD].parent_id == CHILD
        assert rep.state is rep.session.state and live["children"][CHILD]["session_messages"]
        announced = next(i for i, e in enumerate(rep.entries) if GRANDCHILD in json.dumps(e))
        rep.seek(announced)  # before the grandchild's announcement: not there yet
        assert GRANDCHILD not in rep.subagents[CHILD].subagents
        rep.seek(len(rep))
        assert tree_snapshot(rep.session) == live
    finally:
        rep.close()


def resuming_agent(history: list[dict[str, Any]]) -> MemoryStream:
    """A v2 agent that replays ``history`` (then an idle snapshot) before answering each resume."""
    stream: MemoryStream

    def on_sent(message: Any) -> None:
        if message.get("method") == "initialize":
            result = {"protocolVersion": 2, "agentCapabilities": {"sessionCapabilities": {"resume": {}}}}
            stream.push({"jsonrpc": "2.0", "id": message["id"], "result": result})
        elif message.get("method") == "session/resume":
            for line in history:
                stream.push(line)
            stream.push(update({"sessionUpdate": "state_update", "state": "idle"}))
            stream.push({"jsonrpc": "2.0", "id": message["id"], "result": {}})

    stream = MemoryStream(on_sent=on_sent)
    return stream


async def test_resume_rebuilds_subagents() -> None:
    """The replayed ``subagent_update``s and child updates before the resume's answer rebuild the
    tree — on a first resume and when the same session is resumed again."""
    history = [m for m in conversation() if m.get("method") == "session/update"]
    agent = Agent(resuming_agent(history))
    await agent.initialize(2)
    try:
        first = await agent.resume_session("s1", "/tmp", checkpoints=False)
        again = await agent.resume_session("s1", "/tmp", checkpoints=False)
        for session in (first, again):
            child = session.subagents[CHILD]
            assert child.title == "Explore" and child.state.tool_calls["c1"].title == "Bash"
            assert child.state.terminals["t1"].output == "café\n".encode()
            assert list(child.subagents[GRANDCHILD].state.tool_calls) == ["g1"]
            assert "c2" not in child.state.tool_calls  # the permission request was live, not history
            assert list(child.state.session_messages) == ["in-1", "out-2"]
        assert agent.unknown_sessions == {} and "subagent-not-moved" not in [
            d.code for d in again.state.diagnostics
        ]
        assert tree_snapshot(again) == tree_snapshot(first)
        assert agent.sessions["s1"] is again
    finally:
        await agent.close()


# -- the tree of sessions in a trace ----------------------------------------------------------------------
async def test_the_trace_keeps_every_early_child_message_and_the_tree_places_them(tmp_path: Path) -> None:
    """A child's messages before its announcement are counted by the client (the first 20 as
    diagnostics) but every one stays in the ring and the trace, where the tree places it."""
    early = [call(CHILD, f"early{n}") for n in range(30)]
    path = tmp_path / "early.jsonl"
    agent, session = await record(path, [*early, *conversation()])
    try:
        assert agent.unknown_sessions == {CHILD: 30}
        _, entries = trace.parse(path.read_text().splitlines())
        for kept in (entries, agent.traffic):
            named = [e for e in kept if e.get("session") == CHILD and "early" in json.dumps(e)]
            assert len(named) == 30
        tree = tree_of(entries)
        assert tree.parent(CHILD) == "s1" and tree.parent(GRANDCHILD) == CHILD
        assert tree.descendants("s1") == [CHILD, GRANDCHILD] and tree.roots == ["s1"]
        assert tree.depth(GRANDCHILD) == 2 and tree.root_of(GRANDCHILD) == "s1"
        found = acp_notebook.doctor(path)
        assert [f.code for f in found] == ["child-before-announcement"]
        first_early = next(i for i, e in enumerate(entries) if "early0" in json.dumps(e))
        assert found[0].index == first_early and "30 message(s)" in found[0].message
        assert "MUST be sent" in found[0].cite
        assert [f.code for f in acp_notebook.doctor(session)] == ["child-before-announcement"]
        assert [f.code for f in acp_notebook.doctor(session.subagents[CHILD])] == [
            "child-before-announcement"
        ]
        assert acp_notebook.doctor(session.subagents[CHILD].subagents[GRANDCHILD]) == []  # not its own
        assert len(session.subagents[CHILD].traffic) == len(named) + len(
            [e for e in agent.traffic if e.get("session") == CHILD and "early" not in json.dumps(e)]
        )
    finally:
        await agent.close()


def test_a_later_announcement_never_moves_a_child_nor_makes_a_loop() -> None:
    def entry(parent: str, child: str) -> dict[str, Any]:
        return {"dir": "in", "kind": "message", "message": announce(child, parent), "session": parent}

    tree = tree_of([entry("s1", "a"), entry("a", "b"), entry("s2", "a"), entry("b", "s1"), entry("a", "a")])
    assert tree.parents == {"a": "s1", "b": "a"} and tree.roots == ["s1", "s2"]
    assert tree.family("a") == {"a", "b"} and tree.children("s2") == []


def test_doctor_places_early_child_messages_and_sessions_never_announced() -> None:
    def inn(method: str, params: dict[str, Any], request_id: int | None = None) -> dict[str, Any]:
        message = {"jsonrpc": "2.0", "method": method, "params": params}
        message.update({"id": request_id} if request_id is not None else {})
        return {"dir": "in", "kind": "message", "message": message}

    def sent(message: dict[str, Any]) -> dict[str, Any]:
        return {"dir": "out", "kind": "message", "message": {"jsonrpc": "2.0", **message}}

    def note(session_id: str, **body: Any) -> dict[str, Any]:
        return inn("session/update", {"sessionId": session_id, "update": body})

    opening = [
        sent({"id": 0, "method": "initialize", "params": {"protocolVersion": 2}}),
        {
            "dir": "in",
            "kind": "message",
            "message": {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": 2}},
        },
        sent({"id": 1, "method": "session/new", "params": {"cwd": "/"}}),
        {
            "dir": "in",
            "kind": "message",
            "message": {"jsonrpc": "2.0", "id": 1, "result": {"sessionId": "s1"}},
        },
    ]
    entries = [
        *opening,
        note("s1", sessionUpdate="session_message", messageId="m", recipientSessionId="kid"),
        inn("session/request_permission", {"sessionId": "kid", "options": []}, 9),
        note("s1", sessionUpdate="subagent_update", sessionId="kid"),
        note("kid", sessionUpdate="tool_call_update", toolCallId="after"),
        note("ghost", sessionUpdate="tool_call_update", toolCallId="x"),
        note("ghost", sessionUpdate="tool_call_update", toolCallId="y"),
    ]
    found = acp_notebook.doctor(entries)
    assert [(f.code, f.index) for f in found] == [
        ("child-before-announcement", 4),
        ("unannounced-session", 8),
    ]
    assert (
        "2 message(s) for child session 'kid'" in found[0].message
        and "(entry 6, on 's1')" in found[0].message
    )
    assert "2 message(s) for session 'ghost'" in found[1].message
    assert all(f.severity == "error" for f in found)
    unopened = [f.code for f in acp_notebook.doctor(entries[4:])]  # no opening seen: ghost unflagged
    assert unopened == ["child-before-announcement"]


# -- tables ----------------------------------------------------------------------------------------------
async def test_tables_with_descendants_carry_each_session(tmp_path: Path) -> None:
    agent, session = await record(tmp_path / "t.jsonl", conversation())
    try:
        assert [r["id"] for r in session.records("tool_calls")] == ["c1"]  # its own, as state.records
        assert session.records("messages") == session.state.records("messages")
        assert session.records("traffic") == session.state.records("traffic")
        rows = session.records("tool_calls", descendants=True)
        assert [(r["session_id"], r["parent_session_id"], r["id"], r["title"]) for r in rows] == [
            ("s1", None, "c1", "Read"),
            (CHILD, "s1", "c1", "Bash"),
            (CHILD, "s1", "c2", "Run"),
            (GRANDCHILD, CHILD, "g1", "Edit"),
        ]
        by_key = {(r["session_id"], r["id"]): r for r in rows}
        assert by_key[(CHILD, "c2")]["permission"] and by_key[(CHILD, "c2")]["decision"] == "allow_once"
        assert not by_key[("s1", "c1")]["permission"] and not by_key[(CHILD, "c1")]["permission"]
        assert by_key[(CHILD, "c1")]["exit_code"] == 0
        messages = session.records("messages", descendants=True)
        keys = [(r["session_id"], r["id"], r["text"]) for r in messages]
        assert keys == [
            ("s1", "m1", "root says"),
            ("s1", "m2", "root again"),
            (CHILD, "m1", "child says"),
            (GRANDCHILD, "m1", "grandchild says"),
        ]  # the same id in three sessions: three rows
        talks = session.records("session_messages", descendants=True)
        assert [
            (r["session_id"], r["id"], r["sender_session_id"], r["recipient_session_id"]) for r in talks
        ] == [
            ("s1", "out-1", None, CHILD),
            (CHILD, "in-1", "s1", None),
            (CHILD, "out-2", None, "s1"),
        ]  # each session's own view of the one message
        (perm,) = session.records("permissions", descendants=True)
        assert (perm["session_id"], perm["parent_session_id"], perm["tool_call_id"]) == (CHILD, "s1", "c2")
        terminals = session.records("terminals", descendants=True)
        assert [(r["session_id"], r["id"], r["bytes"]) for r in terminals] == [(CHILD, "t1", 6)]
        child = session.subagents[CHILD]
        assert [r["id"] for r in child.records("tool_calls", descendants=True)] == ["c1", "c2", "g1"]
        assert child.records("tool_calls")[1]["permission"]  # its request, on the root's desk
        traffic = session.records("traffic", descendants=True)
        assert {r["session_id"] for r in traffic} == {"s1", CHILD, GRANDCHILD}
        assert len(traffic) == len(session.traffic) + len(child.state.records("traffic")) + len(
            child.subagents[GRANDCHILD].state.records("traffic")
        )
        asked = next(r for r in child.state.records("traffic") if r["method"] == "session/request_permission")
        assert asked["id"] == 41
        frame = session.frame("tool_calls", descendants=True)
        assert list(frame.columns[:2]) == ["session_id", "parent_session_id"] and len(frame) == 4
        assert str(frame["first_seen"].dtype).startswith("datetime64")
    finally:
        await agent.close()


def test_a_childs_request_is_not_about_the_parents_tool_call_of_the_same_id() -> None:
    from acp_notebook.protocol.permission import PermissionRequest

    state = SessionState()
    state.apply({"sessionUpdate": "tool_call_update", "toolCallId": "c1", "title": "mine"})
    state.apply({"sessionUpdate": "subagent_update", "sessionId": CHILD})
    params = ask(1, CHILD, "c1")["params"]
    state.add_permission(PermissionRequest("perm_1", 1, params), subject=False)
    assert state.records("tool_calls")[0]["permission"] is False
    assert state.records("permissions")[0]["tool_call_id"] == "c1"


# -- export ------------------------------------------------------------------------------------------------
async def test_export_json_holds_each_child_under_its_parent(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    agent, session = await record(path, conversation())
    try:
        doc = json.loads(acp_notebook.export_json(session, tmp_path / "live.json").read_text())
    finally:
        await agent.close()
    child = doc["state"]["subagents"][CHILD]
    assert child["announced"]["title"] == "Explore" and child["parent_session_id"] == "s1"
    assert list(child["state"]["tool_calls"]) == ["c1", "c2"] and list(doc["state"]["tool_calls"]) == ["c1"]
    assert [m["content"] for m in child["state"]["messages"]] == [[{"type": "text", "text": "child says"}]]
    assert [m["messageId"] for m in child["state"]["session_messages"]] == ["in-1", "out-2"]
    assert [m["messageId"] for m in doc["state"]["session_messages"]] == ["out-1"]
    grandchild = child["state"]["subagents"][GRANDCHILD]
    assert grandchild["session_id"] == GRANDCHILD and list(grandchild["state"]["tool_calls"]) == ["g1"]
    assert {e.get("session") for e in doc["trace"]} == {"s1", CHILD, GRANDCHILD}
    assert any("child says" in json.dumps(e) for e in doc["trace"])
    rep = acp_notebook.replay(path)
    try:
        replayed = json.loads(acp_notebook.export_json(rep, tmp_path / "replay.json").read_text())
    finally:
        rep.close()
    assert replayed["session_id"] == "s1" and replayed["state"]["subagents"] == doc["state"]["subagents"]
    bare = SessionState()
    bare.apply({"sessionUpdate": "subagent_update", "sessionId": CHILD, "title": "T"})
    (only,) = json.loads(acp_notebook.export_json(bare, tmp_path / "bare.json").read_text())["state"][
        "subagents"
    ].values()
    assert only == {"announced": {"sessionUpdate": "subagent_update", "sessionId": CHILD, "title": "T"}}


# -- X-ray ---------------------------------------------------------------------------------------------------
async def test_the_live_xray_lists_the_tree_with_a_session_column_and_filter(tmp_path: Path) -> None:
    """A live session's X-ray holds its subagents' messages (a child's early ones join when it is
    announced), names each row's session, lists the sessions and filters by one."""
    early = [call(CHILD, "early")]
    agent, session = await record(tmp_path / "x.jsonl", [*early, *conversation()])
    source = XRaySource.live(session)
    try:
        ring = agent.traffic
        everything = source.rows(0, 500)
        sessions = {ring[r["i"]].get("session") for r in everything["rows"]}
        assert sessions == {None, "s1", CHILD, GRANDCHILD}
        tagged = [i for i, e in enumerate(ring) if e.get("session") in ("s1", CHILD, GRANDCHILD)]
        assert set(tagged) <= {r["i"] for r in everything["rows"]}
        first_early = next(i for i, e in enumerate(ring) if "early" in json.dumps(e))
        assert everything["rows"][[r["i"] for r in everything["rows"]].index(first_early)]["session"] == CHILD
        assert source.sessions() == [
            {"id": "s1", "parent": None, "depth": 0, "title": None},
            {"id": CHILD, "parent": "s1", "depth": 1, "title": "Explore"},
            {"id": GRANDCHILD, "parent": CHILD, "depth": 2, "title": "Deeper"},
        ]
        only_child = source.rows(0, 500, session=CHILD)
        assert only_child["total"] == len([e for e in ring if e.get("session") == CHILD])
        assert {r["session"] for r in only_child["rows"]} == {CHILD}
        words = source.rows(0, 500, "tool_call_update", session=GRANDCHILD)["rows"]
        assert [r["tool"] for r in words] == ["g1"]
        assert source.position_of(first_early, "", CHILD) == 0
        assert source.position_of(first_early, "", GRANDCHILD) is None
    finally:
        source.close()
        await agent.close()


async def test_a_replay_xray_names_every_session_of_the_trace(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    agent, _ = await record(path, conversation())
    await agent.close()
    rep = acp_notebook.replay(path)
    source = XRaySource.of_replay(rep)
    try:
        assert [s["id"] for s in source.sessions()] == ["s1", CHILD, GRANDCHILD]
        assert source.rows(0, 0)["total"] == len(rep.entries)
        child_rows = source.rows(0, 500, session=CHILD)["rows"]
        assert child_rows and all(rep.entries[r["i"]].get("session") == CHILD for r in child_rows)
    finally:
        source.close()
        rep.close()


async def test_the_xray_finds_the_messages_that_built_a_childs_card(tmp_path: Path) -> None:
    """A child's card (keys ``subagent:C/...``, as the view keys them) is built by its session's
    messages only — never by the parent's tool call of the same id — and its request by the
    permission request and its answer; the subagent's own card by its ``subagent_update``."""
    path = tmp_path / "b.jsonl"
    agent, _ = await record(path, conversation())
    await agent.close()
    rep = acp_notebook.replay(path)
    source = XRaySource.of_replay(rep)
    try:
        entries = rep.entries

        def said(index: int) -> str:
            return json.dumps(entries[index].get("message"))

        child_c1 = source.built_by(f"subagent:{CHILD}/tool_call:c1", rep.state)
        assert child_c1 and all(CHILD in said(i) for i in child_c1)
        assert any('"terminalId": "t1"' in said(i) and "terminal_update" in said(i) for i in child_c1)
        root_c1 = source.built_by("tool_call:c1", rep.state)
        assert root_c1 and not set(root_c1) & set(child_c1)
        asked = source.built_by(f"subagent:{CHILD}/tool_call:c2", rep.state)
        methods = [entries[i]["message"].get("method") for i in asked]
        assert "session/request_permission" in methods and None in methods  # the request, its answer
        card = source.built_by(f"subagent:{CHILD}", rep.state)
        assert card and all('"subagent_update"' in said(i) and CHILD in said(i) for i in card)
        deep = source.built_by(f"subagent:{CHILD}/subagent:{GRANDCHILD}/tool_call:g1", rep.state)
        assert [json.loads(said(i))["params"]["sessionId"] for i in deep] == [GRANDCHILD]
    finally:
        source.close()
        rep.close()


async def test_a_replay_view_draws_the_children_it_rebuilt(recording, tmp_path: Path) -> None:
    path = tmp_path / "v.jsonl"
    agent, _ = await record(path, conversation())
    await agent.close()
    rep = acp_notebook.replay(path)
    view = rep.view(xray=True)
    try:
        view.session_view.flush_snapshot()
        order = view.session_view.snapshot["order"]
        assert f"subagent:{CHILD}" in order and f"subagent:{CHILD}/tool_call:c1" in order
        assert f"subagent:{CHILD}/subagent:{GRANDCHILD}/tool_call:g1" in order
        rep.seek(3)
        rep.seek(len(rep))  # rebuilt from the start: a new tree, drawn whole again
        view.session_view.flush_snapshot()
        assert f"subagent:{CHILD}/tool_call:c2" in view.session_view.snapshot["order"]
    finally:
        view.close()
        rep.close()


async def test_a_live_xray_pins_a_past_tree_and_finds_a_childs_card(recording, tmp_path: Path) -> None:
    """Picking a message of a live session shows the whole tree right after it (the children
    re-enacted too); picking a child's card finds the child's messages."""
    agent, session = await record(tmp_path / "p.jsonl", conversation())
    view = SessionView(session, xray=True)
    try:
        ring = agent.traffic
        asked = next(i for i, e in enumerate(ring) if '"session/request_permission"' in json.dumps(e))
        view._handle_browser_msg({"type": "xray_select", "req": 1, "index": asked - 1})
        await until_async(lambda: _replies(recording, view, 1), 20, message="the select's reply")
        assert view.read_only and view.state is not session.state
        keys = view.entry_keys
        assert f"subagent:{CHILD}/tool_call:c1" in keys and f"subagent:{CHILD}/tool_call:c2" not in keys
        view._handle_browser_msg({"type": "xray_unpin", "req": 2})
        assert f"subagent:{CHILD}/tool_call:c2" in view.entry_keys
        key = f"subagent:{CHILD}/tool_call:c2"
        view._handle_browser_msg({"type": "xray_card", "req": 3, "key": key})
        await until_async(lambda: _replies(recording, view, 3), 20, message="the card's reply")
        assert asked in _reply(recording, view, 3)["indices"]
    finally:
        view.close()
        await agent.close()


async def test_a_recorded_subagent_cancel_is_reenacted_through_the_subagent(tmp_path: Path) -> None:
    """The client's ``subagent.cancel()`` recorded: the replay cancels that child through its own
    ``cancel()`` (its pending request answered ``cancelled`` by the cancel), as live."""
    path = tmp_path / "c.jsonl"
    agent, session = await record(path, conversation(), answer=False)  # the child's request waits
    await session.subagents[CHILD].cancel()
    await until_async(lambda: session.permission_log, 5, message="the cancel's decision logged")
    live = tree_snapshot(session)
    log = [(d.who, d.outcome) for d in session.permission_log]
    await agent.close()
    rep = acp_notebook.replay(path)
    try:
        assert tree_snapshot(rep.session) == live
        assert [(d.who, d.outcome) for d in rep.session.permission_log] == log == [("cancel", "cancelled")]
        sent = [e["message"] for e in rep.agent.traffic if e["dir"] == "out"]
        assert {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": CHILD}} in sent
        cancel = next(i for i, e in enumerate(rep.entries) if e["message"].get("method") == "session/cancel")
        rep.seek(cancel + 1)  # the cancel itself, before its recorded answer: answered by the cancel
        assert rep.session.pending_permissions == [] and rep.entries[cancel + 1]["dir"] == "out"
    finally:
        rep.close()
