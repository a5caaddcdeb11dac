"""Benchmark: the bytes a view sends for one quickstart demo turn (its patches and snapshot refreshes).

Runs the bundled demo agent (``--speed``, 1.0 as in the quickstart), one turn ("The average() test
fails. Please fix it and run the tests.", permissions allowed once) with a ``SessionView`` attached
on the kernel-wide scheduler, and sums every comm message the view sent: the UTF-8 JSON of its data
(envelope included) plus its binary buffers, split into custom messages (patches, answers) and
trait updates (the saved snapshot). Also counts the ``json.dumps`` calls made while the view
flushes its patches (the widgets' sender, and the comm's packing as the kernel's session does it).

    python bench/turn_bytes.py [--speed 1.0]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from pathlib import Path
from typing import ClassVar

import comm
from jupyter_client.session import json_packer

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout, like reducer.py

from acp_notebook import start_agent
from acp_notebook.widgets import Scheduler, SessionView
from acp_notebook.widgets import runtime as runtime_module

PROMPT = "The average() test fails. Please fix it and run the tests."


class Recording(comm.base_comm.BaseComm):
    """Records every message, packed as the kernel's session would pack its content."""

    log: ClassVar[list] = []

    def publish_msg(self, msg_type, data=None, metadata=None, buffers=None, **keys):
        packed = json_packer({"data": data, "comm_id": self.comm_id})  # the encode the kernel does
        Recording.log.append((self.comm_id, msg_type, data, list(buffers or []), len(packed)))


def measure(log: list, comm_id: str) -> dict[str, int]:
    """Bytes and counts of the view's messages, by kind."""
    out = {"patch_msgs": 0, "patch_bytes": 0, "snapshot_msgs": 0, "snapshot_bytes": 0}
    for cid, kind, data, bufs, size in log:
        if cid != comm_id or kind != "comm_msg":
            continue
        total = size + sum(len(b) for b in bufs)
        which = "patch" if data.get("method") == "custom" else "snapshot"
        out[f"{which}_msgs"] += 1
        out[f"{which}_bytes"] += total
    return out


async def turn(speed: float, tmp: Path) -> dict[str, int]:
    """One demo turn with a view attached; what the view sent."""
    agent = await start_agent([sys.executable, "-m", "acp_notebook.demo_agent", "--speed", str(speed)])
    try:
        session = await agent.new_session(str(tmp))
        session.permission_handler = lambda request: "allow-once"
        view = SessionView(session, scheduler=Scheduler())
        Recording.log.clear()
        assert await asyncio.wait_for(session.prompt(PROMPT), 120) == "end_turn"
        await asyncio.sleep(2.5)  # the last patch and the snapshot refresh
        comm_id = view.comm.comm_id
        view.close()
        return measure(Recording.log, comm_id)
    finally:
        await agent.close()


def count_patch_encodes() -> dict[str, int]:
    """Count the ``json.dumps`` calls made inside ``SessionView.flush_patch`` (filled in as it runs)."""
    counts = {"patch_flushes": 0, "json_dumps_in_flushes": 0}
    real_dumps, real_flush, inside = json.dumps, SessionView.flush_patch, [False]

    def dumps(*a, **k):
        counts["json_dumps_in_flushes"] += inside[0]
        return real_dumps(*a, **k)

    def flush(view):
        counts["patch_flushes"] += 1
        inside[0] = True
        try:
            return real_flush(view)
        finally:
            inside[0] = False

    json.dumps, SessionView.flush_patch = dumps, flush
    return counts


def main() -> None:
    """Run one turn and print what the view sent."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--speed", type=float, default=1.0)
    args = parser.parse_args()
    comm.create_comm = lambda *a, **k: Recording(*a, **k)
    runtime_module._runtime = None
    counts = count_patch_encodes()
    with tempfile.TemporaryDirectory() as tmp:
        result = asyncio.run(turn(args.speed, Path(tmp)))
    result.update(counts)
    n, size = result["patch_msgs"], result["patch_bytes"]
    print(json.dumps(result, indent=1))
    customs = f"{n} custom messages, {size:,} bytes ({size / max(1, n):,.0f} per message)"
    print(f"{customs}; {result['snapshot_msgs']} snapshot updates, {result['snapshot_bytes']:,} bytes")


if __name__ == "__main__":
    main()
