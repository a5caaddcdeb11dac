"""The views of subagents (issue 19, item 7): a card in the parent's tree where the child was
announced, the child's own live tree inside it (one comm, keys by session and id), nesting, the
subagent that asks named on its permission card, the header's waiting list, the saved snapshot
and the export."""

from __future__ import annotations

import asyncio
import base64
import json

from acp_notebook import SessionState
from acp_notebook.export.html_export import render_html
from acp_notebook.widgets.snapshot import snapshot_of
from acp_notebook.widgets.subtree import ViewTree

from .support import recording as recording  # the autouse recording comm
from .support import update
from .test_client_framing import connect
from .test_subagents import announce, ask
from .test_widgets import make_view, patches

CHILD, GRANDCHILD = "child-1", "grand/1"
CARD = f"subagent:{CHILD}"
GRAND_CARD = f"{CARD}/subagent:grand%2F1"


def tool(call: str, **fields):
    return {"sessionUpdate": "tool_call_update", "toolCallId": call, **fields}


def terminal(term: str, data: bytes):
    return {
        "sessionUpdate": "terminal_update",
        "terminalId": term,
        "output": {"data": base64.b64encode(data).decode()},
    }


async def spawned(peer) -> None:
    """The root runs a tool; a child is announced, runs a tool with a terminal (the same ids as
    the root's) and a grandchild of its own."""
    peer.send(update(tool("c1", title="Root's", content=[{"type": "terminal", "terminalId": "t1"}]), "s1"))
    peer.send(update(terminal("t1", b"root bytes"), "s1"))
    peer.send(
        announce(
            title="<b>Explore</b>",
            description="Find the tests",
            capabilities={"cancel": {}},
            state={"state": "running"},
        )
    )
    peer.send(update(tool("c1", title="Child's", content=[{"type": "terminal", "terminalId": "t1"}]), CHILD))
    peer.send(update(terminal("t1", b"child bytes"), CHILD))
    peer.send(announce(GRANDCHILD, CHILD, title="Deeper"))
    peer.send(update(tool("g1", title="Grandchild's"), GRANDCHILD))
    await peer.settled()


async def test_a_subagent_is_a_card_with_its_own_tree_under_keys_by_session(recording) -> None:
    peer, agent, session = await connect(2)
    await spawned(peer)
    view, fake, _ = make_view(session)
    fake.advance(1)
    snap = view.snapshot
    assert snap["order"] == [
        "tool_call:c1",
        CARD,
        f"{CARD}/tool_call:c1",
        GRAND_CARD,
        f"{GRAND_CARD}/tool_call:g1",
    ]
    card = snap["entries"][CARD]
    assert (card["kind"], card["title"], card["description"], card["run_state"]) == (
        "subagent",
        "<b>Explore</b>",
        "Find the tests",
        "running",
    )
    assert (card["tool_calls"], card["subagents"], card["cancellable"], card["tree"]) == (1, 1, True, True)
    assert snap["entries"][GRAND_CARD]["run_state"] == "unknown"
    assert (card["diagnostic_count"], card["diagnostics"]) == (0, [])
    child_call = snap["entries"][f"{CARD}/tool_call:c1"]
    assert child_call["title"] == "Child's" and child_call["session"] == CHILD
    assert child_call["items"] == [{"type": "terminal", "id": f"{CARD}/t1"}]
    assert set(snap["terminals"]) == {"t1", f"{CARD}/t1"}
    start, length = snap["terminals"][f"{CARD}/t1"]["blob"]
    assert view.terminal_bytes[start : start + length] == b"child bytes"
    assert "tool_call:c1" in snap["entries"] and not any(
        e["kind"] == "other" for e in snap["entries"].values()
    )
    await agent.close()


async def test_the_childs_tree_follows_live_and_a_later_update_patches_the_card(recording) -> None:
    peer, agent, session = await connect(2)
    view, fake, _ = make_view(session)
    peer.send(announce(title="Explore", state={"state": "running"}))
    await peer.settled()
    fake.advance(1)  # the child registers after its announcement: the view reaches it at the flush
    peer.send(update(tool("c9", title="Bash", status="in_progress"), CHILD))
    peer.send(announce(state={"state": "idle"}))
    await peer.settled()
    fake.advance(1)
    sent = [p for p, _ in patches(recording, view) if p.get("type") == "patch"]
    keys = [k for p in sent for k in p["order"]]
    assert keys == [CARD, f"{CARD}/tool_call:c9"]
    last_card = [p["entries"][CARD] for p in sent if CARD in p["entries"]][-1]
    assert (last_card["run_state"], last_card["tool_calls"], last_card["cancellable"]) == ("idle", 1, False)
    assert view.entry_keys == [CARD, f"{CARD}/tool_call:c9"]  # the second subagent_update: no entry
    peer.send(
        update({"sessionUpdate": "tool_call_update", "toolCallId": 7}, CHILD)
    )  # bad input of the child's
    await peer.settled()
    fake.advance(1)
    last_card = [p["entries"][CARD] for p, _ in patches(recording, view) if CARD in p.get("entries", {})][-1]
    assert last_card["diagnostic_count"] == 1 and last_card["diagnostics"][0]["code"] == "malformed-update"
    await agent.close()


