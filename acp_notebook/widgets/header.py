"""The view header (format: ``js/WIRE.md``, Header), built from the state and the session summary. No I/O.

Agent-provided text (stderr, stdout lines) passes through as data: the browser inserts it as text
(stdout URLs as links, built element by element), never as markup.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..protocol.state import SessionState

if TYPE_CHECKING:
    from ..client.summary import AgentSummary, SessionSummary

STDERR_LINES = 50
STDOUT_LINES = 50
DIAGNOSTICS = 50


def header(
    state: SessionState,
    session: SessionSummary | None = None,
    title: str | None = None,
    interactive_terminals: Sequence[str] = (),
    waiting: Sequence[dict[str, Any]] = (),
    frozen_at: float | None = None,
) -> dict[str, Any]:
    """The view header: who, where, run state, and the expandable extras (``waiting``: the
    subagents' pending requests, ``tree_entries.waiting_list``; ``frozen_at``: a past state's own
    time, at which the page stops its clocks)."""
    agent = session.agent if session is not None else None
    return {
        "title": title or state.session_info.get("title") or "ACP session",
        "agent": agent_info(agent) if agent is not None else None,
        "session_id": session.session_id if session is not None else None,
        "cwd": session.cwd if session is not None else None,
        "run_state": state.run_state,
        "stop_reason": state.stop_reason,
        "stop_error": state.stop_error,
        "running": session.running if session is not None else state.run_state != "idle",
        "queued": session.queued if session is not None else 0,
        "usage": state.usage,
        "mode": state.current_mode_id,
        "auth": _auth(agent, state),
        "commands": list(state.available_commands),
        "config_options": list(state.config_options),
        "diagnostics": [
            {"code": d.code, "message": d.message, "level": d.level} for d in state.diagnostics[-DIAGNOSTICS:]
        ],
        "diagnostic_count": len(state.diagnostics),
        "diagnostic_alerts": sum(d.level != "info" for d in state.diagnostics),
        **_stderr(agent),
        **_stdout(agent),
        "pending_permissions": len(state.pending_permissions),
        "pending_elicitations": len(state.pending_elicitations),
        "waiting": [dict(w) for w in waiting],
        "closed": agent.closed if agent is not None else False,
        "exit_code": agent.exit_code if agent is not None else None,
        "stopped": agent.stopped if agent is not None else False,
        "can_cancel": session is not None,
        "interactive_terminals": [str(t) for t in interactive_terminals],
        "frozen_at": frozen_at,
    }


def state_time(state: SessionState) -> float | None:
    """When ``state`` last saw something, by its own clock: a past state's "now" (None if empty)."""
    times: list[float | None] = [t for tc in state.tool_calls.values() for t in (tc.updated_at, tc.ended_at)]
    times += [m.last_seen for m in state.messages.values()]
    times += [t for term in state.terminals.values() for t in (term.last_seen, term.exited_at)]
    for asked in (state.permission_times, state.elicitation_times):
        times += [t for pair in asked.values() for t in pair]
    return max((t for t in times if t is not None), default=None)


def _stdout(agent: AgentSummary | None) -> dict[str, Any]:
    """The agent's non-JSON stdout: complete lines, and the unterminated last one (a prompt)."""
    if agent is None:
        return {"stdout": [], "stdout_partial": None}
    return {"stdout": list(agent.stdout[-STDOUT_LINES:]), "stdout_partial": agent.stdout_partial or None}


def _stderr(agent: AgentSummary | None) -> dict[str, Any]:
    """The last stderr lines, each cut for the page; ``stderr_from`` numbers them (for "show all")."""
    shown = list(agent.stderr[-STDERR_LINES:]) if agent is not None else []
    seen = agent.stderr_count if agent is not None else 0
    return {
        "stderr": [_clip(line) for line in shown],
        "stderr_from": seen - len(shown) if seen >= len(shown) and shown else None,
        "stderr_cut": [i for i, line in enumerate(shown) if len(line) > SHOWN_LINE_CHARS],
    }


def _auth(agent: AgentSummary | None, state: SessionState) -> dict[str, Any] | None:
    """The agent's login status, ``{"kind", "label"}`` (the agent's word, else the state's copy)."""
    if agent is not None and agent.auth is not None:
        return dict(agent.auth)
    return state.auth_status.to_dict() if state.auth_status is not None else None


def agent_info(agent: AgentSummary) -> dict[str, Any]:
    """Who the agent is: name, title, version, protocol version."""
    return {"name": agent.name, "title": agent.title, "version": agent.version, "protocol": agent.protocol}


SHOWN_LINE_CHARS = 500  # of one stderr line in the header (the page asks for the kept line: ``stderr_line``)


def _clip(line: str) -> str:
    if len(line) <= SHOWN_LINE_CHARS:
        return line
    return f"{line[:SHOWN_LINE_CHARS]}… ({len(line) - SHOWN_LINE_CHARS:,} more characters)"
