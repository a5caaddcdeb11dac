"""The entries of a view's tree (format: ``js/WIRE.md``, Subagents): subagent cards, a child's
items under their session, permission requests naming the subagent that asks. No I/O.

A child's entry is its item's entry (``viewmodel``) with its terminals renamed to the view's ids
(``Scope.terminal``) and ``session`` set to the child's id (a Cancel click names it). A permission
request carries ``card``, the view key of the tool-call card it is drawn in, and, when a subagent
asks, ``session_id`` and ``subagent`` (its title). Agent text (titles, descriptions) passes through
as data, clipped where it is only a name (``entry_bound.clip``): the page inserts it as text.
"""

from __future__ import annotations

from typing import Any

from ..protocol.elicitation import Elicitation
from ..protocol.permission import PermissionRequest
from ..protocol.state import SessionState
from . import viewmodel as vm
from .elicitation_entry import saved_entry
from .entry_bound import bounded, clip
from .session_message_entry import session_message_entry
from .subtree import SESSION_MESSAGE, SUBAGENT, Scope, ViewTree, too_deep

ACTIVE = frozenset({"running", "requires_action"})
DESCRIPTION_CHARS = 5_000  # of a subagent's description on its card (sent again with each change)


def build(
    tree: ViewTree,
    scope: Scope,
    kind: str,
    key: Any,
    root: str | None = None,
    *,
    whole: bool = False,
    saved: bool = False,
) -> dict[str, Any]:
    """The entry of item ``(kind, key)`` of ``scope`` (``kind`` as ``Scope.shown`` gives it);
    ``saved``: as a saved notebook or an export keeps it (``elicitation_entry.saved_entry``)."""
    if kind == SUBAGENT:
        return subagent_entry(tree, scope, key)
    if kind == SESSION_MESSAGE:
        entry = session_message_entry(tree, scope, key)
        entry = entry if whole else bounded(entry)
    else:
        entry = vm.build_entry(scope.state, kind, key, root, whole=whole)
    if kind == "permission":
        entry.update(asker(tree, scope.state.permissions[key]))
    elif kind == "elicitation":
        entry.update(asker(tree, scope.state.elicitations[key]), agent=agent_name(tree))
        entry = saved_entry(entry) if saved else entry
    return child_entry(scope, entry) if scope.card else entry


def agent_name(tree: ViewTree) -> str | None:
    """The agent's title or name, as the consent card names who asks (None: not known)."""
    summarize = getattr(tree.root.source, "summary", None)  # a Session's (a Subagent has none)
    agent = getattr(summarize(), "agent", None) if callable(summarize) else None
    name = getattr(agent, "title", None) or getattr(agent, "name", None)
    return clip(name) if isinstance(name, str) else None


def child_entry(scope: Scope, entry: dict[str, Any]) -> dict[str, Any]:
    """A child's entry: its terminals under the view's ids, its session named (Cancel clicks say it)."""
    out = {**entry, "session": scope.session_id}
    if entry.get("kind") == "tool_call":
        out["items"] = [_renamed(scope, item) for item in entry.get("items", ())]
    return out


def _renamed(scope: Scope, item: dict[str, Any]) -> dict[str, Any]:
    if item.get("type") == "terminal" and isinstance(item.get("id"), str):
        return {**item, "id": scope.terminal(item["id"])}
    return item


def asker(tree: ViewTree, perm: PermissionRequest | Elicitation) -> dict[str, Any]:
    """Where a request (or an elicitation) is drawn (``card``) and, for a subagent's, which one asks."""
    info = tree.info(perm.session_id)
    tool = perm.tool_call_id
    if info is None:  # the view's own session asks
        return {"card": tree.root.key("tool_call", tool) if tool is not None else None}
    home = tree.scope_of(perm.session_id)
    card = home.key("tool_call", tool) if home is not None and tool is not None else None
    return {"card": card, "session_id": perm.session_id, "subagent": clip(info.title or perm.session_id)}