async def test_a_childs_request_names_its_subagent_nests_in_its_card_and_opens_it(recording) -> None:
    peer, agent, session = await connect(2)
    await spawned(peer)
    peer.send(ask(7, GRANDCHILD, "g1"))
    await peer.settled()
    view, fake, _ = make_view(session)
    fake.advance(1)
    (request,) = session.pending_permissions
    entry = view.snapshot["entries"][f"permission:{request.key}"]
    assert (entry["subagent"], entry["session_id"], entry["card"]) == (
        "Deeper",
        GRANDCHILD,
        f"{GRAND_CARD}/tool_call:g1",
    )
    assert view.snapshot["entries"][CARD]["pending"] == 1  # a descendant's request opens the cards above it
    assert view.snapshot["entries"][GRAND_CARD]["waiting"] == ["Run it?"]
    assert view.snapshot["header"]["waiting"] == [
        {"session_id": GRANDCHILD, "subagent": "Deeper", "title": "Run it?"}
    ]
    view._handle_browser_msg({"type": "select", "key": request.key, "option": "ok"})
    await peer.settled()
    assert {
        "jsonrpc": "2.0",
        "id": 7,
        "result": {"outcome": {"outcome": "selected", "optionId": "ok"}},
    } in peer.answers()
    fake.advance(1)
    last = [p["entries"][CARD] for p, _ in patches(recording, view) if CARD in p.get("entries", {})][-1]
    assert last["pending"] == 0 and view.snapshot["header"]["waiting"] == []
    await agent.close()


async def test_cancel_on_a_card_cancels_that_subagent(recording) -> None:
    peer, agent, session = await connect(2)
    await spawned(peer)
    view, _, _ = make_view(session)
    view._handle_browser_msg({"type": "cancel_subagent", "session": GRANDCHILD})  # no capabilities.cancel
    view._handle_browser_msg({"type": "cancel_subagent", "session": CHILD})
    await peer.settled()
    cancels = [
        m["params"] for m in peer.stream.sent if isinstance(m, dict) and m.get("method") == "session/cancel"
    ]
    assert cancels == [{"sessionId": CHILD}]
    assert any(d.code == "view-action-error" for d in session.state.diagnostics)
    await agent.close()


async def test_a_turn_view_that_stopped_following_shows_no_later_request(recording) -> None:
    """A request that arrives when no cell runs shows in the whole-session view, never in an
    earlier turn's cell (that view stopped following when its turn ended)."""
    peer, agent, session = await connect(2)
    turn_view, fake, _ = make_view(session)
    whole, _, _ = make_view(session, fake)
    await spawned(peer)
    fake.advance(1)
    turn_view.stop_following()
    peer.send(update(tool("c2", title="Later"), CHILD))
    peer.send(ask(8, CHILD, "c2"))
    await peer.settled()
    fake.advance(3)  # the saved snapshots too
    (request,) = session.pending_permissions
    later = [f"{CARD}/tool_call:c2", f"permission:{request.key}"]
    assert all(k not in turn_view.entry_keys for k in later)
    assert all(k in whole.entry_keys for k in later)
    card = turn_view.snapshot["entries"][CARD]
    assert (card["pending"], card["followed"]) == (1, False)  # its card says someone waits, elsewhere
    assert "followed" not in whole.snapshot["entries"][CARD]
    await agent.close()


def test_a_bare_state_shows_the_card_without_a_tree(recording) -> None:
    state = SessionState()
    state.apply({"sessionUpdate": "subagent_update", "sessionId": CHILD, "title": "Explore"})
    state.apply({"sessionUpdate": "subagent_update", "sessionId": CHILD, "state": {"state": "idle"}})
    view, fake, _ = make_view(state)
    fake.advance(1)
    assert view.entry_keys == [CARD]
    card = view.snapshot["entries"][CARD]
    assert (card["tree"], card["tool_calls"], card["run_state"], card["cancellable"]) == (
        False,
        None,
        "idle",
        False,
    )


