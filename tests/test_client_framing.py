"""The client never leaves a peer waiting: every request answered once, every response settled.

The agent side is played in memory (``MemoryStream``) through the real intake: connection, wire,
session, permission desk.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from acp_notebook import RpcError
from acp_notebook.client.agent import Agent
from acp_notebook.client.wire import Unsupported
from acp_notebook.playback.memory import MemoryStream

from .support import update


class Peer:
    """The agent side: answers initialize and session/new, records everything else."""

    def __init__(self, version: int, init: dict[str, Any] | None = None) -> None:
        self.version, self.init = version, init or {}
        self.stream = MemoryStream(on_sent=self._on_sent)
        self.requests: list[dict[str, Any]] = []

    def _on_sent(self, message: Any) -> None:
        if isinstance(message, dict) and message.get("method") == "initialize":
            self.reply(message["id"], {"protocolVersion": self.version, **self.init})
        elif isinstance(message, dict) and message.get("method") == "session/new":
            self.reply(message["id"], {"sessionId": "s1"})
        elif isinstance(message, dict) and "id" in message and "method" in message:
            self.requests.append(message)

    def reply(self, request_id: Any, result: Any) -> None:
        self.stream.push({"jsonrpc": "2.0", "id": request_id, "result": result})

    def send(self, obj: Any) -> None:
        self.stream.push(obj if isinstance(obj, str) else json.dumps(obj))

    async def settled(self) -> None:
        await asyncio.wait_for(self.stream.idle(), 5)

    def answers(self) -> list[Any]:
        """What the client wrote that is not a request or notification of its own."""
        return [m for m in self.stream.sent if isinstance(m, list) or "method" not in m]


async def connect(version: int = 2, **init: Any) -> tuple[Peer, Agent, Any]:
    peer = Peer(version, init)
    agent = Agent(peer.stream)
    await agent.initialize(2)
    session = await agent.new_session("/tmp")
    return peer, agent, session


def permission(rid: Any, tool_call_id: str = "c1", version: int = 2) -> dict[str, Any]:
    options = [
        {"optionId": "ok", "name": "Allow", "kind": "allow_once"},
        {"optionId": "no", "name": "Reject", "kind": "reject_once"},
    ]
    if version == 1:
        params = {
            "sessionId": "s1",
            "toolCall": {"toolCallId": tool_call_id, "title": "Edit"},
            "options": options,
        }
    else:
        subject = {"type": "tool_call", "toolCall": {"toolCallId": tool_call_id, "title": "Edit"}}
        params = {"sessionId": "s1", "title": "Edit?", "subject": subject, "options": options}
    return {"jsonrpc": "2.0", "id": rid, "method": "session/request_permission", "params": params}


# -- requests from the agent: always one answer --------------------------------------------------
async def test_unrouted_requests_get_method_not_found_and_v2_serves_no_host_methods() -> None:
    peer, agent, _ = await connect(2)
    peer.send({"jsonrpc": "2.0", "id": 7, "method": "fs/read_text_file", "params": {"sessionId": "s1"}})
    peer.send({"jsonrpc": "2.0", "id": 8, "method": "_acme/ping", "params": {}})
    await peer.settled()
    assert [(a["id"], a["error"]["code"]) for a in peer.answers()] == [(7, -32601), (8, -32601)]
    await agent.close()


async def test_a_batch_is_answered_with_one_array_after_its_deferred_permission() -> None:
    peer, agent, session = await connect(2)
    batch = [permission(1), {"jsonrpc": "2.0", "id": 2, "method": "nope/x"}, {"foo": "boo"}]
    peer.send(batch)
    await peer.settled()
    assert peer.answers() == [], "the batch's replies wait for its permission answer"
    (request,) = session.pending_permissions
    request.select("ok")
    (reply,) = peer.answers()
    assert isinstance(reply, list)
    by_id = {r["id"]: r for r in reply}
    assert by_id[1]["result"] == {"outcome": {"outcome": "selected", "optionId": "ok"}}
    assert by_id[2]["error"]["code"] == -32601
    assert by_id[None]["error"]["code"] == -32600  # the invalid entry
    await agent.close()


async def test_a_notification_only_batch_gets_no_reply() -> None:
    peer, agent, session = await connect(2)
    peer.send(
        [
            update(
                {
                    "sessionUpdate": "agent_message_chunk",
                    "messageId": "m",
                    "content": {"type": "text", "text": "x"},
                }
            )
        ]
    )
    await peer.settled()
    assert peer.answers() == [] and session.state.messages["m"].text == "x"
    await agent.close()


async def test_a_request_id_with_a_lone_surrogate_is_answered_with_that_id() -> None:
    peer, agent, _session = await connect(2)
    peer.send('{"jsonrpc":"2.0","id":"\\ud800","method":"nope/\\udc00"}')
    await peer.settled()
    (raw,) = [line for line in peer.stream.raw if b"-32601" in line]
    assert json.loads(raw)["id"] == "\ud800"
    await agent.close()


async def test_selecting_an_option_id_with_a_lone_surrogate_sends_the_answer() -> None:
    peer, agent, session = await connect(2)
    message = permission(5)
    message["params"]["options"][0]["optionId"] = "\ud800"
    peer.send(json.dumps(message))
    await peer.settled()
    (request,) = session.pending_permissions
    request.select("\ud800")
    assert not request.pending
    assert peer.answers()[-1]["result"]["outcome"]["optionId"] == "\ud800"
    await agent.close()


# -- requests to the agent: always settled --------------------------------------------------------
@pytest.mark.parametrize(
    "error",
    [
        None,
        "boom",
        42,
        [],
        {"message": "no code"},
        {"code": "x", "message": "m"},
        {"code": 1.5, "message": "m"},
        {"code": True},
    ],
)
async def test_a_malformed_error_response_still_settles_the_request(error: Any) -> None:
    peer, agent, _session = await connect(2)
    future = agent.rpc.request("_acme/ask", {})
    peer.send({"jsonrpc": "2.0", "id": 3, "error": error})
    with pytest.raises(RpcError):
        await asyncio.wait_for(future, 5)
    await agent.close()


async def test_a_response_with_neither_result_nor_error_settles_the_request() -> None:
    peer, agent, _session = await connect(2)
    future = agent.rpc.request("_acme/ask", {})
    peer.send({"jsonrpc": "2.0", "id": 3})
    with pytest.raises(RpcError):
        await asyncio.wait_for(future, 5)
    await agent.close()


async def test_a_prompt_answered_with_a_malformed_error_ends_the_turn_idle() -> None:
    peer, agent, session = await connect(1)
    turn = asyncio.ensure_future(session.prompt("hi"))
    await peer.settled()
    (prompt,) = [r for r in peer.requests if r["method"] == "session/prompt"]
    peer.send({"jsonrpc": "2.0", "id": prompt["id"], "error": {"code": "bad"}})
    with pytest.raises(RpcError):
        await asyncio.wait_for(turn, 5)
    assert session.state.run_state == "idle" and not session.running
    await agent.close()


async def test_unencodable_params_raise_before_anything_is_sent() -> None:
    peer, agent, _session = await connect(2)
    before = len(peer.stream.raw)
    with pytest.raises(ValueError):
        agent.rpc.request("_acme/ask", {"x": float("nan")})
    with pytest.raises(ValueError):
        agent.rpc.notify("_acme/tell", {"x": float("inf")})
    assert len(peer.stream.raw) == before
    await agent.close()


# -- turns ------------------------------------------------------------------------------------------
async def test_an_empty_prompt_is_refused() -> None:
    peer, agent, session = await connect(2)
    with pytest.raises(ValueError, match="empty prompt"):
        await session.prompt([])
    assert not [r for r in peer.requests if r["method"] == "session/prompt"]
    await agent.close()


@pytest.mark.parametrize("version", [1, 2])
async def test_cancel_marks_a_tool_call_first_created_by_a_permission_subject(version: int) -> None:
    peer, agent, session = await connect(version)
    turn = asyncio.ensure_future(session.prompt("go"))
    await peer.settled()
    peer.send(permission(40, "c9", version))
    await peer.settled()
    assert session.state.tool_calls["c9"].status == "pending"
    await session.cancel()
    assert session.state.tool_calls["c9"].status == "cancelled"
    assert peer.answers()[-1]["result"] == {"outcome": {"outcome": "cancelled"}}
    (prompt,) = [r for r in peer.requests if r["method"] == "session/prompt"]
    if version == 1:
        peer.reply(prompt["id"], {"stopReason": "cancelled"})
    else:
        peer.reply(prompt["id"], {})
        peer.send(update({"sessionUpdate": "state_update", "state": "idle", "stopReason": "cancelled"}))
    assert await asyncio.wait_for(turn, 5) == "cancelled"
    await agent.close()


async def test_prompts_queue_behind_the_running_turn_in_one_queue() -> None:
    peer, agent, session = await connect(1)
    first = session.prompt_task("one")
    second = asyncio.ensure_future(session.prompt("two"))
    await peer.settled()
    prompts = [r for r in peer.requests if r["method"] == "session/prompt"]
    assert len(prompts) == 1 and session.busy and session.queued_prompts == 1
    peer.reply(prompts[0]["id"], {"stopReason": "end_turn"})
    assert await asyncio.wait_for(first, 5) == "end_turn"
    await peer.settled()
    prompts = [r for r in peer.requests if r["method"] == "session/prompt"]
    peer.reply(prompts[1]["id"], {"stopReason": "max_tokens"})
    assert await asyncio.wait_for(second, 5) == "max_tokens"
    assert [t.stop_reason for t in session.turns] == ["end_turn", "max_tokens"] and not session.busy
    await agent.close()


async def test_the_wire_refuses_what_its_version_lacks() -> None:
    _peer, agent, session = await connect(1)
    with pytest.raises(Unsupported):
        await agent.list_sessions()
    with pytest.raises(Unsupported):
        await agent.connection.cancel_tool_call("s1", "c1")
    await agent.close()
    _peer, agent, session = await connect(2)
    with pytest.raises(Unsupported):
        await session.set_mode("plan")
    await agent.close()


async def test_extension_notifications_are_ignored_and_unknown_ones_diagnosed() -> None:
    peer, agent, _session = await connect(2)
    peer.send({"jsonrpc": "2.0", "method": "_acme/hello", "params": {}})
    peer.send({"jsonrpc": "2.0", "method": "what/now", "params": {}})
    await peer.settled()
    assert [d.code for d in agent.diagnostics] == ["unknown-notification"]
    await agent.close()
