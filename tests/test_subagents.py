"""Subagents (issue 19, first part): the schema's ``SubagentUpdate`` patch rules, and child sessions
registered as they are announced — their updates in their own state, their permission requests
asked through the root session, cancelled only where they allow it."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from acp_notebook import frontend
from acp_notebook.client import headless
from acp_notebook.protocol.session_values import background_sessions
from acp_notebook.protocol.state import SessionState

from .support import until_async, update
from .test_client_framing import connect

CHILD = "child-1"
RUNNING = {"state": "running"}
IDLE = {"state": "idle", "stopReason": "end_turn"}

# (name, the updates applied in order after `{"sessionId": CHILD}`, what reading the child gives)
PATCH_TABLE: list[tuple[str, list[dict[str, Any]], dict[str, Any]]] = [
    ("only sessionId announces the child", [], {"title": None, "run_state": "unknown", "cancellable": False}),
    ("a title is set", [{"title": "Explore"}], {"title": "Explore"}),
    ("omitted leaves the title", [{"title": "Explore"}, {"description": "d"}], {"title": "Explore"}),
    ("null clears the title", [{"title": "Explore"}, {"title": None}], {"title": None}),
    (
        "a description is set and cleared",
        [{"description": "Look"}, {"description": None}],
        {"description": None},
    ),
    ("a state snapshot gives the run state", [{"state": RUNNING}], {"run_state": "running"}),
    (
        "a concrete state replaces the whole snapshot",
        [{"state": IDLE}, {"state": RUNNING}],
        {"state": RUNNING},
    ),
    ("state null leaves activity unconfirmed", [{"state": IDLE}, {"state": None}], {"run_state": "unknown"}),
    ("an unknown state is kept verbatim", [{"state": {"state": "_waiting"}}], {"run_state": "_waiting"}),
    ("capabilities.cancel {} permits cancel", [{"capabilities": {"cancel": {}}}], {"cancellable": True}),
    ("capabilities.cancel null does not", [{"capabilities": {"cancel": None}}], {"cancellable": False}),
    (
        "capabilities null revokes",
        [{"capabilities": {"cancel": {}}}, {"capabilities": None}],
        {"cancellable": False},
    ),
    (
        "omitted capabilities are unchanged",
        [{"capabilities": {"cancel": {}}}, {"title": "t"}],
        {"cancellable": True},
    ),
    ("unset cwd inherits the parent's", [], {"cwd": "/parent"}),
    ("a cwd is the child's own", [{"cwd": "/child"}], {"cwd": "/child"}),
    ("cwd null inherits again", [{"cwd": "/child"}, {"cwd": None}], {"cwd": "/parent"}),
    ("unset directories inherit", [], {"directories": ["/extra"]}),
    ("[] means no directories", [{"additionalDirectories": []}], {"directories": []}),
    (
        "directories replace whole",
        [{"additionalDirectories": ["/a"]}, {"additionalDirectories": ["/b"]}],
        {"directories": ["/b"]},
    ),
    (
        "directories null inherit again",
        [{"additionalDirectories": ["/a"]}, {"additionalDirectories": None}],
        {"directories": ["/extra"]},
    ),
    (
        "_meta patches by top-level key",
        [{"_meta": {"a": 1, "b": 2}}, {"_meta": {"b": 3, "c": 4}}],
        {"meta": {"a": 1, "b": 3, "c": 4}},
    ),
    (
        "a null _meta key is removed",
        [{"_meta": {"a": 1, "b": 2}}, {"_meta": {"a": None}}],
        {"meta": {"b": 2}},
    ),
    ("_meta null clears", [{"_meta": {"a": 1}}, {"_meta": None}], {"meta": None}),
    (
        "a title of the wrong type is noted and kept as was",
        [{"title": "t"}, {"title": 7}],
        {"title": "t", "diagnostics": ["invalid-field"]},
    ),
    (
        "a state of the wrong type is noted and kept",
        [{"state": RUNNING}, {"state": "idle"}],
        {"run_state": "running", "diagnostics": ["invalid-field"]},
    ),
    (
        "directories of the wrong shape are noted and kept",
        [{"additionalDirectories": [1]}],
        {"directories": ["/extra"], "diagnostics": ["invalid-field"]},
    ),
    ("an unknown field is kept", [{"_x": {"y": 1}}], {"extra": {"_x": {"y": 1}}}),
]


def read(state: SessionState) -> dict[str, Any]:
    """What the table's cases look at, for the child ``CHILD`` of a parent in ``/parent``."""
    info = state.subagents[CHILD]
    return {
        "title": info.title, "description": info.description, "run_state": info.run_state,
        "cancellable": info.cancellable, "state": info.state, "cwd": info.effective_cwd("/parent"),
        "directories": info.effective_directories(["/extra"]), "meta": info.meta, "extra": info.extra,
        "diagnostics": [d.code for d in state.diagnostics],
    }  # fmt: skip


