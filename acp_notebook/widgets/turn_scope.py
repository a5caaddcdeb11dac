"""The turn a view is about (a ``%%acp`` cell's, an agent-started turn's): its own header. No I/O.

A view made for one turn (``SessionView(session, turn=n)``) shows this header instead of the
session's (format: ``js/WIRE.md``, Turn header): the turn's number, its own state (``starting``,
``running``, ``requires_action`` — "waiting for you" —, or ``ended`` with its own stop reason),
its duration, a Stop only while *this* turn runs (``running``; the click names the turn, and
``cancels`` says whether it may cancel), and only the session chrome it needs: the agent's name,
whether it stopped or exited, and the anchor of the start cell's header (``header_anchor_of``),
which keeps every session-wide thing (run state, usage, stderr, diagnostics, config).

A cell's view is made before its turn starts: ``expect_next`` binds the scope to the next turn
of a prompt that starts (a turn the agent starts meanwhile is skipped), whatever its number.
Times are the state's (``SessionState.turn_times``), the same whenever the view was made.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..protocol.changes import Change
from .header import agent_info
from .header_view import header_anchor_of


class TurnScope:
    """Which turn of ``session`` a view shows, and that turn's own header."""

    def __init__(
        self,
        session: Any,
        number: int,
        on_change: Callable[[], None] = lambda: None,
        on_bound: Callable[[int], None] = lambda n: None,
    ) -> None:
        self.session, self.number = session, number
        self._on_change, self._on_bound = on_change, on_bound
        self._next = False
        self._never = False  # its task ended before its turn started (a failure before the prompt)
        self._unsubscribe = session.state.subscribe(self._heard)

    def expect_next(self) -> None:
        """The next turn of a prompt that starts is this view's (a cell's turn left the queue)."""
        self._next = True

    def over(self) -> None:
        """The view's turn task ended: if its turn never started, the view says it ended."""
        if self._next:
            self._next, self._never = False, True
            self._on_change()

    def turn(self) -> Any:
        """The ``Turn`` shown, or None before it started."""
        turns = self.session.turns
        if self._next or not 0 < self.number <= len(turns):
            return None
        return turns[self.number - 1]

    def state(self) -> str:
        """``starting``, ``running``, ``requires_action`` (waiting for the user) or ``ended``."""
        turn = self.turn()
        if turn is None:
            return "ended" if self._never else "starting"
        if turn.ended:
            return "ended"
        return "requires_action" if self._asks() else "running"

    def _asks(self) -> bool:
        session = self.session
        if session.state.run_state == "requires_action":
            return True
        return bool(session.pending_permissions) or bool(getattr(session, "pending_elicitations", ()))

    def cancels(self, number: Any) -> bool:
        """True when a Stop click naming turn ``number`` may cancel: it is this turn, and it runs."""
        return number == self.number and self.state() in ACTIVE and self.session.turn is self.turn()

    def _heard(self, change: Change) -> None:
        if change.kind != "turn" or not str(change.id).isdigit():
            return
        number = int(str(change.id))
        turns = self.session.turns
        turn = turns[number - 1] if 0 < number <= len(turns) else None
        if change.created and self._next and getattr(turn, "origin", "user") != "agent":
            self._next, self.number = False, number
            self._on_bound(number)
        if number == self.number and not self._next:
            self._on_change()

    def times(self) -> tuple[float | None, float | None]:
        """When the turn started and ended (the state's ``turn_times``; None: not seen)."""
        if self.turn() is None:
            return None, None
        return self.session.state.turn_times.get(self.number, (None, None))

    def header(
        self, title: str | None, interactive: Sequence[str] = (), waiting: Sequence[dict[str, Any]] = ()
    ) -> dict[str, Any]:
        """The turn header (WIRE.md): this turn's state and times, and the compact session line."""
        turn, state = self.turn(), self.state()
        ended = state == "ended"
        summary = self.session.summary()
        agent = summary.agent if summary is not None else None
        reason = turn.stop_reason if ended and turn is not None else None
        started, ended_at = self.times()
        return {
            "scope": "turn",
            "title": title or f"turn {self.number}",
            "turn": self.number,
            "turn_state": state,
            "stop_reason": reason,
            "stop_error": turn.error if turn is not None and ended and reason == "error" else None,
            "pending": len(self.session.pending_permissions) if state == "requires_action" else 0,
            "started": started,
            "duration": _duration(started, ended_at) if ended else None,
            "running": state in ACTIVE,
            "agent": agent_info(agent) if agent is not None else None,
            "closed": agent.closed if agent is not None else False,
            "stopped": agent.stopped if agent is not None else False,
            "exit_code": agent.exit_code if agent is not None else None,
            "session_id": summary.session_id if summary is not None else None,
            "cwd": summary.cwd if summary is not None else None,
            "session_anchor": header_anchor_of(self.session),
            "waiting": [dict(w) for w in waiting],
            "interactive_terminals": [str(t) for t in interactive],
        }

    def close(self) -> None:
        """Stop hearing of turns."""
        self._unsubscribe()


ACTIVE = frozenset({"running", "requires_action"})


def _duration(started: float | None, ended: float | None) -> float | None:
    if started is None or ended is None:
        return None
    return round(max(0.0, ended - started), 3)


def scoped(session: Any, turn: int | None, **hooks: Any) -> TurnScope | None:
    """A ``TurnScope`` for a view of turn ``turn`` of a live session (None: the view is not of one
    turn, or its source has no turns, e.g. a bare state or a subagent)."""
    if (
        turn is None
        or session is None
        or not hasattr(session, "turns")
        or not callable(getattr(session, "summary", None))
    ):
        return None
    return TurnScope(session, turn, **hooks)
