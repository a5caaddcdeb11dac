"""The live client against a scripted peer: negotiation, turn rules, errors, permissions."""

from __future__ import annotations

import asyncio
import json

import pytest

from acp_notebook import AgentExited, AgentStartError, ProtocolVersionError, RpcError, start_agent
from acp_notebook.protocol import PermissionAlreadyAnswered

from .support import INIT_V1, INIT_V2, NEW, Peer, until_async, update

MARKER_ID = 99  # the id of the marker request the peer sends after the messages under test


def state(name: str, **extra) -> dict:
    return update({"sessionUpdate": "state_update", "state": name, **extra})


def permission(rid: int = 90, **params) -> dict:
    body = {
        "sessionId": "s1",
        "title": "Run?",
        "options": [
            {"optionId": "ok", "name": "Allow", "kind": "allow_once"},
            {"optionId": "no", "name": "Reject", "kind": "reject_once"},
        ],
        **params,
    }
    return {"jsonrpc": "2.0", "id": rid, "method": "session/request_permission", "params": body}


def marker() -> dict:
    """A request nobody serves: its -32601 answer proves the client got past what came before it."""
    return {"jsonrpc": "2.0", "id": MARKER_ID, "method": "_test/marker", "params": {}}


def answered(peer: Peer, rid: int) -> bool:
    """True once the peer has logged the client's response to request ``rid``."""
    return any(r.get("id") == rid for r in peer.responses())


def before_marker(peer: Peer) -> list:
    """What the client sent before its answer to the marker (the peer logs in the order it reads)."""
    log = peer.received()
    return log[: next(i for i, m in enumerate(log) if isinstance(m, dict) and m.get("id") == MARKER_ID)]


async def started(tmp_path, steps, **kwargs):
    peer = Peer(tmp_path, steps)
    agent = await start_agent(peer.command, **kwargs)
    return peer, agent


async def test_initialize_offers_both_shapes_and_adopts_v2(tmp_path):
    peer, agent = await started(tmp_path, [INIT_V2])
    assert agent.protocol_version == 2 and agent.info == {"name": "s", "version": "1"}
    await agent.close()
    params = peer.received()[0]["params"]
    assert params["protocolVersion"] == 2
    assert {"info", "capabilities", "clientInfo", "clientCapabilities"} <= params.keys()


async def test_v1_answer_continues_in_v1_and_forced_v1_sends_v1_only(tmp_path):
    peer, agent = await started(tmp_path, [INIT_V1], protocol_version=1)
    assert agent.protocol_version == 1
    await agent.close()
    params = peer.received()[0]["params"]
    assert params["protocolVersion"] == 1 and "info" not in params and "clientCapabilities" in params


async def test_unknown_version_closes_and_raises(tmp_path):
    steps = [{"expect": "initialize", "reply": {"protocolVersion": 3}}]
    with pytest.raises(ProtocolVersionError, match="protocolVersion 3"):
        await started(tmp_path, steps)


async def test_hung_initialize_times_out_with_stderr_tail(tmp_path):
    steps = [{"stderr": "booting slowly"}, {"sleep": 30}]
    with pytest.raises(AgentStartError, match="did not answer initialize") as info:
        await started(tmp_path, steps, init_timeout=0.5)
    assert "booting slowly" in str(info.value)


async def test_missing_command_is_a_clear_error():
    with pytest.raises(AgentStartError, match="could not start agent"):
        await start_agent("/nonexistent/agent --flag")


async def test_exit_during_initialize(tmp_path):
    with pytest.raises(AgentStartError, match="exit code 4") as info:
        await started(tmp_path, [{"stderr": "bad config"}, {"exit": 4}])
    assert "bad config" in str(info.value)


async def test_stale_idle_before_ack_is_ignored(tmp_path):
    steps = [
        INIT_V2,
        NEW,
        {"expect": "session/prompt"},
        state("idle", stopReason="stale"),
        {"send": {"jsonrpc": "2.0", "id": 3, "result": {"messageId": "u1"}}},
        state("running"),
        state("idle", stopReason="end_turn"),
    ]
    _peer, agent = await started(tmp_path, steps)
    session = await agent.new_session(str(tmp_path))
    assert await asyncio.wait_for(session.prompt("hi"), 10) == "end_turn"
    assert session.turn.message_id == "u1"
    await agent.close()