@pytest.mark.parametrize(
    ("patches", "expected"), [c[1:] for c in PATCH_TABLE], ids=[c[0] for c in PATCH_TABLE]
)
def test_subagent_update_patch_table(patches: list[dict[str, Any]], expected: dict[str, Any]) -> None:
    state = SessionState()
    for patch in [{}, *patches]:
        state.apply({"sessionUpdate": "subagent_update", "sessionId": CHILD, **patch})
    got = read(state)
    assert {k: got[k] for k in expected} == expected
    if "diagnostics" not in expected:
        assert got["diagnostics"] == []
    assert state.subagents[CHILD].updates == len(patches) + 1


def test_the_raw_update_is_kept_and_the_announcement_reads_back() -> None:
    state = SessionState()
    announce = {"sessionUpdate": "subagent_update", "sessionId": CHILD, "title": "T", "state": RUNNING}
    state.apply(announce)
    assert state.other_updates == [announce] and state.timeline == [("other", 0)]
    assert state.subagents[CHILD].to_dict() == announce
    state.apply({"sessionUpdate": "subagent_update", "title": "no id"})
    assert [d.code for d in state.diagnostics] == ["malformed-update"] and list(state.subagents) == [CHILD]


def announce(child: str = CHILD, parent: str = "s1", **fields: Any) -> dict[str, Any]:
    """A ``subagent_update`` on ``parent`` announcing ``child``."""
    return update({"sessionUpdate": "subagent_update", "sessionId": child, **fields}, parent)


def ask(request_id: int, session_id: str, call: str = "c1") -> dict[str, Any]:
    """A v2 permission request of ``session_id`` about tool call ``call``."""
    subject = {"type": "tool_call", "toolCall": {"toolCallId": call, "title": "Run"}}
    options = [{"optionId": "ok", "name": "Allow", "kind": "allow_once"}]
    params = {"sessionId": session_id, "title": "Run it?", "subject": subject, "options": options}
    return {"jsonrpc": "2.0", "id": request_id, "method": "session/request_permission", "params": params}


async def test_a_child_updates_its_own_state_and_asks_through_the_root() -> None:
    peer, agent, session = await connect(2)
    peer.send(announce(title="Explore", capabilities={"cancel": {}}))
    peer.send(update({"sessionUpdate": "tool_call_update", "toolCallId": "c1", "title": "Bash"}, CHILD))
    peer.send(ask(7, CHILD))
    await peer.settled()
    child = session.subagents[CHILD]
    assert (child.session_id, child.parent_id, child.title, child.cwd) == (CHILD, "s1", "Explore", "/tmp")
    assert list(child.state.tool_calls) == ["c1"] and "c1" not in session.state.tool_calls
    (request,) = session.pending_permissions
    assert request.session_id == CHILD and agent.unknown_sessions == {}
    assert list(session.state.permissions) == [request.key]  # its card: the root's view shows it
    request.select("ok")
    assert peer.answers()[-1] == {
        "jsonrpc": "2.0",
        "id": 7,
        "result": {"outcome": {"outcome": "selected", "optionId": "ok"}},
    }
    assert not hasattr(child, "prompt") and not hasattr(child, "close") and not hasattr(child, "set_mode")
    await agent.close()


async def test_children_nest_and_never_move_to_another_parent() -> None:
    peer, agent, session = await connect(2)
    peer.send(announce())
    peer.send(announce("grandchild", CHILD, cwd="/deep"))
    peer.send(
        update(
            {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "hi"}}, "grandchild"
        )
    )
    peer.send(announce("grandchild", "s1", title="moved?"))
    await peer.settled()
    grandchild = session.subagents[CHILD].subagents["grandchild"]
    assert grandchild.parent_id == CHILD and grandchild.cwd == "/deep" and len(grandchild.state.messages) == 1
    assert list(session.subagents) == [CHILD]
    assert "subagent-not-moved" in [d.code for d in session.state.diagnostics]
    await agent.close()


