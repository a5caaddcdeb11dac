"""One ``session/update`` into a session's state: normalised by the wire, with the turn runner
told before and after, and the updates an extension implies (``_meta.terminal_output``) applied
too; a malformed extension value is a diagnostic, never an error."""

from __future__ import annotations

from typing import Any

from ..protocol.state import SessionState
from .turn_runner import TurnRunner
from .wire.base import Wire


def apply_update(state: SessionState, wire: Wire, runner: TurnRunner, update: Any) -> None:
    """Apply ``update`` to ``state``."""
    update = wire.normalize_update(update)
    runner.before(update)
    state.apply(update)
    implied = wire.extension_updates(update, _tool_call_meta(state, update))
    for message, value in implied.problems:
        state.diagnose("malformed-extension", message, value)
    for extra in implied.updates:
        state.apply(extra)
    runner.after(update)


def _tool_call_meta(state: SessionState, update: Any) -> Any:
    tc_id = update.get("toolCallId") if isinstance(update, dict) else None
    tc = state.tool_calls.get(tc_id) if isinstance(tc_id, str) else None
    return tc.meta if tc is not None else None
