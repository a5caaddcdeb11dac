"""What a view's buttons do: calls into the session, run on the kernel's event loop.

A view never sees the connection; it gets an ``Actions`` object. For a live ``Session`` the
actions answer permissions, schedule cancellations as tasks and pass terminal keystrokes and
sizes on; for a bare ``SessionState`` (hand-fed, e.g. in a tutorial) a permission click just
records the outcome and no terminal is interactive. Any object with these methods will do (a
login flow passes its own for its terminal).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from ..protocol.state import SessionState
from .elicitation_entry import answer_click


class Actions:
    """Button handlers for a view over a bare state: permissions only."""

    def __init__(self, state: SessionState) -> None:
        self.state = state

    def select(self, key: str, option_id: str) -> None:
        """Answer permission ``key`` with ``option_id`` (ignored if already answered)."""
        request = self.state.permissions.get(key)
        if request is None or not request.pending:
            return
        try:
            request.select(option_id, by="user")
        except ValueError as exc:
            self.state.diagnose("view-action-error", str(exc))
            return
        self._answered(request)

    def _answered(self, request: Any) -> None:
        """A bare state has no client to tell it: tell its observers here."""
        self.state.permission_answered(request)

    def elicitation(self, key: str, content: dict[str, Any]) -> dict[str, str] | None:
        """Answer elicitation ``key`` as a click says; the kernel's errors for refused values."""
        found = self.state.elicitations.get(key)
        if found is None:
            self.state.diagnose("view-action-error", f"no elicitation {key!r} to answer")
            return None
        try:
            errors = answer_click(found, content, self._dismiss)
        except (ValueError, RuntimeError) as exc:
            self.state.diagnose("view-action-error", str(exc))
            return None
        if errors is None and not found.pending:
            self._elicitation_answered(found)
        return errors

    def _elicitation_answered(self, elicitation: Any) -> None:
        """A bare state has no desk to tell it: tell its observers here (once)."""
        times = self.state.elicitation_times.get(elicitation.key)
        if times is not None and times[1] is None:
            self.state.elicitation_changed(elicitation)

    def _dismiss(self, key: str) -> bool:
        """A waiting URL card closed by the user (a bare state: the state is told here)."""
        found = self.state.elicitations.get(key)
        if found is None or not found.dismiss():
            return False
        self.state.elicitation_changed(found, ("dismissed",))
        return True

    def cancel_turn(self, turn: Any = None) -> None:
        """Stop the current turn (no-op without a session)."""

    def cancel_tool_call(self, tool_call_id: str, session_id: str | None = None) -> None:
        """Cancel one tool call (no-op without a session)."""

    def cancel_terminal(self, terminal_id: str, session_id: str | None = None) -> None:
        """Cancel one terminal (no-op without a session)."""

    def cancel_subagent(self, session_id: str) -> None:
        """Cancel one subagent's work (no-op without a session)."""

    def terminal_input(self, terminal_id: str, data: bytes) -> None:
        """Keystrokes typed into an interactive terminal (no-op without a session)."""

    def terminal_resize(self, terminal_id: str, cols: int, rows: int) -> None:
        """The size an interactive terminal is shown at (no-op without a session)."""

    def interactive_terminals(self) -> list[str]:
        """The ids of the terminals that accept input (none without a session)."""
        return []


class SessionActions(Actions):
    """Button handlers for a live session."""

    def __init__(self, session: Any) -> None:
        super().__init__(session.state)
        self.session = session

    def _answered(self, request: Any) -> None:
        """The session's permission desk already told the state."""

    def _elicitation_answered(self, elicitation: Any) -> None:
        """The session's elicitation desk tells the state."""

    def _dismiss(self, key: str) -> bool:
        """A waiting URL card closed by the user: the session's desk."""
        return bool(self.session.dismiss_elicitation(key))

    def cancel_turn(self, turn: Any = None) -> None:
        """Cancel the session's current turn (``turn``: only while that turn is the current one and runs)."""

        async def cancel() -> None:
            if turn is None or (self.session.turn is turn and not turn.ended):
                await self.session.cancel()

        self._spawn(cancel)

    def cancel_tool_call(self, tool_call_id: str, session_id: str | None = None) -> None:
        """Ask the agent to cancel one tool call (of subagent ``session_id`` when given)."""
        self._on(session_id, "cancel_tool_call", tool_call_id)

    def cancel_terminal(self, terminal_id: str, session_id: str | None = None) -> None:
        """Ask the agent to cancel one terminal (of subagent ``session_id`` when given)."""
        self._on(session_id, "cancel_terminal", terminal_id)

    def _on(self, session_id: str | None, method: str, item_id: str) -> None:
        """Call ``method(item_id)`` of the session, or of its subagent ``session_id``, as a task."""
        owner = self.session if session_id in (None, self.session.session_id) else None
        owner = owner or find_subagent(self.session, str(session_id))
        call = getattr(owner, method, None)
        if call is None:
            self.state.diagnose("view-action-error", f"{method}: session {session_id!r} cannot do it")
            return
        self._spawn(lambda: call(item_id))

    def cancel_subagent(self, session_id: str) -> None:
        """Cancel subagent ``session_id`` (a child of this session, or deeper): ``Subagent.cancel()``."""
        child = find_subagent(self.session, session_id)
        if child is None:
            self.state.diagnose("view-action-error", f"no subagent {session_id!r} to cancel")
            return
        self._spawn(child.cancel)

    def terminal_input(self, terminal_id: str, data: bytes) -> None:
        """Send keystrokes to a terminal the client runs."""
        self.session.terminal_input(terminal_id, data)

    def terminal_resize(self, terminal_id: str, cols: int, rows: int) -> None:
        """Resize a terminal the client runs."""
        self.session.terminal_resize(terminal_id, cols, rows)

    def interactive_terminals(self) -> list[str]:
        """The session's running terminals that accept input (a subagent's: none)."""
        running = getattr(self.session, "interactive_terminals", None)
        return list(running()) if callable(running) else []

    def _spawn(self, make: Callable[[], Awaitable[Any]]) -> None:
        async def run() -> None:
            try:
                await make()
            except Exception as exc:
                self.state.diagnose("view-action-error", f"{exc}")

        asyncio.get_running_loop().create_task(run())


def find_subagent(source: Any, session_id: str) -> Any:
    """The ``Subagent`` ``session_id`` among ``source``'s subagents and theirs (None if none)."""
    todo = [source]
    while todo:
        children = getattr(todo.pop(), "subagents", None) or {}
        if session_id in children:
            return children[session_id]
        todo.extend(children.values())
    return None


def actions_for(session: Any, state: SessionState) -> Actions:
    """Session actions when there is a session, else state-only actions."""
    return SessionActions(session) if session is not None else Actions(state)
