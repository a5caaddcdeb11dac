"""Subagents (issue 19, first part): the schema's ``SubagentUpdate`` patch rules, and child sessions
registered as they are announced — their updates in their own state, their permission requests
asked through the root session, cancelled only where they allow it."""

from __future__ import annotations

from typing import Any

import pytest

from acp_notebook.protocol.session_values import background_sessions
from acp_notebook.protocol.state import SessionState

from .support import update
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
