"""``doctor(source)``: the protocol doctor (``doctor``) over a session, a replay or a trace.

The analysis is pure; this front only finds the entries. ``index`` in each finding is the
position of its entry in the list read:

- a trace path (``str`` or ``os.PathLike``; a shipped trace by its bare name): the entries
  after the header line;
- a ``Replay``: ``replay.entries`` (all of them, whatever its ``position``);
- a list of entries (the trace format);
- a live ``Session``: ``session.agent.traffic``, the agent's ring, which also holds the
  ``initialize`` exchange and the non-JSON stdout lines that ``session.traffic`` leaves out;
  only the findings about that session (or about no session: stdout, long lines) are kept;
- an ``Agent`` (anything with ``traffic``): its traffic.

A ring that has dropped its ``initialize`` answer falls back on the source's
``protocol_version``.
"""

from __future__ import annotations

import contextlib
import os
from typing import Any

from .. import traces
from ..protocol import trace
from .doctor_rules import Findings, diagnose


def doctor(source: Any) -> Findings:
    """The findings about an agent's behaviour in ``source`` (see the module docstring)."""
    if isinstance(source, str | os.PathLike):
        with open(traces.resolve(source), encoding="utf-8") as lines:
            _, entries = trace.parse(lines)
        return diagnose(entries)
    if isinstance(source, list):
        return diagnose(source)
    if isinstance(getattr(source, "entries", None), list) and hasattr(source, "header"):
        return diagnose(source.entries)  # a Replay
    version = _version(source)
    session_id = getattr(source, "session_id", None)
    agent = getattr(source, "agent", None)
    if isinstance(session_id, str) and agent is not None and hasattr(agent, "traffic"):
        entries = list(agent.traffic)
        found = diagnose(entries, version)
        return Findings(f for f in found if entries[f.index].get("session") in (None, session_id))
    if hasattr(source, "traffic"):
        return diagnose(list(source.traffic), version)
    raise TypeError(f"doctor() reads a Session, a Replay, a trace path or a list of entries, not {source!r}")


def _version(source: Any) -> int | None:
    """The source's negotiated version, if it has one yet (an Agent raises before ``initialize``)."""
    version = None
    with contextlib.suppress(Exception):
        version = source.protocol_version
    return version if isinstance(version, int) and version > 0 else None
