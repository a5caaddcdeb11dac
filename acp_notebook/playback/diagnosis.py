"""``doctor(source)``: the protocol doctor (``doctor``) over a session, a replay or a trace.

The analysis is pure; this front only finds the entries. ``index`` in each finding is the
position of its entry in the list read:

- a trace path (``str`` or ``os.PathLike``; a shipped trace by its bare name): the entries
  after the header line;
- a ``Replay``: ``replay.entries`` (all of them, whatever its ``position``);
- a list of entries (the trace format);
- a live ``Session``: its agent's ring (``session.traffic_log``), which also holds the
  ``initialize`` exchange and the non-JSON stdout lines that ``session.traffic`` leaves out;
  only the findings about that session, its subagents (the sessions it announced, and theirs:
  ``protocol.session_tree``) or no session (stdout, long lines) are kept;
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
from ..protocol.session_tree import tree_of
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
    ring = getattr(getattr(source, "traffic_log", None), "ring", None)
    agent = getattr(source, "agent", None)
    if isinstance(session_id, str) and (ring is not None or hasattr(agent, "traffic")):
        entries = ring.list() if ring is not None else list(agent.traffic)
        return _of_session(entries, session_id, version)
    if hasattr(source, "traffic"):
        return diagnose(list(source.traffic), version)
    raise TypeError(f"doctor() reads a Session, a Replay, a trace path or a list of entries, not {source!r}")


def _of_session(entries: list[dict[str, Any]], session_id: str, version: int | None) -> Findings:
    """The findings about ``session_id``, its subagents, or no session at all."""
    family = tree_of(entries).family(session_id)
    found = diagnose(entries, version)
    return Findings(f for f in found if entries[f.index].get("session") in (None, *family))


def _version(source: Any) -> int | None:
    """The source's negotiated version, if it has one yet (an Agent raises before ``initialize``)."""
    version = None
    with contextlib.suppress(Exception):
        version = source.protocol_version
    return version if isinstance(version, int) and version > 0 else None
