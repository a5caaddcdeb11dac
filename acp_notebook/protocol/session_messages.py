"""A message between sessions as one session's transcript holds it: the unstable schema's
``SessionMessage`` / ``SessionMessageChunk`` rules. Pure.

A ``session_message`` is an upsert keyed by ``messageId`` in the transcript of the session it
arrives on: the agent sends the outgoing view on the sender's session and the incoming view on the
recipient's; the two are linked only by ``senderMessageId`` / ``recipientMessageId`` (never copied
into one another). Only ``messageId`` is required. The four ids patch: omitted leaves the stored
value, ``null`` clears it, a string replaces it. ``content`` replaces the whole collection
(``null`` clears it; invalid blocks are skipped, each with a diagnostic); ``_meta`` patches by
top-level key. A ``session_message_chunk`` appends one content block and may arrive before, between
or after the upserts (the first one creates the entry); its ``_meta`` is the chunk's own and
patches nothing. A value of the wrong type is reported and leaves the stored one as it was;
unknown fields of an upsert are kept.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .content import clean_blocks
from .diagnostics import Report
from .messages import chunk_block
from .patch import json_copy, patch_meta, type_name

KINDS = frozenset({"session_message", "session_message_chunk"})
_IDS = {
    "senderSessionId": "sender_session_id",
    "recipientSessionId": "recipient_session_id",
    "senderMessageId": "sender_message_id",
    "recipientMessageId": "recipient_message_id",
}
_KNOWN = {"sessionUpdate", "messageId", *_IDS, "content", "_meta"}


@dataclass
class SessionMessage:
    """One inter-session message, as the session it arrived on was told."""

    message_id: str
    sender_session_id: str | None = None
    recipient_session_id: str | None = None
    sender_message_id: str | None = None  # on an incoming view: the outgoing view's ``messageId``
    recipient_message_id: str | None = None  # on an outgoing view: the incoming view's ``messageId``
    content: list[Any] | None = None  # None: never set, or cleared
    meta: dict[str, Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict)  # fields this client does not know, kept
    chunks: int = 0  # ``session_message_chunk`` blocks appended
    updates: int = 0  # ``session_message`` upserts applied
    first_seen: float = 0.0  # the state's clock
    last_seen: float = 0.0

    @property
    def text(self) -> str:
        """The text of the content's text blocks, joined."""
        return "".join(
            block["text"]
            for block in self.content or ()
            if isinstance(block, dict) and isinstance(block.get("text"), str)
        )

    def to_dict(self) -> dict[str, Any]:
        """The message as one ``session_message`` upsert would state it now (a deep copy)."""
        out: dict[str, Any] = {"sessionUpdate": "session_message", "messageId": self.message_id}
        for key, attr in _IDS.items():
            value = getattr(self, attr)
            if value is not None:
                out[key] = value
        if self.content is not None:
            out["content"] = json_copy(self.content)
        out.update(json_copy(self.extra))
        if self.meta is not None:
            out["_meta"] = json_copy(self.meta)
        return out


def apply_session_message(msg: SessionMessage, update: dict[str, Any], report: Report) -> list[str]:
    """Patch ``msg`` with one ``session_message`` upsert; returns the wire names of changed fields."""
    changed = []
    for key, value in update.items():
        if key in ("sessionUpdate", "messageId"):
            continue
        if key not in _KNOWN:
            msg.extra[key] = json_copy(value)
            changed.append(key)
        elif _patch(msg, key, value, report):
            changed.append(key)
    msg.updates += 1
    return changed


def chunk_content(update: dict[str, Any], report: Report) -> Any:
    """The block a ``session_message_chunk`` appends, or None (missing, null or invalid: reported)."""
    return chunk_block(update, report)


def append_chunk(msg: SessionMessage, block: Any) -> list[str]:
    """Append one checked content block to ``msg``; returns the changed field (``content``)."""
    msg.content = [*(msg.content or ()), json_copy(block)]
    msg.chunks += 1
    return ["content"]


def _patch(msg: SessionMessage, key: str, value: Any, report: Report) -> bool:
    if key == "_meta":
        if value is not None and not isinstance(value, dict):
            report("invalid-field", f"session message `_meta` is {type_name(value)} (kept as was)", value)
            return False
        msg.meta = patch_meta(msg.meta, json_copy(value))
        return True
    if key == "content":
        if value is not None and not isinstance(value, list):
            report("invalid-field", f"session message `content` is {type_name(value)} (kept as was)", value)
            return False
        msg.content = None if value is None else json_copy(clean_blocks(value, report))
        return True
    if value is not None and not isinstance(value, str):
        report(
            "invalid-field",
            f"session message `{key}` is {type_name(value)}, not a string (kept as was)",
            value,
        )
        return False
    setattr(msg, _IDS[key], value)
    return True
