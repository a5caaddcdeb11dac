"""Benchmark: the cost of one view flush of a full 16 MiB terminal that received 100 new bytes.

Run as ``python bench/terminal_flush.py [--flushes N]``. Each timed flush follows an append of
100 bytes to a terminal holding its full 16 MiB cap; figures are medians over N flushes, against
a floor measured in the same run:

- floor: copying the 100 new bytes (``bytes(bytearray)``), the least a flush must do;
- before: the old byte path, kept inline in ``bench/terminal_memory.py`` (``len(output)`` for the
  metadata base, then ``read_from``, each copying every held byte);
- after: ``widgets.terminal_moves`` on ``protocol.terminal.Terminal`` (metadata dict included).

Target (reported, never asserted): after / floor <= 100 (a flush costs what it sends, not the cap).
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from terminal_memory import OldTerminal, old_flush

from acp_notebook.protocol import SessionState
from acp_notebook.protocol.terminal import DEFAULT_OUTPUT_CAP
from acp_notebook.widgets.terminal_moves import terminal_moves

NEW_BYTES = b"\x1b[32mPASSED\x1b[0m tests/test_core.py::test_apply_17 (100 new bytes of output)....\r\n"[:100]
RATIO_TARGET = 100.0


def floor_seconds(loops: int = 100_000) -> float:
    """Seconds to copy the 100 new bytes once (a loop, for the timer's resolution)."""
    fresh = bytearray(NEW_BYTES)
    start = time.perf_counter()
    for _ in range(loops):
        bytes(fresh)
    return (time.perf_counter() - start) / loops


def median_flush(append: Callable[[bytes], None], flush: Callable[[], object], flushes: int) -> float:
    """Median seconds of one flush, each after appending the new bytes (the append is not timed)."""
    times = []
    gc.disable()
    try:
        for _ in range(flushes):
            append(NEW_BYTES)
            start = time.perf_counter()
            flush()
            times.append(time.perf_counter() - start)
    finally:
        gc.enable()
    return statistics.median(times)


def full_payload() -> bytes:
    return (bytes(range(256)) * (DEFAULT_OUTPUT_CAP // 256 + 1))[:DEFAULT_OUTPUT_CAP]


def before(flushes: int) -> float:
    term, sent = OldTerminal("t1", DEFAULT_OUTPUT_CAP), {}
    term.append(full_payload())
    old_flush(term, sent)
    return median_flush(term.append, lambda: old_flush(term, sent), flushes)


def after(flushes: int) -> float:
    state, sent = SessionState(), {}
    state.apply({"sessionUpdate": "terminal_update", "terminalId": "t1"})
    term = state.terminals["t1"]
    term.append(full_payload())
    terminal_moves(state.terminals, ["t1"], sent)
    seconds = median_flush(term.append, lambda: terminal_moves(state.terminals, ["t1"], sent), flushes)
    term.append(NEW_BYTES)
    if terminal_moves(state.terminals, ["t1"], sent)[2] != [NEW_BYTES]:
        raise RuntimeError("a flush did not carry exactly the new bytes")
    return seconds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--flushes", type=int, default=200, help="timed flushes per figure (default 200)")
    args = parser.parse_args(argv)
    floor = min(floor_seconds() for _ in range(3))
    t_before, t_after = before(args.flushes), after(args.flushes)
    ratio = t_after / floor
    print(f"terminal: 16 MiB held, 100 new bytes per flush, python {sys.version.split()[0]}")
    print(f"floor_copy_100_bytes_ns: {floor * 1e9:,.0f}")
    print(f"flush_before_us: {t_before * 1e6:,.1f}")
    print(f"flush_after_us: {t_after * 1e6:,.2f}")
    print(f"flush_before_vs_floor: {t_before / floor:,.0f}")
    verdict = "ok" if ratio <= RATIO_TARGET else "ABOVE TARGET"
    print(f"flush_after_vs_floor: {ratio:,.1f}  (target <= {RATIO_TARGET:.0f}: {verdict})")
    print(f"flush_before_vs_after: {t_before / t_after:,.0f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
