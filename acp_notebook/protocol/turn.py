"""When a prompt turn ends — the rule, without I/O.

v1: the ``session/prompt`` response carries ``stopReason`` (``ends_on_response``). v2: the
response is only an acknowledgement; the turn ends at the first ``state_update`` ``idle`` after
the prompt was sent *and* either the acknowledgement arrived or a ``running``/``requires_action``
was seen (an agent may start before it acknowledges; an idle before both is stale). An unknown
state is not idle. A missing ``stopReason`` ends the turn with ``None``; an ``error`` stop keeps
its details. Whatever else ends a turn (an error response, the agent exiting, the session
closing) goes through ``abandon``. Only ``Turn`` changes a ``Turn``.
"""

from __future__ import annotations

from typing import Any

ACTIVE_STATES = frozenset({"running", "requires_action"})


class Turn:
    """One prompt turn's progress, fed by the connection in arrival order."""

    def __init__(self, *, ends_on_response: bool) -> None:
        self.ends_on_response = ends_on_response
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
        if self.ends_on_response:
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

    def saw_tool_call(self, tool_call_id: str) -> None:
        """A tool call was created or updated during this turn (``cancel`` marks it)."""
        if not self.ended:
            self.tool_call_ids.add(tool_call_id)

    def request_cancel(self) -> bool:
        """The client sent ``session/cancel``; True if the turn was still running."""
        if self.ended:
            return False
        self.cancel_requested = True
        return True

    def abandon(self, reason: str | None, error: Any = None) -> bool:
        """End the turn without the agent's word (error response, exit, close); False if over."""
        if self.ended:
            return False
        return self._end(reason, error)

    def _end(self, reason: str | None, error: Any) -> bool:
        self.ended = True
        self.stop_reason, self.error = reason, error
        return True
