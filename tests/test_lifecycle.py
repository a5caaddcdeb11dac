"""Authentication and session lifecycle against a scripted peer, in both versions."""

from __future__ import annotations

import asyncio

import pytest

from acp_notebook import start_agent
from acp_notebook.client.errors import AcpError, AuthRequired

from .support import INIT_V1, INIT_V2, NEW, Peer, update

METHODS = [{"id": "oauth", "name": "Sign in", "type": "agent"}]


async def test_auth_required_names_the_methods_then_login(tmp_path):
    init = {
        "expect": "initialize",
        "reply": {"protocolVersion": 2, "info": {"name": "a", "version": "1"}, "authMethods": METHODS},
    }
    steps = [init, {"expect": "session/new", "error": {"code": -32000, "message": "login first"}}]
    steps += [{"expect": "auth/login", "reply": {}}, NEW, {"expect": "auth/logout", "reply": {}}]
    peer = Peer(tmp_path, steps)
    agent = await start_agent(peer.command)
    with pytest.raises(AuthRequired, match="'oauth'") as info:
        await agent.new_session(str(tmp_path))
    assert info.value.methods == METHODS and info.value.code == -32000
    await agent.authenticate("oauth")
    assert (await agent.new_session(str(tmp_path))).session_id == "s1"
    await agent.logout()
    await agent.close()
    assert peer.requests("auth/login") == [{"methodId": "oauth"}]


async def test_v1_authenticate_and_load_replays_history(tmp_path):
    init = {
        "expect": "initialize",
        "reply": {"protocolVersion": 1, "agentCapabilities": {"loadSession": True}},
    }
    old = {"sessionUpdate": "user_message_chunk", "content": {"type": "text", "text": "earlier"}}
    tool = {"sessionUpdate": "tool_call", "toolCallId": "c1", "title": "Old read", "status": "completed"}
    steps = [init, {"expect": "authenticate", "reply": {}}, {"expect": "session/load"}]
    steps += [update(old), update(tool), {"send": {"jsonrpc": "2.0", "id": 3, "result": {}}}]
    peer = Peer(tmp_path, steps)
    agent = await start_agent(peer.command, protocol_version=1)
    await agent.authenticate("key")
    session = await asyncio.wait_for(agent.resume_session("s1", str(tmp_path)), 10)
    assert [m.text for m in session.state.messages.values()] == ["earlier"]
    assert session.state.tool_calls["c1"].title == "Old read"
    await agent.close()
    assert peer.requests("authenticate") == [{"methodId": "key"}]
    assert peer.requests("session/load")[0]["sessionId"] == "s1"


async def test_v1_without_load_session_refuses_replay(tmp_path):
    peer = Peer(tmp_path, [INIT_V1])
    agent = await start_agent(peer.command, protocol_version=1)
    with pytest.raises(AcpError, match="cannot load sessions"):
        await agent.resume_session("s1", str(tmp_path))
    await agent.close()


async def test_v2_list_follows_cursors_resume_replays_and_close(tmp_path):
    page1 = {"sessions": [{"sessionId": "s1", "cwd": str(tmp_path)}], "nextCursor": "c2"}
    page2 = {"sessions": [{"sessionId": "s2", "cwd": str(tmp_path), "title": "Two"}]}
    replayed = {
        "sessionUpdate": "agent_message",
        "messageId": "m1",
        "content": [{"type": "text", "text": "hi again"}],
    }
    steps = [INIT_V2, {"expect": "session/list", "reply": page1}, {"expect": "session/list", "reply": page2}]
    steps += [
        {"expect": "session/resume"},
        update(replayed),
        {"send": {"jsonrpc": "2.0", "id": 4, "result": {}}},
    ]
    steps += [{"expect": "session/close", "reply": {}}]
    peer = Peer(tmp_path, steps)
    agent = await start_agent(peer.command)
    listed = await agent.list_sessions()
    assert [s["sessionId"] for s in listed] == ["s1", "s2"]
    session = await asyncio.wait_for(agent.resume_session("s1", str(tmp_path)), 10)
    assert session.state.messages["m1"].text == "hi again"
    await session.close()
    assert "s1" not in agent.sessions
    await agent.close()
    assert peer.requests("session/list")[1] == {"cursor": "c2"}
    assert peer.requests("session/resume")[0]["replayFrom"] == {"type": "start"}
    assert peer.requests("session/close") == [{"sessionId": "s1"}]


async def test_v2_turn_refused_for_want_of_a_login_raises_auth_required(tmp_path):
    """A v2 agent refuses a prompt with an idle ``error`` stop of code -32000 (claude-agent-acp
    0.101 without a key): ``prompt`` raises ``AuthRequired`` naming the methods, as v1's does."""
    init = {
        "expect": "initialize",
        "reply": {"protocolVersion": 2, "info": {"name": "a", "version": "1"}, "authMethods": METHODS},
    }
    failure = {"code": -32000, "message": "Authentication required"}
    idle = {"sessionUpdate": "state_update", "state": "idle", "stopReason": "error", "error": failure}
    other = {**idle, "error": {"code": -32603, "message": "boom"}}
    steps = [init, NEW, {"expect": "session/prompt", "reply": {}}, update(idle)]
    steps += [{"expect": "session/prompt", "reply": {}}, update(other)]
    agent = await start_agent(Peer(tmp_path, steps).command)
    session = await agent.new_session(str(tmp_path))
    with pytest.raises(AuthRequired, match="'oauth'") as info:
        await asyncio.wait_for(session.prompt("hi"), 10)
    assert info.value.methods == METHODS and info.value.method == "session/prompt"
    assert (session.state.stop_reason, session.last_error) == ("error", failure)
    assert await asyncio.wait_for(session.prompt("again"), 10) == "error", "other errors are a stop reason"
    await agent.close()
