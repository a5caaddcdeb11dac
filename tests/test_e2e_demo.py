"""End to end: start_agent on the real demo agent subprocess, in v2 and in v1."""

from __future__ import annotations

import asyncio
import os
import sys

import pytest

from acp_notebook import AgentExited, AgentStartError, ProtocolVersionError, start_agent
from acp_notebook.demo_agent import APP_NEW, APP_OLD, TERMINAL_OUTPUT
from acp_notebook.protocol import unified_patch

from .support import until_async

DEMO = [sys.executable, "-m", "acp_notebook.demo_agent", "--speed", "0"]
TOOL_CALLS = ["call_read", "call_edit", "call_test", "call_search", "call_index", "call_fetch", "call_think"]
TIMEOUT = 30


async def demo(tmp_path, *args, **kwargs):
    agent = await start_agent([*DEMO, *args], **kwargs)
    session = await agent.new_session(str(tmp_path))
    return agent, session


def always(option_id):
    return lambda request: option_id


async def answer_by_hand(session, choices: dict[str, str], task: asyncio.Task) -> list:
    """Answer permissions through ``pending_permissions`` as a user would, until the turn ends."""
    answered = []

    def answer_pending() -> bool:
        if task.done():
            return True
        for request in session.pending_permissions:
            subject = request.subject_type
            request.select(choices[subject])
            answered.append((subject, request.tool_call_id, request.title))
        return False

    await until_async(answer_pending, TIMEOUT, interval=0.01, message="the end of the turn")
    return answered


def terminal_output(session, terminal_id: str) -> int:
    """How many bytes terminal ``terminal_id`` has shown so far (0 before it exists)."""
    terminal = session.state.terminals.get(terminal_id)
    return len(terminal.output) if terminal is not None else 0


async def test_v2_full_turn_state_field_by_field(tmp_path):
    agent, session = await demo(tmp_path)
    assert agent.protocol_version == 2 and agent.info["name"] == "acp-notebook-demo"
    session.permission_handler = always("allow-once")
    assert await asyncio.wait_for(session.prompt("Fix the bug"), TIMEOUT) == "end_turn"
    state = session.state
    assert list(state.tool_calls) == TOOL_CALLS
    status = {k: tc.status for k, tc in state.tool_calls.items()}
    assert status == {**dict.fromkeys(TOOL_CALLS, "completed"), "call_fetch": "failed"}

    read = state.tool_calls["call_read"].to_dict()
    assert read["kind"] == "read" and read["locations"] == [{"path": f"{tmp_path}/pyproject.toml", "line": 1}]
    assert read["rawInput"] == {"path": f"{tmp_path}/pyproject.toml"} and "rawOutput" in read

    (diff,) = state.tool_calls["call_edit"].content
    ops = [(c["operation"], c["path"], c.get("oldPath"), c.get("fileType")) for c in diff["changes"]]
    assert ops == [
        ("modify", f"{tmp_path}/src/app.py", None, "text"),
        ("add", f"{tmp_path}/src/util.py", None, "text"),
        ("modify", f"{tmp_path}/assets/logo.png", None, "binary"),
        ("move", f"{tmp_path}/docs/new.md", f"{tmp_path}/docs/old.md", "text"),
    ]
    assert diff["patch"]["format"] == "git_patch" and "logo.png" not in diff["patch"]["text"]
    assert "-    return sum(values) / len(values) + 1" in diff["patch"]["text"]

    test = state.tool_calls["call_test"]
    assert test.kind == "execute" and test.content == [{"type": "terminal", "terminalId": "term_001"}]
    assert test.capabilities is None  # advertised while running, cleared (null) when completed
    term = state.terminals["term_001"]
    assert term.output == TERMINAL_OUTPUT
    assert term.command == "pytest -q" and term.cwd == str(tmp_path)
    assert term.size == {"cols": 80, "rows": 24}
    assert term.exit_status == {"exitCode": 0, "signal": None}
    assert "✓" in term.text and "\ufffd" not in term.text and "\x1b[" not in term.plain_text

    search = state.tool_calls["call_search"]
    assert len(search.content) == 1 and search.content[0]["type"] == "content"
    index = state.tool_calls["call_index"].to_dict()
    assert index["kind"] == "_index" and {"type": "_chart", "series": [1, 2, 3]} in index["content"]
    assert "<img src=x onerror=alert(1)>" in state.tool_calls["call_think"].title
    assert state.tool_calls["call_fetch"].raw_output is not None

    (plan,) = state.plans.values()
    assert [e["status"] for e in plan.entries] == ["completed"] * len(plan.entries)
    roles = [m.role for m in state.messages.values()]
    assert roles[0] == "user" and "thought" in roles and "agent" in roles
    assert next(iter(state.messages.values())).text == "Fix the bug"
    assert [p.selected_option for p in state.permissions.values()] == ["allow-once", "allow-once"]
    assert state.permissions["perm_1"].title == "Apply edits to 4 files?"
    assert state.tool_calls["call_edit"].title != "Apply edits to 4 files?"
    assert state.usage and state.session_info.get("title") and state.notices
    assert (state.run_state, state.stop_reason) == ("idle", "end_turn")
    assert state.diagnostics == []
    await agent.close()


