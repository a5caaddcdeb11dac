"""When the agent dies: pending permissions end cancelled, tool calls failed, an `error` stop."""

from __future__ import annotations

import asyncio
import os
import signal
import sys

import pytest

from acp_notebook import AgentExited, PermissionAlreadyAnswered, PermissionTooLate, start_agent
from acp_notebook.widgets.viewmodel import build_entry

from .support import until_async

DEMO = [sys.executable, "-m", "acp_notebook.demo_agent", "--speed", "0"]
TIMEOUT = 30


async def demo(tmp_path, scenario):
    agent = await start_agent([*DEMO, "--scenario", scenario])
    return agent, await agent.new_session(str(tmp_path))


async def pending_permission(session, task):
    """The permission the turn in ``task`` waits on."""
    await until_async(lambda: session.pending_permissions or task.done(), TIMEOUT, message="a permission")
    assert not task.done()
    return session.pending_permissions[0]


async def test_crash_fails_the_unfinished_tool_call_and_stops_with_the_error(tmp_path):
    agent, session = await demo(tmp_path, "crash")
    with pytest.raises(AgentExited, match="exit code 3"):
        await asyncio.wait_for(session.prompt("hi"), TIMEOUT)
    state = session.state
    assert (state.run_state, state.stop_reason) == ("idle", "error")
    assert state.stop_error["message"] == "the agent exited (exit code 3)"
    assert state.stop_error["data"]["exitCode"] == 3
    assert session.last_error == state.stop_error == session.turn.error
    tc = state.tool_calls["call_crash"]
    assert tc.status == "failed"
    assert tc.notes == [{"kind": "agent_exited", "message": "agent exited (code 3)", "exit_code": 3}]
    assert build_entry(state, "tool_call", "call_crash")["notes"] == tc.notes
    assert [d.code for d in state.diagnostics].count("agent-exited") == 1
    await agent.close()


async def test_killed_agent_cancels_its_pending_permission(tmp_path):
    agent, session = await demo(tmp_path, "permission")
    heard = []
    session.state.subscribe(heard.append)
    task = session.prompt_task("hi")
    perm = await pending_permission(session, task)
    assert build_entry(session.state, "permission", perm.key)["actionable"] is True
    os.kill(agent.process.pid, signal.SIGKILL)
    with pytest.raises(AgentExited):
        await asyncio.wait_for(task, TIMEOUT)
    assert perm.outcome == {"outcome": "cancelled"} and perm.decided_by == "agent exited"
    assert session.pending_permissions == []
    assert any((c.kind, c.id, c.fields) == ("permission", perm.key, ("outcome",)) for c in heard)
    with pytest.raises(PermissionTooLate, match=r"too late .* the agent exited"):
        perm.select(perm.option_ids[0], by="user")
    assert isinstance(PermissionTooLate("x"), PermissionAlreadyAnswered)
    assert perm.outcome == {"outcome": "cancelled"}
    entry = build_entry(session.state, "permission", perm.key)
    assert entry["actionable"] is False and entry["outcome"] == {"outcome": "cancelled"}
    assert "agent exited" in entry["too_late"]
    state = session.state
    assert (state.run_state, state.stop_reason) == ("idle", "error")
    assert state.stop_error["data"]["exitCode"] == -signal.SIGKILL
    assert state.tool_calls[perm.tool_call_id].status == "failed"
    assert state.tool_calls[perm.tool_call_id].notes[0]["kind"] == "agent_exited"
    assert session.permission_log[-1].who == "agent exited"
    await agent.close()


async def test_deliberate_close_cancels_without_recording_a_failure(tmp_path):
    agent, session = await demo(tmp_path, "permission")
    task = session.prompt_task("hi")
    perm = await pending_permission(session, task)
    await agent.close()
    with pytest.raises(AgentExited):
        await asyncio.wait_for(task, TIMEOUT)
    assert perm.outcome == {"outcome": "cancelled"} and perm.decided_by == "agent closed"
    with pytest.raises(PermissionTooLate, match="the agent was closed"):
        perm.select(perm.option_ids[0])
    state = session.state
    assert state.run_state == "idle" and state.stop_reason is None and state.stop_error is None
    assert session.last_error is None
    assert "agent-exited" not in [d.code for d in state.diagnostics]
    tc = state.tool_calls[perm.tool_call_id]
    assert tc.status == "cancelled" and tc.notes == []
