"""Splitting a byte stream into newline-terminated lines, with a bound on a line's length.

Pure. ``feed`` chunks in, take ``next_line()`` until it is None. A line longer than ``limit``
bytes is dropped (up to its newline) and reported once by ``next_line`` raising ``ValueError``.
"""

from __future__ import annotations


class LineBuffer:
    """Bytes received so far that do not yet end a line."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._buf = bytearray()
        self._scanned = 0  # no newline before this offset
        self._dropping = False
        self._overlong = False

    def feed(self, data: bytes) -> None:
        """Add received bytes."""
        self._buf += data

    @property
    def pending(self) -> bool:
        """True when bytes of an unfinished line are held."""
        return bool(self._buf) and not self._dropping

    def pending_text(self) -> str:
        """The unfinished line as text."""
        return self._buf.decode("utf-8", "replace")

    def next_line(self) -> bytes | None:
        """The next whole line (with its newline), or None until more bytes arrive."""
        end = self._buf.find(b"\n", self._scanned)
        if end < 0:
            self._scanned = len(self._buf)
            if len(self._buf) > self.limit:
                self._drop()
            return self._report()
        line = bytes(self._buf[: end + 1])
        del self._buf[: end + 1]
        self._scanned = 0
        if self._dropping:  # the end of an overlong line
            self._dropping = False
            return self._report() or self.next_line()
        return line

    def rest(self) -> bytes | None:
        """At the end of the stream: the last line without its newline, if any."""
        rest = bytes(self._buf) if self._buf and not self._dropping else None
        self._buf.clear()
        return rest

    def _drop(self) -> None:
        self._buf.clear()
        self._scanned = 0
        if not self._dropping:
            self._dropping = self._overlong = True

    def _report(self) -> None:
        if self._overlong:
            self._overlong = False
            raise ValueError(f"a line longer than {self.limit} bytes")
        return None
