"""Benchmark: peak memory of one busy display terminal, before and after the chunk ring.

Run as ``python bench/terminal_memory.py [--sizes 32,256,1024] [--flush-mib 1] [--payload 65536]``.
Each figure is measured in a fresh interpreter: it streams N MiB into a terminal with the default
16 MiB cap, in ``terminal_output_chunk`` payloads of 64 KiB (or ``--payload`` bytes), each
base64-decoded afresh as the reducer does, and reports the peak RSS increase (``VmHWM``, reset
through ``/proc/self/clear_refs`` after the imports and the payload are allocated, minus ``VmRSS``
at that point) divided by the cap.

- before: the old storage, kept inline below as the reference (a ``bytearray`` trimmed at
  1.25 x cap by front-cutting; ``output`` and ``read_from`` copy every held byte);
- after: ``protocol.terminal.Terminal`` (``protocol/byte_ring.py``);
- both alone, and with a view flushing every ``--flush-mib`` MiB (old: ``len(output)`` for the
  metadata and ``read_from``; new: ``widgets.terminal_moves``).

Targets (reported, never asserted): after <= 1.25 x cap, and flat: after(largest) / after(smallest)
<= 1.1.
"""

from __future__ import annotations

import argparse
import base64
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

CHUNK = 64 * 1024
MIB = 1024 * 1024
PEAK_TARGET = 1.25
FLAT_TARGET = 1.1


class OldTerminal:
    """The storage ``Terminal`` had before the ring (verbatim algorithm): the "before" reference."""

    def __init__(self, terminal_id: str, cap: int) -> None:
        self.terminal_id, self.cap, self.generation = terminal_id, cap, 0
        self._buf = bytearray()
        self._start = 0

    @property
    def output(self) -> bytes:
        return bytes(self._buf[-self.cap :]) if len(self._buf) > self.cap else bytes(self._buf)

    @property
    def end_offset(self) -> int:
        return self._start + len(self._buf)

    def read_from(self, offset: int) -> bytes:
        held = self.output
        base = self.end_offset - len(held)
        return held[max(0, offset - base) :]

    def append(self, data: bytes) -> None:
        self._buf += data
        if len(self._buf) > self.cap + self.cap // 4:
            excess = len(self._buf) - self.cap
            del self._buf[:excess]
            self._start += excess


def old_flush(term: OldTerminal, sent: dict[str, tuple[int, int]]) -> list[bytes]:
    """The old ``terminal_moves`` byte path for one terminal (metadata base from ``len(output)``)."""
    end_now = term.end_offset
    base = end_now - len(term.output)
    gen, end = sent.get(term.terminal_id, (-1, 0))
    reset = gen != term.generation or end < base
    data = term.output if reset else term.read_from(end)
    sent[term.terminal_id] = (term.generation, end_now)
    return [data] if data or reset else []


def _status_kib(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"no {field} in /proc/self/status")


def _reset_peak() -> bool:
    """Reset VmHWM to the current RSS (Linux >= 4.0); False when the kernel refuses."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        return False
    return _status_kib("VmHWM") <= _status_kib("VmRSS") + 64


def child(version: str, mib: int, flush_mib: int, payload_size: int) -> dict[str, Any]:
    """Stream ``mib`` MiB into one terminal in this process; the peak RSS increase in bytes."""
    from acp_notebook.protocol import SessionState
    from acp_notebook.protocol.terminal import DEFAULT_OUTPUT_CAP, decode_base64
    from acp_notebook.widgets.terminal_moves import terminal_moves

    raw = (bytes(range(256)) * (payload_size // 256 + 1))[:payload_size]
    payload = base64.b64encode(raw).decode("ascii")
    sent: dict[str, tuple[int, int]] = {}
    state = SessionState()
    if version == "before":
        old = OldTerminal("t1", DEFAULT_OUTPUT_CAP)
        append, flush = old.append, lambda: old_flush(old, sent)
    else:
        state.apply({"sessionUpdate": "terminal_update", "terminalId": "t1"})
        append, flush = state.terminals["t1"].append, lambda: terminal_moves(state.terminals, ["t1"], sent)
    every = max(1, flush_mib * MIB // payload_size) if flush_mib else 0
    reset = _reset_peak()
    baseline = _status_kib("VmRSS" if reset else "VmHWM")
    for i in range(mib * MIB // payload_size):
        append(decode_base64(payload))  # type: ignore[arg-type]
        if every and i % every == every - 1:
            flush()
    return {"increase": (_status_kib("VmHWM") - baseline) * 1024, "hwm_reset": reset}


def measure(version: str, mib: int, flush_mib: int, payload_size: int) -> dict[str, Any]:
    """Run ``child`` in a fresh interpreter."""
    args = [sys.executable, __file__, "--child", version, str(mib), str(flush_mib), str(payload_size)]
    out = subprocess.run(args, capture_output=True, text=True, check=True, timeout=900)
    return json.loads(out.stdout.strip().splitlines()[-1])


def verdict(ok: bool) -> str:
    return "ok" if ok else "ABOVE TARGET"


def report(sizes: list[int], flush_mib: int, payload_size: int) -> None:
    """Print before / after peak-over-cap ratios for every size."""
    label = f"flush_every_{flush_mib}MiB" if flush_mib else "no_view"
    after: list[float] = []
    for mib in sizes:
        ratios = {}
        for version in ("before", "after"):
            got = measure(version, mib, flush_mib, payload_size)
            ratios[version] = got["increase"] / (16 * MIB)
            if not got["hwm_reset"]:
                print("  (VmHWM could not be reset: the figure is a lower bound)")
        after.append(ratios["after"])
        name = f"{label}_stream_{mib}MiB"
        print(f"{name}_peak_rss_over_cap_before: {ratios['before']:.2f}")
        print(
            f"{name}_peak_rss_over_cap_after: {ratios['after']:.2f}  "
            f"(target <= {PEAK_TARGET}: {verdict(ratios['after'] <= PEAK_TARGET)})"
        )
        print(f"{name}_before_vs_after: {ratios['before'] / max(ratios['after'], 1e-9):.1f}")
    flat = after[-1] / max(after[0], 1e-9)
    print(
        f"{label}_flatness_{sizes[-1]}MiB_vs_{sizes[0]}MiB_after: {flat:.2f}  "
        f"(target <= {FLAT_TARGET}: {verdict(flat <= FLAT_TARGET)})"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--sizes", default="32,256,1024", help="MiB streamed per figure (default 32,256,1024)"
    )
    parser.add_argument("--flush-mib", type=int, default=1, help="MiB between view flushes (default 1)")
    parser.add_argument("--payload", type=int, default=CHUNK, help="bytes per chunk (default 65536)")
    parser.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        version, mib, flush_mib, payload_size = args.child
        print(json.dumps(child(version, int(mib), int(flush_mib), int(payload_size))))
        return 0
    sizes = [int(s) for s in args.sizes.split(",")]
    print(f"cap: 16 MiB, payloads: {args.payload:,} bytes, python {sys.version.split()[0]}")
    report(sizes, 0, args.payload)
    report(sizes, args.flush_mib, args.payload)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
