"""Regenerate the demo traces: ``python tests/record_demo.py [FOLDER]`` (default: the shipped ones).

Runs the demo agent (no pauses) in v2 and in v1 with ``record=``, in a neutral working directory
(``/tmp/acp-demo``), sends one prompt and allows the permission it asks once; and, for
``demo_cancel_v2.jsonl``, asks for the slow command and cancels the turn after three lines.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from acp_notebook.client.launch import start_agent
from acp_notebook.traces import FOLDER

CWD = "/tmp/acp-demo"
PROMPT = "Fix the failing test, please."


def allow_once(request: object) -> str | None:
    """The request's first ``allow_once`` option."""
    options = getattr(request, "options", [])
    return next((o["optionId"] for o in options if o.get("kind") == "allow_once"), None)


async def record(path: Path, protocol: int) -> None:
    """Record one demo turn in ``protocol`` to ``path``."""
    os.makedirs(CWD, exist_ok=True)
    command = ["python", "-m", "acp_notebook.demo_agent", "--speed", "0"]
    agent = await start_agent(command, CWD, protocol_version=protocol, record=path)
    try:
        session = await agent.new_session(CWD)
        session.permission_handler = allow_once
        await asyncio.wait_for(session.prompt(PROMPT), 60)
    finally:
        await agent.close()


CANCEL_PROMPT = "Run a slow command."


async def record_cancel(path: Path) -> None:
    """Record a v2 turn cancelled while its command runs (after its third line) to ``path``."""
    os.makedirs(CWD, exist_ok=True)
    command = ["python", "-m", "acp_notebook.demo_agent", "--speed", "0"]
    agent = await start_agent(command, CWD, protocol_version=2, record=path)
    try:
        session = await agent.new_session(CWD)
        turn = session.prompt_task(CANCEL_PROMPT)
        for _ in range(400):
            if any(b"tick 3" in t.output for t in session.state.terminals.values()):
                break
            await asyncio.sleep(0.01)
        await session.cancel()
        await asyncio.wait_for(turn, 30)
    finally:
        await agent.close()


async def main(folder: Path) -> None:
    """The demo traces."""
    await record(folder / "demo_v2.jsonl", 2)
    await record(folder / "demo_v1.jsonl", 1)
    await record_cancel(folder / "demo_cancel_v2.jsonl")


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1]) if len(sys.argv) > 1 else FOLDER))
