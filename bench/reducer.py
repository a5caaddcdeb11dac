"""Benchmark of the pure core: JSON-RPC line parsing plus the session-state reducer.

Run as ``python bench/reducer.py [--lines N] [--runs R] [--against PATH] [--profile]``. It
generates a mixed v2 trace of ``session/update`` lines (tool call creates and updates, content
chunks, terminal updates and base64 output chunks, message chunks, plan and state updates), then
measures, by CPU time (``time.process_time``, garbage collection off while timing), over the same
lines:

- the floor: ``json.loads`` on every line;
- our full path: ``jsonrpc.parse_line(line)`` + ``SessionState.apply(msg.params["update"])``;
- our full path on traces with 100 and with 10,000 distinct tool calls (same number of lines).

Floor and ours run interleaved, run by run (floor, ours, floor, ours, ...), and each figure is the
median of the runs' ratios, so the machine's load moves both sides of a ratio alike. With
``--against PATH`` each run measures this checkout and the one at ``PATH`` (e.g. a ``git worktree``
of an older commit) in a fresh subprocess each, interleaved (this, PATH, PATH, this, ...), on
the very same lines: the old tree vs the new tree in one invocation.

Targets (reported, never asserted): ours / floor >= 0.45, rate(10k) / rate(100) >= 0.6.
"""

from __future__ import annotations

import argparse
import base64
import cProfile
import gc
import io
import json
import os
import pstats
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

ROOT = Path(__file__).resolve().parents[1]
SESSION_ID = "sess_bench_0001"
RATIO_TARGET = 0.45
SCALING_TARGET = 0.6
PAIRS_PER_WORKER = 3  # floor/ours pairs one subprocess measures (after a warm-up)
KINDS = ["read", "edit", "execute", "search", "fetch", "think"]
WORDS = [
    "the",
    "quick",
    "brown",
    "fox",
    "jumps",
    "over",
    "lazy",
    "dog",
    "while",
    "agent",
    "reads",
    "config",
    "files",
    "and",
    "runs",
    "tests",
]
OUTPUT_LINES = [
    b"\x1b[32mPASSED\x1b[0m tests/test_core.py::test_apply_%d\r\n",
    b"collecting ... collected %d items\r\n",
    b"src/module_%d.py:12: warning: unused import \xe2\x80\x94 os\r\n",
    b"Compiling acp-notebook v0.1.%d (/home/user/project)\r\n",
]


class TraceBuilder:
    """Builds a reproducible, realistic mix of v2 session/update lines."""

    def __init__(self, tool_calls: int, seed: int) -> None:
        self.rng = random.Random(seed)
        self.pool = tool_calls
        self.seen: set[int] = set()
        self.message = 0
        self.plan_entries = [
            {"content": f"Step {i}: {self.words(4)}", "priority": "medium", "status": "pending"}
            for i in range(6)
        ]

    def words(self, n: int) -> str:
        return " ".join(self.rng.choice(WORDS) for _ in range(n))

    def line(self, update: dict) -> bytes:
        message = {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {"sessionId": SESSION_ID, "update": update},
        }
        return json.dumps(message, separators=(",", ":")).encode("utf-8") + b"\n"

    def create(self, n: int) -> dict:
        kind = KINDS[n % len(KINDS)]
        path = f"/home/user/project/src/module_{n % 97}.py"
        update = {
            "sessionUpdate": "tool_call_update",
            "toolCallId": f"call_{n:06d}",
            "title": f"{kind.capitalize()} {path}",
            "kind": kind,
            "status": "pending",
            "rawInput": {"path": path, "pattern": self.words(2), "limit": 200},
            "locations": [{"path": path, "line": 1 + n % 400}],
            "_meta": {"model": "bench-1", "turn": n % 13},
        }
        if kind == "execute":
            update["content"] = [{"type": "terminal", "terminalId": f"term_{n:06d}"}]
        return update

    def event(self) -> dict:
        n, roll = self.rng.randrange(self.pool), self.rng.random()
        if 0.22 <= roll < 0.44 or 0.58 <= roll < 0.62:  # terminal events: only execute calls have one
            n = min(n - n % len(KINDS) + KINDS.index("execute"), self.pool - 1)
        if n not in self.seen:
            self.seen.add(n)
            return self.create(n)
        call, term = f"call_{n:06d}", f"term_{n:06d}"
        if roll < 0.22:
            text = {"type": "text", "text": self.words(12)}
            return {
                "sessionUpdate": "tool_call_content_chunk",
                "toolCallId": call,
                "content": {"type": "content", "content": text},
            }
        if roll < 0.44:
            data = self.rng.choice(OUTPUT_LINES) % self.rng.randrange(1000)
            return {
                "sessionUpdate": "terminal_output_chunk",
                "terminalId": term,
                "data": base64.b64encode(data * 2).decode(),
            }
        if roll < 0.58:
            status = self.rng.choice(["in_progress", "in_progress", "completed", "failed"])
            update = {"sessionUpdate": "tool_call_update", "toolCallId": call, "status": status}
            if status != "in_progress":
                update["rawOutput"] = {
                    "exitCode": 0 if status == "completed" else 1,
                    "lines": self.rng.randrange(500),
                }
                update["content"] = [{"type": "content", "content": {"type": "text", "text": self.words(20)}}]
                update["_meta"] = {"durationMs": self.rng.randrange(5000)}
            return update
        if roll < 0.62:
            output = base64.b64encode(b"$ cargo test\r\n" + self.words(30).encode()).decode()
            return {
                "sessionUpdate": "terminal_update",
                "terminalId": term,
                "command": "cargo test",
                "cwd": "/home/user/project",
                "output": {"data": output},
            }
        if roll < 0.90:
            if self.rng.random() < 0.05:
                self.message += 1
            kind = "agent_thought_chunk" if self.rng.random() < 0.2 else "agent_message_chunk"
            return {
                "sessionUpdate": kind,
                "messageId": f"msg_{self.message:05d}",
                "content": {"type": "text", "text": self.words(6) + " "},
            }
        if roll < 0.95:
            entries = [
                dict(e, status=self.rng.choice(["pending", "in_progress", "completed"]))
                for e in self.plan_entries
            ]
            return {
                "sessionUpdate": "plan_update",
                "plan": {"type": "items", "planId": "plan_main", "entries": entries},
            }
        state = self.rng.choice(["running", "running", "idle"])
        update = {"sessionUpdate": "state_update", "state": state}
        if state == "idle":
            update["stopReason"] = "end_turn"
        return update

    def build(self, lines: int) -> list[bytes]:
        return [self.line(self.event()) for _ in range(lines)]


