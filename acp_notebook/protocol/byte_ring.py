"""The newest ``cap`` bytes of a stream, held in fixed-size chunks; offsets count every byte. No I/O.

Storage is a deque of immutable ``bytes`` chunks of exactly ``chunk_size`` bytes, then a growing
``bytearray`` tail (shorter than a chunk). Appending copies each byte at most twice (into the tail,
then into its frozen chunk; a 64 KiB ``bytes`` that lands on a chunk boundary is kept as is) and
never moves held bytes; when the cap is passed, whole chunks fall off the front, so fewer than
``cap + chunk_size`` bytes are ever stored (plus the appended data while it is copied in). Only a
cap smaller than one chunk trims the tail in place. Reading from an offset joins only the chunks
from that offset on.

Offsets are absolute in the stream: ``end`` counts every byte appended since the last ``clear``,
``base`` is the offset of the oldest byte still held (``end - base <= cap``).
"""

from __future__ import annotations

from collections import deque
from itertools import islice

CHUNK_SIZE = 64 * 1024


class ByteRing:
    """The newest ``cap`` bytes appended, readable from any absolute offset without a full copy."""

    __slots__ = ("_chunks", "_min_base", "_start", "_tail", "cap", "chunk_size", "end")

    def __init__(self, cap: int, chunk_size: int = CHUNK_SIZE) -> None:
        if chunk_size < 1:
            raise ValueError("chunk_size must be at least 1")
        self.cap = max(0, cap)
        self.chunk_size = chunk_size
        self.end = 0
        self._min_base = 0  # ``base`` never goes back (a raised cap brings no dropped byte back)
        self._start = 0  # absolute offset of the first stored byte (the front chunk's first)
        self._chunks: deque[bytes] = deque()
        self._tail = bytearray()

    @property
    def base(self) -> int:
        """Absolute offset of the oldest byte held (how many bytes fell off the front)."""
        return max(self._min_base, self.end - self.cap)

    @property
    def held(self) -> int:
        """How many bytes are held (at most ``cap``)."""
        return self.end - self.base

    @property
    def stored(self) -> int:
        """How many bytes the storage keeps (``held`` plus less than one chunk already dropped)."""
        return self.end - self._start

    def clear(self) -> None:
        """Forget every byte and start the stream again at offset 0."""
        self.end = self._min_base = self._start = 0
        self._chunks.clear()
        self._tail = bytearray()

    def set_cap(self, cap: int) -> None:
        """Hold the newest ``cap`` bytes from now on (a smaller cap drops the oldest at once)."""
        self._min_base = self.base
        self.cap = max(0, cap)
        self._trim()

    def append(self, data: bytes | bytearray | memoryview) -> None:
        """Append ``data``; the oldest bytes past ``cap`` fall off the front."""
        if type(data) is not bytes:  # a bytearray or memoryview: count and copy bytes, not items
            data = memoryview(data).cast("B")
        size = len(data)
        if not size:
            return
        self.end += size
        if size >= self.cap:  # nothing held survives: keep only the data's newest cap bytes
            self._chunks.clear()
            self._tail = bytearray()
            self._min_base = self._start = self.end - self.cap
            with memoryview(data) as view:
                self._push(view[size - self.cap :], data)
            return
        if len(self._tail) + size < self.chunk_size:  # the common case: a small append
            self._tail += data
        else:
            with memoryview(data) as view:
                self._push(view, data)
        if self.end - self._start > self.cap:
            self._trim()

    def read_from(self, offset: int) -> bytes:
        """The held bytes from absolute ``offset`` on (from ``base`` if ``offset`` fell off)."""
        offset = max(offset, self.base)
        if offset >= self.end:
            return b""
        index, skip = divmod(offset - self._start, self.chunk_size)
        count = len(self._chunks)
        if index >= count:  # only the tail
            with memoryview(self._tail) as tail:
                return bytes(tail[skip:])
        parts: list[bytes | bytearray | memoryview] = list(islice(reversed(self._chunks), count - index))
        parts.reverse()
        parts[0] = memoryview(parts[0])[skip:]  # an immutable chunk: the view copies nothing
        parts.append(self._tail)
        return b"".join(parts)

    def _push(self, view: memoryview, source: object) -> None:
        """Copy ``view`` into the tail, freezing each full chunk into the deque."""
        size, chunk = len(view), self.chunk_size
        tail = self._tail
        if len(tail) + size < chunk:
            tail += view
            return
        pos = chunk - len(tail)
        if tail:
            tail += view[:pos]
            self._chunks.append(bytes(tail))
        elif type(source) is bytes and len(source) == size == chunk:
            self._chunks.append(source)  # exactly one chunk of immutable bytes: keep it, no copy
        else:
            self._chunks.append(bytes(view[:chunk]))
        while size - pos >= chunk:
            self._chunks.append(bytes(view[pos : pos + chunk]))
            pos += chunk
        self._tail = bytearray(view[pos:])

    def _trim(self) -> None:
        """Drop the front chunks that hold only bytes older than ``base``."""
        base, chunk = self.base, self.chunk_size
        while self._chunks and base >= self._start + chunk:
            self._chunks.popleft()
            self._start += chunk
        if not self._chunks and base > self._start:  # everything is in the tail (cap < chunk)
            del self._tail[: base - self._start]
            self._start = base
