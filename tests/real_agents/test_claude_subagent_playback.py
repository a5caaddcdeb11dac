"""The real Claude's subagent run (claude-agent-acp 0.101, v2, against the mock model) read back:
the wire folded by session gives each session exactly its own state, the recorded traffic
replays to the same tree, the doctor places every child message, and the tables carry the child.

The run is ``test_claude.test_subagent_permission_reaches_the_user``'s: an ``Agent`` tool call in
the foreground, whose child asks before running ``touch child.txt``.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import acp_notebook
from acp_notebook.protocol import trace
from tests.real_agents.mock_anthropic import text, tool_use
from tests.real_agents.referee import fold
from tests.real_agents.test_claude import (  # noqa: F401 - the fixture
    ALLOW,
    TURN,
    V2_KINDS,
    Run,
    claude,
)
from tests.support import until_async
from tests.test_replay import snapshot

KINDS = V2_KINDS | {"subagent_update", "session_message", "session_message_chunk"}  # read against the schema


def tree_snapshot(node: Any) -> dict[str, Any]:
    return {
        "state": snapshot(node.state),
        "session_messages": [m.to_dict() for m in node.state.session_messages.values()],
        "children": {k: tree_snapshot(c) for k, c in node.subagents.items()},
    }


async def subagent_turn(run: Run) -> Any:
    """The prompt that makes Claude run a foreground subagent; its child's Bash allowed once."""
    agent_input = {
        "description": "Make a file",
        "prompt": "[child] Create the file.",
        "subagent_type": "general-purpose",
        "run_in_background": False,
    }
    run.script.prompt("[sub]", tool_use("toolu_agent", "Agent", agent_input))
    run.script.after("toolu_agent", text("The subagent is done."))
    run.script.prompt("[child]", tool_use("toolu_child", "Bash", {"command": "touch child.txt"}))
    run.script.after("toolu_child", text("Child done."))
    session = await run.manual_session()
    turn = asyncio.ensure_future(session.prompt("[sub] Have a subagent make a file."))
    try:
        await until_async(lambda: session.pending_permissions or turn.done(), TURN)
        session.pending_permissions[0].select(ALLOW)
        assert await asyncio.wait_for(turn, TURN) == "end_turn"
    finally:
        turn.cancel()
    return session


def assert_fold_is_state(wire: list[dict[str, Any]], node: Any) -> None:
    """The wire of ``node``'s session folded by the referee is its state: every tool call whole,
    every terminal to the byte, its agent messages exactly."""
    folded = fold(wire, node.session_id, 2)
    assert folded.kinds <= KINDS, folded.kinds - KINDS
    state = node.state
    assert {k: tc.to_dict() for k, tc in state.tool_calls.items()} == folded.tool_calls, node
    terminals = {k: {**t.to_dict(), "output": t.output} for k, t in state.terminals.items()}
    assert terminals == folded.terminals, node
    agent = [{k: m.to_dict()[k] for k in ("messageId", "role", "content")} for m in state.messages.values()]
    assert [m for m in agent if m["role"] == "agent"] == [
        m for m in folded.messages.values() if m["role"] == "agent"
    ], node
    views = {k: m.to_dict() for k, m in state.session_messages.items()}
    assert views == folded.session_messages and views, node


def figures(wire: list[dict[str, Any]], node: Any) -> str:
    """Wire messages vs state items of one session (the closing note's figures)."""
    mine = [
        m
        for m in wire
        if isinstance(m.get("params"), dict) and m["params"].get("sessionId") == node.session_id
    ]
    updates = sum(m.get("method") == "session/update" for m in mine)
    asks = sum(m.get("method") == "session/request_permission" for m in mine)
    state = node.state
    return (
        f"{node.session_id}: wire {updates} session/update + {asks} request_permission -> state "
        f"{len(state.tool_calls)} tool calls, {len(state.terminals)} terminals, "
        f"{len(state.messages)} messages, {len(state.session_messages)} session messages, "
        f"{len(state.subagents)} subagents"
    )


async def test_real_child_state_is_separate_and_replays(claude: Run, tmp_path: Path) -> None:  # noqa: F811
    session = await subagent_turn(claude)
    (child_id,) = session.subagents
    child = session.subagents[child_id]
    wire = claude.since(0)
    # the fold of the wire, session by session, is each one's state; nothing of the child's is the parent's
    for node in (session, child):
        assert_fold_is_state(wire, node)
    assert not set(child.state.tool_calls) & set(session.state.tool_calls)
    assert not set(child.state.terminals) & set(session.state.terminals)
    assert child.state.tool_calls and list(session.state.subagents) == [child_id]
    print(figures(wire, session))
    print(figures(wire, child))
    # the traffic recorded replays to the same tree
    path = tmp_path / "claude_sub.jsonl"
    lines = [trace.header("test", ["claude-agent-acp"]), *claude.agent.traffic]
    path.write_text("\n".join(trace.dumps(e) for e in lines) + "\n")
    live = tree_snapshot(session)
    rep = acp_notebook.replay(path)
    try:
        assert tree_snapshot(rep.session) == live
        assert rep.subagents[child_id].title == child.title
    finally:
        rep.close()
    # the doctor: no child message before its announcement; the tables carry the child
    codes = [f.code for f in acp_notebook.doctor(session)]
    assert "child-before-announcement" not in codes and "unannounced-session" not in codes, codes
    rows = session.records("tool_calls", descendants=True)
    assert {(r["session_id"], r["parent_session_id"]) for r in rows} == {(child_id, session.session_id)}
    asked = [r for r in rows if r["permission"]]
    assert [(r["session_id"], r["decision"]) for r in asked] == [(child_id, "allow_once")]
    doc = json.loads(acp_notebook.export_json(session, tmp_path / "e.json").read_text())
    assert doc["state"]["subagents"][child_id]["state"]["tool_calls"].keys() == child.state.tool_calls.keys()
    assert (claude.project / "child.txt").exists()
    await claude.close_and_check()
