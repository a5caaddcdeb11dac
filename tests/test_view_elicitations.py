"""Elicitations in the views (issue 20, items 2-4 and 6, the kernel's side): where a card is drawn
(its tool call's card, the turn's view, a subagent's named in the root's view), a click answered
by the session's desk (refused values sent back to the page, integers typed beyond a JS number's
precision read exactly), a URL dismissed, a saved snapshot inert with only ``scheme://host/path``,
and a question asked while ``session/new`` waits shown in the awaiting caller's context and
answered there by a click."""

from __future__ import annotations

import asyncio
import contextvars
import sys
from pathlib import Path

from acp_notebook import SessionState, frontend, start_agent
from acp_notebook.export.html_export import render_html
from acp_notebook.protocol.elicitation import Elicitation
from acp_notebook.widgets import request_questions
from acp_notebook.widgets.snapshot import snapshot_of

from .support import recording as recording  # the autouse recording comm
from .support import until_async, update
from .test_client_framing import connect
from .test_subagents import announce
from .test_widgets import make_view, patches

CHILD = "child-1"
FORM = {
    "type": "object",
    "properties": {"n": {"type": "integer", "maximum": 2**63 - 1}, "ok": {"type": "boolean"}},
    "required": ["n"],
}


def create(request_id: int, session_id: str, **params) -> dict:
    """An ``elicitation/create`` request of ``session_id``."""
    body = {"sessionId": session_id, "message": "Pick a number", "mode": "form", "requestedSchema": FORM}
    return {"jsonrpc": "2.0", "id": request_id, "method": "elicitation/create", "params": {**body, **params}}


def entries(log, view) -> dict:
    """The entries of every patch sent to ``view``'s page so far, the latest of each key."""
    out: dict = {}
    for content, _ in patches(log, view):
        out.update(content.get("entries") or {})
    return out


async def test_a_card_is_drawn_in_its_tool_calls_card_and_a_subagents_names_it(recording) -> None:
    peer, agent, session = await connect(2)
    peer.send(update({"sessionUpdate": "tool_call_update", "toolCallId": "c1", "title": "Ask"}, "s1"))
    peer.send(announce(title="Explore"))
    peer.send(update({"sessionUpdate": "tool_call_update", "toolCallId": "c9", "title": "Dig"}, CHILD))
    peer.send(create(5, "s1", toolCallId="c1"))
    peer.send(create(6, "s1"))
    peer.send(create(7, CHILD, toolCallId="c9"))
    await peer.settled()
    view, fake, _ = make_view(session)
    fake.advance(1)
    view.flush_full()
    shown = {e["key"]: e for e in entries(recording, view).values() if e.get("kind") == "elicitation"}
    first, second, third = (shown[e.key] for e in session.state.elicitations.values())
    assert first["card"] == "tool_call:c1" and "subagent" not in first
    assert second["card"] is None  # no tool call: drawn at its place in the turn's view
    assert (third["card"], third["subagent"]) == (f"subagent:{CHILD}/tool_call:c9", "Explore")
    assert first["actionable"] and first["fields"][0]["kind"] == "integer"
    card = entries(recording, view)[f"subagent:{CHILD}"]
    assert (card["pending"], card["waiting"]) == (1, ["Pick a number"])  # the card opens itself
    assert view._header()["waiting"] == [
        {"session_id": CHILD, "subagent": "Explore", "title": "Pick a number"}
    ]
    assert view._header()["pending_elicitations"] == 3
    await agent.close()


