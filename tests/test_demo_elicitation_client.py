"""The demo agent's elicitation scenario through our client, v1 and v2: every question lands where
its scope says (the tool call's, the session's, a subagent's on the root's desk, the agent's for the
one asked while ``session/new`` waits), the answers given from code reach the agent (it says what it
got), every answer is in a decision log and the elicitations table, nothing is diagnosed, and the
doctor finds nothing wrong in the traffic."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from acp_notebook import doctor, start_agent
from acp_notebook.demo_agent import forms
from tests.support import until_async

DEMO = [sys.executable, "-m", "acp_notebook.demo_agent", "--speed", "0", "--scenario", "elicitation"]
TIMEOUT = 30
RELEASE = {"name": "autumn", "version": "1.2.3", "strategy": "balanced", "platforms": ["macos"]}


def said(state: Any) -> str:
    """Everything the agent said in a state."""
    return "".join(m.text for m in state.messages.values() if m.role == "agent")


def answer(question: Any) -> Any:
    """The test's handler: fill the release form, consent to the URL, say no to the tag, and leave
    the test-runner question alone (the agent withdraws it)."""
    if question.message.startswith("Which test runner"):
        return None
    if question.mode == "url":
        return {}
    if question.message.startswith("Tag the release"):
        return {"tag": False}
    return RELEASE


@pytest.mark.parametrize("version", [2, 1])
async def test_every_question_lands_in_its_scope_and_its_answer_reaches_the_agent(
    tmp_path: Path, version: int
) -> None:
    agent = await start_agent(DEMO, protocol_version=version, elicitation_handler=lambda q: "decline")
    try:
        session = await agent.new_session(str(tmp_path))
        session.elicitation_handler = answer
        assert await session.prompt("fill in a form") == "end_turn"
        url = next(e for e in session.state.elicitations.values() if e.mode == "url")
        await until_async(lambda: url.status == "completed", TIMEOUT, message="elicitation/complete")
    finally:
        await agent.close()
    [profile] = agent.elicitation_state.elicitations.values()
    assert (profile.scope_request["method"], profile.session_id, profile.outcome) == (
        "session/new",
        None,
        {"action": "decline"},
    )
    asked = list(session.state.elicitations.values())
    messages = [e.message.split("?")[0].split(".")[0] for e in asked]
    tagger = ["Tag the release as v-next"] if version == 2 else []
    assert messages == [
        "How should I prepare the release",
        "Sign in to the demo's release service",
        "Which test runner does this project use",
        *tagger,
    ]
    release, signin, runner = asked[:3]
    assert (release.tool_call_id, release.session_id) == ("call_release", session.session_id)
    defaults = {
        k: p["default"] for k, p in forms.release_form(version)["properties"].items() if "default" in p
    }
    assert release.outcome == {"action": "accept", "content": {**defaults, **RELEASE}}
    assert (signin.outcome, signin.status) == ({"action": "accept"}, "completed")
    assert (runner.outcome, runner.decided_by) == ({"action": "cancel"}, "withdrawn")
    text = said(session.state)
    assert "the **careful** profile (decline at session/new)" in text
    assert "Release **autumn** 1.2.3 with the balanced strategy on macos." in text
    assert "connected to the release service" in text and "I withdrew it" in text
    if version == 2:
        assert asked[3].session_id == f"{session.session_id}.tagger" and asked[3].outcome["content"] == {
            "tag": False
        }
        reports = [
            m.text
            for m in session.state.session_messages.values()
            if m.sender_session_id == asked[3].session_id
        ]
        assert reports == ["Not tagged, as you said."]
    rows = session.state.records("elicitations")
    assert [r["status"] for r in rows] == [
        "accepted",
        "completed",
        "cancelled",
        *(["accepted"] if tagger else []),
    ]
    assert [d.outcome for d in session.permission_log if d.kind == "elicitation"] == [
        "accept", "accept", "cancel", *(["accept"] if tagger else [])
    ]  # fmt: skip
    left = "elicitation-unanswered"  # the handler's None for the question the agent withdraws
    assert [str(d) for d in session.state.diagnostics if d.code != left] == [] and agent.diagnostics == []
    if version == 2:
        assert doctor(session) == [], "the doctor finds nothing wrong in the traffic"
