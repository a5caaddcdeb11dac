"""Logging in: terminal methods run in a PTY (never sent to authenticate), env_var methods restart
the agent with the values, the offer advertises terminal auth in both versions' shapes."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from acp_notebook import AcpError, AuthRequired, start_agent
from acp_notebook.client.wire import Unsupported

from .support import until_async

LOGIN_AGENT = Path(__file__).parent / "agents" / "login_agent.py"


async def started(tmp_path):
    return await start_agent([sys.executable, str(LOGIN_AGENT), str(tmp_path)])


async def test_terminal_auth_is_offered_and_its_methods_listed(tmp_path):
    agent = await started(tmp_path)
    assert [m["id"] for m in agent.auth_methods] == ["tui", "key"]
    tui = agent.auth_method("tui")
    assert tui.runs_in_terminal and tui.args == ("--login",) and tui.env == (("LOGIN_MODE", "tui"),)
    with pytest.raises(AuthRequired, match="%acp login METHOD"):
        await agent.new_session(str(tmp_path))
    await agent.close()
    agent = await start_agent([sys.executable, str(LOGIN_AGENT), str(tmp_path)], protocol_version=1)
    await agent.close()


async def test_a_terminal_method_is_never_sent_to_authenticate(tmp_path):
    agent = await started(tmp_path)
    sent = []
    write = agent.process.write
    agent.process.write = lambda data: sent.append(data) or write(data)
    with pytest.raises(Unsupported, match="terminal login"):
        await agent.authenticate("tui")
    assert sent == []
    await agent.close()


async def test_a_terminal_login_runs_the_agents_command_interactively(tmp_path):
    agent = await started(tmp_path)
    login = await agent.login_terminal("tui")
    assert login.argv == [sys.executable, str(LOGIN_AGENT), str(tmp_path), "--login"]
    await until_async(lambda: "Enter the code:" in login.output, timeout=10, message=lambda: login.output)
    assert "Fake login (tui)" in login.output, "the method's env is added"
    assert login.interactive_terminals() == ["login"]
    login.terminal_resize("login", 100, 20)
    login.terminal_input("login", b"1234\r")
    status = await asyncio.wait_for(login.wait(), 10)
    assert status == {"exitCode": 0, "signal": None} and login.succeeded
    assert login.state.tool_calls["login"].status == "completed"
    assert login.state.terminals["login"].exit_status == status
    assert login.interactive_terminals() == []
    await login.close()
    session = await agent.new_session(str(tmp_path))  # the pending start continues
    assert session.session_id == "s1"
    await agent.close()


async def test_a_failed_terminal_login_reports_its_exit_and_last_lines(tmp_path):
    agent = await started(tmp_path)
    login = await agent.login_terminal("tui")
    await until_async(lambda: "Enter the code:" in login.output, timeout=10)
    login.terminal_input("login", b"0000\r")
    assert (await asyncio.wait_for(login.wait(), 10))["exitCode"] == 3 and not login.succeeded
    assert login.last_lines()[-1] == "Wrong code."
    assert login.state.tool_calls["login"].status == "failed"
    await login.close()
    await agent.close()


async def test_an_env_var_login_restarts_the_agent_with_the_values(tmp_path):
    agent = await started(tmp_path)
    first = agent.process.pid
    with pytest.raises(AcpError, match="needs FAKE_KEY"):
        await agent.login_env("key", {})
    with pytest.raises(AcpError, match="'key' is a 'env_var' method, not 'terminal'"):
        await agent.login_terminal("key")
    await agent.login_env("key", {"FAKE_KEY": "s3cret"}, timeout=10)
    assert agent.process.pid != first and agent.protocol_version == 1
    assert "s3cret" not in repr(agent) and "s3cret" not in repr(agent.summary())
    session = await agent.new_session(str(tmp_path))
    assert session.session_id == "s1"
    await agent.close()


def test_auth_methods_read_in_both_versions_shapes():
    from acp_notebook.client.wire.auth import read_method

    v1 = read_method(
        {"type": "terminal", "id": "t", "name": "T", "args": ["--x", 3], "env": {"A": "1"}}, "id", False
    )
    v2 = read_method(
        {
            "type": "terminal",
            "methodId": "t",
            "name": "T",
            "args": ["--x"],
            "env": [{"name": "A", "value": "1"}],
        },
        "methodId",
        True,
    )
    assert v1.args == v2.args == ("--x",) and v1.env == v2.env == (("A", "1"),)
    claude = read_method(
        {
            "id": "c",
            "name": "C",
            "_meta": {"terminal-auth": {"command": "/node", "args": ["a", "--cli"], "label": "L"}},
        },
        "id",
        False,
    )
    assert claude.runs_in_terminal and claude.command == ("/node", "a", "--cli") and claude.label == "L"
    gemini = read_method({"id": "g", "name": "G", "_meta": {"api-key": {"provider": "google"}}}, "id", False)
    assert gemini.key_provider == "google" and not gemini.runs_in_terminal
    codex = read_method({"type": "env_var", "id": "k", "vars": [{"name": "K"}, {"x": 1}]}, "id", False)
    assert codex.vars == ({"name": "K"},) and codex.name == "k"
    assert read_method({"name": "no id"}, "id", False) is None


async def test_an_api_key_method_sends_the_key_in_authenticate_meta(tmp_path):
    from .support import Peer

    methods = [
        {"id": "gemini-api-key", "name": "Gemini API key", "_meta": {"api-key": {"provider": "google"}}}
    ]
    steps = [
        {"expect": "initialize", "reply": {"protocolVersion": 1, "authMethods": methods}},
        {"expect": "authenticate", "reply": {}},
    ]
    peer = Peer(tmp_path, steps, "key")
    agent = await start_agent(peer.command)
    await agent.authenticate("gemini-api-key", timeout=10, api_key="k-123")
    assert peer.requests("authenticate") == [{"methodId": "gemini-api-key", "_meta": {"api-key": "k-123"}}]
    await agent.close()
