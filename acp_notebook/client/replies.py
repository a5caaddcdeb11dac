"""Replies to an incoming JSON-RPC batch, sent together as one array (v2 transports page).

The requests of one batch may be answered at different times (a permission waits for a person);
their responses, and the ``-32600`` replies owed for invalid entries, are held until every
request of the batch has its answer, then written as a single array line. A batch of
notifications only gets nothing.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

from ..protocol.depth import Decoded
from ..protocol.jsonrpc import Response, encode_plain


class _Batch:
    __slots__ = ("replies", "waiting")

    def __init__(self, waiting: int, replies: list[Response]) -> None:
        self.waiting, self.replies = waiting, replies


class BatchReplies:
    """The batches whose replies are still being gathered."""

    def __init__(self, write: Callable[[bytes, Decoded | None], None]) -> None:
        self._write = write
        self._open: dict[Any, deque[_Batch]] = {}

    def open(self, request_ids: Sequence[Any], replies: Sequence[Response]) -> None:
        """A batch arrived with these requests and these replies already owed."""
        batch = _Batch(len(request_ids), list(replies))
        for request_id in request_ids:
            self._open.setdefault(request_id, deque()).append(batch)
        self._flush(batch)

    def answer(self, response: Response) -> bool:
        """Hold ``response`` if it answers a batched request (True), else leave it to the caller."""
        waiting = self._open.get(response.id)
        if not waiting:
            return False
        batch = waiting.popleft()
        if not waiting:
            del self._open[response.id]
        batch.replies.append(response)
        batch.waiting -= 1
        self._flush(batch)
        return True

    @property
    def pending(self) -> int:
        """How many batched requests still wait for their answer."""
        return sum(len(q) for q in self._open.values())

    def _flush(self, batch: _Batch) -> None:
        if batch.waiting == 0 and batch.replies:
            self._write(*encode_plain(batch.replies))
            batch.replies = []
