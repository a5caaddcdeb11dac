"""Benchmark, end to end in the kernel: a 200,000-update flood from a real agent process, a view attached.

Run as ``python bench/flood.py [--updates N] [--runs R] [--against PATH] [--no-view]``. A fake
v2 agent (``bench/agents/update_flood.py``, the reducer benchmark's mix of updates, built before
the turn) is started with ``start_agent``; a session opens, a ``SessionView`` is attached (its
comm a counter, its flushes on the real event loop, 20 patches/s at most), and one prompt makes
the agent write the N updates as fast as the pipe takes them. Everything the client does runs:
the transport's line reader, the connection (parse, the traffic recorder's ring), the sessions
table, the session, the state, the turn runner, the view's patches. Figures, for the turn (from
the prompt to its end): updates per wall-clock second, and the client's CPU seconds
(``time.process_time``) per update. Each run is a fresh subprocess; with ``--against PATH`` the
runs alternate between this checkout and the one at ``PATH`` (this, PATH, PATH, this, ...), so
both see the same machine load. No target: a figure to compare trees with.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
AGENT = Path(__file__).resolve().parent / "agents" / "update_flood.py"


def null_comms() -> list[int]:
    """Views' comms count their messages instead of sending them; the count, as a 1-item list."""
    import comm

    sent = [0]

    class NullComm(comm.base_comm.BaseComm):
        def publish_msg(
            self, msg_type: str, data: Any = None, metadata: Any = None, buffers: Any = None, **keys: Any
        ) -> None:
            sent[0] += 1

    comm.create_comm = lambda *a, **k: NullComm(*a, **k)
    return sent


async def flood(updates: int, view: bool) -> dict[str, Any]:
    """One flood turn through the client of the checkout first on ``sys.path``."""
    import acp_notebook
    from acp_notebook import SessionView, start_agent

    sent = null_comms()
    argv = [sys.executable, str(AGENT), "--updates", str(updates)]
    agent = await start_agent(argv, init_timeout=300)
    try:
        with tempfile.TemporaryDirectory() as cwd:
            session = await agent.new_session(cwd)
            if view:
                SessionView(session)
            cpu, wall = time.process_time(), time.perf_counter()
            await session.prompt("flood")
            cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
            await asyncio.sleep(0.2)  # the view's last flush
    finally:
        await agent.close()
    state = session.state
    return {
        "where": str(Path(acp_notebook.__file__).parent),
        "updates": updates,
        "wall": wall,
        "cpu": cpu,
        "tool_calls": len(state.tool_calls),
        "messages": len(state.messages),
        "diagnostics": len(state.diagnostics),
        "view_messages": sent[0],
    }


def worker(tree: Path, updates: int, view: bool) -> None:
    """Measure one checkout; print the result as one JSON line."""
    sys.path.insert(0, str(tree))
    print(json.dumps(asyncio.run(flood(updates, view))))


def run_worker(tree: Path, updates: int, view: bool) -> dict[str, Any]:
    """One measuring subprocess for the checkout at ``tree``."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    argv = [sys.executable, __file__, "--worker", str(tree), "--updates", str(updates)]
    argv += [] if view else ["--no-view"]
    out = subprocess.run(argv, env=env, capture_output=True, text=True, check=True, timeout=900)
    return json.loads(out.stdout.strip().splitlines()[-1])


def line(name: str, got: dict[str, Any]) -> str:
    """One run's figures."""
    rate, per = got["updates"] / got["wall"], got["cpu"] / got["updates"] * 1e6
    seconds = f"{got['wall']:.1f} s, {got['cpu']:.1f} CPU s"
    seen = f"{got['tool_calls']} tool calls, {got['diagnostics']} diagnostics, {got['view_messages']} sent"
    return f"{name}: {rate:,.0f} updates/s, {per:.1f} CPU us/update ({seconds}; {seen})"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--updates", type=int, default=200_000, help="updates in the flood (default 200000)")
    parser.add_argument("--runs", type=int, default=3, help="runs per checkout (default 3)")
    parser.add_argument("--against", metavar="PATH", help="also run the checkout at PATH, alternating")
    parser.add_argument("--no-view", action="store_true", help="no view attached")
    parser.add_argument("--worker", metavar="TREE", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    view = not args.no_view
    if args.worker:
        worker(Path(args.worker), args.updates, view)
        return 0
    trees = {"new": ROOT} if not args.against else {"new": ROOT, "old": Path(args.against).resolve()}
    results: dict[str, list[dict[str, Any]]] = {name: [] for name in trees}
    for run in range(args.runs):
        order = list(trees) if run % 2 == 0 else list(reversed(trees))
        for name in order:
            results[name].append(run_worker(trees[name], args.updates, view))
            print(f"run {run + 1}/{args.runs} " + line(name, results[name][-1]), flush=True)
    for name, runs in results.items():
        rate = statistics.median(r["updates"] / r["wall"] for r in runs)
        per = statistics.median(r["cpu"] / r["updates"] * 1e6 for r in runs)
        print(f"{name} ({trees[name]}): median {rate:,.0f} updates/s, {per:.1f} CPU us/update, view={view}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