async def test_the_export_and_the_snapshot_hold_the_childs_tree(recording) -> None:
    peer, agent, session = await connect(2)
    await spawned(peer)
    snap, _ = snapshot_of(ViewTree(session.state, session))
    assert f"{GRAND_CARD}/tool_call:g1" in snap["order"] and f"{CARD}/t1" in snap["terminals"]
    page = render_html(session, xray=False)
    data = page.split('id="acp-export-snapshot">', 1)[1].split("</script>", 1)[0]
    exported = json.loads(data)
    assert exported["order"] == snap["order"] and "<b>Explore</b>" not in page  # text stays data
    await agent.close()


def message(message_id: str, **fields) -> dict:
    return {"sessionUpdate": "session_message", "messageId": message_id, **fields}


def message_chunk(message_id: str, text: str) -> dict:
    block = {"type": "text", "text": text}
    return {"sessionUpdate": "session_message_chunk", "messageId": message_id, "content": block}


async def test_each_session_shows_its_own_view_of_a_message_linked_to_the_other(recording) -> None:
    peer, agent, session = await connect(2)
    peer.send(announce(title="Explore"))
    await peer.settled()
    peer.send(update(message_chunk("out-1", "Find the "), "s1"))  # a chunk before the upsert
    peer.send(update(message("out-1", senderSessionId="s1", recipientSessionId=CHILD), "s1"))
    peer.send(update(message_chunk("out-1", "tests"), "s1"))
    peer.send(update(message("in-1", senderSessionId="s1", recipientSessionId=CHILD), CHILD))
    peer.send(update(message_chunk("in-1", "Find the tests"), CHILD))
    peer.send(update(message("out-1", recipientMessageId="in-1"), "s1"))
    peer.send(update(message("in-1", senderMessageId="out-1"), CHILD))
    peer.send(update(message("rep-1", senderSessionId=CHILD, recipientSessionId="s1"), CHILD))
    peer.send(update(message("rep-2", senderSessionId=CHILD, recipientSessionId="s1"), "s1"))
    await peer.settled()
    view, fake, _ = make_view(session)
    fake.advance(1)
    entries, order = view.snapshot["entries"], view.snapshot["order"]
    assert order == [CARD, f"{CARD}/session_message:in-1", f"{CARD}/session_message:rep-1",
                     "session_message:out-1", "session_message:rep-2"]  # fmt: skip
    task, received = entries["session_message:out-1"], entries[f"{CARD}/session_message:in-1"]
    assert (task["direction"], task["relation"], task["peer_title"], task["markdown"]) == (
        "outgoing",
        "subagent",
        "Explore",
        "Find the tests",
    )
    assert task["link"] == f"{CARD}/session_message:in-1" and received["link"] == "session_message:out-1"
    assert (received["direction"], received["relation"], received["peer"]) == ("incoming", "parent", "s1")
    assert entries[f"{CARD}/session_message:rep-1"]["direction"] == "outgoing"
    assert (entries["session_message:rep-2"]["direction"], entries["session_message:rep-2"]["relation"]) == (
        "incoming",
        "subagent",
    )
    assert not any(e["kind"] == "other" for e in entries.values())  # no raw JSON entries left
    await agent.close()


async def test_a_turn_the_agent_started_gets_its_own_view_in_the_start_cell_and_its_own_line(
    recording,
) -> None:
    """Claude's task notification after a background subagent: a turn with ``origin == "agent"``,
    shown under the start cell's header (never in an earlier turn's cell) and on its own line."""
    from acp_notebook.widgets import SessionHeaderView
    from acp_notebook.widgets.agent_turns import AgentTurnViews
    from acp_notebook.widgets.header_view import anchor_of

    peer, agent, session = await connect(2)
    earlier, fake, scheduler = make_view(session)  # an earlier turn's cell, ended
    earlier.stop_following()
    shown: list = []
    turns = AgentTurnViews(
        session, "acp", make=lambda *a, **k: make_view(*a, fake, **k)[0], on_first=shown.append
    )
    header = SessionHeaderView(session, title="acp", scheduler=scheduler, clock=fake.clock)
    origin = {"_claude/origin": {"kind": "task-notification"}}
    peer.send(update({"sessionUpdate": "state_update", "state": "running"}, "s1"))
    peer.send(update({"sessionUpdate": "usage_update", "used": 1, "size": 9, "_meta": origin}, "s1"))
    reply = {
        "sessionUpdate": "agent_message_chunk",
        "messageId": "a1",
        "content": {"type": "text", "text": "Done."},
    }
    peer.send(update(reply, "s1"))
    peer.send(update({"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"}, "s1"))
    await peer.settled()
    fake.advance(1)
    (view,) = turns.box.children
    assert shown == [turns.box]  # the start cell shows the box from the first such turn on
    assert view is turns.views[1] and view.anchor == anchor_of(session, 1)
    assert view.title == "acp: agent · task notification" and view.entry_keys == ["message:a1"]
    assert earlier.entry_keys == []
    (line,) = header.turn_lines()
    assert (line["origin"], line["origin_label"], line["prompt"], line["state"]) == (
        "agent",
        "task notification",
        None,
        "ended",
    )
    peer.send(
        update(
            {
                "sessionUpdate": "agent_message_chunk",
                "messageId": "a2",
                "content": {"type": "text", "text": "x"},
            },
            "s1",
        )
    )
    await peer.settled()
    assert view.entry_keys == ["message:a1"]  # it ended: it follows no more
    turns.close()
    await agent.close()