async def test_agent_may_start_before_acknowledging(tmp_path):
    steps = [
        INIT_V2,
        NEW,
        {"expect": "session/prompt"},
        state("running"),
        state("idle", stopReason="max_tokens"),
    ]
    _, agent = await started(tmp_path, steps)
    session = await agent.new_session(str(tmp_path))
    assert await asyncio.wait_for(session.prompt("hi"), 10) == "max_tokens"
    await agent.close()


async def test_unknown_state_is_not_idle_and_missing_reason_is_none(tmp_path):
    steps = [INIT_V2, NEW, {"expect": "session/prompt", "reply": {}}, state("_thinking"), state("idle")]
    _, agent = await started(tmp_path, steps)
    session = await agent.new_session(str(tmp_path))
    assert await asyncio.wait_for(session.prompt("hi"), 10) is None
    assert session.state.run_state == "idle"
    await agent.close()


async def test_error_stop_keeps_details(tmp_path):
    err = {"code": -32603, "message": "model overloaded"}
    steps = [
        INIT_V2,
        NEW,
        {"expect": "session/prompt", "reply": {}},
        state("idle", stopReason="error", error=err),
    ]
    _, agent = await started(tmp_path, steps)
    session = await agent.new_session(str(tmp_path))
    assert await asyncio.wait_for(session.prompt("hi"), 10) == "error"
    assert session.last_error == err and session.state.stop_error == err
    await agent.close()


async def test_rpc_error_to_prompt_raises(tmp_path):
    steps = [INIT_V2, NEW, {"expect": "session/prompt", "error": {"code": -32602, "message": "bad prompt"}}]
    _, agent = await started(tmp_path, steps)
    session = await agent.new_session(str(tmp_path))
    with pytest.raises(RpcError, match="bad prompt") as info:
        await asyncio.wait_for(session.prompt("hi"), 10)
    assert info.value.code == -32602
    await agent.close()


async def test_crash_mid_turn_raises_with_exit_code_and_stderr(tmp_path):
    steps = [INIT_V2, NEW, {"expect": "session/prompt", "reply": {}}, state("running")]
    steps += [{"stderr": "segfault in tool"}, {"exit": 3}]
    _, agent = await started(tmp_path, steps)
    session = await agent.new_session(str(tmp_path))
    with pytest.raises(AgentExited, match="exit code 3") as info:
        await asyncio.wait_for(session.prompt("hi"), 10)
    assert "segfault in tool" in str(info.value)
    assert session.state.diagnostics[-1].code == "agent-exited"
    await agent.close()


async def test_unknown_requests_get_method_not_found_and_notifications_no_answer(tmp_path):
    steps = [
        INIT_V2,
        NEW,
        {
            "send": {
                "jsonrpc": "2.0",
                "id": 77,
                "method": "fs/read_text_file",
                "params": {"path": "/etc/passwd"},
            }
        },
        {"send": {"jsonrpc": "2.0", "method": "_vendor/ping", "params": {}}},
        {"send": marker()},
        {"await_response": True},
    ]
    peer, agent = await started(tmp_path, steps)
    await agent.new_session(str(tmp_path))
    await until_async(lambda: answered(peer, 77) and answered(peer, MARKER_ID), 10, message="both answers")
    await agent.close()
    reply, marked = sorted(peer.responses(), key=lambda r: r["id"])  # nothing for the notification
    assert reply["id"] == 77 and reply["error"]["code"] == -32601
    assert marked["id"] == MARKER_ID and marked["error"]["code"] == -32601


async def test_noise_and_batches(tmp_path):
    chunk = {
        "sessionUpdate": "agent_message_chunk",
        "messageId": "m1",
        "content": {"type": "text", "text": "A"},
    }
    batch = [update(chunk), {"foo": "boo"}, 42]
    steps = [INIT_V2, NEW, {"send": "log: warming up"}, {"send": {"hello": 1}}, {"send": json.dumps(batch)}]
    steps += [{"send": update({**chunk, "content": {"type": "text", "text": "B"}})}, {"sleep": 0.2}]
    peer, agent = await started(tmp_path, steps)
    session = await agent.new_session(str(tmp_path))

    def arrived():
        message = session.state.messages.get("m1")
        return message is not None and message.text == "AB" and peer.batch_replies()

    await until_async(arrived, 10, message="the last chunk and the batch reply")
    await agent.close()
    assert session.state.messages["m1"].text == "AB"
    codes = [d.code for d in agent.diagnostics]
    assert codes.count("invalid-json") == 1 and codes.count("invalid-jsonrpc") >= 3
    assert [[r["error"]["code"] for r in b] for b in peer.batch_replies()] == [[-32600, -32600]]


