"""The demo agent's subagent scenario (v2), driven through the real client (``start_agent``): the
tree, each child's own state, permissions asked in place, cancel only where allowed, and the
background child that asks after the parent's turn ended and then makes the agent start a turn."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from acp_notebook import doctor, start_agent
from acp_notebook.demo_agent import APP_NEW, APP_OLD
from acp_notebook.demo_agent.agent import Agent as DemoAgent
from acp_notebook.demo_agent.data import CHANGELOG_NEW, CHANGELOG_OLD, LINT_CHUNKS
from acp_notebook.demo_agent.emitter import Session as DemoSession
from tests.support import until_async
from tests.test_demo_agent import spawn  # noqa: F401  (the raw JSON-RPC driver's fixture)

DEMO = [sys.executable, "-m", "acp_notebook.demo_agent", "--speed", "0"]
PROMPT = "Delegate the fix to subagents."
TIMEOUT = 30
FINISHED = "The changelog writer finished: Added the `average()` fix to CHANGELOG.md."


async def open_demo(tmp_path: Path, version: int = 2) -> tuple[Any, Any]:
    """The demo agent and one session in ``tmp_path`` (no handler: requests wait for the test)."""
    agent = await start_agent(DEMO, protocol_version=version)
    return agent, await agent.new_session(str(tmp_path))


async def asked(session: Any, child_id: str) -> Any:
    """The pending permission request of ``child_id`` (waits, bounded)."""
    found = lambda: next((r for r in session.pending_permissions if r.session_id == child_id), None)  # noqa: E731
    return await until_async(found, TIMEOUT, message=f"a permission request of {child_id}")


def said(state: Any) -> list[str]:
    """The agent's messages in a state, as text."""
    return [m.text for m in state.messages.values() if m.role == "agent"]


async def agent_turn_ended(session: Any, text: str = FINISHED) -> None:
    """Wait (bounded) until the agent's own turn has said ``text`` and ended."""
    done = lambda: text in said(session.state) and session.state.run_state == "idle"  # noqa: E731
    await until_async(done, TIMEOUT, message="the turn the agent started")


def sent(agent: Any, method: str) -> list[dict[str, Any]]:
    """The client's messages of ``method`` in the agent's traffic."""
    out = [e["message"] for e in agent.traffic if e["dir"] == "out" and e["kind"] == "message"]
    return [m for m in out if m.get("method") == method]


async def test_the_tree_the_permissions_and_the_background_child(tmp_path: Path) -> None:
    agent, session = await open_demo(tmp_path)
    root = session.session_id
    reviewer_id, lint_id, writer_id = f"{root}.reviewer", f"{root}.reviewer.lint", f"{root}.writer"
    turn = session.prompt_task(PROMPT)
    request = await asked(session, reviewer_id)  # asked in place: the root's desk, the child's id
    assert session.state.run_state == "requires_action", "the parent waits with its child"
    assert session.subagents[reviewer_id].run_state == "requires_action"
    assert request.tool_call_id == "call_review_edit" and request.title == "Let the reviewer edit src/app.py?"
    request.select("allow-once")
    assert await asyncio.wait_for(turn, TIMEOUT) == "end_turn"

    assert list(session.subagents) == [reviewer_id, writer_id]
    reviewer, writer = session.subagents[reviewer_id], session.subagents[writer_id]
    assert (reviewer.title, reviewer.parent_id, reviewer.cwd) == ("Fix average()", root, str(tmp_path))
    assert reviewer.info.cancellable and writer.info.cancellable
    assert list(reviewer.subagents) == [lint_id]
    lint = reviewer.subagents[lint_id]
    assert (lint.parent_id, lint.cwd, lint.info.capabilities) == (reviewer_id, f"{tmp_path}/src", None)
    assert not lint.info.cancellable and lint_id not in session.subagents, "a grandchild is its parent's"

    # each child's own items in its own state; none in its parent's
    assert list(reviewer.state.tool_calls) == ["call_review_read", "call_review_edit"]
    edit = reviewer.state.tool_calls["call_review_edit"].to_dict()
    assert edit["status"] == "completed" and edit["content"][0]["type"] == "diff"
    assert list(lint.state.tool_calls) == ["call_lint"]
    assert lint.state.terminals["term_lint"].output == b"".join(LINT_CHUNKS)
    assert lint.state.terminals["term_lint"].exit_status == {"exitCode": 0, "signal": None}
    assert not session.state.tool_calls and not session.state.terminals
    assert said(lint.state) == ["All checks passed."] and "All checks passed." not in said(reviewer.state)
    assert (reviewer.run_state, lint.run_state) == ("idle", "idle")

    # the background child: listed when the parent's turn ended, asks after it, then the agent's turn
    assert session.state.background == [{"type": "subagent", "sessionId": writer_id}]
    request = await asked(session, writer_id)
    assert session.state.run_state == "idle" and writer.run_state == "requires_action"
    assert request.title == "Let the writer edit CHANGELOG.md?"
    request.select("allow-once")
    assert await session.wait_idle(TIMEOUT, background=True), "background work and the agent's turn end"
    assert FINISHED in said(session.state)
    assert session.state.background == [] and session.state.stop_reason == "end_turn"
    assert [t.origin for t in session.turns] == ["user", "agent"], "the task notification is a turn"
    for state in (session.state, reviewer.state, lint.state, writer.state):
        assert [str(d) for d in state.diagnostics] == [], "every shape understood"
    assert writer.run_state == "idle" and list(writer.state.tool_calls) == [
        "call_changelog_read",
        "call_changelog_edit",
    ]
    prompts = sent(agent, "session/prompt")
    assert len(prompts) == 1, "the last turn was the agent's own"
    assert doctor(session) == [], "the doctor finds nothing wrong in the whole tree's traffic"
    await agent.close()