async def test_a_view_of_one_subagent_alone_shows_its_tree(recording) -> None:
    peer, agent, session = await connect(2)
    await spawned(peer)
    view, fake, _ = make_view(session.subagents[CHILD])
    fake.advance(1)
    snap = view.snapshot
    assert snap["order"] == ["tool_call:c1", "subagent:grand%2F1", "subagent:grand%2F1/tool_call:g1"]
    assert snap["header"]["title"] == "<b>Explore</b>" and snap["header"]["can_cancel"] is False
    assert snap["entries"]["tool_call:c1"]["title"] == "Child's"  # keyed as its own session's
    start, length = snap["terminals"]["t1"]["blob"]
    assert view.terminal_bytes[start : start + length] == b"child bytes"
    await agent.close()


async def test_cancel_on_a_childs_tool_call_or_terminal_names_the_child(recording) -> None:
    """The page's Cancel of a child's card sends the child's session (``session``), of a child's
    terminal its view id: the kernel cancels them with the child's ``sessionId``."""
    peer, agent, session = await connect(2)
    cancel = {"capabilities": {"cancel": {}}}
    term = {"type": "terminal", "terminalId": "t1"}
    peer.send(announce())
    peer.send(update(tool("c1", title="Run", status="in_progress", content=[term], **cancel), CHILD))
    peer.send(update({"sessionUpdate": "terminal_update", "terminalId": "t1", **cancel}, CHILD))
    await peer.settled()
    view, fake, _ = make_view(session)
    fake.advance(1)
    entry = view.snapshot["entries"][f"{CARD}/tool_call:c1"]
    assert (entry["cancellable"], entry["session"]) == (True, CHILD)
    assert view.snapshot["terminals"][f"{CARD}/t1"]["cancellable"] is True
    view._handle_browser_msg({"type": "cancel_tool_call", "id": "c1", "session": CHILD})
    view._handle_browser_msg({"type": "cancel_terminal", "id": f"{CARD}/t1"})
    await peer.settled()
    assert [(r["method"], r["params"]) for r in peer.requests] == [
        ("tool_call/cancel", {"sessionId": CHILD, "toolCallId": "c1"}),
        ("terminal/cancel", {"sessionId": CHILD, "terminalId": "t1"}),
    ]
    for request in peer.requests:
        peer.reply(request["id"], {})
    await peer.settled()
    await agent.close()


async def test_the_demo_agents_subagent_scenario_is_drawn_whole(recording) -> None:
    """The demo agent's subagents (a foreground reviewer with a linter child of its own, a
    background writer asking after the turn ended, messages streamed on both sides): every update
    has its place — no raw entry —, every request its subagent's card, every message its other view."""
    import acp_notebook

    agent = await acp_notebook.start_agent(
        "python -m acp_notebook.demo_agent --scenario subagents", env={"ACP_DEMO_SPEED": "0"}
    )
    try:
        session = await agent.new_session("/tmp")
        session.permission_handler = lambda request: "allow-once"
        view, fake, _ = make_view(session)
        assert await asyncio.wait_for(session.prompt("delegate to subagents"), 30) == "end_turn"
        assert await session.wait_idle(30, background=True)
        fake.advance(5)
        entries, order = view.snapshot["entries"], view.snapshot["order"]
        assert not [k for k, e in entries.items() if e["kind"] == "other"]
        cards = [k for k, e in entries.items() if e["kind"] == "subagent"]
        assert len(cards) == 3 and any(k.count("/subagent:") == 1 for k in cards)  # the linter: nested
        assert all(entries[k]["tree"] and entries[k]["run_state"] == "idle" for k in cards)
        asks = [e for e in entries.values() if e["kind"] == "permission"]
        assert asks and all(e["subagent"] and e["card"] in order for e in asks)
        messages = [e for e in entries.values() if e["kind"] == "session_message"]
        assert messages and all(e["link"] in order and e["direction"] for e in messages)
        assert [t.origin for t in session.turns] == ["user", "agent"]
    finally:
        await agent.close()


