"""``agent.close()`` ends the agent's whole process group, promptly, leaving no process."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from acp_notebook import start_agent

from .support import until_async

ORPHANING = Path(__file__).parent / "agents" / "orphaning.py"


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


async def test_close_kills_descendants_that_ignore_term_and_returns_promptly(tmp_path):
    pidfile = tmp_path / "child.pid"
    agent = await start_agent([sys.executable, str(ORPHANING), str(pidfile)])
    child = int(await until_async(lambda: pidfile.exists() and pidfile.read_text(), timeout=10))
    leader = agent.process.pid
    assert os.getpgid(child) == leader, "the agent leads its own process group"
    began = time.monotonic()
    code = await agent.close(grace=0.5)
    took = time.monotonic() - began
    assert code == -9, "only SIGKILL ends this agent"
    assert not alive(leader)
    await until_async(lambda: not alive(child), timeout=5, message="the child outlived close()")
    assert took < 5.0, f"close() took {took:.2f}s (a hang, not a benchmark)"
