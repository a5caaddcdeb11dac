"""What the views draw of plans of every type, of work running in the background, and of the
plan-mode permission whose subject emptied its card (issue 17), kernel side (no browser)."""

from __future__ import annotations

from acp_notebook import SessionState
from acp_notebook.protocol import PermissionRequest
from acp_notebook.widgets import viewmodel as vm

from .support import apply_all, plan, st
from .support import recording as recording  # the autouse recording comm
from .test_widgets import make_view, patches

ENTRY = {"content": "step", "priority": "high", "status": "pending"}
TERM = {"type": "terminal", "terminalId": "t1"}


# -- plans ------------------------------------------------------------------------------------------
def test_markdown_plan_entry_carries_the_markdown_and_no_stale_entries() -> None:
    state = apply_all(plan(type="items", entries=[ENTRY]), plan(type="markdown", content="# Plan\n<b>x</b>"))
    entry = vm.build_entry(state, "plan", "p1")
    assert entry == {
        "kind": "plan",
        "id": "p1",
        "type": "markdown",
        "entries": [],
        "markdown": "# Plan\n<b>x</b>",
    }


def test_file_plan_entry_is_a_link_relative_to_the_server_root() -> None:
    state = apply_all(plan(type="file", uri="file:///srv/nb/plans/my%20plan.md"))
    entry = vm.build_entry(state, "plan", "p1", "/srv/nb")
    assert (entry["uri"], entry["path"], entry["rel"]) == (
        "file:///srv/nb/plans/my%20plan.md",
        "/srv/nb/plans/my plan.md",
        "plans/my plan.md",
    )
    assert vm.build_entry(state, "plan", "p1", "/elsewhere")["rel"] is None
    for uri in ("https://example.com/plan.md", "file://host/srv/nb/p.md", "plan.md"):
        state.apply(plan(type="file", uri=uri))
        entry = vm.build_entry(state, "plan", "p1", "/srv/nb")
        assert (entry["uri"], entry["path"], entry.get("rel")) == (uri, None, None)


def test_unknown_plan_entry_is_raw_and_a_removed_plan_says_so() -> None:
    custom = {"type": "_graph", "planId": "p1", "nodes": [1]}
    state = apply_all(plan(type="items", entries=[ENTRY]), {"sessionUpdate": "plan_update", "plan": custom})
    assert vm.build_entry(state, "plan", "p1") == {
        "kind": "plan",
        "id": "p1",
        "type": "_graph",
        "entries": [],
        "raw": custom,
    }
    state.apply({"sessionUpdate": "plan_removed", "planId": "p1"})
    assert vm.build_entry(state, "plan", "p1")["removed"] is True


def test_a_removed_plan_is_redrawn_in_the_live_view(recording) -> None:
    state = apply_all(plan(type="items", entries=[ENTRY]))
    view, fake, _ = make_view(state)
    fake.advance(1)
    state.apply({"sessionUpdate": "plan_removed", "planId": "p1"})
    fake.advance(1)
    (content, _), *_ = patches(recording, view)[-1:]
    assert content["entries"]["plan:p1"]["removed"] is True


# -- background -------------------------------------------------------------------------------------
def claude_background_bash() -> SessionState:
    """Claude's background Bash: the tool call `completed`, its terminal listed in `background`."""
    return apply_all(
        st("running"),
        {"sessionUpdate": "tool_call_update", "toolCallId": "c1", "status": "completed", "content": [TERM]},
        {
            "sessionUpdate": "terminal_update",
            "terminalId": "t1",
            "command": "sleep 99",
            "capabilities": {"cancel": {}},
        },
        st("idle", stopReason="end_turn", background=[TERM]),
    )


def test_a_card_whose_terminal_runs_in_the_background_says_so() -> None:
    state = claude_background_bash()
    assert vm.build_entry(state, "tool_call", "c1")["background"] is True
    meta = vm.terminal_meta(state.terminals["t1"])
    assert (meta["background"], meta["cancellable"]) == (True, True)
    state.apply({"sessionUpdate": "terminal_update", "terminalId": "t1", "exitStatus": {"exitCode": 0}})
    assert vm.build_entry(state, "tool_call", "c1")["background"] is False
    assert vm.terminal_meta(state.terminals["t1"])["background"] is False


def test_a_listed_tool_call_keeps_its_cancel_control_when_completed() -> None:
    state = apply_all(
        {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "c2",
            "status": "completed",
            "capabilities": {"cancel": {}},
        },
        st("idle", background=[{"type": "tool_call", "toolCallId": "c2"}]),
    )
    entry = vm.build_entry(state, "tool_call", "c2")
    assert (entry["background"], entry["cancellable"]) == (True, True)
    state.apply(st("idle", background=[]))
    entry = vm.build_entry(state, "tool_call", "c2")
    assert (entry["background"], entry["cancellable"]) == (False, False)


def test_the_live_view_redraws_the_card_when_background_changes(recording) -> None:
    state = claude_background_bash()
    view, fake, _ = make_view(state)
    fake.advance(1)
    state.apply(st("idle", background=[]))
    fake.advance(1)
    content, _ = patches(recording, view)[-1]
    assert content["entries"]["tool_call:c1"]["background"] is False
    assert content["terminals"]["t1"]["background"] is False


# -- the plan-mode permission ---------------------------------------------------------------------
def test_the_permission_entry_shows_what_its_subject_emptied() -> None:
    shown = [{"type": "content", "content": {"type": "text", "text": "## Plan"}}]
    state = apply_all(
        {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "c1",
            "content": shown,
            "rawInput": {"plan": "## Plan"},
        }
    )
    params = {
        "sessionId": "s1",
        "title": "Ready to code?",
        "subject": {"type": "tool_call", "toolCall": {"toolCallId": "c1", "content": [], "rawInput": {}}},
        "options": [{"optionId": "y", "name": "Yes", "kind": "allow_once"}],
    }
    request = PermissionRequest("k1", 1, params)
    state.add_permission(request)
    entry = vm.build_entry(state, "permission", "k1")
    assert entry["shown_before"] == {
        "items": [{"type": "content", "block": {"type": "text", "text": "## Plan"}}],
        "raw_input": {"plan": "## Plan"},
    }
    assert vm.build_entry(state, "tool_call", "c1")["items"] == []