async def test_child_cancel_wire() -> None:
    """``cancel()`` sends ``session/cancel`` with the child's id only where its capabilities allow it,
    and answers the child's own pending requests ``cancelled`` (not the root's)."""
    peer, agent, session = await connect(2)
    peer.send(announce(capabilities={"cancel": {}}))
    peer.send(announce("no-cancel"))
    peer.send(ask(1, CHILD))
    peer.send(ask(2, "s1", "c2"))
    await peer.settled()
    await session.subagents[CHILD].cancel()
    cancels = [m for m in peer.stream.sent if isinstance(m, dict) and m.get("method") == "session/cancel"]
    assert cancels == [{"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": CHILD}}]
    assert [r.session_id for r in session.pending_permissions] == ["s1"]
    assert {"jsonrpc": "2.0", "id": 1, "result": {"outcome": {"outcome": "cancelled"}}} in peer.answers()
    sent = len(peer.stream.sent)
    with pytest.raises(ValueError, match=r"capabilities\.cancel"):
        await session.subagents["no-cancel"].cancel()
    assert len(peer.stream.sent) == sent
    await agent.close()


async def test_a_withdrawn_child_request_is_answered_and_a_stray_one_still_counted() -> None:
    peer, agent, session = await connect(2)
    peer.send(update({"sessionUpdate": "tool_call_update", "toolCallId": "early"}, CHILD))
    peer.send(announce())
    peer.send(ask(5, CHILD))
    peer.send({"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": 5}})
    await peer.settled()
    assert session.pending_permissions == [] and agent.unknown_sessions == {CHILD: 1}
    assert {"jsonrpc": "2.0", "id": 5, "result": {"outcome": {"outcome": "cancelled"}}} in peer.answers()
    await agent.close()


def test_only_subagent_items_of_a_background_snapshot_name_sessions() -> None:
    listed = [
        {"type": "subagent", "sessionId": "a"},
        {"type": "_custom", "sessionId": "b"},
        {"type": "subagent"},
    ]
    assert background_sessions(listed) == {"a"} and background_sessions(None) == frozenset()


async def test_cancelling_the_session_spares_a_background_subagent_request() -> None:
    peer, agent, session = await connect(2)
    peer.send(announce())
    peer.send(announce("fore"))
    background = [{"type": "subagent", "sessionId": CHILD}]
    peer.send(update({"sessionUpdate": "state_update", "state": "idle", "background": background}))
    peer.send(ask(1, CHILD))
    peer.send(ask(2, "fore", "c2"))
    await peer.settled()
    await session.cancel()
    assert [r.session_id for r in session.pending_permissions] == [CHILD]
    assert {"jsonrpc": "2.0", "id": 2, "result": {"outcome": {"outcome": "cancelled"}}} in peer.answers()
    await agent.close()


# -- cancel scopes: a cancel answers its session's foreground work, never a background subagent's ------
TREE = [  # (child, parent): "back" is listed in s1's background, "fore/bg" in fore's
    ("fore", "s1"), ("back", "s1"), ("fore/deep", "fore"), ("fore/bg", "fore"), ("back/deep", "back"),
]  # fmt: skip
SESSIONS = ["s1", *(child for child, _ in TREE)]
SCOPES = [
    ("the session", None, {"s1", "fore", "fore/deep"}),
    ("a foreground child", "fore", {"fore", "fore/deep"}),
    ("a background child", "back", {"back", "back/deep"}),
    ("a grandchild", "fore/deep", {"fore/deep"}),
]


def background_of(session_id: str, *listed: str) -> dict[str, Any]:
    """A ``state_update`` of ``session_id``: running, with ``listed`` subagents in the background."""
    items = [{"type": "subagent", "sessionId": child} for child in listed]
    return update({"sessionUpdate": "state_update", "state": "running", "background": items}, session_id)


