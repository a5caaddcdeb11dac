"""No process an agent started outlives it, on every path: ``close()``, a start that fails, the
agent's own death, a kernel shutdown, a forced kernel restart, a SIGKILLed kernel — even a daemon
that ``setsid()``-ed out of the agent's process group (``client.supervisor``, the subreaper).

The fake (``agents/spawning.py``) writes the pids of itself, a child in its group and a daemon with
a child of its own, all ignoring SIGTERM; each test checks in ``/proc`` that none is left.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

import pytest

from acp_notebook import AgentStartError, start_agent
from acp_notebook.client.transport import AgentProcess

from .support import running, until, until_async

SPAWNING = Path(__file__).parent / "agents" / "spawning.py"
ORPHANING = Path(__file__).parent / "agents" / "orphaning.py"
NAMES = ("agent", "child", "daemon", "daemon-child")
BOUND = 10.0  # s for the processes to go (they take well under a second)


def read_pids(piddir: Path) -> dict[str, int] | None:
    """The pids the fake wrote, once all are there."""
    if not all((piddir / name).exists() for name in NAMES):
        return None
    return {name: int((piddir / name).read_text()) for name in NAMES}


def left(pids) -> list[int]:
    """The pids still running (a zombie counts as gone)."""
    return [pid for pid in pids if running(pid)]


async def written(piddir: Path) -> dict[str, int]:
    """The fake's pids, waited for; and the daemon did leave the agent's group and session."""
    pids = await until_async(lambda: read_pids(piddir), BOUND, message="the fake's pid files")
    assert os.getsid(pids["daemon"]) == pids["daemon"] != os.getpgid(pids["agent"])
    return pids


async def gone(pids, why: str) -> None:
    """Wait until none of ``pids`` runs; AssertionError naming ``why`` and the survivors."""
    await until_async(lambda: not left(pids), BOUND, message=lambda: f"{why} (still running: {left(pids)})")


def spawning(piddir: Path, *mode: str) -> list[str]:
    return [sys.executable, str(SPAWNING), str(piddir), *mode]


@pytest.fixture(autouse=True)
def no_strays(tmp_path):
    """Whatever a failing test left behind is killed (the next tests must not inherit it)."""
    yield
    orphan = tmp_path / "child.pid"  # the orphaning fake's
    strays = [*(read_pids(tmp_path) or {}).values(), *([int(orphan.read_text())] if orphan.exists() else [])]
    for pid in left(strays):
        os.kill(pid, signal.SIGKILL)


# -- the client's own paths --------------------------------------------------------------------------------
async def test_close_ends_the_agent_its_group_and_a_daemon_that_left_it(tmp_path):
    agent = await start_agent(spawning(tmp_path))
    pids = await written(tmp_path)
    assert pids["agent"] == agent.process.pid == os.getpgid(pids["child"])
    code = await asyncio.wait_for(agent.close(0.5), 15)
    assert code == 0, "the agent itself exits when its stdin closes"
    await gone(pids.values(), "close() left processes of the agent")


async def test_a_start_whose_initialize_times_out_leaves_nothing(tmp_path):
    starting = asyncio.ensure_future(start_agent(spawning(tmp_path, "--hang"), init_timeout=2))
    pids = await until_async(lambda: read_pids(tmp_path) or starting.done(), BOUND, message="the pid files")
    with pytest.raises(AgentStartError, match="did not answer initialize"):
        await asyncio.wait_for(starting, 30)
    assert isinstance(pids, dict), "the fake wrote its pids before the timeout"
    await gone(pids.values(), "a timed-out start left processes of the agent")


async def test_an_agent_that_exits_during_initialize_leaves_nothing(tmp_path):
    with pytest.raises(AgentStartError, match=r"exited during initialize \(exit code 3\)"):
        await asyncio.wait_for(start_agent(spawning(tmp_path, "--exit", "3")), 30)
    pids = read_pids(tmp_path)  # written before it exited (it waits for them)
    assert pids is not None
    await gone(pids.values(), "an agent that exited left its descendants")


async def test_an_agent_killed_outright_takes_its_tree_with_it_without_a_close(tmp_path):
    agent = await start_agent(spawning(tmp_path))
    pids = await written(tmp_path)
    os.kill(agent.process.pid, signal.SIGKILL)
    await until_async(lambda: agent.returncode is not None, BOUND, message="the agent's exit")
    assert agent.returncode == -signal.SIGKILL, "its exit status, as if it were our own child"
    await gone(pids.values(), "the descendants of a killed agent")
    await agent.close()


# -- the supervisor ------------------------------------------------------------------------------------------
async def test_a_signal_to_the_supervisor_reaches_the_agent_and_it_exits_as_the_agent_did(tmp_path):
    agent = await start_agent(spawning(tmp_path))
    pids = await written(tmp_path)
    supervisor = agent.process.supervisor_pid
    assert supervisor not in pids.values() and os.getpgid(supervisor) != agent.process.pid
    os.kill(supervisor, signal.SIGTERM)
    await until_async(lambda: agent.returncode is not None, BOUND, message="the agent's exit")
    assert agent.returncode == -signal.SIGTERM
    await gone(pids.values(), "what the agent left after a TERM")
    await agent.close()
    assert not Path(f"/proc/{supervisor}").exists(), "the supervisor is reaped, not a zombie"


async def test_a_killed_supervisor_takes_the_agent_with_it(tmp_path):
    pidfile = tmp_path / "child.pid"
    agent = await start_agent([sys.executable, str(ORPHANING), str(pidfile)])
    child = int(await until_async(lambda: pidfile.exists() and pidfile.read_text(), BOUND))
    os.kill(agent.process.supervisor_pid, signal.SIGKILL)
    await gone([agent.process.pid], "the agent outlived its supervisor (PR_SET_PDEATHSIG)")
    assert await asyncio.wait_for(agent.close(0.5), 15) == -signal.SIGKILL
    await gone([child], "close() ends the group even when the supervisor is gone")


async def test_a_program_that_cannot_run_is_an_os_error_of_spawn(tmp_path):
    with pytest.raises(FileNotFoundError, match="/nonexistent/agent"):
        await AgentProcess.spawn(["/nonexistent/agent"])
    plain = tmp_path / "plain.txt"
    plain.write_text("not a program")
    with pytest.raises(PermissionError):
        await AgentProcess.spawn([str(plain)])


# -- the kernel's paths (a real ipykernel) -------------------------------------------------------------
@pytest.fixture
def kernel(tmp_path):
    pytest.importorskip("jupyter_client")
    from .test_kernel import Kernel

    (tmp_path / "kernel").mkdir()
    k = Kernel(tmp_path / "kernel")
    try:
        yield k
    finally:
        k.close()


def start_in(kernel, piddir: Path) -> dict[str, int]:
    """Start the fake in the kernel (tracked by the registry, as ``%acp start`` does); its pids and
    its supervisor's."""
    kernel.ok(f"from acp_notebook import start_agent_sync\nagent = start_agent_sync({spawning(piddir)!r})")
    pids = until(lambda: read_pids(piddir), BOUND, message="the fake's pid files")
    assert os.getsid(pids["daemon"]) == pids["daemon"] != os.getpgid(pids["agent"])
    return {**pids, "supervisor": kernel.value("agent.process.supervisor_pid")}


def until_gone(pids: dict[str, int], why: str) -> None:
    until(
        lambda: not left(pids.values()),
        BOUND,
        message=lambda: f"{why} (still running: {left(pids.values())})",
    )


def test_a_kernel_shutdown_leaves_nothing(kernel, tmp_path):
    pids = start_in(kernel, tmp_path)
    kernel.kc.stop_channels()
    kernel.km.shutdown_kernel(now=False)
    until_gone(pids, "a kernel shutdown left processes of the agent")


def test_a_forced_kernel_restart_leaves_nothing(kernel, tmp_path):
    pids = start_in(kernel, tmp_path)
    kernel.km.restart_kernel(now=True)
    until_gone(pids, "a forced kernel restart left processes of the agent")


def test_a_sigkilled_kernel_leaves_nothing(kernel, tmp_path):
    pids = start_in(kernel, tmp_path)
    os.kill(kernel.pid, signal.SIGKILL)
    until_gone(pids, "a SIGKILLed kernel left processes of the agent")
