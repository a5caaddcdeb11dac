"""A kernel interrupt lands at once while a cell waits on a quiet agent (``client.wake``).

In process: a SIGINT handler that queues its work with a plain ``call_soon`` (as ipykernel's does,
through tornado) is acted on within a fraction of a second inside ``interruptible()``, where the
loop would otherwise sleep until its next timer; the wakeup fd is put back afterwards. In a real
kernel: ``%%acp --wait`` / ``%acp wait`` on an agent that asks a permission and then sends nothing
end within a second of the interrupt (SIGINT or ``interrupt_request``), the turn cancelled.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shlex
import signal
import sys
import threading
import time
from pathlib import Path

import pytest

from acp_notebook.magic import wake

from .test_kernel import kernel  # noqa: F401  (the real-kernel fixture)

QUIET = Path(__file__).parent / "agents" / "quiet_permission.py"
BOUND = 2.0  # s the loop would sleep without a wake (the test's own timer)
LEFT_BEHIND = (  # run in a cell, which holds the wakeup itself (the cell hooks): one user, no ticker
    "import asyncio, signal\nfrom acp_notebook.magic import wake\n"
    "fd = signal.set_wakeup_fd(-1); signal.set_wakeup_fd(fd)\n"
    "print(wake._installed.users, fd == wake._installed.writer.fileno(),"
    " [t for t in asyncio.all_tasks() if '_tick' in repr(t)])"
)


# -- in process ------------------------------------------------------------------------------------
def wakeup_fd() -> int:
    """The wakeup fd in place (read by setting none, then putting it back)."""
    current = signal.set_wakeup_fd(-1)
    signal.set_wakeup_fd(current)
    return current


@contextlib.contextmanager
def sigint_like_ipykernel(loop: asyncio.AbstractEventLoop, landed: asyncio.Future):
    """A SIGINT handler that queues ``landed``'s result with ``call_soon`` (no wake), as ipykernel 7.4."""

    def handler(*_):
        loop.call_soon(lambda: landed.done() or landed.set_result(time.monotonic()))

    saved = signal.signal(signal.SIGINT, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, saved)


async def interrupt_latency(context=wake.interruptible) -> float:
    """Seconds from a SIGINT (sent by another thread) to its handler's work running on the loop."""
    loop = asyncio.get_running_loop()
    landed = loop.create_future()
    sent: list[float] = []

    def interrupt() -> None:
        sent.append(time.monotonic())
        os.kill(os.getpid(), signal.SIGINT)

    with sigint_like_ipykernel(loop, landed), context():
        await asyncio.sleep(0)  # the ticker (if any) starts, then the loop goes quiet
        timer = threading.Timer(0.2, interrupt)
        timer.start()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(landed), BOUND)
        timer.join()  # the signal is sent while the handler above is in place
    assert sent and landed.done(), "the handler never ran"
    return landed.result() - sent[0]


def test_without_a_wake_the_interrupt_waits_for_the_next_timer():
    latency = asyncio.run(interrupt_latency(contextlib.nullcontext))
    assert latency > BOUND - 0.5, "nothing wakes the loop: the premise of client.wake"


def test_an_interrupt_wakes_the_loop_at_once_and_the_wakeup_is_put_back():
    assert asyncio.run(interrupt_latency()) < 0.2
    assert wakeup_fd() == -1 and wake._installed is None


def test_someone_elses_wakeup_fd_is_kept_and_a_timer_wakes_the_loop():
    reader, writer = os.pipe()
    os.set_blocking(writer, False)
    signal.set_wakeup_fd(writer)
    try:

        async def main():
            latency = await interrupt_latency()
            await asyncio.sleep(0)  # the cancelled ticker finishes
            return latency, [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]

        latency, left = asyncio.run(main())
        assert latency < wake.TICK + 0.2 and left == [], "woken by the ticker, cancelled when the wait ends"
        assert wakeup_fd() == writer
    finally:
        signal.set_wakeup_fd(-1)
        os.close(reader)
        os.close(writer)


def test_overlapping_waits_share_the_wakeup_until_the_last_ends():
    async def main():
        first, second = wake.interruptible(), wake.interruptible()
        first.__enter__()
        second.__enter__()
        ours = wakeup_fd()
        first.__exit__(None, None, None)
        assert wakeup_fd() == ours != -1, "the second wait still needs it"
        second.__exit__(None, None, None)
        assert wakeup_fd() == -1
        return await interrupt_latency()  # installed again afresh

    assert asyncio.run(main()) < 0.2
    assert wakeup_fd() == -1 and wake._installed is None


def test_off_the_main_thread_nothing_is_installed():
    errors = []

    async def wait():
        with wake.interruptible():
            await asyncio.sleep(0)

    thread = threading.Thread(target=lambda: errors.append(asyncio.run(wait())))
    thread.start()
    thread.join(10)
    assert errors == [None] and wake._installed is None