def make_trace(lines: int, tool_calls: int, seed: int = 1) -> list[bytes]:
    """``lines`` JSON-RPC lines spread over ``tool_calls`` distinct tool calls."""
    return TraceBuilder(tool_calls, seed).build(lines)


class Core(NamedTuple):
    """What our path uses, imported from one checkout."""

    SessionState: Any
    parse_line: Callable[[bytes], Any]
    where: str


def load_core(tree: Path) -> Core:
    """``SessionState`` and ``parse_line`` of the checkout at ``tree`` (first on ``sys.path``)."""
    sys.path.insert(0, str(tree))
    import acp_notebook
    from acp_notebook.protocol import SessionState
    from acp_notebook.protocol.jsonrpc import parse_line

    return Core(SessionState, parse_line, str(Path(acp_notebook.__file__).parent))


def floor(lines: list[bytes]) -> None:
    """The lower bound: decoding the JSON and nothing else."""
    loads = json.loads
    for line in lines:
        loads(line)


def ours(core: Core, lines: list[bytes]) -> Any:
    """Our full path, as the client runs it for each received line."""
    state = core.SessionState()
    apply, parse_line = state.apply, core.parse_line
    for line in lines:
        for msg in parse_line(line).messages:
            apply(msg.params["update"])
    return state


def cpu(fn: Callable[[], object]) -> float:
    """CPU seconds of one call (garbage collection off while timing)."""
    gc.collect()
    gc.disable()
    try:
        start = time.process_time()
        fn()
        return time.process_time() - start
    finally:
        gc.enable()


def interleaved(
    pairs: int, first: Callable[[], object], second: Callable[[], object]
) -> list[tuple[float, float]]:
    """CPU seconds of ``first`` and ``second``, run by run: first, second, first, second, ..."""
    return [(cpu(first), cpu(second)) for _ in range(pairs)]


def profile(core: Core, lines: list[bytes], top: int = 18) -> str:
    """cProfile of our path: the functions with the most own time."""
    profiler = cProfile.Profile()
    profiler.enable()
    ours(core, lines)
    profiler.disable()
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(top)
    return out.getvalue()


def verdict(value: float, target: float) -> str:
    return "ok" if value >= target else "BELOW TARGET"


def spread(values: list[float]) -> str:
    """``median (min-max)`` of some ratios."""
    return f"{statistics.median(values):.2f} ({min(values):.2f}-{max(values):.2f})"


