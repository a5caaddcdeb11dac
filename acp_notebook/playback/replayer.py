"""``replay(path)``: a recorded trace as a session you can scrub — seek, step, play, view.

``Replay`` is ``trace_replay.TraceReplay`` with this client's ``Agent`` and a ``view()``: the
session view under a scrubber (``replay_view``), optionally with its protocol X-ray.
"""

from __future__ import annotations

import os
from typing import Any

from .. import traces
from ..client.agent import Agent
from ..protocol import trace
from ..protocol.elicitation_records import Redactor
from .trace_replay import TraceReplay


class Replay(TraceReplay):
    """A recorded trace, re-enacted up to ``position`` entries; ``state`` is the state there."""

    def __init__(
        self,
        header: dict[str, Any],
        entries: list[dict[str, Any]],
        path: str | None = None,
        session_id: str | None = None,
    ) -> None:
        super().__init__(header, entries, Agent, path, session_id)

    def view(self, *, xray: bool = False, **options: Any) -> Any:
        """The session view of this replay under a scrubber (slider, play/pause, step, speed);
        ``xray=True`` adds the protocol X-ray beside it (picking a message seeks there)."""
        from .replay_view import ReplayView

        return ReplayView(self, xray=xray, **options)


def replay(path: str | os.PathLike, position: int | None = None) -> Replay:
    """Open a recorded trace (``start_agent(record=...)``) for replay, at ``position`` (default:
    the end). A shipped trace can be named without its folder: ``replay("demo_v2.jsonl")``. Its
    elicitations are read as records keep them (``elicitation_records``), whoever wrote it."""
    file = traces.resolve(path)
    header, entries = trace.parse(file.read_text(encoding="utf-8").splitlines())
    redactor = Redactor()  # a trace another client wrote may hold an elicitation URL's query
    for entry in entries:
        redactor.entry(entry)
    rep = Replay(header, entries, str(file))
    rep.seek(len(rep) if position is None else position)
    return rep
