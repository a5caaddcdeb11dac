"""Conversation messages (user / agent / thought) and plans.

v2: every chunk and whole-message update carries a ``messageId``; chunks append one content
block; ``user_message``/``agent_message``/``agent_thought`` are upserts whose ``content``
(omit keeps, null or ``[]`` clears, an array replaces) and ``_meta`` patch like tool calls.
v1 chunks carry no id: consecutive chunks of one role form one message with a made-up id.
Plans: ``plan_update`` replaces the entries of the plan named by ``planId``; v1 ``plan`` is
the single plan ``"plan"``.
"""

from __future__ import annotations

from typing import Any

ROLES = {
    "user_message_chunk": "user",
    "agent_message_chunk": "agent",
    "agent_thought_chunk": "thought",
    "user_message": "user",
    "agent_message": "agent",
    "agent_thought": "thought",
}
V1_PLAN_ID = "plan"


class Message:
    """One message of the conversation; ``content`` holds content blocks as received."""

    __slots__ = ("content", "message_id", "meta", "role", "synthetic")

    def __init__(self, message_id: str, role: str, synthetic: bool = False) -> None:
        self.message_id = message_id
        self.role = role
        self.content: list[Any] = []
        self.meta: dict[str, Any] | None = None
        self.synthetic = synthetic

    @property
    def text(self) -> str:
        """The text of the message's text blocks, joined."""
        return "".join(
            block["text"]
            for block in self.content
            if isinstance(block, dict) and isinstance(block.get("text"), str)
        )

    def to_dict(self) -> dict[str, Any]:
        """Wire-like shape: messageId, role, content (and _meta when set)."""
        out: dict[str, Any] = {
            "messageId": self.message_id,
            "role": self.role,
            "content": list(self.content),
        }
        if self.meta is not None:
            out["_meta"] = self.meta
        return out

    def __repr__(self) -> str:
        return f"Message({self.message_id!r}, role={self.role!r}, text={self.text[:40]!r})"


class Plan:
    """One plan: its ``entries`` for ``items`` plans, the raw object for other types."""

    __slots__ = ("entries", "meta", "plan_id", "raw", "type")

    def __init__(self, plan_id: str) -> None:
        self.plan_id = plan_id
        self.type = "items"
        self.entries: list[Any] = []
        self.meta: dict[str, Any] | None = None
        self.raw: dict[str, Any] = {}

    def to_dict(self) -> dict[str, Any]:
        """The plan object as last received."""
        return dict(self.raw)

    def __repr__(self) -> str:
        return f"Plan({self.plan_id!r}, entries={len(self.entries)})"
