"""``%%acp``: the cell body is the prompt; the cell shows the view of this turn.

The turn runs as a task of the session's turn queue (``client.turns``) so the cell returns at once and the
view's buttons work. A prompt sent while the session is busy is queued: the cell says so and
shows a placeholder that becomes the turn's view when the turn starts. ``--wait`` awaits the
turn (the extension makes such a cell an awaiting one, so clicks still arrive and a kernel
interrupt cancels the turn); only if the cell could not be made awaiting does it block, and then
permission requests cancel the turn (``client.policy``).
"""

from __future__ import annotations

import argparse
from typing import Any

from IPython.display import display

from ..client.blocking import wait_blocking
from ..client.errors import AcpError
from ..client.session import Session
from .errors import MagicError

QUEUED = "(queued: this turn starts when the running one ends)"


class CellTurn:
    """The output of one ``%%acp`` cell: the turn's view (or a placeholder while queued)."""

    def __init__(self, session: Session, title: str) -> None:
        self.session, self.title = session, title
        self.view: Any = None
        self.handle: Any = None

    def show(self, queued: bool) -> None:
        """Display the view now, or a placeholder that the view replaces when the turn starts."""
        if queued:
            self.handle = display({"text/plain": QUEUED}, raw=True, display_id=True)
        else:
            self.view = self._make()
            display(self.view)

    def started(self) -> None:
        """The turn left the queue: build its view from here on."""
        if self.view is None:
            self.view = self._make()
            if self.handle is not None:
                self.handle.update(self.view)

    def ended(self) -> None:
        """The turn ended: the view keeps updating its items but shows no new ones."""
        if self.view is not None:
            self.view.stop_following()

    def _make(self) -> Any:
        from ..widgets import SessionView

        since = len(self.session.state.timeline)
        return SessionView(self.session, since=since, title=self.title)


def headline(text: str, width: int = 60) -> str:
    """The prompt's first line, shortened."""
    first = text.strip().splitlines()[0] if text.strip() else ""
    return first if len(first) <= width else first[: width - 1] + "…"


async def prompt_cell(commands: Any, args: argparse.Namespace, body: str, blocking: bool) -> None:
    """Send ``body`` to the session ``--name``; with ``--wait``, return when the turn ends."""
    session = commands.live_session(args.name)
    text = body.strip()
    if not text:
        raise MagicError("the cell has no prompt: write it below the %%acp line", "UsageError")
    turn = CellTurn(session, args.title or f"{args.name}: {headline(text)}")
    queued = session.busy
    if queued:
        print(f"`{args.name}` is busy: this prompt is queued and starts when the running turn ends.")
    turn.show(queued)
    task = session.prompt_task(text, on_start=turn.started, on_end=turn.ended)
    if not args.wait:
        return
    try:
        if blocking:
            reason = await wait_blocking(session, session.wait_turn(task))
        else:
            reason = await session.wait_turn(task)
    except AcpError as exc:
        raise MagicError.from_exception(exc) from None
    print(f"`{args.name}`: turn ended ({reason})")