@pytest.mark.parametrize(("name", "cancelled", "answered"), SCOPES, ids=[s[0] for s in SCOPES])
async def test_cancel_scopes(name: str, cancelled: str | None, answered: set[str]) -> None:
    """``session.cancel()`` and ``subagent.cancel()`` answer ``cancelled`` to the requests of the
    cancelled session and its foreground descendants, and to no request of a background subagent
    (listed in its parent's ``background``) nor of anything that subagent runs."""
    peer, agent, session = await connect(2)
    for child, parent in TREE:
        peer.send(announce(child, parent, capabilities={"cancel": {}}))
    peer.send(background_of("s1", "back"))
    peer.send(background_of("fore", "fore/bg"))
    for number, session_id in enumerate(SESSIONS, 1):
        peer.send(ask(number, session_id, f"c{number}"))
    await peer.settled()
    assert sorted(r.session_id for r in session.pending_permissions) == sorted(SESSIONS)
    if cancelled is None:
        await session.cancel()
    else:
        await find(session, cancelled).cancel()
    await peer.settled()
    left = {r.session_id for r in session.pending_permissions}
    assert left == set(SESSIONS) - answered, name
    cancelled_ids = {
        a["id"] for a in peer.answers() if a.get("result") == {"outcome": {"outcome": "cancelled"}}
    }
    assert cancelled_ids == {SESSIONS.index(s) + 1 for s in answered}
    target = cancelled or "s1"
    cancels = [
        m["params"] for m in peer.stream.sent if isinstance(m, dict) and m.get("method") == "session/cancel"
    ]
    assert cancels == [{"sessionId": target}]
    await agent.close()


def find(session: Any, session_id: str) -> Any:
    """The subagent ``session_id`` anywhere under ``session``."""
    for child in session.subagents.values():
        if child.session_id == session_id:
            return child
        found = find(child, session_id)
        if found is not None:
            return found
    return None


async def test_a_childs_item_cancels_name_the_child() -> None:
    """A child's ``cancel_tool_call`` / ``cancel_terminal`` send the child's ``sessionId``; an item
    without ``capabilities.cancel`` (or the root's item asked of the child) is refused, nothing sent."""
    peer, agent, session = await connect(2)
    peer.send(announce())
    cancel = {"capabilities": {"cancel": {}}}
    peer.send(update({"sessionUpdate": "tool_call_update", "toolCallId": "c1", **cancel}, CHILD))
    peer.send(update({"sessionUpdate": "terminal_update", "terminalId": "t1", **cancel}, CHILD))
    peer.send(update({"sessionUpdate": "tool_call_update", "toolCallId": "plain"}, CHILD))
    peer.send(update({"sessionUpdate": "tool_call_update", "toolCallId": "root", **cancel}, "s1"))
    await peer.settled()
    child = session.subagents[CHILD]
    calls = [
        asyncio.ensure_future(child.cancel_tool_call("c1")),
        asyncio.ensure_future(child.cancel_terminal("t1")),
    ]
    await peer.settled()
    sent = [(r["method"], r["params"]) for r in peer.requests]
    assert sent == [
        ("tool_call/cancel", {"sessionId": CHILD, "toolCallId": "c1"}),
        ("terminal/cancel", {"sessionId": CHILD, "terminalId": "t1"}),
    ]
    for request in peer.requests:
        peer.reply(request["id"], {})
    assert await asyncio.gather(*calls) == [{}, {}]
    for refused in (
        child.cancel_tool_call("plain"),
        child.cancel_tool_call("root"),
        child.cancel_terminal("t9"),
    ):
        with pytest.raises(ValueError, match=r"capabilities\.cancel"):
            await refused
    assert len(peer.requests) == 2
    await agent.close()


async def test_a_headless_line_names_the_subagent_that_asks(capsys: Any, monkeypatch: Any) -> None:
    """In a headless run a child's pending request prints one line saying which subagent asks,
    with the kind read from the child's own tool call."""
    frontend.reset()
    monkeypatch.setattr(headless, "DELAY", 0.01)
    peer, agent, session = await connect(2)
    with headless.notices(session, "acp"):
        peer.send(announce(title="Explore"))
        peer.send(update({"sessionUpdate": "tool_call_update", "toolCallId": "c1", "kind": "execute"}, CHILD))
        peer.send(ask(1, CHILD))
        await peer.settled()
        await until_async(lambda: "waiting for permission" in capsys.readouterr().out or None, 5)
    line = headless.describe(session, session.pending_permissions[0], "acp")
    assert line.startswith("acp: waiting for permission perm_1 (subagent 'Explore') 'Run it?' (options: ok)")
    assert 'allow(kinds=["execute"])' in line
    await agent.close()
