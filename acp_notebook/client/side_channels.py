"""What an agent says besides the protocol: stdout lines that are not JSON, and its stderr.

Non-JSON stdout lines (a login URL and prompt, stray logs) are kept whole, up to a bound, for the
view. Each stderr line goes to the traffic log, and a line matching one of the known problems in
``agents.json`` (``_hints``) adds, once, a diagnostic saying what to do.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable

from ..protocol.diagnostics import Diagnostic
from .agents import stderr_hints
from .recorder import Traffic

HINTS = stderr_hints()  # known stderr lines that need the user's action
STDOUT_LINES = 50  # non-JSON stdout lines kept
STDOUT_LINE_CHARS = 16_384  # each kept whole up to this (a login URL is ~600)


class SideChannels:
    """One agent's stdout noise and stderr."""

    def __init__(self, traffic: Traffic, diagnose: Callable[[Diagnostic], None]) -> None:
        self.traffic, self._diagnose = traffic, diagnose
        self.stdout_lines: deque[str] = deque(maxlen=STDOUT_LINES)
        self._hinted: set[str] = set()
        self.stderr_count = 0  # stderr lines seen: the number of the next one (``Agent.stderr_line``)

    def stdout(self, text: str) -> None:
        """A stdout line that is not JSON."""
        self.stdout_lines.append(text[:STDOUT_LINE_CHARS])

    def stderr(self, text: str) -> None:
        """A stderr line."""
        self.stderr_count += 1
        self.traffic.stderr(text)
        for needle, advice in HINTS:
            if needle in text and needle not in self._hinted:
                self._hinted.add(needle)
                self._diagnose(Diagnostic("agent-hint", advice, text[:300]))