async def test_a_click_is_answered_refused_values_go_back_and_int64_stays_exact(recording) -> None:
    peer, agent, session = await connect(2)
    peer.send(create(5, "s1"))
    await peer.settled()
    view, fake, _ = make_view(session)
    (asked,) = session.pending_elicitations
    view._handle_browser_msg(
        {"type": "elicitation", "key": asked.key, "action": "accept", "values": {"ok": True}}
    )
    refused = [c for c, _ in patches(recording, view) if c.get("type") == "elicitation_refused"]
    assert refused == [{"type": "elicitation_refused", "key": asked.key, "errors": {"n": "required"}}]
    assert asked.pending
    digits = str(2**63 - 1)  # a BigInt's text: a JS number would have lost its last digits
    view._handle_browser_msg(
        {"type": "elicitation", "key": asked.key, "action": "accept", "values": {"n": digits}}
    )
    await peer.settled()
    assert peer.answers()[-1] == {
        "jsonrpc": "2.0",
        "id": 5,
        "result": {"action": "accept", "content": {"n": 2**63 - 1}},
    }
    assert asked.decided_by == "user"
    await until_async(lambda: session.state.elicitation_times[asked.key][1] is not None, 5)
    fake.advance(1)
    view.flush_patch()
    entry = entries(recording, view)[f"elicitation:{asked.key}"]
    assert (entry["status"], entry["values_text"], entry["actionable"]) == ("accepted", {"n": digits}, False)
    sent = len(peer.answers())
    view._handle_browser_msg({"type": "elicitation", "key": asked.key, "action": "decline"})  # too late
    await peer.settled()
    assert len(peer.answers()) == sent and asked.action == "accept"
    await agent.close()


async def test_a_url_card_is_dismissed_and_saved_only_as_scheme_host_path() -> None:
    state = SessionState()
    url = "https://auth.example.org/start?token=s3cret#x"
    asked = Elicitation(
        "elic_1", 4, {"sessionId": "s1", "mode": "url", "message": "go", "url": url, "elicitationId": "e"}
    )
    state.add_elicitation(asked)
    view, _, _ = make_view(state)
    live = view._entry("elicitation:elic_1")
    assert live["url"] == url and live["url_view"]["registrable_domain"] == "example.org"
    saved, _ = snapshot_of(state)
    kept = saved["entries"]["elicitation:elic_1"]
    assert (kept["url"], kept["saved"], kept["actionable"]) == ("https://auth.example.org/start", True, False)
    assert "s3cret" not in str(saved) and "s3cret" not in render_html(state)
    view._handle_browser_msg({"type": "elicitation", "key": "elic_1", "action": "accept"})
    assert asked.status == "waiting" and asked.decided_by == "user"
    view._handle_browser_msg({"type": "elicitation", "key": "elic_1", "action": "dismiss"})
    assert asked.status == "dismissed"
    view._handle_browser_msg({"type": "elicitation", "key": "elic_1", "action": "open it!"})
    assert [d.code for d in state.diagnostics] == ["view-action-error"]


CELL = contextvars.ContextVar("cell", default="no cell")
DEMO = [sys.executable, "-m", "acp_notebook.demo_agent", "--speed", "0", "--scenario", "elicitation"]


async def test_a_question_at_session_new_shows_in_the_awaiting_cell_and_a_click_answers_it(
    recording, monkeypatch, tmp_path: Path
) -> None:
    shown: list[tuple[str, object]] = []
    monkeypatch.setattr(request_questions, "_in_kernel", lambda: True)
    monkeypatch.setattr(request_questions, "display", lambda view: shown.append((CELL.get(), view)))
    monkeypatch.setattr(frontend, "_asked_hooks", [])
    request_questions.install()
    agent = await start_agent(DEMO)
    try:

        async def the_cell():
            CELL.set("cell 7")  # the awaiting cell's context
            return await agent.new_session(str(tmp_path))

        opening = asyncio.get_running_loop().create_task(the_cell())
        await until_async(lambda: shown, 30, message="the question shown")
        [(cell, view)] = shown
        (asked,) = agent.pending_elicitations
        assert cell == "cell 7" and asked.scope_request["method"] == "session/new"
        view.flush_full()
        entry = entries(recording, view)[f"elicitation:{asked.key}"]
        assert entry["scope_request"]["method"] == "session/new" and entry["actionable"]
        click = {"type": "elicitation", "key": asked.key, "action": "accept", "values": {"profile": "quick"}}
        view._handle_browser_msg(click)
        session = await asyncio.wait_for(opening, 30)
        assert asked.outcome == {"action": "accept", "content": {"profile": "quick", "verbose": False}}
        assert asked.decided_by == "user"
        session.elicitation_handler = lambda _question: "cancel"
        await session.prompt("hello")
        said = "".join(m.text for m in session.state.messages.values() if m.role == "agent")
        assert "the **quick** profile (accepted at session/new)" in said
    finally:
        await agent.close()
