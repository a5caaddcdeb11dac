"""Recording an agent's traffic: a bounded in-memory ring, and a trace file when asked.

Every line the connection sends or receives (``Connection.taps``) and every stderr line becomes
one entry of the trace format (``protocol.trace``), already redacted (an elicitation's URL kept
as ``scheme://host/path``, a secret-looking form field's value blanked: ``elicitation_records``).
A line is not decoded again here: the connection hands over the JSON it decoded (or encoded), so
an entry holds the very objects the client handled (read-only for both: the reducer never
mutates what it is given). The ``Ring`` keeps the last ``RING_ENTRIES`` entries for views and
tables (a very long line is kept as a stub naming its method and id); the ``Recorder`` writes each
one to the trace file as it comes, flushed, so memory stays bounded and a crash loses nothing
already seen.
"""

from __future__ import annotations

import os
import time
from collections import deque
from collections.abc import Callable
from typing import IO, Any

from .._version import __version__
from ..protocol import trace
from ..protocol.depth import Decoded
from ..protocol.elicitation_records import Redactor

RING_ENTRIES = 5_000
RING_LINE_BYTES = 256 * 1024  # a longer line is kept in the ring as a stub (the file has it whole)


class Ring:
    """The last ``size`` entries, oldest first; ``seen`` counts every entry ever added."""

    def __init__(self, size: int = RING_ENTRIES) -> None:
        self.entries: deque[dict[str, Any]] = deque(maxlen=size)
        self.seen = 0

    def add(self, entry: dict[str, Any], size: int) -> None:
        """Keep one entry, its ``size`` added (a stub instead of a message over ``RING_LINE_BYTES``);
        the ring owns ``entry`` from now on."""
        self.seen += 1
        if size > RING_LINE_BYTES and entry.get("kind") == "message":
            entry = {**entry, "message": _stub(entry["message"]), "truncated": True}
        entry["size"] = size
        self.entries.append(entry)

    def __len__(self) -> int:
        return len(self.entries)

    def list(self, session_id: str | None = None) -> list[dict[str, Any]]:
        """The kept entries; with ``session_id``, only those of that session."""
        if session_id is None:
            return list(self.entries)
        return [e for e in self.entries if e.get("session") == session_id]


def _stub(message: Any) -> Any:
    if not isinstance(message, dict):
        return {"batch": len(message)} if isinstance(message, list) else None
    return {k: message[k] for k in ("jsonrpc", "id", "method") if k in message}


class Recorder:
    """Writes a trace file: the header at once, then one flushed line per entry."""

    def __init__(self, path: str | os.PathLike, command: list[str] | None) -> None:
        self.path = os.fspath(path)
        self._file: IO[str] | None = open(self.path, "w", encoding="utf-8")  # noqa: SIM115
        self.write(trace.header(__version__, command))

    def write(self, entry: dict[str, Any]) -> None:
        """Append one line (dropped once closed)."""
        if self._file is not None:
            self._file.write(trace.dumps(entry) + "\n")
            self._file.flush()

    def close(self) -> None:
        """Close the file (safe twice)."""
        if self._file is not None:
            self._file.close()
            self._file = None


class Traffic:
    """An agent's traffic: each line once, redacted, to the ring and the recorder (if any)."""

    def __init__(
        self,
        command: list[str] | None = None,
        record: str | os.PathLike | None = None,
        *,
        ring: int = RING_ENTRIES,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.command = command  # the agent's argv (a trace header names it)
        self.ring = Ring(ring)
        self.recorder = Recorder(record, command) if record is not None else None
        self._clock, self._start = clock, clock()
        self._tagger = trace.SessionTagger()
        self._elicitations = Redactor()
        self.listeners: list[Callable[[], None]] = []  # told after each entry (X-ray views)
        self._deciders: dict[Any, str] = {}  # permission request id -> who answers it

    def note_decider(self, request_id: Any, who: str) -> None:
        """The answer about to be sent to permission request ``request_id`` was decided by ``who``."""
        self._deciders[trace.id_key(request_id)] = who

    def line(self, direction: str, data: bytes, plain: Decoded | None = None) -> None:
        """A connection tap: one line sent (``out``) or received (``in``); ``plain`` is its JSON
        when the connection already has it (the line is then not decoded again)."""
        entry = trace.decode(direction, self._clock() - self._start, data, plain)
        self._tagger.tag(entry)
        self._elicitations.entry(entry)
        message = entry.get("message")
        if self._deciders and direction == "out" and isinstance(message, dict) and "method" not in message:
            who = self._deciders.pop(trace.id_key(message.get("id")), None)
            if who is not None:
                entry["decided_by"] = who
        self._add(entry, len(data))

    def stderr(self, text: str) -> None:
        """One line of the agent's stderr."""
        self._add(trace.stderr(self._clock() - self._start, text), len(text))

    def _add(self, entry: dict[str, Any], size: int) -> None:
        if self.recorder is not None:
            self.recorder.write(entry)
        self.ring.add(entry, size)  # after the file: ``size`` is the ring's, not the trace's
        if self.listeners:
            for listener in list(self.listeners):
                listener()

    def close(self) -> None:
        """Stop writing the trace file (the ring stays)."""
        if self.recorder is not None:
            self.recorder.close()
