"""The shipped trace of the real Claude's subagents (``claude_subagents_v2.jsonl``): what it holds, and
that it runs again through the replay agent, with no key and no node, into the same tree.

Recorded by ``python tests/real_agents/record_claude.py --subagents`` (claude-agent-acp 0.101.0, v2,
Manual mode, against the mock model): a foreground ``Agent`` call whose child asks permission for a
Bash under its own ``sessionId``; a background one listed in the parent's ``background`` whose
permission request comes after the parent's turn ended; then the agent's own task-notification turn.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import acp_notebook
from acp_notebook.protocol import trace
from acp_notebook.protocol.state import SessionState
from acp_notebook.traces import path
from tests.support import until_async

NAME = "claude_subagents_v2.jsonl"
PROMPT = "[sub] Have a subagent create child.txt, and another write notes.txt in the background."
NOTIFIED = "The background subagent wrote notes.txt."
ENV = {"PYTHONPATH": str(Path(__file__).resolve().parents[1])}


def messages() -> list[dict[str, Any]]:
    """The trace's JSON-RPC messages, in order, each with its direction under ``"dir"``."""
    _, entries = trace.parse(path(NAME).read_text(encoding="utf-8").splitlines())
    return [{**e["message"], "dir": e["dir"]} for e in entries if e["kind"] == "message"]


def updates(of: str | None = None) -> list[tuple[int, str, dict[str, Any]]]:
    """(position, session id, update) of every ``session/update``, of one session if ``of``."""
    found = []
    for index, m in enumerate(messages()):
        if m.get("method") == "session/update" and of in (None, m["params"]["sessionId"]):
            found.append((index, m["params"]["sessionId"], m["params"]["update"]))
    return found


def root_id() -> str:
    """The session ``session/new`` created."""
    new = next(m["id"] for m in messages() if m.get("method") == "session/new")
    return next(m["result"]["sessionId"] for m in messages() if m.get("id") == new and "result" in m)


def children() -> list[str]:
    """The child session ids, in announcement order."""
    announced = [u["sessionId"] for _, _, u in updates(root_id()) if u["sessionUpdate"] == "subagent_update"]
    return list(dict.fromkeys(announced))


def test_the_trace_holds_a_foreground_and_a_background_subagent() -> None:
    root, (fg, bg) = root_id(), children()
    requests = [(i, m) for i, m in enumerate(messages()) if m.get("method") == "session/request_permission"]
    asked = [(i, m["params"]["sessionId"]) for i, m in requests]
    assert [s for _, s in asked] == [fg, bg], "each child asks under its own sessionId"
    for child in (fg, bg):
        first = next(i for i, sid, _ in updates() if sid == child)
        announce, info = next((i, u) for i, _, u in updates(root) if u.get("sessionId") == child)
        assert announce < first, "announced on the parent before anything under the child's id"
        assert info["capabilities"] == {"cancel": {}} and info["state"]["state"] == "running"
    states = [(i, u) for i, _, u in updates(root) if u["sessionUpdate"] == "state_update"]
    turn_end = next(i for i, u in states if u["state"] == "idle" and u.get("stopReason") == "end_turn")
    assert dict(states)[turn_end]["background"] == [{"type": "subagent", "sessionId": bg}]
    assert asked[1][0] > turn_end, "the background child asks after the parent's turn ended"
    prompts = [i for i, m in enumerate(messages()) if m.get("method") == "session/prompt"]
    agent_turn = [i for i, u in states if i > asked[1][0] and u["state"] == "running"]
    assert len(prompts) == 1 and agent_turn, "the agent starts a turn of its own, with no prompt"
    kinds = {u["sessionUpdate"] for _, _, u in updates(root)}
    assert {"subagent_update", "session_message"} <= kinds
    views = [u for _, s, u in updates() if u["sessionUpdate"] == "session_message" and s == fg]
    assert views and views[0]["senderSessionId"] == root and views[0]["recipientSessionId"] == fg


def test_the_doctor_finds_nothing_wrong() -> None:
    assert acp_notebook.doctor(path(NAME)) == []


def fold(session_id: str) -> SessionState:
    """One session's updates in the trace, and the ``tool_call`` subjects of its permission requests
    (an upsert of the call they ask about), applied in order to a fresh state by the pure reducer."""
    state = SessionState()
    for m in messages():
        params = m.get("params") if isinstance(m.get("params"), dict) else {}
        if params.get("sessionId") != session_id:
            continue
        if m["method"] == "session/update":
            state.apply(params["update"])
        elif m["method"] == "session/request_permission" and params["subject"]["type"] == "tool_call":
            state.apply({"sessionUpdate": "tool_call_update", **params["subject"]["toolCall"]})
    return state


def items(state: Any) -> dict[str, Any]:
    """What a child's state must hold: tool calls, terminals (bytes), agent messages."""
    return {
        "tool_calls": {k: tc.to_dict() for k, tc in state.tool_calls.items()},
        "terminals": {k: (t.to_dict(), t.exit_status) for k, t in state.terminals.items()},
        "messages": [m.to_dict() for m in state.messages.values() if m.role == "agent"],
    }


async def test_the_replay_agent_plays_it_into_the_same_tree() -> None:
    command = [sys.executable, "-m", "acp_notebook.replay_agent", str(path(NAME)), "--timeout", "5"]
    agent = await acp_notebook.start_agent(command, "/tmp", ENV)
    asked: list[tuple[str, bool]] = []
    try:
        session = await agent.new_session("/tmp")
        await session.set_config_option("mode", "default")

        def allow(request: Any) -> str:
            asked.append((request.session_id, session.state.run_state == "idle"))
            return "allow-once"

        session.permission_handler = allow
        assert await asyncio.wait_for(session.prompt(PROMPT), 30) == "end_turn"
        said = lambda: any(NOTIFIED in m.text for m in session.state.messages.values())  # noqa: E731
        await until_async(lambda: said() and session.state.run_state == "idle", 30, message="its turn")
    finally:
        code = await agent.close()
    fg, bg = children()
    assert list(session.subagents) == [fg, bg] and asked == [(fg, False), (bg, True)]
    for child_id in (fg, bg):
        child = session.subagents[child_id]
        assert items(child.state) == items(fold(child_id)) and child.state.tool_calls
        assert not set(child.state.tool_calls) & set(session.state.tool_calls)
        assert child.run_state == "idle" and child.title in ("Create child.txt", "Write notes.txt")
        assert [str(d) for d in child.state.diagnostics] == []
    assert [str(d) for d in session.state.diagnostics] == []
    assert [(t.origin, t.origin_kind) for t in session.turns] == [
        ("user", "human"),
        ("agent", "task-notification"),
    ]
    assert code == 0 and not [line for line in agent.stderr_tail(50) if "divergence" in line]


def test_the_replay_rebuilds_the_tree() -> None:
    rep = acp_notebook.replay(NAME)
    try:
        fg, bg = children()
        assert list(rep.subagents) == [fg, bg]
        for child_id in (fg, bg):
            assert items(rep.subagents[child_id].state) == items(fold(child_id))
        assert rep.session.turns[-1].origin == "agent"
    finally:
        rep.close()
