"""One flush scheduler per kernel: coalesces view updates under a per-view and a global rate.

Jupyter server silently drops iopub messages above 1,000/s, so every view flush goes through
here: a view flushes at most once per ``view_interval`` (20/s by default), and all views
together spend tokens from one bucket refilled at ``rate`` messages per second (200/s). Views
also get a slower snapshot refresh (after ``snapshot_quiet`` s without changes, or every
``snapshot_every`` s while busy). Time comes from an injectable ``clock``/``call_later``, so
tests drive it without sleeping.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any, Protocol


class Flushable(Protocol):
    """What the scheduler needs from a view."""

    def flush_patch(self) -> int: ...  # messages sent

    def flush_snapshot(self) -> int: ...


def _loop_call_later(delay: float, callback: Callable[[], None]) -> Any:
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return None  # no event loop (a plain script): nothing can show a view; flush later
    return loop.call_later(delay, callback)


class Scheduler:
    """Decides when each view may send, so no burst of updates floods the iopub channel."""

    def __init__(
        self,
        *,
        clock: Callable[[], float] = time.monotonic,
        call_later: Callable[[float, Callable[[], None]], Any] = _loop_call_later,
        view_interval: float = 0.05,
        rate: float = 200.0,
        burst: float = 20.0,
        snapshot_quiet: float = 0.5,
        snapshot_every: float = 2.0,
    ) -> None:
        self.clock, self.call_later = clock, call_later
        self.view_interval, self.rate, self.burst = view_interval, rate, burst
        self.snapshot_quiet, self.snapshot_every = snapshot_quiet, snapshot_every
        self.tokens = burst
        self.sent = 0
        self._refilled = clock()
        self._patches: dict[Flushable, float] = {}  # view -> earliest time it may flush
        self._snapshots: dict[Flushable, tuple[float, float]] = {}  # view -> (last change, last snapshot)
        self._last_patch: dict[Flushable, float] = {}
        self._timer: Any = None
        self._timer_at = float("inf")

    def mark(self, view: Flushable) -> None:
        """``view`` has changes to send."""
        now = self.clock()
        pending = self._snapshots.get(view)
        self._snapshots[view] = (now, pending[1] if pending else now)
        if view in self._patches:
            return  # already due to flush: the timer is armed for it (the hot path)
        self._patches[view] = self._last_patch.get(view, -1e9) + self.view_interval
        self._arm(now)

    def forget(self, view: Flushable) -> None:
        """Drop a closed view."""
        for table in (self._patches, self._snapshots, self._last_patch):
            table.pop(view, None)

    def _refill(self, now: float) -> None:
        self.tokens = min(self.burst, self.tokens + (now - self._refilled) * self.rate)
        self._refilled = now

    def _has_token(self) -> bool:
        return self.tokens >= 1 - 1e-9  # tolerate float error in the refill

    def _spend(self, count: int) -> None:
        self.tokens -= count
        self.sent += count

    def tick(self) -> None:
        """Flush whatever is due and allowed, then re-arm the timer."""
        self._timer, self._timer_at = None, float("inf")
        now = self.clock()
        self._refill(now)
        for view, due in list(self._patches.items()):
            if due <= now and self._has_token():
                del self._patches[view]
                self._last_patch[view] = now
                self._spend(view.flush_patch())
        for view, (changed, since) in list(self._snapshots.items()):
            due = min(changed + self.snapshot_quiet, since + self.snapshot_every)
            if due <= now and view not in self._patches and self._has_token():
                del self._snapshots[view]
                self._spend(view.flush_snapshot())
        self._arm(now)

    def _next_due(self, now: float) -> float:
        dues = list(self._patches.values())
        dues += [
            min(changed + self.snapshot_quiet, since + self.snapshot_every)
            for view, (changed, since) in self._snapshots.items()
            if view not in self._patches  # a pending patch goes first; its own due covers this
        ]
        if not dues:
            return float("inf")
        due = max(min(dues), now)
        if not self._has_token():
            due = max(due, now + max(1 - self.tokens, 0.01) / self.rate)
        return due

    def _arm(self, now: float) -> None:
        due = self._next_due(now)
        if due == float("inf") or due >= self._timer_at:
            return
        if self._timer is not None and hasattr(self._timer, "cancel"):
            self._timer.cancel()
        self._timer = self.call_later(max(0.0, due - now), self.tick)
        self._timer_at = due if self._timer is not None else float("inf")


_default: Scheduler | None = None


def default_scheduler() -> Scheduler:
    """The kernel-wide scheduler shared by every view."""
    global _default
    if _default is None:
        _default = Scheduler()
    return _default