async def test_a_huge_subagent_title_is_clipped_where_it_is_named(recording) -> None:
    """A card is sent again with each change of its child: a 1 MB title travels as 500 characters."""
    peer, agent, session = await connect(2)
    huge = "T" * 1_000_000
    peer.send(announce(title=huge, description="D" * 100_000))
    peer.send(ask(3, CHILD))
    await peer.settled()
    view, fake, _ = make_view(session)
    fake.advance(1)
    card = view.snapshot["entries"][CARD]
    assert card["title"] == "T" * 500 + "… (999,500 more characters)" and len(card["description"]) < 5_100
    (request,) = session.pending_permissions
    assert len(view.snapshot["entries"][f"permission:{request.key}"]["subagent"]) < 600
    assert len(view.snapshot["header"]["waiting"][0]["subagent"]) < 600
    assert session.subagents[CHILD].title == huge  # the state keeps it whole
    await agent.close()


async def test_a_big_subagent_tree_saves_in_pages_and_reads_back_whole(recording) -> None:
    """Past one message the saved snapshot goes to pages: the child's entries and terminal too."""
    from .test_comm_bounds import page_bytes, paged_snapshot

    peer, agent, session = await connect(2)
    peer.send(announce(title="Explore"))
    for i in range(60):
        content = [{"type": "content", "content": {"type": "text", "text": f"{i} " + "x" * 10_000}}]
        peer.send(update(tool(f"c{i}", title=f"child {i}", content=content), CHILD))
    peer.send(update(tool("cterm", content=[{"type": "terminal", "terminalId": "t1"}]), CHILD))
    peer.send(update(terminal("t1", b"child bytes"), CHILD))
    await peer.settled()
    view, fake, _ = make_view(session)
    fake.advance(3)
    assert view.pages and "groups" in view.snapshot
    entries, terms = paged_snapshot(view, page_bytes(recording))
    assert list(entries) == view.entry_keys and entries[f"{CARD}/tool_call:c59"]["title"] == "child 59"
    assert entries[CARD]["tool_calls"] == 61
    meta, data = terms[f"{CARD}/t1"]
    assert (meta["id"], meta["terminal_id"], data) == (f"{CARD}/t1", "t1", b"child bytes")
    await agent.close()


def test_a_cards_time_runs_from_the_childs_first_sign_to_its_last_unless_it_runs() -> None:
    from acp_notebook.widgets.tree_entries import span

    now = [100.0]
    child = SessionState(clock=lambda: now[0])
    assert span(child, running=True) == (None, None)
    child.apply(message("in-1", senderSessionId="s1", recipientSessionId=CHILD))  # its task, first
    now[0] = 103.0
    child.apply(tool("c1", title="Run", status="in_progress"))
    now[0] = 107.5
    child.apply(tool("c1", status="completed"))
    assert span(child, running=True) == (100.0, None) and span(child, running=False) == (100.0, 107.5)


async def test_subagents_nested_without_end_are_drawn_to_a_depth(recording) -> None:
    """A hostile agent nests subagents 40 deep: the view draws 32 levels of trees, the cards below
    say so, and nothing breaks (the snapshot, the export)."""
    from acp_notebook.widgets.subtree import MAX_DEPTH

    peer, agent, session = await connect(2)
    parent = "s1"
    for level in range(40):
        peer.send(announce(f"n{level}", parent, title=f"level {level}"))
        peer.send(update(tool(f"c{level}", title=f"at {level}"), f"n{level}"))
        parent = f"n{level}"
    await peer.settled()
    view, fake, _ = make_view(session)
    fake.advance(1)
    cards = {e["title"]: e for e in view.snapshot["entries"].values() if e["kind"] == "subagent"}
    assert len(cards) == MAX_DEPTH + 1  # the last drawn tree holds one more card, without a tree
    deepest = cards[f"level {MAX_DEPTH}"]
    assert (deepest["tree"], deepest["too_deep"]) == (False, True) and not cards["level 0"]["too_deep"]
    assert view.items._unreached == []  # nothing to retry at each flush
    assert "<html" in render_html(session, xray=False)
    await agent.close()