async def test_messages_between_sessions_are_sent_on_both_sides(tmp_path: Path) -> None:
    agent, session = await open_demo(tmp_path)
    session.permission_handler = lambda request: "allow-once"
    await asyncio.wait_for(session.prompt(PROMPT), TIMEOUT)
    await agent_turn_ended(session)
    await agent.close()
    root = session.session_id
    views: dict[str, list[dict[str, Any]]] = {}
    for entry in agent.traffic:
        message = entry["message"] if entry["kind"] == "message" else {}
        if message.get("method") == "session/update":
            update = message["params"]["update"]
            if update["sessionUpdate"] in ("session_message", "session_message_chunk"):
                views.setdefault(message["params"]["sessionId"], []).append(update)
    reviewer = session.subagents[f"{root}.reviewer"]
    task_out, task_in = views[root][0], views[f"{root}.reviewer"][0]
    kept_out = session.state.session_messages[task_out["messageId"]]
    kept_in = reviewer.state.session_messages[task_in["messageId"]]
    assert (
        kept_out.recipient_message_id == kept_in.message_id
        and kept_in.sender_message_id == kept_out.message_id
    )
    assert (
        kept_out.text
        == kept_in.text
        == "Fix the off-by-one in average() in src/app.py, then have src/ linted."
    )
    assert task_out["senderSessionId"] == task_in["senderSessionId"] == root
    assert task_out["recipientMessageId"] == task_in["messageId"], "the outgoing view names the incoming"
    assert task_in["senderMessageId"] == task_out["messageId"], "and the incoming names the outgoing"
    assert task_out["content"] == task_in["content"]
    report = [u for u in views[root] if u["messageId"] != task_out["messageId"]][:4]
    assert [u["sessionUpdate"] for u in report] == ["session_message_chunk"] * 3 + ["session_message"]
    assert "content" not in report[-1] and report[-1]["senderSessionId"] == f"{root}.reviewer"
    kept = session.state.session_messages[report[-1]["messageId"]]
    assert (
        kept.chunks == 3
        and kept.text == "Fixed `average()` in `src/app.py` (you allowed the edit); ruff: all checks passed."
    )


async def test_cancel_only_where_allowed(tmp_path: Path) -> None:
    agent, session = await open_demo(tmp_path)
    root = session.session_id
    turn = session.prompt_task(PROMPT)
    request = await asked(session, f"{root}.reviewer")
    reviewer = session.subagents[f"{root}.reviewer"]
    await reviewer.cancel()  # its pending request answered `cancelled`; the parent goes on
    assert request.outcome == {"outcome": "cancelled"}
    assert [m["params"]["sessionId"] for m in sent(agent, "session/cancel")] == [reviewer.session_id]
    assert await asyncio.wait_for(turn, TIMEOUT) == "end_turn"
    assert reviewer.state.run_state == "idle" and reviewer.state.stop_reason == "cancelled"
    assert reviewer.state.tool_calls["call_review_edit"].status == "cancelled"
    assert not reviewer.subagents, "the linter never started"
    assert "The reviewer is done. " in "".join(said(session.state))
    session.permission_handler = lambda request: "allow-once"  # the writer is not affected
    await agent_turn_ended(session)
    await agent.close()


async def test_a_child_without_cancel_refuses_and_sends_nothing(tmp_path: Path) -> None:
    agent, session = await open_demo(tmp_path)
    session.permission_handler = lambda request: "allow-once"
    await asyncio.wait_for(session.prompt(PROMPT), TIMEOUT)
    lint = session.subagents[f"{session.session_id}.reviewer"].subagents[
        f"{session.session_id}.reviewer.lint"
    ]
    with pytest.raises(ValueError, match=r"capabilities\.cancel"):
        await lint.cancel()
    assert sent(agent, "session/cancel") == []
    await agent_turn_ended(session)
    await agent.close()