# -- in a real kernel ------------------------------------------------------------------------------
def start_quiet(k, tmp_path: Path) -> Path:
    """``%acp start`` the quiet agent; returns the log of what it received."""
    log = tmp_path / "quiet.jsonl"
    run = k.ok(f"%acp start --name acp {shlex.join([sys.executable, str(QUIET), str(log)])}")
    assert "is acp" in run.stdout, run.stdout
    return log


def interrupt_and_time(k, cell, how: str = "signal") -> float:
    """Wait until the permission request is described (the loop is then quiet), interrupt, time the end."""
    k.until(lambda: "acp: waiting for permission" in cell.stdout, "the pending request described")
    began = time.monotonic()
    if how == "signal":
        k.km.interrupt_kernel()
    else:  # what jupyter_client sends for a kernelspec whose interrupt_mode is "message"
        k.kc.control_channel.send(k.kc.session.msg("interrupt_request", {}))
    try:
        k.wait(cell, timeout=5)
    except AssertionError:
        assert k.km.is_alive(), "the kernel exited: a KeyboardInterrupt (TurnInterrupted) escaped its loop"
        raise
    return time.monotonic() - began


def assert_cancelled(k, log: Path, cell) -> None:
    """The cell said it was interrupted; the agent got session/cancel and a cancelled answer."""
    assert [e["ename"] for e in cell.errors] == ["TurnInterrupted"], cell.errors
    received = [json.loads(line) for line in log.read_text().splitlines()]
    assert any(m.get("method") == "session/cancel" for m in received)
    answers = [m["result"]["outcome"] for m in received if "method" not in m and "result" in m]
    assert answers[-1] == {"outcome": "cancelled"}
    assert k.value("acp.state.stop_reason") == "cancelled"
    left = k.ok(LEFT_BEHIND).stdout.split()
    assert left == ["1", "True", "[]"], "only the cell's own wakeup, no ticker left after the wait"


@pytest.mark.parametrize(
    ("cell_code", "how"),
    [
        ("%%acp --wait\nDelete the build directory", "signal"),
        ("%%acp --wait --timeout 60\nDelete the build directory", "signal"),
        ("%%acp --wait\nDelete the build directory", "message"),
    ],
    ids=["wait", "wait-with-timeout", "interrupt-request"],
)
def test_an_interrupt_ends_a_quiet_wait_within_a_second(kernel, tmp_path, cell_code, how):  # noqa: F811
    log = start_quiet(kernel, tmp_path)
    cell = kernel.submit(cell_code)
    latency = interrupt_and_time(kernel, cell, how)
    print(f"interrupt to cell end: {latency * 1000:.0f} ms")
    assert latency < 1.0, f"the interrupt took {latency:.2f} s to land"
    assert_cancelled(kernel, log, cell)
    again = kernel.ok("%%acp --wait --permissions allow-once\nagain")
    assert "turn ended (end_turn)" in again.stdout, "the agent and the kernel are still usable"


def test_an_interrupt_ends_a_quiet_acp_wait(kernel, tmp_path):  # noqa: F811
    log = start_quiet(kernel, tmp_path)
    kernel.ok("%%acp\nDelete the build directory")
    cell = kernel.submit("%acp wait")
    latency = interrupt_and_time(kernel, cell)
    assert latency < 1.0, f"the interrupt took {latency:.2f} s to land"
    assert_cancelled(kernel, log, cell)


def test_an_interrupt_ends_a_plain_awaiting_prompt_cell_within_a_second(kernel, tmp_path):  # noqa: F811
    """Not only the magic's waits: a cell awaiting ``session.prompt`` on a quiet agent (the cell hooks)."""
    log = start_quiet(kernel, tmp_path)
    cell = kernel.submit('await acp.prompt("Delete the build directory")')
    kernel.until(lambda: "session/prompt" in log.read_text(), "the prompt sent")
    time.sleep(BOUND)  # the loop goes quiet: the agent waits on its permission, nothing else runs
    began = time.monotonic()
    kernel.km.interrupt_kernel()
    kernel.wait(cell, timeout=5)
    latency = time.monotonic() - began
    print(f"interrupt to cell end: {latency * 1000:.0f} ms")
    assert latency < 1.0, f"the interrupt took {latency:.2f} s to land"
    assert cell.errors and "cancelling the turn of acp" in cell.stderr, (cell.errors, cell.stderr)
    kernel.until(lambda: "session/cancel" in log.read_text(), "the turn cancelled")
    left = kernel.ok(LEFT_BEHIND).stdout.split()
    assert left == ["1", "True", "[]"], "only the new cell's own wakeup: the interrupted cell's is gone"
