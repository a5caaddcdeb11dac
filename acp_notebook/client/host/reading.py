"""Read the text of an open regular file within a size cap and a deadline, streaming lines.

``read_text(fd, line, limit, ...)`` returns what ``text.splitlines(keepends=True)[line - 1:][:limit]``
would, joined, but reads only as far as the last line asked for and never holds more than one
chunk of a line it skips: a huge file (or one long line of NULs) costs memory only for the reply.
"""

from __future__ import annotations

import codecs
import os
import time
from collections.abc import Iterator
from typing import Any

CHUNK = 256 * 1024
ENDS = "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"  # every character ``str.splitlines`` ends a line at


class TooLarge(Exception):
    """The reply would pass the size cap."""


class ReadTimeout(Exception):
    """The read passed its deadline."""


def read_text(fd: int, line: Any, limit: Any, cap: int, deadline: float | None = None) -> str:
    """Lines ``line`` (1-based) to ``line + limit - 1`` of ``fd``'s text, or all of it."""
    if not isinstance(line, int) and not isinstance(limit, int):
        return _read_all(fd, cap, deadline)
    start = max(line - 1, 0) if isinstance(line, int) else 0
    count = limit if isinstance(limit, int) and limit >= 0 else None
    return "" if count == 0 else _read_lines(fd, start, count, cap, deadline)


def _read_all(fd: int, cap: int, deadline: float | None) -> str:
    if os.fstat(fd).st_size > cap:
        raise TooLarge
    chunks, size = [], 0
    for chunk in _chunks(fd, deadline):
        size += len(chunk)
        if size > cap:
            raise TooLarge
        chunks.append(chunk)
    return b"".join(chunks).decode("utf-8", errors="replace")


def _read_lines(fd: int, start: int, count: int | None, cap: int, deadline: float | None) -> str:
    out: list[str] = []
    index, size = 0, 0
    for part, done in _parts(fd, deadline):
        if index >= start:
            size += len(part.encode("utf-8", errors="surrogatepass"))
            if size > cap:
                raise TooLarge
            out.append(part)
        index += done
        if done and count is not None and index >= start + count:
            break
    return "".join(out)


def _parts(fd: int, deadline: float | None) -> Iterator[tuple[str, bool]]:
    """The text of ``fd`` in pieces, each with whether it ends a line (as ``splitlines`` cuts)."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    tail = ""  # the last piece of the text so far: whether it ends its line is not known yet
    for chunk in _chunks_then_end(fd, deadline):
        text = decoder.decode(chunk, final=not chunk)
        if not text:
            continue
        if tail:
            if tail.endswith("\r") and text.startswith("\n"):
                tail, text = tail + "\n", text[1:]
            yield tail, tail[-1] in ENDS
        pieces = text.splitlines(keepends=True) or [""]
        for piece in pieces[:-1]:
            yield piece, True
        tail = pieces[-1]
    if tail:
        yield tail, True


def _chunks_then_end(fd: int, deadline: float | None) -> Iterator[bytes]:
    yield from _chunks(fd, deadline)
    yield b""


def _chunks(fd: int, deadline: float | None) -> Iterator[bytes]:
    while chunk := os.read(fd, CHUNK):
        if deadline is not None and time.monotonic() > deadline:
            raise ReadTimeout
        yield chunk
