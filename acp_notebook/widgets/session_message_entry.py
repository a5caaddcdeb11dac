"""A message between sessions as one session's tree shows it (format: ``js/WIRE.md``, Subagents). No I/O.

Each session shows its own view of a message (the agent sends the outgoing view on the sender's
session, the incoming view on the recipient's): the entry says which way it went and to or from
whom — a subagent of this session (a task given, a report received), this session's parent, or
another session — and links to the other view through ``senderMessageId`` / ``recipientMessageId``
(``link``: the view key of the other view, when the view reached that session). Nothing is copied
from one view into the other. Agent text passes through as data.
"""

from __future__ import annotations

from typing import Any

from ..protocol.session_messages import SessionMessage
from .entry_bound import clip
from .subtree import SESSION_MESSAGE, Scope, ViewTree


def direction(scope: Scope, msg: SessionMessage) -> str | None:
    """``outgoing`` / ``incoming`` as seen from ``scope``'s session, or None when it cannot tell."""
    sender, recipient = msg.sender_session_id, msg.recipient_session_id
    if (sender is not None and sender == scope.session_id) or recipient in scope.state.subagents:
        return "outgoing"
    if (recipient is not None and recipient == scope.session_id) or sender in scope.state.subagents:
        return "incoming"
    return None


def relation(scope: Scope, peer: str | None) -> str:
    """Who the other session is to ``scope``: ``subagent``, ``parent`` or ``session``."""
    if peer is not None and peer in scope.state.subagents:
        return "subagent"
    if scope.parent is not None and peer is not None and peer == scope.parent.session_id:
        return "parent"
    return "session"


def session_message_entry(tree: ViewTree, scope: Scope, message_id: str) -> dict[str, Any]:
    """The entry of message ``message_id`` of ``scope``'s transcript."""
    msg = scope.state.session_messages[message_id]
    way = direction(scope, msg)
    peer = msg.recipient_session_id if way == "outgoing" else msg.sender_session_id if way else None
    info = scope.state.subagents.get(peer) if peer is not None else None
    return {
        "kind": SESSION_MESSAGE,
        "id": message_id,
        "direction": way,
        "peer": peer,
        "peer_title": clip(info.title) if info is not None else None,
        "relation": relation(scope, peer),
        "sender_session_id": msg.sender_session_id,
        "recipient_session_id": msg.recipient_session_id,
        "blocks": list(msg.content or ()),
        "markdown": msg.text,
        "link": _link(tree, way, msg),
    }


def _link(tree: ViewTree, way: str | None, msg: SessionMessage) -> str | None:
    """The view key of the same message's other view, when the tree reached its session."""
    if way == "outgoing":
        other, other_id = tree.scope_of(msg.recipient_session_id), msg.recipient_message_id
    elif way == "incoming":
        other, other_id = tree.scope_of(msg.sender_session_id), msg.sender_message_id
    else:
        return None
    return other.key(SESSION_MESSAGE, other_id) if other is not None and other_id is not None else None