async def test_permission_handler_none_raise_unknown_leave_pending(tmp_path):
    steps = [INIT_V2, NEW, {"send": permission(90)}, {"send": permission(91)}, {"send": permission(92)}]
    steps += [{"send": marker()}, {"await_response": True}]
    peer, agent = await started(tmp_path, steps)
    session = await agent.new_session(str(tmp_path))
    answers = iter([None, RuntimeError("boom"), "maybe"])

    def handler(request):
        answer = next(answers)
        if isinstance(answer, Exception):
            raise answer
        return answer

    session.permission_handler = handler
    expected = {"permission-unanswered", "permission-handler-error", "permission-unknown-option"}

    def handled():
        codes = {d.code for d in session.state.diagnostics}
        return len(session.pending_permissions) == 3 and expected <= codes and answered(peer, MARKER_ID)

    await until_async(handled, 10, message="three handled requests, then the marker's answer")
    assert [r["id"] for r in peer.responses()] == [MARKER_ID], "nothing answered the three requests"
    assert len(session.pending_permissions) == 3
    codes = {d.code for d in session.state.diagnostics}
    assert expected <= codes
    first = session.pending_permissions[0]
    first.select("ok")
    with pytest.raises(PermissionAlreadyAnswered):
        first.cancel()
    with pytest.raises(ValueError):
        session.pending_permissions[0].select("nope")
    await until_async(lambda: answered(peer, 90), 10, message="the answer to request 90")
    await agent.close()
    marked, *answers = peer.responses()
    assert marked["id"] == MARKER_ID and answers == [
        {"jsonrpc": "2.0", "id": 90, "result": {"outcome": {"outcome": "selected", "optionId": "ok"}}}
    ]


