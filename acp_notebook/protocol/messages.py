"""Conversation messages (user / agent / thought): the item and its rules, and ``Conversation``.

v2: every chunk and whole-message update carries a ``messageId``; chunks append one content
block; ``user_message``/``agent_message``/``agent_thought`` are upserts whose ``content``
(omit keeps, null or ``[]`` clears, an array replaces) and ``_meta`` patch like tool calls.
v1 chunks carry no id: consecutive chunks of one role form one message with a made-up id.
An invalid content block (``content.block_problem``) is skipped, a chunk whose ``content`` is
null or invalid appends nothing (schema: message ``content`` skips invalid items).
``Conversation`` keeps the messages and the plans (``plans.py``) of a session, by first sight;
``plan_removed`` deletes a plan (its change record names the field ``removed``).
"""

from __future__ import annotations

from typing import Any

from .content import block_problem, clean_blocks
from .diagnostics import Report
from .patch import json_copy, patch_meta, type_name
from .plans import V1_PLAN_ID, Plan, plan_of_update, set_plan

__all__ = ["ROLES", "V1_PLAN_ID", "Conversation", "Message", "Plan"]

ROLES = {
    "user_message_chunk": "user",
    "agent_message_chunk": "agent",
    "agent_thought_chunk": "thought",
    "user_message": "user",
    "agent_message": "agent",
    "agent_thought": "thought",
}
PLAN_KINDS = frozenset({"plan_update", "plan", "plan_removed"})
Result = tuple[str, str, tuple[str, ...], bool]  # (item kind, id, changed fields, created)


class Message:
    """One message of the conversation; ``content`` holds content blocks as received."""

    __slots__ = ("content", "first_seen", "last_seen", "message_id", "meta", "role", "synthetic")

    def __init__(self, message_id: str, role: str, synthetic: bool = False) -> None:
        self.message_id = message_id
        self.role = role
        self.content: list[Any] = []
        self.meta: dict[str, Any] | None = None
        self.synthetic = synthetic
        self.first_seen = self.last_seen = 0.0  # the state's clock: first and latest update

    @property
    def text(self) -> str:
        """The text of the message's text blocks, joined."""
        return "".join(
            block["text"]
            for block in self.content
            if isinstance(block, dict) and isinstance(block.get("text"), str)
        )

    def to_dict(self) -> dict[str, Any]:
        """Wire-like shape: messageId, role, content (and _meta when set); a deep copy."""
        out: dict[str, Any] = {
            "messageId": self.message_id,
            "role": self.role,
            "content": json_copy(self.content),
        }
        if self.meta is not None:
            out["_meta"] = json_copy(self.meta)
        return out

    def __repr__(self) -> str:
        return f"Message({self.message_id!r}, role={self.role!r}, text={self.text[:40]!r})"


class Conversation:
    """Messages and plans by id, in first-seen order, and the v1 grouping of id-less chunks."""

    __slots__ = ("_open", "_synthetic_ids", "messages", "plans")

    def __init__(self) -> None:
        self.messages: dict[str, Message] = {}
        self.plans: dict[str, Plan] = {}
        self._open: Message | None = None  # the message the last item seen was part of
        self._synthetic_ids = 0

    def message(self, msg_id: str | None, role: str) -> tuple[Message, bool]:
        """The message a chunk or upsert belongs to (None: a v1 chunk), and whether it is new."""
        synthetic = msg_id is None
        if msg_id is None:
            msg = self._open
            if msg is not None and msg.synthetic and msg.role == role:
                return msg, False
            self._synthetic_ids += 1
            msg_id = f"_v1_{role}_{self._synthetic_ids}"
        msg = self.messages.get(msg_id)
        created = msg is None
        if msg is None:
            msg = self.messages[msg_id] = Message(msg_id, role, synthetic)
        self._open = msg
        return msg, created

    def interrupt(self) -> None:
        """Another item came between: the next v1 chunk starts a new message."""
        self._open = None

    def apply(self, update: dict[str, Any], report: Report) -> Result | None:
        """Apply one message or plan update; what changed, or None when nothing did."""
        kind = update["sessionUpdate"]
        if kind in PLAN_KINDS:
            return self._plan(update, report)
        if kind.endswith("_chunk"):
            return self._chunk(update, report)
        return self._upsert(update, report)

    def _chunk(self, update: dict[str, Any], report: Report) -> Result | None:
        block = chunk_block(update, report)
        if block is None:
            return None
        msg, created = self.message(chunk_message_id(update, report), ROLES[update["sessionUpdate"]])
        msg.content.append(block)
        return "message", msg.message_id, ("content",), created

    def _upsert(self, update: dict[str, Any], report: Report) -> Result | None:
        msg_id = update.get("messageId")
        if not isinstance(msg_id, str):
            report("malformed-update", "message update without string `messageId`", update)
            return None
        msg, created = self.message(msg_id, ROLES[update["sessionUpdate"]])
        return "message", msg_id, tuple(apply_message_fields(msg, update, report)), created

    def _plan(self, update: dict[str, Any], report: Report) -> Result | None:
        if update["sessionUpdate"] == "plan_removed":
            return self._plan_removed(update, report)
        plan = plan_of_update(update, report)
        if plan is None:
            return None
        obj = self.plans.get(plan["planId"])
        created = obj is None
        if obj is None:
            obj = self.plans[plan["planId"]] = Plan(plan["planId"])
        set_plan(obj, plan, report)
        return "plan", obj.plan_id, ("entries",), created

    def _plan_removed(self, update: dict[str, Any], report: Report) -> Result | None:
        plan_id = update.get("planId")
        if not isinstance(plan_id, str):
            report("malformed-update", "plan_removed without string `planId`", update)
            return None
        if self.plans.pop(plan_id, None) is None:
            return None  # removing what is not there changes nothing
        return "plan", plan_id, ("removed",), False


# -- messages ---------------------------------------------------------------------------------------
def chunk_block(update: dict[str, Any], report: Report) -> Any:
    """The content block a message chunk appends, or None when it appends nothing."""
    if "content" not in update:
        report("malformed-update", "message chunk without `content`", update)
        return None
    block = update["content"]
    problem = "chunk `content` is null" if block is None else block_problem(block)
    if problem is not None:
        report("malformed-content", problem + " (nothing appended)", block)
        return None
    return block


def chunk_message_id(update: dict[str, Any], report: Report) -> str | None:
    """A chunk's ``messageId``; None for a v1 chunk (or a wrong-typed id, reported)."""
    msg_id = update.get("messageId")
    if msg_id is not None and not isinstance(msg_id, str):
        report("invalid-field", f"`messageId` is {type_name(msg_id)}", update)
        return None
    return msg_id


def apply_message_fields(msg: Message, update: dict[str, Any], report: Report) -> list[str]:
    """Patch ``msg`` with a whole-message upsert; returns the wire names of changed fields."""
    changed = []
    if "content" in update:
        content = update["content"]
        if content is None or isinstance(content, list):
            msg.content = clean_blocks(content or [], report)
            changed.append("content")
        else:
            report("invalid-field", f"message `content` is {type_name(content)}", content)
    if "_meta" in update:
        meta = update["_meta"]
        if meta is None or isinstance(meta, dict):
            msg.meta = patch_meta(msg.meta, meta)
            changed.append("_meta")
        else:
            report("invalid-field", f"message `_meta` is {type_name(meta)}", update)
    return changed
