"""Subagents drawn by the render harness of ``test_render_harness`` (issue 19, item 7): the kernel's
own snapshot of a tree (a root, a child, a grandchild) — each subagent a card in its parent's list
with its own entries inside, terminals of the same id kept apart, a descendant's request inside
its tool call's card naming the subagent that asks, the cards above it opened, the header's
waiting line, Cancel, and agent text kept as text."""

from __future__ import annotations

import base64
from types import SimpleNamespace

from acp_notebook import SessionState
from acp_notebook.protocol.permission import PermissionRequest
from acp_notebook.widgets.snapshot import snapshot_of
from acp_notebook.widgets.subtree import ViewTree

from .conftest import bad_view_text
from .test_render_harness import browser, page, server  # noqa: F401 - the harness fixtures

EVIL = '<img src=x onerror="window.pwned=1">Explore'
CHILD, GRAND = "child-1", "grand-1"
CARD = f"subagent:{CHILD}"
GRAND_CARD = f"{CARD}/subagent:{GRAND}"


def _tool(call: str, title: str, terminal: str | None = None) -> dict:
    content = [{"type": "terminal", "terminalId": terminal}] if terminal else []
    return {"sessionUpdate": "tool_call_update", "toolCallId": call, "title": title, "content": content}


def _output(term: str, text: str) -> dict:
    data = base64.b64encode(text.encode()).decode()
    return {"sessionUpdate": "terminal_update", "terminalId": term, "output": {"data": data}}


def _tree() -> tuple[dict, dict]:
    """A root with a terminal, a child (same terminal id) with a grandchild that asks."""
    root, child, grand = SessionState(), SessionState(), SessionState()
    for state, who in ((root, "root"), (child, "child")):
        state.apply(_tool("c1", f"{who} runs", "t1"))
        state.apply(_output("t1", f"{who} output\r\n"))
    root.apply(
        {
            "sessionUpdate": "subagent_update",
            "sessionId": CHILD,
            "title": EVIL,
            "description": "Find <b>the</b> tests",
            "state": {"state": "running"},
            "capabilities": {"cancel": {}},
        }
    )
    child.apply({"sessionUpdate": "subagent_update", "sessionId": GRAND, "title": "Deeper"})
    grand.apply(_tool("g1", "grandchild writes"))
    child.apply({"sessionUpdate": "terminal_output_chunk", "terminalId": "t1", "data": "not base64!"})
    options = [{"optionId": "ok", "name": "Allow", "kind": "allow_once"}]
    subject = {"type": "tool_call", "toolCall": {"toolCallId": "g1"}}
    params = {"sessionId": GRAND, "title": "Write it?", "subject": subject, "options": options}
    root.add_permission(PermissionRequest("perm_1", 7, params), subject=False)
    grand_sub = SimpleNamespace(state=grand, subagents={}, cancel=lambda: None)
    child_sub = SimpleNamespace(state=child, subagents={GRAND: grand_sub}, cancel=lambda: None)
    source = SimpleNamespace(session_id="s1", subagents={CHILD: child_sub})
    snap, _ = snapshot_of(ViewTree(root, source))
    return snap, {"t1": "root output\r\n", f"{CARD}/t1": "child output\r\n"}


def test_a_subagent_tree_nests_asks_in_place_and_keeps_text_as_text(page):  # noqa: F811
    snap, texts = _tree()
    page.load(data={"snapshot": snap, "terminal_text": texts})
    card = f'.acp-subagent[data-key="{CARD}"]'
    page.page.wait_for_selector(card)
    assert page.text(f"{card} > .acp-sub-head .acp-sub-title") == EVIL
    assert page.js("() => window.pwned") is None
    assert page.text(f"{card} > .acp-sub-about") == "Find <b>the</b> tests"
    assert page.text(f"{card} > .acp-sub-head .acp-sub-state") == "running"
    assert page.text(f"{card} > .acp-sub-head .acp-sub-count") == "1 tool call · 1 subagent"
    assert page.text(f"{card} > .acp-sub-problems .acp-fold-toggle") == "Diagnostics of this subagent (1)"
    # the child's own entries are inside its card, the grandchild's inside the grandchild's card
    child_call = f'{card} > .acp-sub-body .acp-card[data-key="{CARD}/tool_call:c1"]'
    grand_call = f'.acp-subagent[data-key="{GRAND_CARD}"] .acp-card[data-key="{GRAND_CARD}/tool_call:g1"]'
    assert page.count(child_call) == 1 and page.count(f"{card} {grand_call}") == 1
    assert page.count('.acp-entries > .acp-chunk > .acp-card[data-key="tool_call:c1"]') == 1
    # the request waits: both cards opened themselves; it is drawn in the grandchild's card, named
    assert page.count(f"{card}.acp-sub-open") == 1 and page.count(".acp-subagent.acp-sub-open") == 2
    perm = f'{grand_call} .acp-permission[data-key="permission:perm_1"]'
    assert page.text(f"{perm} .acp-perm-asker") == "asked by subagent Deeper"
    assert page.text(".acp-header-waiting") == "waiting for you: Deeper — Write it?"
    # terminals of the same id in two sessions stay apart
    page.settle()
    assert page.lines('.acp-card[data-key="tool_call:c1"] .acp-terminal')[0] == "root output"
    assert page.lines(f"{child_call} .acp-terminal")[0] == "child output"
    assert page.text(f"{child_call} .acp-term-cmd") == "terminal t1"  # its own id, not the view's
    assert bad_view_text(page.page) == []  # no "null" for a card without Cancel or a state
    page.page.locator(f"{perm} button[data-option-id='ok']").click()
    page.page.locator(f"{card} > .acp-sub-head .acp-sub-cancel").click()
    assert page.sent()[-2:] == [
        {"type": "select", "key": "perm_1", "option": "ok"},
        {"type": "cancel_subagent", "session": CHILD},
    ]
    page.shot("subagents", card)
    assert page.js("(s) => document.querySelector(s).hidden", f"{card} > .acp-sub-body > .acp-sub-note")
    later = {**snap["entries"][CARD], "followed": False}  # a turn's cell after its end
    page.patch({"type": "patch", "full": False, "order": [], "entries": {CARD: later}})
    assert page.text(f"{card} > .acp-sub-body > .acp-sub-note").endswith(
        "the whole session's view (%acp view)."
    )
    # closed by a click; an update keeps it closed; a full patch without the child drops its tree
    page.page.locator(f"{card} > .acp-sub-head .acp-sub-title").click()
    assert page.count(f"{card}.acp-sub-open") == 0
    keys = [k for k in snap["order"] if not k.startswith(CARD)]
    full = {"type": "patch", "seq": 10_000, "full": True, "header": snap["header"], "order": keys}
    page.patch({**full, "entries": {k: snap["entries"][k] for k in keys}, "terminals": {}})
    assert page.count(".acp-subagent") == 0 and page.count(f'[data-key^="{CARD}/"]') == 0
    assert page.count('[data-key="permission:perm_1"]') == 1  # back at its own place


