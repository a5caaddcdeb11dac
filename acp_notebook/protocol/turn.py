"""When a prompt turn ends — the rule, without I/O.

v1: the ``session/prompt`` response carries ``stopReason``. v2: the response is only an
acknowledgement; the turn ends at the first ``state_update`` ``idle`` after the prompt was sent
*and* either the acknowledgement arrived or a ``running``/``requires_action`` was seen (an agent
may start before it acknowledges; an idle before both is stale). An unknown state is not idle.
A missing ``stopReason`` ends the turn with ``None``; an ``error`` stop keeps its details.
"""

from __future__ import annotations

from typing import Any

ACTIVE_STATES = frozenset({"running", "requires_action"})


class Turn:
    """One prompt turn's progress, fed by the connection in arrival order."""

    def __init__(self, version: int) -> None:
        self.version = version
        self.acknowledged = False
        self.active_seen = False
        self.ended = False
        self.cancel_requested = False
        self.stop_reason: str | None = None
        self.error: Any = None
        self.message_id: str | None = None
        self.tool_call_ids: set[str] = set()

    def on_response(self, result: Any) -> bool:
        """The prompt's successful response arrived; True if that ends the turn (v1)."""
        self.acknowledged = True
        result = result if isinstance(result, dict) else {}
        if self.version == 1:
            reason = result.get("stopReason")
            return self._end(reason if isinstance(reason, str) else None, None)
        message_id = result.get("messageId")
        self.message_id = message_id if isinstance(message_id, str) else None
        return False

    def on_state(self, update: dict[str, Any]) -> bool:
        """A ``state_update`` arrived; True if it ends the turn."""
        if self.ended:
            return False
        state = update.get("state")
        if state in ACTIVE_STATES:
            self.active_seen = True
            return False
        if state != "idle" or not (self.acknowledged or self.active_seen):
            return False
        reason = update.get("stopReason")
        reason = reason if isinstance(reason, str) else None
        return self._end(reason, update.get("error") if reason == "error" else None)

    def _end(self, reason: str | None, error: Any) -> bool:
        self.ended = True
        self.stop_reason, self.error = reason, error
        return True
