"""Elicitations through the client (issue 20): capability, routing by scope, every error code, the
answers on the wire, handlers, policies, withdrawal, completion, exit and close — v1 and v2.

The agent side is played in memory (``MemoryStream``) through the real intake: connection, wire,
the ``Sessions`` table, the session (or the agent) and its elicitation desk.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from acp_notebook import ElicitationInvalid, frontend, policies
from acp_notebook.client import headless
from acp_notebook.client.agent import Agent
from acp_notebook.playback.memory import MemoryStream
from acp_notebook.protocol.elicitation import ElicitationTooLate

from .support import until_async, update
from .test_client_framing import connect
from .test_subagents import announce

SCHEMA = {
    "type": "object",
    "properties": {
        "strategy": {"type": "string", "enum": ["safe", "bold"]},
        "passes": {"type": "integer", "minimum": 1, "default": 2},
    },
    "required": ["strategy"],
}


def create(rid: Any, mode: str = "form", session: str | None = "s1", **params: Any) -> dict[str, Any]:
    """An ``elicitation/create`` request (session-scoped unless ``session`` is None)."""
    body: dict[str, Any] = {"mode": mode, "message": "Which way?"}
    if session is not None:
        body["sessionId"] = session
    if mode == "form":
        body["requestedSchema"] = SCHEMA
    elif mode == "url":
        body.update(elicitationId=f"e-{rid}", url="https://auth.example.com/connect?state=secret")
    body.update(params)
    return {"jsonrpc": "2.0", "id": rid, "method": "elicitation/create", "params": body}


def complete(elicitation_id: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": "elicitation/complete", "params": {"elicitationId": elicitation_id}}


def withdraw(rid: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": rid}}


def answer_to(stream: MemoryStream, rid: Any) -> dict[str, Any] | None:
    """The client's answer to the agent's request ``rid`` (None if it sent none)."""
    found = [m for m in stream.sent if isinstance(m, dict) and m.get("id") == rid and "method" not in m]
    assert len(found) <= 1, found  # never answered twice
    return found[0] if found else None


async def settled(peer: Any) -> None:
    await peer.settled()
    await asyncio.sleep(0)  # the answer's observers run just after it is recorded (call_soon)
    await asyncio.sleep(0)


# -- capability ----------------------------------------------------------------------------------
@pytest.mark.parametrize("version", [2, 1])
async def test_both_modes_are_advertised_in_both_shapes(version: int) -> None:
    peer, agent, _ = await connect(version)
    params = peer.stream.sent[0]["params"]
    assert params["clientCapabilities"]["elicitation"] == {"form": {}, "url": {}}
    assert params["capabilities"]["elicitation"] == {"form": {}, "url": {}}
    await agent.close()


# -- session-scoped forms: the answers on the wire --------------------------------------------------
@pytest.mark.parametrize("version", [2, 1])
async def test_a_form_is_pending_then_accepted_with_exactly_the_fields(version: int) -> None:
    peer, agent, session = await connect(version)
    peer.send(create(7, toolCallId="c9"))
    await settled(peer)
    (e,) = session.pending_elicitations
    assert (e.key, e.mode, e.session_id, e.tool_call_id, e.message) == (
        "elic_1",
        "form",
        "s1",
        "c9",
        "Which way?",
    )
    assert session.state.elicitations == {"elic_1": e} and ("elicitation", "elic_1") in session.state.timeline
    assert any(d.code == "elicitation-unknown-tool-call" for d in session.state.diagnostics)
    e.accept({"strategy": "bold", "passes": 3.0})
    await settled(peer)
    reply = answer_to(peer.stream, 7)
    assert reply is not None and reply["result"] == {
        "action": "accept",
        "content": {"strategy": "bold", "passes": 3},
    }
    assert json.dumps(reply["result"]["content"]["passes"]) == "3"  # a JSON integer
    assert session.pending_elicitations == [] and e.status == "accepted"
    await agent.close()


@pytest.mark.parametrize("action", ["decline", "cancel"])
async def test_decline_and_cancel_are_sent_as_they_are(action: str) -> None:
    peer, agent, session = await connect(2)
    peer.send(create(8))
    await settled(peer)
    getattr(session.pending_elicitations[0], action)()
    await settled(peer)
    assert answer_to(peer.stream, 8)["result"] == {"action": action}  # type: ignore[index]
    await agent.close()


async def test_invalid_values_raise_and_nothing_is_sent() -> None:
    peer, agent, session = await connect(2)
    peer.send(create(9))
    await settled(peer)
    (e,) = session.pending_elicitations
    with pytest.raises(ElicitationInvalid) as info:
        e.accept({"strategy": "wild", "passes": 0})
    assert set(info.value.errors) == {"strategy", "passes"}
    await settled(peer)
    assert answer_to(peer.stream, 9) is None and e.pending
    await agent.close()


# -- errors: each request answered at once --------------------------------------------------------
@pytest.mark.parametrize(
    ("message", "code"),
    [
        (create(10, mode="_custom"), -32602),  # a mode we did not advertise
        (create(11, requestId=1), -32602),  # two scopes
        (create(12, session=None), -32602),  # no scope
        (create(13, requestedSchema="nope"), -32602),
        (create(14, mode="url", url=None), -32602),
        (create(15, session="nobody"), -32002),  # an unknown session
        (create(16, session=None, requestId=999), -32602),  # no request of ours by that id
    ],
)
@pytest.mark.parametrize("version", [2, 1])
async def test_invalid_or_unroutable_requests_get_their_error(version: int, message: dict, code: int) -> None:
    peer, agent, session = await connect(version)
    peer.send(message)
    await settled(peer)
    reply = answer_to(peer.stream, message["id"])
    assert reply is not None and reply["error"]["code"] == code, reply
    assert session.pending_elicitations == [] and agent.pending_elicitations == []
    await agent.close()


async def test_a_request_scope_naming_a_prompt_is_refused() -> None:
    peer, agent, session = await connect(2)
    session.prompt_task("hello")
    await until_async(lambda: any(m.get("method") == "session/prompt" for m in peer.stream.sent), 5)
    prompt_id = next(m["id"] for m in peer.stream.sent if m.get("method") == "session/prompt")
    peer.send(create(17, session=None, requestId=prompt_id))
    await settled(peer)
    reply = answer_to(peer.stream, 17)
    assert (
        reply is not None
        and reply["error"]["code"] == -32602
        and "session/prompt" in reply["error"]["message"]
    )
    await agent.close()


async def test_a_second_outstanding_url_with_the_same_id_is_refused() -> None:
    peer, agent, session = await connect(2)
    peer.send(create(18, mode="url", elicitationId="same"))
    peer.send(create(19, mode="url", elicitationId="same"))
    await settled(peer)
    assert answer_to(peer.stream, 19)["error"]["code"] == -32602  # type: ignore[index]
    assert len(session.pending_elicitations) == 1
    await agent.close()


# -- request-scoped --------------------------------------------------------------------------------
class HeldPeer:
    """Answers ``initialize`` (after asking about it, when ``ask_at_init``), holds ``session/new``."""

    def __init__(self, version: int = 2, ask_at_init: dict[str, Any] | None = None) -> None:
        self.version, self.ask_at_init = version, ask_at_init
        self.stream = MemoryStream(on_sent=self._on_sent)
        self.init_id: Any = None
        self.new_id: Any = None

    def _on_sent(self, message: Any) -> None:
        method = message.get("method") if isinstance(message, dict) else None
        if method == "initialize":
            self.init_id = message["id"]
            if self.ask_at_init is None:
                self._answer_init()
            else:
                self.stream.push(create(500, session=None, requestId=message["id"], **self.ask_at_init))
        elif method == "session/new":
            self.new_id = message["id"]
        elif self.ask_at_init is not None and message.get("id") == 500 and "method" not in message:
            self._answer_init()

    def _answer_init(self) -> None:
        self.stream.push({"jsonrpc": "2.0", "id": self.init_id, "result": {"protocolVersion": self.version}})

    async def settled(self) -> None:
        await asyncio.wait_for(self.stream.idle(), 5)


@pytest.mark.parametrize("version", [2, 1])
async def test_an_elicitation_during_initialize_reaches_the_agent_handler(version: int) -> None:
    seen: list[Any] = []

    async def handler(e: Any) -> Any:
        seen.append((e.scope_request, e.session_id))
        return "decline"

    peer = HeldPeer(version, ask_at_init={})
    agent = Agent(peer.stream, elicitation_handler=handler)
    await asyncio.wait_for(agent.initialize(2), 5)
    assert agent.protocol_version == version
    assert seen == [({"id": peer.init_id, "method": "initialize"}, None)]
    assert answer_to(peer.stream, 500)["result"] == {"action": "decline"}  # type: ignore[index]
    assert [(d.kind, d.who, d.outcome) for d in agent.elicitation_log] == [
        ("elicitation", "handler", "decline")
    ]
    await agent.close()


async def test_a_request_scoped_url_at_session_new_waits_on_the_agent_and_completes() -> None:
    peer = HeldPeer()
    agent = Agent(peer.stream)
    await agent.initialize(2)
    opening = asyncio.ensure_future(agent.new_session("/tmp"))
    await until_async(lambda: peer.new_id is not None, 5)
    peer.stream.push(create(21, mode="url", session=None, requestId=peer.new_id))
    await settled(peer)
    (e,) = agent.pending_elicitations
    assert e.scope_request == {"id": peer.new_id, "method": "session/new"} and e.session_id is None
    assert agent.elicitation_state.records("elicitations")[0]["scope"] == "session/new"
    e.accept(by="user")  # a click: the browser opens it, the kernel prints nothing
    await settled(peer)
    assert answer_to(peer.stream, 21)["result"] == {"action": "accept"}  # type: ignore[index]
    assert e.status == "waiting"
    peer.stream.push(complete("e-21"))
    peer.stream.push(complete("e-21"))  # repeated: ignored
    peer.stream.push(complete("unknown"))  # unknown: ignored
    peer.stream.push({"jsonrpc": "2.0", "id": peer.new_id, "result": {"sessionId": "s1"}})
    session = await asyncio.wait_for(opening, 5)
    assert e.status == "completed" and session.pending_elicitations == []
    ignored = [d for d in agent.diagnostics if d.code == "elicitation-complete-ignored"]
    assert len(ignored) == 2
    await agent.close()


async def test_the_agent_withdraws_a_request_scoped_one() -> None:
    peer = HeldPeer()
    agent = Agent(peer.stream)
    await agent.initialize(2)
    opening = asyncio.ensure_future(agent.new_session("/tmp"))
    await until_async(lambda: peer.new_id is not None, 5)
    peer.stream.push(create(22, session=None, requestId=peer.new_id))
    peer.stream.push(withdraw(22))
    await settled(peer)
    assert answer_to(peer.stream, 22)["result"] == {"action": "cancel"}  # type: ignore[index]
    assert agent.elicitation_state.elicitations["elic_1"].decided_by == "withdrawn"
    await agent.close()
    with pytest.raises(Exception):  # noqa: B017 - the agent closed before session/new was answered
        await opening


async def test_a_headless_start_describes_an_elicitation_no_cell_can_answer(
    capsys: Any, monkeypatch: Any
) -> None:
    frontend.reset()
    monkeypatch.setattr(headless, "DELAY", 0.01)
    peer = HeldPeer()
    agent = Agent(peer.stream)
    await agent.initialize(2)
    with headless.starting_notices(agent, "start it with --elicitations decline"):
        opening = asyncio.ensure_future(agent.new_session("/tmp"))
        await until_async(lambda: peer.new_id is not None, 5)
        peer.stream.push(create(36, mode="url", session=None, requestId=peer.new_id))
        line = await until_async(lambda: capsys.readouterr().out or None, 5)
        peer.stream.push(withdraw(36))
        peer.stream.push({"jsonrpc": "2.0", "id": peer.new_id, "result": {"sessionId": "s1"}})
        await asyncio.wait_for(opening, 5)
    assert line == (
        "acp: the agent asks elic_1 'Which way?' during session/new: consent to open "
        "https://auth.example.com/connect — start it with --elicitations decline\n"
    )
    assert answer_to(peer.stream, 36)["result"] == {"action": "cancel"}  # type: ignore[index]
    await agent.close()


# -- URL mode from code, completion -----------------------------------------------------------------
async def test_accepting_a_url_from_code_prints_it_once_and_opens_nothing(capsys: Any) -> None:
    peer, agent, session = await connect(2)
    peer.send(create(23, mode="url"))
    await settled(peer)
    (e,) = session.pending_elicitations
    assert e.url_view is not None and e.url_view.registrable_domain == "example.com"
    e.accept()
    await settled(peer)
    printed = capsys.readouterr().out
    assert printed.count("https://auth.example.com/connect?state=secret") == 1
    assert answer_to(peer.stream, 23)["result"] == {"action": "accept"}  # type: ignore[index]
    peer.send(complete("e-23"))
    await settled(peer)
    assert e.status == "completed" and e.completed
    (entry,) = session.permission_log
    assert (entry.kind, entry.outcome, entry.url, entry.who) == (
        "elicitation", "accept", "https://auth.example.com/connect", "user",
    )  # fmt: skip
    assert "secret" not in json.dumps(session.permission_log.records())
    await agent.close()


async def test_a_dismissed_url_card_still_completes() -> None:
    peer, agent, session = await connect(2)
    peer.send(create(24, mode="url"))
    await settled(peer)
    (e,) = session.pending_elicitations
    e.accept(by="user")
    await settled(peer)
    assert session.dismiss_elicitation(e.key) and e.status == "dismissed"
    assert not session.dismiss_elicitation(e.key)
    peer.send(complete("e-24"))
    await settled(peer)
    assert e.status == "completed"
    await agent.close()


# -- withdrawal, turns, exit, close -------------------------------------------------------------------
@pytest.mark.parametrize("version", [2, 1])
async def test_cancel_request_withdraws_a_session_one_answered_cancel(version: int) -> None:
    peer, agent, session = await connect(version)
    peer.send(create(25))
    peer.send(withdraw(25))
    await settled(peer)
    assert answer_to(peer.stream, 25)["result"] == {"action": "cancel"}  # type: ignore[index]
    assert session.state.elicitations["elic_1"].decided_by == "withdrawn"
    await agent.close()


async def test_cancelling_the_turn_answers_no_elicitation() -> None:
    peer, agent, session = await connect(2)
    peer.send(create(26))
    await settled(peer)
    await session.cancel()
    peer.send(
        update(
            {
                "sessionUpdate": "agent_message_chunk",
                "messageId": "m",
                "content": {"type": "text", "text": "x"},
            }
        )
    )
    await settled(peer)
    assert answer_to(peer.stream, 26) is None and len(session.pending_elicitations) == 1
    await agent.close()


async def test_the_agent_exiting_ends_them_with_nothing_sent() -> None:
    peer, agent, session = await connect(2)
    peer.send(create(27))
    await settled(peer)
    (e,) = session.pending_elicitations
    peer.stream.end(1)
    await until_async(lambda: not e.pending, 5)
    assert (e.action, e.decided_by, answer_to(peer.stream, 27)) == ("cancel", "agent exited", None)
    with pytest.raises(ElicitationTooLate):
        e.decline()
    await agent.close()


async def test_closing_the_session_answers_them_cancel() -> None:
    peer, agent, session = await connect(2, capabilities={"session": {"close": {}}})
    peer.send(create(28))
    await settled(peer)

    def answer_close(message: Any) -> None:
        if isinstance(message, dict) and message.get("method") == "session/close":
            peer.reply(message["id"], {})

    peer.stream.on_sent, previous = answer_close, peer.stream.on_sent
    await asyncio.wait_for(session.close(), 5)
    peer.stream.on_sent = previous
    assert answer_to(peer.stream, 28)["result"] == {"action": "cancel"}  # type: ignore[index]
    close_index = next(i for i, m in enumerate(peer.stream.sent) if m.get("method") == "session/close")
    assert peer.stream.sent.index(answer_to(peer.stream, 28)) < close_index
    await agent.close()


# -- subagents ----------------------------------------------------------------------------------------
async def test_a_child_sessions_elicitation_goes_to_the_roots_desk() -> None:
    peer, agent, session = await connect(2)
    peer.send(announce(title="Explore"))
    peer.send(create(29, session="child-1"))
    await settled(peer)
    (e,) = session.pending_elicitations
    assert e.session_id == "child-1" and session.subagents["child-1"].state.elicitations == {}
    rows = session.records("elicitations", descendants=True)
    assert [(r["session_id"], r["parent_session_id"], r["key"]) for r in rows] == [
        ("child-1", "s1", "elic_1")
    ]
    peer.send(withdraw(29))
    await settled(peer)
    assert answer_to(peer.stream, 29)["result"] == {"action": "cancel"}  # type: ignore[index]
    await agent.close()


# -- handlers and policies --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("handler", "result", "who"),
    [
        (
            lambda e: {"strategy": "safe"},
            {"action": "accept", "content": {"strategy": "safe", "passes": 2}},
            "handler",
        ),
        (lambda e: "decline", {"action": "decline"}, "handler"),
        (policies.decline_elicitations(), {"action": "decline"}, "policy"),
        (policies.cancel_elicitations(), {"action": "cancel"}, "policy"),
        ("cancel", {"action": "cancel"}, "policy"),
    ],
)
async def test_the_handler_answers(handler: Any, result: dict, who: str) -> None:
    peer, agent, session = await connect(2)
    session.elicitation_handler = handler
    peer.send(create(30))
    await until_async(lambda: answer_to(peer.stream, 30), 5)
    assert answer_to(peer.stream, 30)["result"] == result  # type: ignore[index]
    await settled(peer)
    (entry,) = session.permission_log
    assert (entry.kind, entry.who, entry.outcome) == ("elicitation", who, result["action"])
    assert entry.values == result.get("content")
    await agent.close()


async def test_an_async_handler_set_later_is_offered_the_pending_ones() -> None:
    peer, agent, session = await connect(2)
    peer.send(create(31))
    await settled(peer)

    async def fill(e: Any) -> Any:
        await asyncio.sleep(0)
        return {"strategy": "bold", "passes": 5}

    session.elicitation_handler = fill
    await until_async(lambda: answer_to(peer.stream, 31), 5)
    assert answer_to(peer.stream, 31)["result"]["content"] == {"strategy": "bold", "passes": 5}  # type: ignore[index]
    await agent.close()


@pytest.mark.parametrize(
    ("handler", "code"),
    [
        (lambda e: None, "elicitation-unanswered"),
        (lambda e: {"strategy": "wild"}, "elicitation-invalid-answer"),
        (lambda e: 42, "elicitation-unknown-answer"),
        (lambda e: 1 / 0, "elicitation-handler-error"),
    ],
)
async def test_a_handler_without_a_valid_answer_leaves_it_pending(handler: Any, code: str) -> None:
    peer, agent, session = await connect(2)
    session.elicitation_handler = handler
    peer.send(create(32))
    await until_async(lambda: any(d.code == code for d in session.state.diagnostics), 5)
    assert answer_to(peer.stream, 32) is None and len(session.pending_elicitations) == 1
    await agent.close()


async def test_a_permission_policy_covers_elicitations_when_no_handler_is_set() -> None:
    peer, agent, session = await connect(2)
    session.permission_handler = policies.allow(kinds=["read"]) | policies.decline_elicitations()
    peer.send(create(33))
    await until_async(lambda: answer_to(peer.stream, 33), 5)
    assert answer_to(peer.stream, 33)["result"] == {"action": "decline"}  # type: ignore[index]
    session.elicitation_handler = lambda e: "cancel"  # its own handler wins
    peer.send(create(34))
    await until_async(lambda: answer_to(peer.stream, 34), 5)
    assert answer_to(peer.stream, 34)["result"] == {"action": "cancel"}  # type: ignore[index]
    await agent.close()


async def test_a_plain_permission_function_is_never_asked_about_elicitations() -> None:
    peer, agent, session = await connect(2)
    asked: list[Any] = []
    session.permission_handler = lambda request: asked.append(request)
    peer.send(create(35))
    peer.send(
        update(
            {
                "sessionUpdate": "agent_message_chunk",
                "messageId": "m",
                "content": {"type": "text", "text": "x"},
            }
        )
    )
    await settled(peer)
    assert asked == [] and answer_to(peer.stream, 35) is None
    await agent.close()


# -- the schema's referee -------------------------------------------------------------------------------
@pytest.mark.parametrize("version", [2, 1])
async def test_what_we_send_and_what_the_tests_send_validate_against_the_schema(version: int) -> None:
    from .test_golden import _schema_validator

    peer, agent, session = await connect(version)
    offered = peer.stream.sent[0]["params"]
    key = "capabilities" if version == 2 else "clientCapabilities"
    _schema_validator(version, "ClientCapabilities").validate(offered[key])
    requests = [create(40), create(41, mode="url"), create(42, session=None, requestId=7, mode="url")]
    for request in requests:
        _schema_validator(version, "CreateElicitationRequest").validate(request["params"])
    _schema_validator(version, "CompleteElicitationNotification").validate(complete("e-41")["params"])
    peer.send(create(40))
    peer.send(create(41, mode="url"))
    peer.send(create(43))
    await settled(peer)
    form, url, other = session.pending_elicitations
    form.accept({"strategy": "safe"})
    url.accept(by="user")
    other.decline()
    await settled(peer)
    for rid in (40, 41, 43):
        _schema_validator(version, "CreateElicitationResponse").validate(
            answer_to(peer.stream, rid)["result"]
        )  # type: ignore[index]
    await agent.close()


async def test_a_secret_looking_field_reaches_the_agent_but_no_log_or_table() -> None:
    """The spec forbids forms that ask for secrets; when one does, the agent gets what was typed,
    and the decision log and the elicitations table keep ``<redacted>`` in its place."""
    peer, agent, session = await connect(2)
    schema = {"type": "object", "properties": {"user": {"type": "string"}, "apiKey": {"type": "string"}}}
    peer.send(create(3, requestedSchema=schema))
    await settled(peer)
    (e,) = session.pending_elicitations
    e.accept({"user": "ada", "apiKey": "sk-typed-secret"})
    await settled(peer)
    reply = answer_to(peer.stream, 3)
    assert reply is not None and reply["result"]["content"] == {"user": "ada", "apiKey": "sk-typed-secret"}
    (logged,) = [d for d in session.permission_log if d.kind == "elicitation"]
    assert logged.values == {"user": "ada", "apiKey": "<redacted>"}
    (row,) = session.state.records("elicitations")
    assert row["values"] == {"user": "ada", "apiKey": "<redacted>"}
    assert "sk-typed-secret" not in json.dumps(session.permission_log.records(), default=str)
    await agent.close()
