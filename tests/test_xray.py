"""The protocol X-ray: the pure index, its sources (a replay, a live session), and the view's side."""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

import pytest

import acp_notebook
from acp_notebook.client.launch import start_agent
from acp_notebook.playback import xray
from acp_notebook.playback.xray_source import XRaySource
from acp_notebook.policies import allow
from acp_notebook.widgets.header import state_time
from acp_notebook.widgets.session_view import SessionView

from .support import recording as recording  # the autouse recording comm
from .support import until_async
from .test_replay import snapshot
from .test_widgets import FakeTime, make_view, patches

DEMO = [sys.executable, "-m", "acp_notebook.demo_agent", "--speed", "0"]


@pytest.fixture
def demo() -> Any:
    rep = acp_notebook.replay("demo_v2.jsonl")
    yield rep
    rep.close()


# -- the pure index -----------------------------------------------------------------------------
def test_rows_name_what_each_entry_is() -> None:
    request = {
        "dir": "out",
        "t": 0.5,
        "kind": "message",
        "message": {"jsonrpc": "2.0", "id": 7, "method": "session/prompt", "params": {}},
    }
    update = {
        "dir": "in",
        "t": 0.6,
        "kind": "message",
        "message": {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {"sessionId": "s", "update": {"sessionUpdate": "tool_call_update", "toolCallId": "c1"}},
        },
        "session": "s",
    }
    answer = {
        "dir": "in",
        "t": 0.7,
        "kind": "message",
        "message": {"jsonrpc": "2.0", "id": 7, "error": {"code": -1, "message": "x"}},
    }
    noise = {"dir": "in", "t": 0.8, "kind": "stderr", "text": "boom"}
    assert xray.row(0, request) == {
        "i": 0,
        "dir": "out",
        "t": 0.5,
        "kind": "request",
        "label": "session/prompt",
        "id": 7,
        "size": len(json.dumps(request["message"], separators=(",", ":"))),
        "session": None,
        "tool": None,
    }
    assert (xray.row(1, update)["label"], xray.row(1, update)["tool"], xray.row(1, update)["kind"]) == (
        "tool_call_update",
        "c1",
        "notification",
    )
    assert (xray.row(2, answer)["kind"], xray.row(2, answer)["label"]) == ("error", "error")
    assert xray.row(3, noise, 9) == {
        "i": 3,
        "dir": "in",
        "t": 0.8,
        "kind": "stderr",
        "label": "stderr",
        "id": None,
        "size": 4,
        "session": None,
        "tool": None,
        "link": 9,
        "text": "boom",
    }
    links = xray.Links()
    for i, entry in enumerate([request, update, answer]):
        links.add(i, entry)
    assert (links.get(0), links.get(2), links.get(1)) == (2, 0, None)


def test_ids_pair_per_direction_and_in_batches() -> None:
    """The agent's request id 1 and the client's request id 1 are different requests."""
    ours = {"dir": "out", "kind": "message", "message": {"id": 1, "method": "initialize"}}
    theirs = {"dir": "in", "kind": "message", "message": [{"id": 1, "method": "fs/read_text_file"}]}
    their_answer = {"dir": "out", "kind": "message", "message": [{"id": 1, "result": {}}]}
    our_answer = {"dir": "in", "kind": "message", "message": {"id": 1, "result": {}}}
    links = xray.Links()
    for i, entry in enumerate([ours, theirs, their_answer, our_answer]):
        links.add(i, entry)
    assert links.pairs == {0: 3, 3: 0, 1: 2, 2: 1}


def test_the_filter_wants_every_word_in_the_row_or_its_json() -> None:
    entry = {
        "dir": "in",
        "kind": "message",
        "message": {
            "method": "session/update",
            "params": {"update": {"sessionUpdate": "plan", "entries": [{"content": "Fix Average()"}]}},
        },
    }
    row = xray.row(4, entry)
    assert xray.matches(row, entry, xray.query_words("PLAN average()"))
    assert xray.matches(row, entry, xray.query_words("#4 in"))
    assert not xray.matches(row, entry, xray.query_words("plan median"))
    assert xray.matches(row, entry, [])


