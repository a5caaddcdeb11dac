"""Small typed snapshots of the live client, for views and reports (no client objects leak)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class AgentSummary:
    """Who the agent is and whether it still runs."""

    name: str | None
    title: str | None
    version: str | None
    protocol: int
    pid: int | None
    closed: bool
    exit_code: int | None
    stderr: tuple[str, ...] = ()
    stdout: tuple[str, ...] = ()  # lines it printed on stdout that were not JSON
    stdout_partial: str | None = None  # a last line without a newline, after a quiet time
    stderr_count: int = 0  # stderr lines seen in all: ``stderr`` holds the last of them
    auth: dict[str, Any] | None = None  # the login status it reported: {"kind", "label"}, no identity
    stopped: bool = False  # closed by the client (``agent.close()``, ``%acp stop``), not died


@dataclass(frozen=True, slots=True)
class SessionSummary:
    """One session as a view's header shows it."""

    session_id: str | None
    cwd: str | None
    agent: AgentSummary
    run_state: str
    running: bool
    queued: int
    usage: dict[str, Any] | None = None
    last_error: Any = None
    extras: dict[str, Any] = field(default_factory=dict)
