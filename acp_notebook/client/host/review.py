"""v1 writes held for review (``FilePolicy(review=True)``): the agent's request waits for the user.

``write`` checks the request like any write, records a ``Review`` (``protocol.review``) in the
state as a ``file_write`` item and waits. When the last hunk is decided, ``_complete`` runs at
once, in the caller of ``accept``/``reject``: nothing accepted answers the agent with
``REVIEW_REJECTED``; a file that changed on disk since the request arrived is never overwritten
(``REVIEW_CONFLICT``: the agent should read it again); else the merged text is written through
``FileAccess.put`` and the agent gets ``{}``. ``cancel_all`` answers every pending review
rejected (the turn was cancelled, the session closed).
"""

from __future__ import annotations

import asyncio
from typing import Any

from ...protocol import review as rv
from ...protocol.jsonrpc import INTERNAL_ERROR
from ...protocol.state import SessionState
from ..errors import RpcError
from .fs import FileAccess, read_or_none

REVIEW_REJECTED = -32003  # the user rejected every hunk (or the turn was cancelled first)
REVIEW_CONFLICT = -32004  # the file changed on disk while the write waited: nothing written


class ReviewDesk:
    """The reviews of one session's writes."""

    def __init__(self, state: SessionState, files: FileAccess) -> None:
        self.state, self.files = state, files
        self.reviews: list[rv.Review] = []
        self._waiting: dict[str, tuple[asyncio.Future, asyncio.AbstractEventLoop, str, int]] = {}

    @property
    def pending(self) -> list[rv.Review]:
        """The reviews still waiting for decisions, oldest first."""
        return [r for r in self.reviews if r.pending]

    async def write(self, params: dict[str, Any]) -> dict[str, Any]:
        """Serve ``fs/write_text_file`` once the user decided; raises ``RpcError`` if nothing is written."""
        path, real, content = self.files.write_target(params)
        old = read_or_none(real)
        if old == content:
            return {}  # nothing would change: nothing to review
        loop = asyncio.get_running_loop()
        future: asyncio.Future = loop.create_future()
        review = rv.Review(f"review_{len(self.reviews) + 1}", path, old, content)
        self.reviews.append(review)
        index = self.state.record_review(review)
        self._waiting[review.key] = (future, loop, real, index)
        review.on_change = lambda _r: self.state.file_write_changed(index)
        review.on_complete = self._complete
        return await future

    def _complete(self, review: rv.Review) -> None:
        waiting = self._waiting.pop(review.key, None)
        if waiting is None:
            return
        future, loop, real, index = waiting
        if not any(h.decision == rv.ACCEPTED for h in review.hunks):
            message = f"the user rejected the change to {review.path}; the file was not written"
            review.finish(rv.REJECTED, message)
            return _settle(future, loop, RpcError(REVIEW_REJECTED, message))
        if read_or_none(real) != review.old_text:
            message = (
                f"{review.path} changed on disk while the write waited for review; it was not "
                "written (read the file again and resend the change)"
            )
            review.finish(rv.CONFLICT, message)
            self.state.diagnose("review-conflict", message)
            return _settle(future, loop, RpcError(REVIEW_CONFLICT, message))
        merged = review.merged()
        try:
            self.files.put(real, merged)
        except OSError as exc:
            message = f"write: {exc.strerror or exc}: {review.path} not written"
            review.finish(rv.FAILED, message)
            return _settle(future, loop, RpcError(INTERNAL_ERROR, message))
        self.state.file_writes[index]["newText"] = merged  # the item says what is on disk now
        all_in = all(h.decision == rv.ACCEPTED for h in review.hunks)
        review.finish(rv.WRITTEN if all_in else rv.PARTIAL, _written(review, all_in))
        _settle(future, loop, {})

    def cancel_all(self, reason: str = "the turn was cancelled") -> int:
        """Answer every pending review rejected (nothing written); returns how many."""
        count = 0
        for review in self.pending:
            waiting = self._waiting.pop(review.key, None)
            message = f"the user rejected the change to {review.path} ({reason}); the file was not written"
            review.finish(rv.CANCELLED, message)
            if waiting is not None:
                _settle(waiting[0], waiting[1], RpcError(REVIEW_REJECTED, message))
            count += 1
        return count


def _written(review: rv.Review, all_in: bool) -> str:
    if all_in:
        return f"accepted: {review.path} written"
    taken = sum(h.decision == rv.ACCEPTED for h in review.hunks)
    return f"{taken} of {len(review.hunks)} hunks accepted: {review.path} written"


def _settle(future: asyncio.Future, loop: asyncio.AbstractEventLoop, outcome: Any) -> None:
    """Resolve the waiting request from any thread (a notebook may decide from a worker)."""

    def settle() -> None:
        if future.done():
            return
        if isinstance(outcome, BaseException):
            future.set_exception(outcome)
        else:
            future.set_result(outcome)

    try:
        here = asyncio.get_running_loop()
    except RuntimeError:
        here = None
    if here is loop:
        settle()
    elif not loop.is_closed():
        loop.call_soon_threadsafe(settle)
