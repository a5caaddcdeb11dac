"""Interop: our client answers the elicitations of an agent written on the official TypeScript SDK
2.4.0 (``agent_v2.mjs``, script ``elicit`` and ``INTEROP_ELICIT_AT_NEW``): a form with every field
type tied to a tool call, a URL consent and its completion (unknown and repeated ids ignored), a
question the agent withdraws, a request-scoped one while ``session/new`` waits, and the errors for
an unknown ``requestId`` (-32602), an unknown ``sessionId`` (-32002) and a mode we did not advertise
(-32602). The SDK referees every answer we send (its own validators and its JSON Schema) — no real
agent sends URL-mode or request-scoped elicitations offline.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from ..support import until_async
from .test_sdk_agents import TIMEOUT, events, initialize_params, project, sdk_agent, sdk_installed  # noqa: F401

VALUES = {"name": "x1", "version": "1.2", "targets": ["linux"], "copies": 3}
DEFAULTS = {"name": "spring", "level": "low", "ratio": 0.5, "notify": True}
PUNYCODE_URL = "https://xn--80ak6aa92e.com/consent?e=elic_url_1"


def answered(report: dict, message: str) -> list[dict[str, Any]]:
    """What the agent recorded for each elicitation with this ``message``: its response or error."""
    return [e for e in events(report, "elicitation") if e["message"] == message]


def raw_answer(report: dict, message: str) -> dict[str, Any]:
    """Our response to the elicitation with this ``message``, exactly as the agent received it."""
    responses = [e.get("response") for e in answered(report, message)]
    for item in report["received"]:
        wire = item["message"]
        if item["method"] == "elicitation/create" and "result" in wire and wire["result"] in responses:
            return wire
    raise AssertionError(f"no answer to {message!r}")


async def next_pending(owner: Any, turn: asyncio.Future, mode: str, seen: set[int]) -> Any:
    """The next elicitation of ``mode`` waiting in ``owner.pending_elicitations``."""

    def found() -> Any:
        if turn.done():
            raise AssertionError(f"the turn ended before a {mode} elicitation: {turn}")
        return next((e for e in owner.pending_elicitations if e.mode == mode and id(e) not in seen), None)

    elicitation = await until_async(found, TIMEOUT, message=f"a pending {mode} elicitation")
    seen.add(id(elicitation))
    return elicitation


async def test_v2_form_url_withdrawn_and_stray_elicitations(sdk_agent, project):  # noqa: F811
    run = await sdk_agent(2)
    session = await run.agent.new_session(project)
    turn = asyncio.ensure_future(session.prompt("elicit"))
    seen: set[int] = set()
    form = await next_pending(session, turn, "form", seen)
    assert (form.tool_call_id, form.session_id, form.message) == (
        "tc_release",
        session.session_id,
        "How should I release?",
    )
    assert session.state.run_state == "requires_action"
    with pytest.raises(ValueError):  # `version` does not match its pattern: nothing is sent
        form.accept({**VALUES, "version": "1.2.3"})
    assert form.pending
    form.accept(VALUES)
    url = await next_pending(session, turn, "url", seen)
    assert (url.url, url.elicitation_id, url.tool_call_id) == (PUNYCODE_URL, "elic_url_1", None)
    url.accept()
    assert await asyncio.wait_for(turn, TIMEOUT) == "end_turn"  # the next question is left alone
    [withdrawn] = [e for e in session.state.elicitations.values() if e.message == "Withdrawn soon?"]

    assert form.outcome == {"action": "accept", "content": {**DEFAULTS, **VALUES}}
    assert url.outcome == {"action": "accept"} and url.status == "completed"
    assert withdrawn.outcome == {"action": "cancel"} and not withdrawn.pending
    assert session.pending_elicitations == [] and run.agent.pending_elicitations == []
    assert session.state.tool_calls["tc_release"].status == "completed"
    assert session.state.tool_calls["tc_release"].raw_output == {**DEFAULTS, **VALUES}
    report = await run.finish()  # the SDK's validators and JSON Schema accepted every answer
    assert initialize_params(report)["capabilities"]["elicitation"] == {"form": {}, "url": {}}
    sent = json.dumps(raw_answer(report, "How should I release?"))
    assert '"copies": 3,' in sent or '"copies": 3}' in sent  # an integer stays a JSON integer
    assert [e.get("response") for e in answered(report, "Withdrawn soon?")] == [{"action": "cancel"}]
    strays = [(e.get("code"), e.get("response")) for e in answered(report, "Stray?")]
    assert strays == [(-32602, None), (-32002, None)]
    assert [e.get("code") for e in answered(report, "A mode nobody advertised?")] == [-32602]


@pytest.mark.parametrize("action", ["decline", "cancel"])
async def test_v2_a_declined_form_fails_its_tool_call(sdk_agent, project, action):  # noqa: F811
    run = await sdk_agent(2)
    session = await run.agent.new_session(project)
    session.elicitation_handler = lambda elicitation: action if elicitation.mode == "form" else "decline"
    assert await asyncio.wait_for(session.prompt("elicit"), TIMEOUT) == "end_turn"
    assert session.state.tool_calls["tc_release"].status == "failed"
    assert session.state.tool_calls["tc_release"].raw_output == {"action": action}
    report = await run.finish()
    assert [e["response"] for e in answered(report, "How should I release?")] == [{"action": action}]
    assert not [m for m in report["received"] if m["method"] == "elicitation/complete"]


async def test_v2_request_scoped_form_at_session_new_answered_by_the_agent_handler(sdk_agent, project):  # noqa: F811
    asked: list[Any] = []

    def fill(elicitation: Any) -> dict[str, Any]:
        asked.append(elicitation)
        return {"title": "Interop"}

    run = await sdk_agent(2, extra_env={"INTEROP_ELICIT_AT_NEW": "form"}, elicitation_handler=fill)
    session = await asyncio.wait_for(run.agent.new_session(project), TIMEOUT)
    [elicitation] = asked
    assert elicitation.session_id is None and elicitation.scope_request["method"] == "session/new"
    assert elicitation.outcome == {"action": "accept", "content": {"title": "Interop"}}
    assert session.session_id == "sess_1"
    report = await run.finish()
    assert [e["response"] for e in answered(report, "Name the session.")] == [elicitation.outcome]
    new_request = next(
        i for i in report["received"] if i["method"] == "session/new" and "params" in i["message"]
    )
    asked_wire = [
        i for i in report["received"] if i["method"] == "elicitation/create" and "result" in i["message"]
    ]
    assert asked_wire and new_request["message"]["id"] == elicitation.scope_request["id"]


async def test_v2_request_scoped_url_at_session_new_waits_for_the_user(sdk_agent, project):  # noqa: F811
    run = await sdk_agent(2, extra_env={"INTEROP_ELICIT_AT_NEW": "url"})
    opening = asyncio.ensure_future(run.agent.new_session(project))
    [elicitation] = await until_async(lambda: run.agent.pending_elicitations, TIMEOUT, message="the URL")
    assert (elicitation.mode, elicitation.session_id, elicitation.url) == (
        "url",
        None,
        "https://auth.example.com/start?e=elic_new",
    )
    assert elicitation.scope_request["method"] == "session/new" and not opening.done()
    elicitation.accept()
    session = await asyncio.wait_for(opening, TIMEOUT)
    assert session.session_id == "sess_1"
    await until_async(lambda: elicitation.status == "completed", TIMEOUT, message="the completion")
    report = await run.finish()
    assert [e["response"] for e in answered(report, "Sign in before the session starts.")] == [
        {"action": "accept"}
    ]