def _messages() -> dict:
    """A task given to a subagent and its report, each session with its own view, linked."""
    root, child = SessionState(), SessionState()
    root.apply({"sessionUpdate": "subagent_update", "sessionId": CHILD, "title": "Explore"})
    views = (
        (root, "out-1", {"senderSessionId": "s1", "recipientSessionId": CHILD, "recipientMessageId": "in-1"}),
        (child, "in-1", {"senderSessionId": "s1", "recipientSessionId": CHILD, "senderMessageId": "out-1"}),
        (child, "rep-1", {"senderSessionId": CHILD, "recipientSessionId": "s1"}),
        (root, "rep-2", {"senderSessionId": CHILD, "recipientSessionId": "s1"}),
    )
    for state, message_id, fields in views:
        content = [{"type": "text", "text": f'**{message_id}** <img src=x onerror="window.pwned=1">'}]
        state.apply(
            {"sessionUpdate": "session_message", "messageId": message_id, "content": content, **fields}
        )
    source = SimpleNamespace(session_id="s1", subagents={CHILD: SimpleNamespace(state=child, subagents={})})
    snap, _ = snapshot_of(ViewTree(root, source))
    return snap


def test_messages_between_sessions_say_which_way_and_link_their_other_view(page):  # noqa: F811
    page.load(data={"snapshot": _messages(), "terminal_text": {}})
    card = f'.acp-subagent[data-key="{CARD}"]'
    page.page.wait_for_selector(card)
    label = '(k) => document.querySelector(`[data-key="${k}"] .acp-smsg-label`).textContent'
    assert page.js(label, "session_message:out-1") == "task → Explore"
    assert page.js(label, "session_message:rep-2") == "report ← Explore"
    assert page.js(label, f"{CARD}/session_message:in-1") == "task from the parent session"
    assert page.js(label, f"{CARD}/session_message:rep-1") == "report → the parent session"
    assert page.text('[data-key="session_message:out-1"] .acp-md strong') == "out-1"
    assert page.count(".acp-session-msg img") == 0 and page.js("() => window.pwned") is None
    assert page.count(f"{card}.acp-sub-open") == 0  # closed: nothing waits
    page.page.locator('[data-key="session_message:out-1"] .acp-smsg-link').click()
    assert page.count(f"{card}.acp-sub-open") == 1  # the received view is shown, its card opened
    page.page.wait_for_selector(f'[data-key="{CARD}/session_message:in-1"].acp-anchor-flash')
    assert bad_view_text(page.page) == []


def test_the_start_cells_lines_count_subagents_and_name_agent_turns(page):  # noqa: F811
    page.load()  # the runtime, once
    line = {"state": "ended", "stop_reason": "end_turn", "error": False, "tool_calls": 3, "started": None}
    turns = [
        {**line, "n": 1, "anchor": "s/t#1", "prompt": "Explore", "origin": "user", "subagents": 2},
        {
            **line,
            "n": 2,
            "anchor": "s/t#2",
            "prompt": None,
            "origin": "agent",
            "origin_kind": "task-notification",
        },
    ]
    waiting = [{"session_id": CHILD, "subagent": EVIL, "title": "Run <b>it</b>?"}]
    header = {"title": "acp", "run_state": "idle", "waiting": waiting}
    snapshot = {"seq": 1, "header": header, "turns": turns, "hint": None}
    page.js(
        "(s) => harness.loadWidget('loader', {kind: 'header', runtime: 'IPY_MODEL_rt1', snapshot: s})",
        snapshot,
    )
    page.page.wait_for_selector('.acp-turn-line[data-turn="2"]')
    assert page.texts(".acp-header-view .acp-turn-prompt") == ["Explore", "agent · task notification"]
    assert page.text('.acp-turn-line[data-turn="1"] .acp-turn-meta') == "3 tool calls · 2 subagents"
    assert page.text('.acp-turn-line[data-turn="2"]').count("subagent") == 0
    assert page.text(".acp-header-view .acp-header-waiting") == f"waiting for you: {EVIL} — Run <b>it</b>?"
    assert page.js("() => window.pwned") is None and bad_view_text(page.page) == []