# -- a replay's X-ray ---------------------------------------------------------------------------
def test_a_replay_source_pages_filters_and_details(demo) -> None:
    source = XRaySource.of_replay(demo)
    try:
        assert source.total() == len(demo) == 75
        first = source.rows(0, 3)
        assert first["total"] == 75 and [r["i"] for r in first["rows"]] == [0, 1, 2]
        assert first["rows"][0]["label"] == "initialize" and first["rows"][0]["link"] == 3
        asks = source.rows(0, 50, "session/request_permission")
        assert [r["i"] for r in asks["rows"]] == [26, 33] and asks["total"] == 2
        assert source.position_of(33, "session/request_permission") == 1
        assert source.position_of(34, "session/request_permission") is None
        detail = source.detail(26)
        assert json.loads(detail["json"]) == demo.entries[26]["message"] and not detail["cut"]
        assert detail["row"]["link"] == 27 and detail["findings"] == []
        assert source.findings() == []  # the shipped demo trace is clean
    finally:
        source.close()


def test_the_messages_that_built_a_card_are_the_ones_that_changed_it(demo) -> None:
    source = XRaySource.of_replay(demo)
    try:
        built = source.built_by("tool_call:call_edit", demo.state)
        naming = [i for i, e in enumerate(demo.entries) if xray.tool_call_of(e.get("message")) == "call_edit"]
        assert set(naming) <= set(built)
        assert 27 in built  # the client's answer to the permission (#26) shown in the card
        methods = {xray.row(i, demo.entries[i])["label"] for i in built}
        assert methods == {"tool_call_update", "session/request_permission", "response"}
        terminal = source.built_by("tool_call:call_test", demo.state)
        labels = [xray.row(i, demo.entries[i])["label"] for i in terminal]
        assert "terminal_update" in labels or "terminal_output" in labels or "terminal_output_chunk" in labels
        assert source.built_by("tool_call:nope", demo.state) == []
    finally:
        source.close()


def test_selecting_a_message_in_a_replay_seeks_there(demo) -> None:
    source = XRaySource.of_replay(demo)
    try:
        state = source.state_after(30)
        assert demo.position == 31 and state is demo.state
        fresh = acp_notebook.replay("demo_v2.jsonl", position=31)
        assert snapshot(state) == snapshot(fresh.state)
        fresh.close()
    finally:
        source.close()


# -- a live session's X-ray ---------------------------------------------------------------------
async def _demo_turn(tmp_path, **options) -> tuple[Any, Any]:
    agent = await start_agent(DEMO, str(tmp_path), **options)
    session = await agent.new_session(str(tmp_path))
    session.permission_handler = allow()
    await asyncio.wait_for(session.prompt("Fix the failing test, please."), 30)
    return agent, session


async def test_a_live_source_reenacts_the_state_after_a_message(tmp_path) -> None:
    agent, session = await _demo_turn(tmp_path)
    source = XRaySource.live(session)
    try:
        total = source.total()
        assert total == len(agent.traffic)  # one session: every entry is its own or the agent's
        last = source.rows(total - 1, 1)["rows"][0]["i"]
        after = await asyncio.to_thread(source.state_after, last)
        assert snapshot(after)["tool_calls"] == snapshot(session.state)["tool_calls"]
        assert snapshot(after)["messages"] == snapshot(session.state)["messages"]
        ask = source.rows(0, 5, "session/request_permission")["rows"][0]["i"]
        before = await asyncio.to_thread(source.state_after, ask - 1)
        assert not before.permissions and (await asyncio.to_thread(source.state_after, ask)).permissions
        built = await asyncio.to_thread(source.built_by, "tool_call:call_edit", session.state)
        assert ask in built and source.links.get(ask) in built
    finally:
        source.close()
        await agent.close()


async def test_without_the_start_of_the_traffic_there_is_no_state_after(tmp_path) -> None:
    agent, session = await _demo_turn(tmp_path)
    log = agent.traffic_log
    source = XRaySource.live(session)
    try:
        log.ring.seen += 1  # as if the ring had forgotten its first entry
        assert source.state_after(5) is None
        assert source.built_by("tool_call:call_edit", session.state)  # by the ids they name
    finally:
        log.ring.seen -= 1
        source.close()
        await agent.close()


