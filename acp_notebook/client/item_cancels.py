"""Cancelling one tool call or one terminal (``tool_call/cancel``, ``terminal/cancel``) of a
session or a subagent: only where the item's own ``capabilities.cancel`` allows it (else
``ValueError``, nothing sent), always with the session id the item belongs to."""

from __future__ import annotations

from typing import Any

from ..protocol.patch import cancel_supported
from ..protocol.state import SessionState
from .wire import AgentConnection


async def cancel_tool_call(
    conn: AgentConnection, state: SessionState, session_id: str, tool_call_id: str
) -> Any:
    """Ask the agent to cancel tool call ``tool_call_id`` of session ``session_id``."""
    tc = state.tool_calls.get(tool_call_id)
    if tc is None or not tc.cancellable:
        raise ValueError(f"tool call {tool_call_id!r} does not advertise capabilities.cancel")
    return await conn.cancel_tool_call(session_id, tool_call_id)


async def cancel_terminal(
    conn: AgentConnection, state: SessionState, session_id: str, terminal_id: str
) -> Any:
    """Ask the agent to cancel terminal ``terminal_id`` of session ``session_id``."""
    term = state.terminals.get(terminal_id)
    if term is None or not cancel_supported(term.capabilities):
        raise ValueError(f"terminal {terminal_id!r} does not advertise capabilities.cancel")
    return await conn.cancel_terminal(session_id, terminal_id)