async def test_v2_permissions_by_hand_change_the_story(tmp_path):
    agent, session = await demo(tmp_path)
    task = asyncio.ensure_future(session.prompt("go"))
    answered = await answer_by_hand(session, {"tool_call": "reject-once", "command": "allow-once"}, task)
    assert await task == "end_turn"
    assert [a[:2] for a in answered] == [("tool_call", "call_edit"), ("command", "call_test")]
    state = session.state
    assert state.tool_calls["call_edit"].status == "failed"
    assert not any(i.get("type") == "diff" for i in state.tool_calls["call_edit"].content)
    assert state.terminals["term_001"].output == TERMINAL_OUTPUT
    assert "reject" in " ".join(m.text for m in state.messages.values() if m.role == "agent").lower()
    await agent.close()


async def test_v2_cancel_mid_turn_then_agent_still_usable(tmp_path):
    agent, session = await demo(tmp_path, "--scenario", "slow")
    task = asyncio.ensure_future(session.prompt("run forever"))
    await until_async(lambda: terminal_output(session, "term_slow") >= 10, TIMEOUT, message="slow output")
    await session.cancel()
    assert await asyncio.wait_for(task, TIMEOUT) == "cancelled"
    assert session.state.tool_calls["call_slow"].status == "cancelled"
    second = asyncio.ensure_future(session.prompt("again"))
    await until_async(lambda: "call_slow_2" in session.state.tool_calls, TIMEOUT, message="the second turn")
    await session.cancel()
    assert await asyncio.wait_for(second, TIMEOUT) == "cancelled"
    await agent.close()


async def test_cancel_answers_a_pending_permission_cancelled(tmp_path):
    agent, session = await demo(tmp_path, "--scenario", "permission")
    task = asyncio.ensure_future(session.prompt("delete it"))
    await until_async(lambda: session.pending_permissions, TIMEOUT, message="the permission request")
    request = session.pending_permissions[0]
    await session.cancel()
    assert request.outcome == {"outcome": "cancelled"}
    assert await asyncio.wait_for(task, TIMEOUT) == "cancelled"
    assert session.state.tool_calls["call_perm"].status in ("cancelled", "failed")
    await agent.close()


async def test_crash_mid_turn(tmp_path):
    agent, session = await demo(tmp_path, "--scenario", "crash")
    with pytest.raises(AgentExited, match="exit code 3") as info:
        await asyncio.wait_for(session.prompt("boom"), TIMEOUT)
    assert "simulated crash" in str(info.value)
    assert "call_crash" in session.state.tool_calls and agent.closed and agent.returncode == 3
    await agent.close()