async def test_a_recording_agent_keeps_the_state_after_from_its_trace_file(tmp_path) -> None:
    agent, session = await _demo_turn(tmp_path, record=tmp_path / "t.jsonl")
    log = agent.traffic_log
    source = XRaySource.live(session)
    try:
        log.ring.seen += 1
        after = await asyncio.to_thread(source.state_after, len(log.ring) - 1)
        assert snapshot(after)["tool_calls"] == snapshot(session.state)["tool_calls"]
    finally:
        log.ring.seen -= 1
        source.close()
        await agent.close()


# -- the view ------------------------------------------------------------------------------------
def _replies(recording, view, req: int) -> list[dict[str, Any]]:
    return [m for m, _ in patches(recording, view) if m.get("type") == "xray_reply" and m.get("req") == req]


def _reply(recording, view, req: int) -> dict[str, Any]:
    found = _replies(recording, view, req)
    assert len(found) == 1, found
    return found[0]


async def test_a_view_with_an_xray_answers_the_panel_and_pins_a_past_state(recording, tmp_path) -> None:
    agent, session = await _demo_turn(tmp_path)
    view = SessionView(session, xray=True)
    try:
        meta = view.snapshot["xray"]
        assert meta["total"] == len(agent.traffic) and meta["pinned"] is None and meta["live"]
        view._handle_browser_msg({"type": "xray_rows", "req": 1, "start": 0, "count": 2, "query": ""})
        assert [r["i"] for r in _reply(recording, view, 1)["rows"]] == [0, 1]
        view._handle_browser_msg({"type": "xray_rows", "req": 2, "start": "x"})
        assert _reply(recording, view, 2)["error"].startswith("bad xray_rows")  # and the view goes on
        ask = view.xray.source.rows(0, 1, "session/request_permission")["rows"][0]["i"]
        view._handle_browser_msg({"type": "xray_select", "req": 3, "index": ask - 1})  # a task: off the loop
        await until_async(lambda: _replies(recording, view, 3), 20, message="the select's reply")
        assert _reply(recording, view, 3)["pinned"] == ask - 1 and view.read_only
        assert view.state is not session.state and not view.state.permissions
        frozen = view._header()["frozen_at"]  # a past state: the page's clocks stop at its own time
        assert frozen is not None and frozen == state_time(view.state)
        pinned_keys = view.entry_keys
        assert "tool_call:call_edit" in pinned_keys and "tool_call:call_test" not in pinned_keys
        view._handle_browser_msg({"type": "cancel_turn"})  # ignored while pinned
        view._handle_browser_msg({"type": "xray_card", "req": 5, "key": "tool_call:call_edit"})
        await until_async(lambda: _replies(recording, view, 5), 20, message="the card's reply")
        assert ask in _reply(recording, view, 5)["indices"]
        view._handle_browser_msg({"type": "xray_unpin", "req": 4})
        assert view.state is session.state and not view.read_only and view.xray.pinned is None
        assert view._header()["frozen_at"] is None  # live again: the clocks tick
        assert "tool_call:call_test" in view.entry_keys
    finally:
        view.close()
        await agent.close()
    assert view.refresh not in agent.traffic_log.listeners


def test_a_bare_state_has_no_xray(recording) -> None:
    from acp_notebook.protocol.state import SessionState

    with pytest.raises(ValueError, match="live Session"):
        make_view(SessionState(), FakeTime(), xray=True)


def test_the_replay_view_keeps_one_view_and_its_xray_seeks(recording, demo) -> None:
    view = demo.view(xray=True)
    inner = view.session_view
    try:
        inner._handle_browser_msg({"type": "xray_select", "req": 1, "index": 9})
        assert demo.position == 10 and view.bar.position == 10 and view.session_view is inner
        assert inner.read_only and inner.xray.meta()["position"] == 10
        demo.seek(75)
        assert inner.state is demo.state and inner.xray.meta()["position"] == 75
    finally:
        view.close()
