"""The live line of a waiting cell (``%%acp --wait``, ``%acp wait``): what the cell waits for.

JupyterLab shows the kernel "Idle" while such a cell still runs: every comm message a view
exchanges comes with its own busy/idle pair, and the last idle overrides the running execute (not
our code; the cell's own [*] stays). So the cell says it itself, in one output line updated in
place (a ``display_id``) as the session changes: "waiting for the turn to end", "waiting for your
answer (1 permission request)", "waiting for the turn to start (queued)". The line is rewritten
only when its text changes, and goes away (an empty output) when the wait ends, whatever ends it
(the turn's end, a timeout, an interrupt): the result line is printed after it. Only in a kernel:
a terminal IPython shows no "Idle", and would print each update as a new line.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
from collections.abc import Callable, Iterator
from typing import Any

from IPython import get_ipython
from IPython.display import display

STILL_RUNS = "this cell still runs, even where JupyterLab shows the kernel Idle"


def wait_text(session: Any, name: str, started: Callable[[], bool] = lambda: True) -> str:
    """What the cell waits for now, in plain words (``started``: whether its turn left the queue)."""
    asks = _asking(session)
    if asks:
        what = f"waiting for your answer ({asks})"
    elif not started():
        what = "waiting for the turn to start (queued behind the running one)"
    else:
        what = "waiting for the turn to end"
    return f"{name}: {what}… ({STILL_RUNS})"


def _asking(session: Any) -> str:
    """ "1 permission request", "2 permission requests and 1 question", or ""."""
    parts = []
    for count, word in (
        (len(session.pending_permissions), "permission request"),
        (len(getattr(session, "pending_elicitations", ())), "question"),
    ):
        if count:
            parts.append(f"{count} {word}{'' if count == 1 else 's'}")
    return " and ".join(parts)


def in_kernel() -> bool:
    """True in a Jupyter kernel (a terminal IPython would print each update as a new line)."""
    shell = get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None


@contextlib.contextmanager
def waiting_line(session: Any, name: str, started: Callable[[], bool] = lambda: True) -> Iterator[None]:
    """Show the live waiting line while the body waits (in a kernel); it goes away when the body ends."""
    if not in_kernel():
        yield
        return
    line = _Line(lambda: wait_text(session, name, started))
    unsubscribe = session.state.subscribe(lambda _change: line.refresh())
    try:
        yield
    finally:
        unsubscribe()
        line.clear()


class _Line:
    """One output line, updated in place only when its text changes. Updates run soon, in the
    waiting cell's context (ipykernel routes the output by it), not in the agent reader's."""

    def __init__(self, make: Callable[[], str]) -> None:
        self._make = make
        self._shown = make()
        self._handle: Any = display({"text/plain": self._shown}, raw=True, display_id=True)
        self._context = contextvars.copy_context()
        self._due = False

    def refresh(self) -> None:
        if not self._due and self._handle is not None:
            self._due = True
            try:
                asyncio.get_running_loop().call_soon(self._update, context=self._context)
            except RuntimeError:  # no loop runs (a state fed by hand): now, here
                self._update()

    def _update(self) -> None:
        self._due = False
        text = self._make()
        if text != self._shown and self._handle is not None:
            self._shown = text
            self._handle.update({"text/plain": text}, raw=True)

    def clear(self) -> None:
        if self._handle is not None:
            self._handle.update({}, raw=True)  # an output with nothing to show: the line is gone
            self._handle = None
