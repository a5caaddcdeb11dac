"""``export_json``: a session's state and its (already redacted) trace as one JSON document.

Never the environment, never typed secrets: the trace entries are redacted when recorded
(``protocol/trace.py``, ``protocol/elicitation_records.py``), and the agent summary carries only
who the agent is and how it ended. Elicitations (``state.elicitations``: a subagent's are on the
root's) are exported as records keep them: the URL as ``scheme://host/path``, the values an
accepted form sent but a secret-looking field's, blanked — wherever the state quotes them.

Subagents: ``state.subagents`` holds, by child id, what the parent was told (``announced``: the
``subagent_update`` it adds up to) and, for a live session or a replay, the child itself —
``session_id``, ``parent_session_id`` and its own ``state`` (with its own ``subagents``, and so
on down). A bare ``SessionState`` knows its children's announcements only. The ``trace`` holds
the entries of the session and of every subagent under it, in order.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._version import __version__
from ..client.session_tables import members
from ..protocol.elicitation_records import scrub, scrub_for, secret_fields
from ..protocol.state import SessionState
from ..protocol.trace import REDACTED

FORMAT = "acp-notebook-export"
VERSION = 1


@dataclass
class Source:
    """What an export needs from a Session, a SessionState or a Replay."""

    state: SessionState
    summary: Any = None  # a client SessionSummary, when there is a live session
    agent: Any = None  # an AgentSummary
    session_id: str | None = None
    trace: list[dict[str, Any]] | None = None
    children: Any = None  # the live (or replayed) subagents, by id: ``.state``, ``.subagents``


def source_of(source: Any) -> Source:
    """Read a Session, a SessionState or a Replay (duck-typed: no client import here)."""
    if isinstance(source, SessionState):
        feed = source.traffic_source
        return Source(source, trace=list(feed()) if feed is not None else [])
    if hasattr(source, "seek") and hasattr(source, "entries"):  # a Replay
        agent = getattr(source, "agent", None)
        summary = agent.summary() if agent is not None and hasattr(agent, "summary") else None
        session = getattr(source, "session", None)
        session_id = getattr(session, "session_id", None)
        children = getattr(source, "subagents", None)
        return Source(source.state, None, summary, session_id, list(source.entries), children)
    summary = source.summary()
    return Source(
        source.state, summary, summary.agent, source.session_id, _tree_trace(source), source.subagents
    )


def _tree_trace(session: Any) -> list[dict[str, Any]]:
    """The recent entries of ``session`` and of every subagent under it, in order."""
    ids = {m.session_id for m in members(session)}
    return [e for e in session.traffic_log.ring.entries if e.get("session") in ids]


def agent_dict(agent: Any) -> dict[str, Any] | None:
    """Who the agent is (no pid, no environment, no output lines)."""
    if agent is None:
        return None
    fields = ("name", "title", "version", "protocol", "closed", "exit_code")
    return {name: getattr(agent, name, None) for name in fields}


def permission_dict(perm: Any) -> dict[str, Any]:
    return {
        "key": perm.key,
        "request_id": perm.request_id,
        "version": perm.version,
        "title": perm.title,
        "description": perm.description,
        "subject": perm.subject,
        "options": list(perm.options),
        "outcome": perm.outcome,
        "decided_by": perm.decided_by,
    }


def elicitation_dict(e: Any) -> dict[str, Any]:
    """One elicitation as records keep it (no query in its URL, no secret-looking value)."""
    values = e.values
    if isinstance(values, dict):
        secret = secret_fields(e.schema)
        values = {k: REDACTED if k in secret else v for k, v in values.items()}
    out = {
        "key": e.key,
        "request_id": e.request_id,
        "mode": e.mode,
        "message": e.message,
        "session_id": e.session_id,
        "tool_call_id": e.tool_call_id,
        "scope_request": e.scope_request,
        "schema": e.schema,
        "url": e.redacted_url,
        "elicitation_id": e.elicitation_id,
        "status": e.status,
        "action": e.action,
        "values": values,
        "decided_by": e.decided_by,
    }
    return scrub(out, [e.url] if e.url else [])


def state_dict(state: SessionState, children: Any = None) -> dict[str, Any]:
    """The state as plain data; ``children``: its live subagents (each one's state under it)."""
    return {
        "tool_calls": {k: tc.to_dict() for k, tc in state.tool_calls.items()},
        "terminals": {k: t.to_dict() for k, t in state.terminals.items()},
        "messages": [m.to_dict() for m in state.messages.values()],
        "session_messages": [m.to_dict() for m in state.session_messages.values()],
        "plans": {k: p.to_dict() for k, p in state.plans.items()},
        "permissions": [permission_dict(p) for p in state.permissions.values()],
        "elicitations": [elicitation_dict(e) for e in state.elicitations.values()],
        "diagnostics": [
            {"code": d.code, "message": d.message, "level": d.level, "detail": d.detail}
            for d in state.diagnostics
        ],
        "run_state": state.run_state,
        "stop_reason": state.stop_reason,
        "subagents": {k: subagent_dict(info, (children or {}).get(k)) for k, info in state.subagents.items()},
    }


def subagent_dict(info: Any, child: Any) -> dict[str, Any]:
    """One child: what its parent was told and, when known, its own session and state."""
    out: dict[str, Any] = {"announced": info.to_dict()}
    if child is not None:
        out["session_id"], out["parent_session_id"] = child.session_id, child.parent_id
        out["state"] = state_dict(child.state, child.subagents)
    return out


def export_document(source: Any) -> dict[str, Any]:
    """The export as a dict (what ``export_json`` writes)."""
    src = source_of(source)
    return {
        "format": FORMAT,
        "version": VERSION,
        "client_version": __version__,
        "agent": agent_dict(src.agent),
        "session_id": src.session_id,
        "state": scrub_for(state_dict(src.state, src.children), src.state.elicitations.values()),
        "trace": src.trace or [],
    }


def export_json(source: Any, path: str | os.PathLike) -> Path:
    """Write ``source`` (a Session, SessionState or Replay) to ``path`` as JSON; returns the path."""
    out = Path(path)
    text = json.dumps(export_document(source), indent=1, ensure_ascii=False, default=repr)
    out.write_text(text + "\n", encoding="utf-8")
    return out
