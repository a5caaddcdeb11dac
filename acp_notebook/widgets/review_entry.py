"""The view entry of a write held for review, and what the page's review buttons send (no I/O).

The entry (``kind: "review"``, format in ``js/WIRE.md``) lists the hunks, each with its own small
patch for diff2html and its decision; ``actionable`` is False once the review is over. ``decide``
applies one ``{"type": "review", ...}`` message from the page to the review it names.
"""

from __future__ import annotations

from typing import Any

from ..protocol.review import Review, unified_patch
from ..protocol.state import SessionState

DECISIONS = ("accept", "reject")


def review_entry(index: int, review: Review) -> dict[str, Any]:
    """The entry for file write ``index`` while (and after) it is held for review."""
    operation = "add" if review.creates else "modify"
    hunks = [
        {
            "index": hunk.index,
            "decision": hunk.decision,
            "added": len(hunk.new_lines),
            "removed": len(hunk.old_lines),
            "patch": unified_patch(review.path, review.old_text, [hunk]),
        }
        for hunk in review.hunks
    ]
    return {
        "kind": "review",
        "index": index,
        "key": review.key,
        "path": review.path,
        "operation": operation,
        "status": review.status,
        "message": review.message,
        "actionable": review.pending,
        "hunks": hunks,
    }


def review_of(state: SessionState, index: Any) -> Review:
    """The review of file write ``index``, else ``ValueError``."""
    writes = state.file_writes
    if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < len(writes):
        raise ValueError(f"review message names no file write: {index!r}")
    review = writes[index].get("review")
    if not isinstance(review, Review):
        raise ValueError(f"file write {index} is not held for review")
    return review


def decide(state: SessionState, content: dict[str, Any]) -> None:
    """Apply ``{"type": "review", "index", "decision": "accept"|"reject", "hunk": int|null}``."""
    decision, hunk = content.get("decision"), content.get("hunk")
    if decision not in DECISIONS:
        raise ValueError(f"review decision must be accept or reject, not {decision!r}")
    if hunk is not None and (isinstance(hunk, bool) or not isinstance(hunk, int)):
        raise ValueError(f"review hunk must be an index or null, not {hunk!r}")
    review = review_of(state, content.get("index"))
    if not review.pending:
        return  # a click racing the end of the review (cancelled, or decided from code)
    (review.accept if decision == "accept" else review.reject)(hunk)