async def test_v1_full_turn(tmp_path):
    agent, session = await demo(tmp_path, "--protocol", "1")
    assert agent.protocol_version == 1
    session.permission_handler = always("allow-once")
    assert await asyncio.wait_for(session.prompt("Fix the bug"), TIMEOUT) == "end_turn"
    state = session.state
    assert list(state.tool_calls) == TOOL_CALLS
    assert state.tool_calls["call_fetch"].status == "failed"
    assert all(tc.status == "completed" for k, tc in state.tool_calls.items() if k != "call_fetch")
    diffs = [i for i in state.tool_calls["call_edit"].content if i.get("type") == "diff"]
    app = next(d for d in diffs if d["path"].endswith("app.py"))
    assert (app["oldText"], app["newText"]) == (APP_OLD, APP_NEW)
    patch = unified_patch(app)
    assert "-    return sum(values) / len(values) + 1\n+    return sum(values) / len(values)\n" in patch
    assert next(d for d in diffs if d["path"].endswith("util.py"))["oldText"] is None
    messages = list(state.messages.values())
    assert messages[0].role == "user" and all(m.synthetic for m in messages)
    assert state.plans["plan"].entries and state.stop_reason == "end_turn"
    assert state.diagnostics == []
    await agent.close()


async def test_v1_forced_on_a_v2_capable_agent(tmp_path):
    agent, session = await demo(tmp_path, "--scenario", "echo", protocol_version=1)
    assert agent.protocol_version == 1
    assert await asyncio.wait_for(session.prompt("hello"), TIMEOUT) == "end_turn"
    assert [m.text for m in session.state.messages.values()] == ["hello", "You said: hello"]
    await agent.close()


async def test_noise_is_diagnosed_and_the_turn_goes_on(tmp_path):
    agent, session = await demo(tmp_path, "--scenario", "noise")
    assert await asyncio.wait_for(session.prompt("hi"), TIMEOUT) == "end_turn"
    codes = {d.code for d in session.state.diagnostics}
    expected = {"invalid-json", "invalid-jsonrpc", "invalid-base64", "invalid-field", "unknown-status"}
    assert expected <= codes
    agent_text = [m.text for m in session.state.messages.values() if m.role == "agent"]
    assert agent_text == ["You said: hi"]
    await agent.close()


async def test_stale_idle_before_acknowledgement(tmp_path):
    agent, session = await demo(tmp_path, "--scenario", "idle_first")
    assert await asyncio.wait_for(session.prompt("hi"), TIMEOUT) == "end_turn"
    assert [m.text for m in session.state.messages.values() if m.role == "agent"] == ["You said: hi"]
    await agent.close()


async def test_version_and_hang_errors():
    with pytest.raises(ProtocolVersionError):
        await start_agent([*DEMO, "--scenario", "version3"])
    with pytest.raises(AgentStartError, match="did not answer initialize"):
        await start_agent([*DEMO, "--scenario", "hang"], init_timeout=1)


async def test_close_leaves_no_process(tmp_path):
    agent, _ = await demo(tmp_path)
    pid = agent.process.pid
    await agent.close()
    assert agent.returncode is not None
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


async def test_giving_up_on_a_prompt_cancels_the_turn(tmp_path):
    agent, session = await demo(tmp_path, "--scenario", "slow")
    with pytest.raises(asyncio.TimeoutError):
        await asyncio.wait_for(session.prompt("run forever"), 0.5)
    await until_async(lambda: session.state.run_state == "idle", TIMEOUT, message="the cancelled turn's end")
    assert (session.state.run_state, session.state.stop_reason) == ("idle", "cancelled")
    assert session.state.tool_calls["call_slow"].status == "cancelled"
    task = asyncio.ensure_future(session.prompt("again"))  # the agent is still usable
    await until_async(lambda: "call_slow_2" in session.state.tool_calls, TIMEOUT, message="the second turn")
    await session.cancel()
    assert await asyncio.wait_for(task, TIMEOUT) == "cancelled"
    await agent.close()