# -- one checkout, in this process --------------------------------------------------------------
def measure_here(args: argparse.Namespace) -> None:
    """Floor vs ours and the scaling figure, interleaved, for this checkout."""
    core = load_core(ROOT)
    mixed = make_trace(args.lines, tool_calls=1_000, seed=1)
    state = ours(core, mixed)  # also the warm-up
    print(f"trace: {len(mixed)} lines, {sum(map(len, mixed)) / 1e6:.1f} MB, python {sys.version.split()[0]}")
    print(
        f"state after replay: {len(state.tool_calls)} tool calls, {len(state.terminals)} terminals, "
        f"{len(state.messages)} messages, {len(state.diagnostics)} diagnostics"
    )
    runs = interleaved(args.runs, lambda: floor(mixed), lambda: ours(core, mixed))
    ratios = [f / o for f, o in runs]
    print(f"json_loads_msgs_per_s (median CPU): {len(mixed) / statistics.median(f for f, _ in runs):,.0f}")
    print(f"ours_msgs_per_s (median CPU): {len(mixed) / statistics.median(o for _, o in runs):,.0f}")
    ratio = statistics.median(ratios)
    print(
        f"ratio_vs_json_loads (median of {len(runs)} interleaved runs, min-max): {spread(ratios)}  "
        f"(target >= {RATIO_TARGET:.2f}: {verdict(ratio, RATIO_TARGET)})"
    )

    few = make_trace(args.lines, tool_calls=100, seed=2)
    many = make_trace(args.lines, tool_calls=10_000, seed=2)
    scale = interleaved(args.runs, lambda: ours(core, few), lambda: ours(core, many))
    scalings = [f / m for f, m in scale]
    print(f"ours_msgs_per_s_100_tool_calls: {len(few) / statistics.median(f for f, _ in scale):,.0f}")
    print(f"ours_msgs_per_s_10000_tool_calls: {len(many) / statistics.median(m for _, m in scale):,.0f}")
    scaling = statistics.median(scalings)
    print(
        f"scaling_ratio_10k_vs_100 (median, min-max): {spread(scalings)}  "
        f"(target >= {SCALING_TARGET:.2f}: {verdict(scaling, SCALING_TARGET)})"
    )
    if args.profile or ratio < RATIO_TARGET or scaling < SCALING_TARGET:
        print("\nprofile of our path (mixed trace), by own time:")
        print(profile(core, mixed))


# -- two checkouts, a subprocess per run ----------------------------------------------------------
def worker(tree: Path, trace_file: Path, pairs: int) -> None:
    """Measure one checkout on the lines of ``trace_file``; print the pairs as one JSON line."""
    core = load_core(tree)
    lines = trace_file.read_bytes().splitlines(keepends=True)
    ours(core, lines[:20_000])  # warm-up
    runs = interleaved(pairs, lambda: floor(lines), lambda: ours(core, lines))
    print(json.dumps({"where": core.where, "pairs": runs}))


def run_worker(tree: Path, trace_file: Path, pairs: int) -> dict[str, Any]:
    """One measuring subprocess for the checkout at ``tree``."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # the tree comes first anyway
    argv = [sys.executable, __file__, "--worker", str(tree), "--trace-file", str(trace_file)]
    argv += ["--pairs", str(pairs)]
    out = subprocess.run(argv, env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def measure_against(args: argparse.Namespace) -> None:
    """This checkout vs ``--against``: one subprocess per tree and run, interleaved."""
    trees = {"new": ROOT, "old": Path(args.against).resolve()}
    mixed = make_trace(args.lines, tool_calls=1_000, seed=1)
    print(f"trace: {len(mixed)} lines, python {sys.version.split()[0]}, {args.pairs} pairs per subprocess")
    ratios: dict[str, list[float]] = {"new": [], "old": []}
    paired: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        trace_file = Path(tmp) / "trace.jsonl"
        trace_file.write_bytes(b"".join(mixed))
        for run in range(args.runs):
            order = ("new", "old") if run % 2 == 0 else ("old", "new")
            got = {
                name: [f / o for f, o in run_worker(trees[name], trace_file, args.pairs)["pairs"]]
                for name in order
            }
            for name in order:
                ratios[name] += got[name]
            paired.append(statistics.median(got["new"]) / statistics.median(got["old"]))
            print(f"run {run + 1}/{args.runs}: " + ", ".join(f"{n} {spread(got[n])}" for n in order))
    for name, tree in trees.items():
        print(f"{name} ({tree}): ratio_vs_json_loads, median of {len(ratios[name])} (min-max)")
        print(f"    {spread(ratios[name])}")
    print(f"new / old, median of the runs (min-max): {spread(paired)}")
    ratio = statistics.median(ratios["new"])
    print(f"new: target >= {RATIO_TARGET:.2f}: {verdict(ratio, RATIO_TARGET)}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=100_000, help="lines per trace (default 100000)")
    parser.add_argument("--runs", "--repeats", type=int, default=7, help="interleaved runs (default 7)")
    parser.add_argument("--against", metavar="PATH", help="also measure the checkout at PATH, interleaved")
    parser.add_argument("--pairs", type=int, default=PAIRS_PER_WORKER, help="floor/ours pairs per subprocess")
    parser.add_argument("--profile", action="store_true", help="print a cProfile of our path")
    parser.add_argument("--worker", metavar="TREE", help=argparse.SUPPRESS)
    parser.add_argument("--trace-file", metavar="FILE", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        worker(Path(args.worker), Path(args.trace_file), args.pairs)
    elif args.against:
        measure_against(args)
    else:
        measure_here(args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
