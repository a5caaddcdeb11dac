"""Benchmark of the pure core: JSON-RPC line parsing plus the session-state reducer.

Run as ``python bench/reducer.py [--lines N] [--repeats R] [--profile]``. It generates a mixed v2
trace of ``session/update`` lines (tool call creates and updates, content chunks, terminal
updates and base64 output chunks, message chunks, plan and state updates), then measures, best of
R runs over the same lines:

- the floor: ``json.loads`` on every line;
- our full path: ``jsonrpc.parse_line(line)`` + ``SessionState.apply(msg.params["update"])``;
- our full path on traces with 100 and with 10,000 distinct tool calls (same number of lines).

Targets (reported, never asserted): ours / floor >= 1/3, rate(10k) / rate(100) >= 0.6.
"""

from __future__ import annotations

import argparse
import base64
import cProfile
import gc
import io
import json
import pstats
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from acp_notebook.protocol import SessionState
from acp_notebook.protocol.jsonrpc import parse_line

SESSION_ID = "sess_bench_0001"
RATIO_TARGET = 1 / 3
SCALING_TARGET = 0.6
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


def floor(lines: list[bytes]) -> None:
    """The lower bound: decoding the JSON and nothing else."""
    loads = json.loads
    for line in lines:
        loads(line)


def ours(lines: list[bytes]) -> SessionState:
    """Our full path, as the client runs it for each received line."""
    state = SessionState()
    apply = state.apply
    for line in lines:
        for msg in parse_line(line).messages:
            apply(msg.params["update"])
    return state


def best_of(repeats: int, fn: Callable[[list[bytes]], object], lines: list[bytes]) -> float:
    """Best wall time of ``repeats`` runs (garbage collection off while timing)."""
    best = float("inf")
    for _ in range(repeats):
        gc.collect()
        gc.disable()
        try:
            start = time.perf_counter()
            fn(lines)
            best = min(best, time.perf_counter() - start)
        finally:
            gc.enable()
    return best


def profile(lines: list[bytes], top: int = 18) -> str:
    """cProfile of our path: the functions with the most own time."""
    profiler = cProfile.Profile()
    profiler.enable()
    ours(lines)
    profiler.disable()
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(top)
    return out.getvalue()


def verdict(value: float, target: float) -> str:
    return "ok" if value >= target else "BELOW TARGET"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=100_000, help="lines per trace (default 100000)")
    parser.add_argument("--repeats", type=int, default=5, help="timed runs per figure, best kept (default 5)")
    parser.add_argument("--profile", action="store_true", help="print a cProfile of our path")
    args = parser.parse_args(argv)

    mixed = make_trace(args.lines, tool_calls=1_000, seed=1)
    state = ours(mixed)
    print(f"trace: {len(mixed)} lines, {sum(map(len, mixed)) / 1e6:.1f} MB, python {sys.version.split()[0]}")
    print(
        f"state after replay: {len(state.tool_calls)} tool calls, {len(state.terminals)} terminals, "
        f"{len(state.messages)} messages, {len(state.diagnostics)} diagnostics"
    )

    t_floor = best_of(args.repeats, floor, mixed)
    t_ours = best_of(args.repeats, ours, mixed)
    rate_floor, rate_ours = len(mixed) / t_floor, len(mixed) / t_ours
    ratio = rate_ours / rate_floor
    print(f"json_loads_msgs_per_s: {rate_floor:,.0f}")
    print(f"ours_msgs_per_s: {rate_ours:,.0f}")
    print(f"ratio_vs_json_loads: {ratio:.2f}  (target >= {RATIO_TARGET:.2f}: {verdict(ratio, RATIO_TARGET)})")

    few, many = (
        make_trace(args.lines, tool_calls=100, seed=2),
        make_trace(args.lines, tool_calls=10_000, seed=2),
    )
    rate_few = len(few) / best_of(args.repeats, ours, few)
    rate_many = len(many) / best_of(args.repeats, ours, many)
    scaling = rate_many / rate_few
    print(f"ours_msgs_per_s_100_tool_calls: {rate_few:,.0f}")
    print(f"ours_msgs_per_s_10000_tool_calls: {rate_many:,.0f}")
    print(
        f"scaling_ratio_10k_vs_100: {scaling:.2f}  "
        f"(target >= {SCALING_TARGET:.2f}: {verdict(scaling, SCALING_TARGET)})"
    )

    if args.profile or ratio < RATIO_TARGET or scaling < SCALING_TARGET:
        print("\nprofile of our path (mixed trace), by own time:")
        print(profile(mixed))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
