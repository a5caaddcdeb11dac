"""Interop, the other way round: the official TypeScript SDK (2.4.0) referees every message the demo
agent sends in its elicitation scenario (``elicitation/create`` request-scoped at ``session/new``, a
form with every field type tied to a tool call, a URL one and its ``elicitation/complete``, the
``$/cancel_request`` that withdraws a question), with ``check_agent.mjs`` (the SDK's own validators:
rejected when they fail or change a message) and with the SDK package's JSON Schema.

A raw JSON-RPC client drives the agent (``tests/test_demo_elicitation.py``'s ``Asker``), so what is
refereed is the agent alone; then our client plays the scenario with ``record=`` and the whole trace
is refereed. Needs ``npm ci`` in ``tests/interop`` (the fixture runs it once).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from acp_notebook import start_agent

from ..support import until_async
from ..test_demo_elicitation import ACCEPT_ALL, BOTH, GOOD, Asker, by_message
from .test_demo_agent_unstable import DEMO, agent_messages, schema_problems, sdk_verdict
from .test_sdk_agents import TIMEOUT, sdk_installed  # noqa: F401  (the fixture)

METHODS = {"elicitation/create", "elicitation/complete", "$/cancel_request"}


def refereed(driver: Asker) -> list[dict[str, Any]]:
    """Every message the agent sent, as ``{message, method}`` for the referees."""
    return [
        {"message": m, "method": m.get("method") or driver.sent.get(m.get("id"))}
        for m in driver.messages
        if "method" in m or m.get("id") in driver.sent
    ]


def play(answer: Any, *args: str) -> Asker:
    """The scenario (session/new's question included) with a client that answers by ``answer``."""
    driver = Asker("--scenario", "elicitation", *args)
    driver.elicit = answer
    driver.initialize_with(2, BOTH)
    session_id = driver.call("session/new", {"cwd": "/tmp", "mcpServers": []})["result"]["sessionId"]
    driver.finish_turn(driver.prompt(session_id, "fill in a form"))
    return driver


@pytest.mark.parametrize(
    "answer",
    [
        ACCEPT_ALL,
        by_message(
            {"Which profile": {"action": "accept", "content": {"profile": "quick"}}, "Which test": None}
        ),
    ],
    ids=["accepted", "declined-or-cancelled"],
)
def test_the_sdk_accepts_every_message_of_the_elicitation_scenario(tmp_path, answer):
    driver = play(answer)
    try:
        items = refereed(driver)
    finally:
        driver.close()
    methods = {i["method"] for i in items}
    assert methods >= {"elicitation/create", "$/cancel_request", "session/update", "session/new"}
    assert ("elicitation/complete" in methods) == (answer is ACCEPT_ALL)
    assert sdk_verdict(items, tmp_path) == []
    assert schema_problems(items) == []


def test_the_referee_sees_a_bad_elicitation(tmp_path):
    """Both referees would catch a malformed question: no scope, and a URL one without its id."""

    def request(params: dict[str, Any]) -> dict[str, Any]:
        message = {"jsonrpc": "2.0", "id": 7, "method": "elicitation/create", "params": params}
        return {"message": message, "method": "elicitation/create"}

    schema = {"type": "object", "properties": {"a": {"type": "string"}}}
    unscoped = request({"mode": "form", "message": "?", "requestedSchema": schema})
    no_id = request({"sessionId": "s", "mode": "url", "message": "?", "url": "https://example.com/"})
    assert [v["index"] for v in sdk_verdict([unscoped, no_id], tmp_path)] == [0, 1]
    assert schema_problems([unscoped]) and schema_problems([no_id])


# -- through our client (record=): the same scenario, answered from Python ---------------------------


async def test_our_client_and_the_demo_agent_agree_on_every_elicitation(tmp_path):
    """The demo's request-scoped form at ``session/new``, its form, its URL consent (completed), its
    withdrawn question and its subagent's question, answered through ``acp_notebook``; the SDK
    referees the whole trace: what the agent sent (``check_agent.mjs``) and its JSON Schema."""
    out = tmp_path / "elicitation.jsonl"
    asked: list[Any] = []

    def profile(elicitation: Any) -> Any:
        asked.append(elicitation)
        return {"profile": "quick"}

    agent = await start_agent([*DEMO, "--scenario", "elicitation"], record=out, elicitation_handler=profile)
    try:
        session = await asyncio.wait_for(agent.new_session(str(tmp_path)), TIMEOUT)
        [at_new] = asked
        assert at_new.scope_request["method"] == "session/new" and at_new.session_id is None
        turn = asyncio.ensure_future(session.prompt("fill in a form"))
        form = await until_async(lambda: session.pending_elicitations, TIMEOUT, message="the form")
        assert form[0].tool_call_id == "call_release"
        form[0].accept(GOOD)
        url = await until_async(
            lambda: [e for e in session.pending_elicitations if e.mode == "url"], TIMEOUT, message="the URL"
        )
        url[0].accept()
        tagger = f"{session.session_id}.tagger"
        tag = await until_async(
            lambda: [e for e in session.pending_elicitations if e.session_id == tagger],
            TIMEOUT,
            message="the tag",
        )
        tag[0].accept({"tag": False})  # a subagent's question, on the root's desk
        assert await asyncio.wait_for(turn, TIMEOUT) == "end_turn"
    finally:
        await agent.close()
    assert url[0].status == "completed"
    withdrawn = [e for e in session.state.elicitations.values() if e.message.startswith("Which test runner")]
    assert [e.outcome for e in withdrawn] == [{"action": "cancel"}]
    said = "".join(m.text for m in session.state.messages.values())
    assert "the **quick** profile (accepted at session/new)" in said and "Release **autumn** 1.2.3" in said
    reports = session.state.session_messages.values()
    assert [m.text for m in reports if m.sender_session_id == tagger] == ["Not tagged, as you said."]
    items = agent_messages(out)
    assert {i["method"] for i in items} >= METHODS
    assert sdk_verdict(items, tmp_path) == []
    assert schema_problems(items) == []
