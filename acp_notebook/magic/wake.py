"""A kernel interrupt wakes the kernel's loop at once while a cell waits (``interruptible``).

Why it does not on its own (ipykernel 7.4, tornado 6): while an awaiting cell runs, ipykernel's
``_cancel_on_sigint`` puts a ``signal.signal`` SIGINT handler in place that schedules the cell's
cancellation with ``io_loop.add_callback``. Python runs that handler in the main thread, which is
the loop's own thread, so tornado picks the plain ``call_soon``: the callback is queued but the
selector is not woken, and the loop goes back to ``select()`` with its long timeout. Nobody in
the kernel (ipykernel, tornado, anyio, asyncio without ``add_signal_handler``) installs
``signal.set_wakeup_fd``, so the interrupt lands when some other message or timer wakes the loop —
never, for a quiet agent waiting on a permission. (Interrupts sent as ``interrupt_request`` on the
control channel end the same way: the kernel sends itself SIGINT.)

``interruptible()`` installs the wakeup for the length of a wait: a socket pair whose write end is
the wakeup fd and whose read end the loop drains. The signal's C-level handler writes a byte, the
selector returns, the queued cancellation runs. Waits under way share one wakeup; the previous fd
(none) is put back when the last ends. Where the wakeup cannot be ours (someone else's fd is set,
or the loop cannot watch a socket), a timer wakes the loop every ``TICK`` s instead. Off the main
thread nothing is done: Python delivers signals to the main thread only.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import socket
import threading
from collections.abc import Iterator

TICK = 0.25  # s between wakes when the wakeup fd cannot be ours


class _Wakeup:
    """The signal wakeup fd: a socket pair the loop drains, shared by the waits under way."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop, self.users = loop, 0
        self.reader, self.writer = socket.socketpair()
        for end in (self.reader, self.writer):
            end.setblocking(False)

    def install(self) -> bool:
        """Make the write end the wakeup fd, the read end watched by the loop; False if it cannot be."""
        try:
            self.loop.add_reader(self.reader.fileno(), self._drain)
        except NotImplementedError:  # a loop with no readers (Windows' proactor)
            return False
        previous = signal.set_wakeup_fd(self.writer.fileno(), warn_on_full_buffer=False)
        if previous != -1:  # someone else's: leave it in place
            signal.set_wakeup_fd(previous)
            self.loop.remove_reader(self.reader.fileno())
            return False
        return True

    def remove(self) -> None:
        """Put back no wakeup fd (unless another was set meanwhile) and stop watching."""
        current = signal.set_wakeup_fd(-1)
        if current != self.writer.fileno():
            signal.set_wakeup_fd(current)
        self.loop.remove_reader(self.reader.fileno())
        self.close()

    def close(self) -> None:
        """Close both ends."""
        self.reader.close()
        self.writer.close()

    def _drain(self) -> None:
        with contextlib.suppress(OSError):  # BlockingIOError: all read
            while self.reader.recv(4096):
                pass


_installed: _Wakeup | None = None


@contextlib.contextmanager
def interruptible() -> Iterator[None]:
    """While the body runs, a kernel interrupt (SIGINT) wakes the running loop at once."""
    loop = asyncio.get_running_loop()
    with contextlib.ExitStack() as stack:
        if threading.current_thread() is threading.main_thread():
            stack.enter_context(_woken(loop))
        yield


class Held:
    """An ``interruptible()`` entered by ``hold()`` and left by ``release()`` (a cell's two hooks)."""

    def __init__(self) -> None:
        self._context: contextlib.AbstractContextManager[None] | None = interruptible()
        self._context.__enter__()

    def release(self) -> None:
        """Leave it (once)."""
        context, self._context = self._context, None
        if context is not None:
            context.__exit__(None, None, None)


def hold() -> Held | None:
    """``interruptible()`` until ``release()`` (a cell's start to its end); None without a running loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:  # a cell run outside a loop (a plain IPython shell): nothing to wake
        return None
    return Held()


@contextlib.contextmanager
def _woken(loop: asyncio.AbstractEventLoop) -> Iterator[None]:
    wakeup = _share(loop)
    if wakeup is None:
        ticker = loop.create_task(_tick())
        try:
            yield
        finally:
            ticker.cancel()
        return
    try:
        yield
    finally:
        _release(wakeup)


def _share(loop: asyncio.AbstractEventLoop) -> _Wakeup | None:
    """The wakeup in place for ``loop`` (installed now if none is), one more user; None if none can be."""
    global _installed
    if _installed is None:
        wakeup = _Wakeup(loop)
        if not wakeup.install():
            wakeup.close()
            return None
        _installed = wakeup
    elif _installed.loop is not loop:  # a nested loop: the outer loop's reader would not see it
        return None
    _installed.users += 1
    return _installed


def _release(wakeup: _Wakeup) -> None:
    global _installed
    wakeup.users -= 1
    if wakeup.users == 0:
        wakeup.remove()
        _installed = None


async def _tick() -> None:
    while True:
        await asyncio.sleep(TICK)
