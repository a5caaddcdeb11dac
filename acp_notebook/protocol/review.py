"""A write held for review: old text, proposed text, its hunks and the user's decisions (pure).

Hunks come from ``difflib.SequenceMatcher`` over lines that keep their endings (``\\n``, ``\\r\\n``,
none on a last line), so merging is exact: ``merge`` takes each accepted hunk's new lines and each
rejected hunk's old lines, and every byte between hunks is the old text's. ``Review`` records the
decisions; when every hunk is decided it calls ``on_complete`` once (the client writes and answers
the agent, then calls ``finish``). Nothing here does I/O.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

ACCEPTED, REJECTED = "accepted", "rejected"
PENDING, WRITTEN, PARTIAL = "pending", "written", "partial"
CANCELLED, CONFLICT, FAILED = "cancelled", "conflict", "failed"
CONTEXT = 3  # lines shown around each hunk
_LINE = re.compile(r"[^\n]*\n|[^\n]+\Z")


class ReviewClosed(RuntimeError):
    """Raised when a review that is no longer pending is decided again."""


def split_lines(text: str) -> list[str]:
    """``text`` as lines that keep their endings; ``"".join`` gives ``text`` back."""
    return _LINE.findall(text)


@dataclass
class Hunk:
    """One contiguous change: ``old_lines`` at ``old_start`` become ``new_lines`` (0-based)."""

    index: int
    old_start: int
    old_lines: tuple[str, ...]
    new_start: int
    new_lines: tuple[str, ...]
    before: tuple[str, ...] = ()  # unchanged context lines just above
    after: tuple[str, ...] = ()  # and just below
    decision: str | None = None

    @property
    def header(self) -> str:
        """The unified-diff ``@@ -a,b +c,d @@`` line of this hunk (with its context)."""
        old_from, new_from = self.old_start - len(self.before), self.new_start - len(self.before)
        ctx = len(self.before) + len(self.after)
        old_n, new_n = len(self.old_lines) + ctx, len(self.new_lines) + ctx
        return f"@@ -{_range(old_from, old_n)} +{_range(new_from, new_n)} @@"

    def patch_lines(self) -> list[str]:
        """The hunk as unified-diff lines (``@@`` header first, no line endings)."""
        out = [self.header]
        for prefix, lines in (
            (" ", self.before),
            ("-", self.old_lines),
            ("+", self.new_lines),
            (" ", self.after),
        ):
            for line in lines:
                out.append(prefix + line.rstrip("\r\n"))
                if not line.endswith("\n"):
                    out.append("\\ No newline at end of file")
        return out


def _range(start: int, count: int) -> str:
    first = start + 1 if count else start
    return f"{first},{count}" if count != 1 else str(first)


def compute_hunks(old: str, new: str, context: int = CONTEXT) -> list[Hunk]:
    """The changes from ``old`` to ``new``, one hunk per contiguous run of changed lines."""
    a, b = split_lines(old), split_lines(new)
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    changes = [op for op in matcher.get_opcodes() if op[0] != "equal"]
    hunks: list[Hunk] = []
    for n, (_tag, i1, i2, j1, j2) in enumerate(changes):
        above = changes[n - 1][2] if n else 0  # context never reaches into a neighbour hunk
        below = changes[n + 1][1] if n + 1 < len(changes) else len(a)
        before = tuple(a[max(i1 - context, above) : i1])
        after = tuple(a[i2 : min(i2 + context, below)])
        hunks.append(Hunk(n, i1, tuple(a[i1:i2]), j1, tuple(b[j1:j2]), before, after))
    return hunks


def merge(old: str, hunks: Iterable[Hunk]) -> str:
    """``old`` with every accepted hunk applied (rejected and undecided ones left as they were)."""
    a, out, pos = split_lines(old), [], 0
    for hunk in sorted(hunks, key=lambda h: h.old_start):
        out += a[pos : hunk.old_start]
        end = hunk.old_start + len(hunk.old_lines)
        out += hunk.new_lines if hunk.decision == ACCEPTED else a[hunk.old_start : end]
        pos = end
    return "".join(out + a[pos:])


def unified_patch(path: str, old: str | None, hunks: Iterable[Hunk]) -> str:
    """A git-style patch of ``hunks`` (what diff2html draws)."""
    head = ["--- /dev/null" if old is None else f"--- a/{path.lstrip('/')}", f"+++ b/{path.lstrip('/')}"]
    return "\n".join(head + [line for hunk in hunks for line in hunk.patch_lines()]) + "\n"


class Review:
    """A proposed write, decided hunk by hunk (``accept``/``reject``); ``status`` says what happened."""

    def __init__(
        self,
        key: str,
        path: str,
        old_text: str | None,
        proposed_text: str,
        *,
        on_complete: Callable[[Review], None] | None = None,
        on_change: Callable[[Review], None] | None = None,
    ) -> None:
        self.key, self.path = key, path
        self.old_text, self.proposed_text = old_text, proposed_text
        self.hunks = compute_hunks(old_text or "", proposed_text)
        if not self.hunks and old_text is None:  # a new empty file: one hunk decides its creation
            self.hunks = [Hunk(0, 0, (), 0, ())]
        self.status = PENDING
        self.message: str | None = None
        self.on_complete, self.on_change = on_complete, on_change

    @property
    def pending(self) -> bool:
        """True until the review is written, rejected, cancelled or refused."""
        return self.status == PENDING

    @property
    def creates(self) -> bool:
        """True when the file did not exist when the agent asked to write it."""
        return self.old_text is None

    @property
    def undecided(self) -> list[Hunk]:
        """The hunks still waiting for a decision."""
        return [h for h in self.hunks if h.decision is None]

    def merged(self) -> str:
        """The text that accepting the current decisions writes."""
        return merge(self.old_text or "", self.hunks)

    def patch(self) -> str:
        """The proposed change as one unified patch."""
        return unified_patch(self.path, self.old_text, self.hunks)

    def accept(self, hunks: Any = None) -> str:
        """Accept ``hunks`` (indices or ``Hunk``s; default: every undecided one); returns ``status``."""
        return self._decide(ACCEPTED, hunks)

    def reject(self, hunks: Any = None) -> str:
        """Reject ``hunks`` (indices or ``Hunk``s; default: every undecided one); returns ``status``."""
        return self._decide(REJECTED, hunks)

    def _decide(self, decision: str, hunks: Any) -> str:
        if not self.pending:
            raise ReviewClosed(f"review {self.key} of {self.path} is already {self.status}")
        chosen = self.undecided if hunks is None else self._pick(hunks)
        for hunk in chosen:
            hunk.decision = decision
        self._changed()
        if not self.undecided and self.on_complete is not None:
            self.on_complete(self)
        return self.status

    def _pick(self, hunks: Any) -> list[Hunk]:
        items = [hunks] if isinstance(hunks, (int, Hunk)) else list(hunks)
        picked = []
        for item in items:
            index = item.index if isinstance(item, Hunk) else item
            if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < len(self.hunks):
                raise ValueError(f"no hunk {item!r} in review {self.key} (hunks 0..{len(self.hunks) - 1})")
            picked.append(self.hunks[index])
        return picked

    def finish(self, status: str, message: str | None = None) -> None:
        """Record what became of the review (the client calls it once it wrote or answered)."""
        self.status, self.message = status, message
        self._changed()

    def _changed(self) -> None:
        if self.on_change is not None:
            self.on_change(self)

    def __repr__(self) -> str:
        decided = len(self.hunks) - len(self.undecided)
        return f"<Review {self.key} {self.path} {self.status} {decided}/{len(self.hunks)} hunks decided>"