async def test_cancelling_the_turn_stops_the_foreground_child_only(tmp_path: Path) -> None:
    agent, session = await open_demo(tmp_path)
    root = session.session_id
    turn = session.prompt_task(PROMPT)
    request = await asked(session, f"{root}.reviewer")
    await session.cancel()  # the reviewer is foreground work: it stops with the turn
    assert await asyncio.wait_for(turn, TIMEOUT) == "cancelled"
    assert request.outcome == {"outcome": "cancelled"}
    reviewer = session.subagents[f"{root}.reviewer"]
    await until_async(lambda: reviewer.state.stop_reason == "cancelled", TIMEOUT, message="the child's end")
    assert list(session.subagents) == [f"{root}.reviewer"], "no writer was started"

    # a second play: the writer in the background survives the parent's cancel
    turn = session.prompt_task(PROMPT)
    (await asked(session, f"{root}.reviewer_2")).select("allow-once")
    assert await asyncio.wait_for(turn, TIMEOUT) == "end_turn"
    request = await asked(session, f"{root}.writer_2")
    await session.cancel()  # no foreground work: a background child's request is spared
    assert request in session.pending_permissions and request.outcome is None
    request.select("allow-once")
    await agent_turn_ended(session)
    await agent.close()


async def test_over_v1_the_scenario_says_subagents_need_v2(tmp_path: Path) -> None:
    agent, session = await open_demo(tmp_path, version=1)
    assert await asyncio.wait_for(session.prompt(PROMPT), TIMEOUT) == "end_turn"
    assert said(session.state) == [
        "Subagents are an ACP v2 feature (the unstable `subagent_update`): this connection speaks v1, "
        "so I have no child sessions to show. Start me over v2 (the default) to see them."
    ]
    assert not session.subagents and not session.state.tool_calls
    await agent.close()


def test_the_diffs_hold_the_file_texts() -> None:
    assert APP_OLD != APP_NEW and CHANGELOG_NEW.startswith(CHANGELOG_OLD)
    assert CHANGELOG_NEW.splitlines()[-1] == "- Fix `average()`: it no longer adds 1 to the mean."


class Cancels:
    """A stand-in for a turn's emitter: counts cancels."""

    def __init__(self) -> None:
        self.count = 0

    def cancel(self) -> None:
        self.count += 1


def test_the_agent_honours_session_cancel_only_where_a_child_allows_it() -> None:
    wire = type("Wire", (), {"on_request": None, "on_notification": None})()
    agent = DemoAgent(wire, None, 0.0, 2)  # type: ignore[arg-type]
    allowed, refused, root = Cancels(), Cancels(), Cancels()
    sessions = {
        "p": DemoSession("p", "/w"),
        "p.a": DemoSession("p.a", "/w", parent_id="p"),
        "p.a.b": DemoSession("p.a.b", "/w", parent_id="p.a", cancellable=False),
    }
    for (key, session), em in zip(sessions.items(), (root, allowed, refused), strict=True):
        session.active.append(em)
        agent.sessions[key] = session
    for key in ("p.a", "p.a.b", "unknown"):
        agent.on_notification("session/cancel", {"sessionId": key})
    assert (root.count, allowed.count, refused.count) == (0, 1, 0)


def test_subagent_sessions_take_no_prompt_and_close_with_their_root(spawn) -> None:  # noqa: F811
    driver = spawn()
    driver.initialize(2)
    root = driver.new_session()
    assert driver.finish_turn(driver.prompt(root, PROMPT)) == "end_turn"
    driver.until(lambda m: "The changelog writer finished" in json.dumps(m), what="the agent's own turn")
    idle = driver.until(
        lambda m: m.get("params", {}).get("update", {}).get("state") == "idle", what="its end"
    )
    assert idle["params"] == {
        "sessionId": root,
        "update": {
            "sessionUpdate": "state_update",
            "state": "idle",
            "stopReason": "end_turn",
            "background": [],
        },
    }
    prompt = {"sessionId": f"{root}.reviewer", "prompt": [{"type": "text", "text": "hi"}]}
    error = driver.call("session/prompt", prompt)["error"]
    assert error["code"] == -32602 and "subagent session" in error["message"]
    listed = driver.call("session/list", {})["result"]["sessions"]
    assert [s["sessionId"] for s in listed] == [root], "children are not the client's sessions"
    assert driver.call("session/close", {"sessionId": root})["result"] == {}
    for child in (f"{root}.reviewer", f"{root}.reviewer.lint", f"{root}.writer"):
        closed = driver.call("session/resume", {"sessionId": child})["error"]
        assert closed["code"] == -32002, "closed with its root"