def subagent_entry(tree: ViewTree, scope: Scope, child_id: str) -> dict[str, Any]:
    """A subagent's card: what its parent was told, and what its own state shows so far."""
    info = scope.state.subagents[child_id]
    child = tree.card(scope.key(SUBAGENT, child_id))
    waiting = pending_of(tree, child_id)
    running = info.run_state in ACTIVE
    started, ended = span(child.state, running) if child is not None else (None, None)
    entry = {
        "kind": SUBAGENT,
        "id": child_id,
        "title": clip(info.title),
        "description": clip(info.description, DESCRIPTION_CHARS),
        "run_state": info.run_state,
        "cancellable": info.cancellable and running and can_cancel(child),
        "tree": child is not None,
        "too_deep": too_deep(scope),
        "tool_calls": len(child.state.tool_calls) if child is not None else None,
        "subagents": len(child.state.subagents) if child is not None else None,
        "pending": len(waiting),
        "waiting": [clip(asked_title(ask)) for ask in waiting][:5],
        "started": started,
        "ended": ended,
        **problems(child.state if child is not None else None),
    }
    if not tree.following:
        entry["followed"] = False  # a turn's cell after its end: the child's later work is elsewhere
    return entry


def can_cancel(child: Scope | None) -> bool:
    """Whether a subagent's card can offer Cancel: its session is a live ``Subagent``."""
    return child is not None and callable(getattr(child.source, "cancel", None))


def waiting_list(tree: ViewTree) -> list[dict[str, Any]]:
    """The subagents' pending requests, oldest first, for the header ("waiting for you: ...")."""
    out = []
    for ask in pending_asks(tree):
        info = tree.info(ask.session_id)
        if info is not None:
            out.append(
                {"session_id": ask.session_id, "subagent": clip(info.title), "title": clip(asked_title(ask))}
            )
    return out


def pending_asks(tree: ViewTree) -> list[PermissionRequest | Elicitation]:
    """The pending permission requests, then the pending elicitations, on the root's desk."""
    state = tree.root.state
    return [*state.pending_permissions, *state.pending_elicitations]


def asked_title(ask: PermissionRequest | Elicitation) -> str | None:
    """What a pending request is called where it is listed: its title (an elicitation: its message)."""
    return ask.title if isinstance(ask, PermissionRequest) else ask.message


SHOWN_DIAGNOSTICS = 20  # of a subagent's own session, on its card (the newest)


def problems(state: SessionState | None) -> dict[str, Any]:
    """What the child's own input got wrong (its state's diagnostics), for its card."""
    found = state.diagnostics if state is not None else []
    shown = [{"code": d.code, "message": d.message, "level": d.level} for d in found[-SHOWN_DIAGNOSTICS:]]
    return {"diagnostics": shown, "diagnostic_count": len(found)}


def pending_of(tree: ViewTree, session_id: str) -> list[PermissionRequest | Elicitation]:
    """The pending requests and elicitations of ``session_id`` and every subagent below it (the
    root's desk holds them)."""
    ids = tree.descendants(session_id)
    return [ask for ask in pending_asks(tree) if ask.session_id in ids]


def span(state: SessionState, running: bool) -> tuple[float | None, float | None]:
    """When a child's own session first showed something and, unless it runs, last did (state clock)."""
    starts = [tc.created_at for tc in state.tool_calls.values()]
    starts += [m.first_seen for m in state.messages.values() if m.first_seen]
    starts += [t.first_seen for t in state.terminals.values()]
    starts += [m.first_seen for m in state.session_messages.values() if m.first_seen]  # its task
    if not starts:
        return None, None
    if running:
        return min(starts), None
    ends = [tc.ended_at or tc.updated_at for tc in state.tool_calls.values()]
    ends += [m.last_seen for m in state.messages.values() if m.last_seen]
    ends += [t.last_seen for t in state.terminals.values()]
    ends += [m.last_seen for m in state.session_messages.values() if m.last_seen]
    return min(starts), max(ends, default=min(starts))
