"""Benchmark: what a live SessionView adds to applying updates (kernel side, no browser).

Floor: ``SessionState.apply`` of a mixed trace with no observer. Ours: the same with a
``SessionView`` subscribed and its coalesced patches built and "sent" (a recording comm) every
50 ms of simulated time (one flush per ~1,000 updates at 20k updates/s). Also prints how many
comm messages the view sent per simulated second (the scheduler caps it at 20).

    python bench/view.py [--updates N]
"""

from __future__ import annotations

import argparse
import base64
import heapq
import sys
import time
from pathlib import Path

import comm

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout, like reducer.py

from acp_notebook import SessionState
from acp_notebook.widgets import Scheduler, SessionView


class NullComm(comm.base_comm.BaseComm):
    """Counts messages instead of sending them."""

    sent = 0

    def publish_msg(self, msg_type, data=None, metadata=None, buffers=None, **keys):
        NullComm.sent += 1


def trace(n: int, tool_calls: int) -> list[dict]:
    """A mixed v2 trace: tool-call patches, terminal chunks, message chunks."""
    out = []
    for i in range(n):
        tc = f"call_{i % tool_calls}"
        kind = i % 4
        if kind == 0:
            out.append(
                {
                    "sessionUpdate": "tool_call_update",
                    "toolCallId": tc,
                    "status": "in_progress",
                    "title": f"step {i}",
                }
            )
        elif kind == 1:
            item = {"type": "terminal", "terminalId": f"t_{i % tool_calls}"}
            out.append({"sessionUpdate": "tool_call_update", "toolCallId": tc, "content": [item]})
        elif kind == 2:
            data = base64.b64encode(f"line {i}\r\n".encode()).decode()
            out.append(
                {"sessionUpdate": "terminal_output_chunk", "terminalId": f"t_{i % tool_calls}", "data": data}
            )
        else:
            block = {"type": "text", "text": f"word{i} "}
            out.append(
                {"sessionUpdate": "agent_message_chunk", "messageId": f"m{i // 400}", "content": block}
            )
    return out


class FakeTime:
    """A simulated clock with cancellable timers (the scheduler's injectable time)."""

    def __init__(self) -> None:
        self.now = 0.0
        self.timers: list = []

    def call_later(self, delay, callback):
        entry = [self.now + delay, len(self.timers), callback, False]
        heapq.heappush(self.timers, entry)
        return self

    def cancel(self) -> None:
        """(The scheduler cancels before re-arming: drop the earliest pending timer.)"""
        for entry in self.timers:
            entry[3] = True

    def advance_to(self, now: float) -> None:
        self.now = now
        while self.timers and self.timers[0][0] <= now:
            entry = heapq.heappop(self.timers)
            if not entry[3]:
                entry[2]()


def run(updates: list[dict], with_view: bool) -> tuple[float, int]:
    """Seconds to apply every update (plus the view's flushes), and the view's messages."""
    fake = FakeTime()
    scheduler = Scheduler(clock=lambda: fake.now, call_later=fake.call_later)
    state = SessionState()
    if with_view:
        SessionView(state, scheduler=scheduler)
    NullComm.sent = 0
    start = time.perf_counter()
    for i, update in enumerate(updates):
        state.apply(update)
        fake.advance_to(i / 20_000)  # 20k updates per simulated second
    return time.perf_counter() - start, NullComm.sent


def main() -> None:
    """Print the floor, the view's cost as a ratio, and its message rate."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--updates", type=int, default=100_000)
    args = parser.parse_args()
    comm.create_comm = lambda *a, **k: NullComm(*a, **k)
    updates = trace(args.updates, tool_calls=200)
    floor = min(run(updates, False)[0] for _ in range(3))
    ours, messages = min((run(updates, True) for _ in range(3)), key=lambda r: r[0])
    seconds = args.updates / 20_000
    print(f"updates: {args.updates:,} over {seconds:g} simulated s")
    print(f"apply_only_updates_per_s: {args.updates / floor:,.0f}")
    print(f"with_view_updates_per_s: {args.updates / ours:,.0f}")
    print(f"ratio_with_view_vs_apply_only: {floor / ours:.2f}")
    print(f"view_messages_per_simulated_s: {messages / seconds:.1f}  (cap 20 patches/s + snapshots)")


if __name__ == "__main__":
    main()