async def test_async_handler_and_cancel_request(tmp_path):
    steps = [INIT_V2, NEW, {"send": permission(90)}, {"await_response": True}, {"send": permission(91)}]
    steps += [{"send": {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": 91}}}]
    steps += [{"await_response": True}]
    peer, agent = await started(tmp_path, steps)
    session = await agent.new_session(str(tmp_path))
    seen = []

    async def handler(request):
        seen.append(request.title)
        if request.request_id == 90:
            await asyncio.sleep(0.05)  # a user taking a moment: simulated, not a wait
            return "no"
        return None

    session.permission_handler = handler
    await until_async(lambda: len(peer.responses()) >= 2, 10, message="answers to requests 90 and 91")
    await agent.close()
    outcomes = [r["result"]["outcome"] for r in peer.responses()]
    assert outcomes == [{"outcome": "selected", "optionId": "no"}, {"outcome": "cancelled"}]
    assert seen == ["Run?", "Run?"] and session.pending_permissions == []


async def test_cancel_answers_permissions_and_marks_tool_calls(tmp_path):
    tool = update({"sessionUpdate": "tool_call_update", "toolCallId": "c1", "status": "in_progress"})
    done = update({"sessionUpdate": "tool_call_update", "toolCallId": "c2", "status": "completed"})
    steps = [INIT_V2, NEW, {"expect": "session/prompt", "reply": {}}, state("running"), {"send": tool}]
    steps += [{"send": done}, {"send": permission(90)}, {"expect": "session/cancel"}]
    steps += [{"sleep": 0.2}, state("idle", stopReason="cancelled")]
    peer, agent = await started(tmp_path, steps)
    session = await agent.new_session(str(tmp_path))
    task = asyncio.ensure_future(session.prompt("go"))
    await until_async(lambda: session.pending_permissions, 10, message="the permission request")
    await session.cancel()
    assert await asyncio.wait_for(task, 10) == "cancelled"
    assert session.state.tool_calls["c1"].status == "cancelled"
    assert session.state.tool_calls["c2"].status == "completed"
    await agent.close()
    outcomes = [r["result"]["outcome"] for r in peer.responses()]
    assert outcomes == [{"outcome": "cancelled"}]
    assert any(m.get("method") == "session/cancel" for m in peer.received())


async def test_prompts_during_a_turn_are_queued(tmp_path):
    # the turn stays open until the client answers the marker; the peer logs all it reads meanwhile
    steps = [INIT_V2, NEW, {"expect": "session/prompt", "reply": {}}, state("running"), {"send": marker()}]
    steps += [{"await_response": True}, state("idle", stopReason="end_turn")]
    steps += [{"expect": "session/prompt", "reply": {}}, state("running")]
    steps += [state("idle", stopReason="refusal")]
    peer, agent = await started(tmp_path, steps)
    session = await agent.new_session(str(tmp_path))
    first = asyncio.ensure_future(session.prompt("one"))
    second = asyncio.ensure_future(session.prompt("two"))
    await until_async(lambda: answered(peer, MARKER_ID), 10, message="the marker's answer, mid-turn")
    assert [m.get("method") for m in before_marker(peer)].count("session/prompt") == 1
    assert await asyncio.wait_for(first, 10) == "end_turn"
    assert await asyncio.wait_for(second, 10) == "refusal"
    await agent.close()


async def test_v1_turn_ends_with_prompt_response_and_nulls_mean_unchanged(tmp_path):
    create = {
        "sessionUpdate": "tool_call",
        "toolCallId": "c1",
        "title": "Read",
        "kind": "read",
        "status": "pending",
    }
    patch = {"sessionUpdate": "tool_call_update", "toolCallId": "c1", "title": None, "status": "completed"}
    steps = [INIT_V1, NEW, {"expect": "session/prompt"}, {"send": update(create)}, {"send": update(patch)}]
    steps += [{"send": {"jsonrpc": "2.0", "id": 3, "result": {"stopReason": "end_turn"}}}]
    _, agent = await started(tmp_path, steps, protocol_version=1)
    session = await agent.new_session(str(tmp_path))
    assert await asyncio.wait_for(session.prompt("read it"), 10) == "end_turn"
    tc = session.state.tool_calls["c1"]
    assert (tc.title, tc.status) == ("Read", "completed")
    user = next(iter(session.state.messages.values()))
    assert user.role == "user" and user.text == "read it"
    assert session.state.run_state == "idle" and session.state.stop_reason == "end_turn"
    await agent.close()


async def test_v1_out_of_order_traffic_is_handled_shown_and_diagnosed(tmp_path):
    early = {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "c9",
        "status": "in_progress",
        "title": "Early",
    }
    ask = {
        "jsonrpc": "2.0",
        "id": 70,
        "method": "session/request_permission",
        "params": {
            "sessionId": "s1",
            "toolCall": {"toolCallId": "c8", "title": "Unannounced"},
            "options": [{"optionId": "ok", "name": "OK", "kind": "allow_once"}],
        },
    }
    late = {"sessionUpdate": "tool_call_update", "toolCallId": "c9", "status": "completed"}
    steps = [INIT_V1, NEW, {"expect": "session/prompt"}, update(early), ask, {"expect": "session/cancel"}]
    steps += [{"send": {"jsonrpc": "2.0", "id": 3, "result": {"stopReason": "cancelled"}}}, update(late)]
    _, agent = await started(tmp_path, steps, protocol_version=1)
    session = await agent.new_session(str(tmp_path))
    task = asyncio.ensure_future(session.prompt("go"))
    await until_async(lambda: session.pending_permissions, 10, message="the permission request")
    await session.cancel()
    assert await asyncio.wait_for(task, 10) == "cancelled"

    def late_update_applied():
        codes = {d.code for d in session.state.diagnostics}
        return session.state.tool_calls["c9"].status == "completed" and "update-after-cancel" in codes

    await until_async(late_update_applied, 10, message="the update after the cancelled turn")
    state = session.state
    assert state.tool_calls["c9"].title == "Early" and state.tool_calls["c9"].status == "completed"
    assert state.tool_calls["c8"].title == "Unannounced"
    codes = [d.code for d in state.diagnostics]
    assert {"update-before-create", "permission-unknown-tool-call", "update-after-cancel"} <= set(codes)
    await agent.close()
