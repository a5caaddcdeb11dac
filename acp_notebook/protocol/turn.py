"""When a prompt turn ends — the rule, without I/O.

v1: the ``session/prompt`` response carries ``stopReason`` (``ends_on_response``). v2: the
response is only an acknowledgement; the turn ends at the first ``state_update`` ``idle`` after
the prompt was sent *and* either the acknowledgement arrived or a ``running``/``requires_action``
was seen (an agent may start before it acknowledges; an idle before both is stale). An unknown
state is not idle. A missing ``stopReason`` ends the turn with ``None``; an ``error`` stop keeps
its details. Whatever else ends a turn (an error response, the agent exiting, the session
closing) goes through ``abandon``. Only ``Turn`` changes a ``Turn``. The client may give a turn a
``checkpoint`` (``client.checkpoints``): then ``changes()`` and ``revert()`` ask it.

Agent-started turns (v2): foreground work may start without a prompt (``StateUpdate``: "to follow
up on a completed background task"). A ``running`` or ``requires_action`` while no turn of ours is
in progress starts one (``agent_starts``): ``Turn.by_agent()``, ``origin == "agent"`` (a prompt's
turn: ``"user"``), ended by the next ``idle`` like any other. Where a turn came from, when the
agent says, is ``origin_kind``: the ``kind`` of an update's ``_meta["_claude/origin"]`` (real
Claude: ``"task-notification"`` for its own turns, ``"human"`` for a prompt's); a missing or
malformed one leaves it as it was (None: not said).
"""

from __future__ import annotations

from typing import Any

from .checkpoint import NoCheckpoint

ACTIVE_STATES = frozenset({"running", "requires_action"})
ORIGIN_META = "_claude/origin"  # claude-agent-acp: ``{"kind": "human" | "task-notification", ...}``


def agent_starts(update: Any, current: Turn | None) -> bool:
    """True if ``update`` starts foreground work the agent began itself (no turn in progress)."""
    if current is not None and not current.ended:
        return False
    return (
        isinstance(update, dict)
        and update.get("sessionUpdate") == "state_update"
        and (update.get("state") in ACTIVE_STATES)
    )


def origin_kind_of(update: Any) -> str | None:
    """The ``kind`` an update's ``_meta`` says its turn came from, or None."""
    meta = update.get("_meta") if isinstance(update, dict) else None
    origin = meta.get(ORIGIN_META) if isinstance(meta, dict) else None
    kind = origin.get("kind") if isinstance(origin, dict) else None
    return kind if isinstance(kind, str) and kind else None


class Turn:
    """One turn's progress (a prompt's, or one the agent started), fed in arrival order."""

    def __init__(self, *, ends_on_response: bool, origin: str = "user") -> None:
        self.ends_on_response = ends_on_response
        self.origin = origin  # "user": a prompt of ours; "agent": the agent started it
        self.origin_kind: str | None = None  # where it came from, when the agent says
        self.number: int | None = None  # from 1, in the session's order (``place``)
        self.timeline_start: int | None = None  # the state's timeline length when it started
        self.acknowledged = False
        self.active_seen = False
        self.ended = False
        self.cancel_requested = False
        self.stop_reason: str | None = None
        self.error: Any = None
        self.message_id: str | None = None
        self.tool_call_ids: set[str] = set()
        self.checkpoint: Any = None  # given by the client before the prompt goes out

    @classmethod
    def by_agent(cls) -> Turn:
        """A turn the agent started (its ``running`` seen): no prompt, ended by ``idle``."""
        turn = cls(ends_on_response=False, origin="agent")
        turn.acknowledged = turn.active_seen = True
        return turn

    def place(self, number: int, timeline_start: int) -> None:
        """Where the turn starts: its number in the session (from 1) and the timeline's length."""
        self.number, self.timeline_start = number, timeline_start

    @property
    def origin_label(self) -> str | None:
        """A short label of where the turn came from (``"task notification"``), or None."""
        return self.origin_kind.replace("-", " ").replace("_", " ") if self.origin_kind else None

    def on_update(self, update: Any) -> bool:
        """Any update of the session while the turn runs: note where it came from; True if that
        changed ``origin_kind``."""
        kind = origin_kind_of(update)
        if self.ended or kind is None or kind == self.origin_kind:
            return False
        self.origin_kind = kind
        return True

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

    def changes(self) -> list[dict[str, Any]]:
        """The files this turn changed on disk, whoever wrote them: ``{path, change, revertible, reason}``."""
        return self._checkpoint().changes()

    async def revert(self, force: bool = False, preview: bool = False) -> Any:
        """Put back the files this turn changed (``preview``: only say what would happen)."""
        return await self._checkpoint().revert(force=force, preview=preview)

    def _checkpoint(self) -> Any:
        if self.checkpoint is None:
            raise NoCheckpoint(
                "this turn has no checkpoint (the session was opened with checkpoints=False, or in /, "
                "the home or the temp directory, where checkpoints=True turns them on)"
            )
        return self.checkpoint

    def _end(self, reason: str | None, error: Any) -> bool:
        self.ended = True
        self.stop_reason, self.error = reason, error
        return True
