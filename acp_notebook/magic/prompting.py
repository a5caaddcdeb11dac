"""``%%acp``: the cell body is the prompt; the cell shows the view of this turn.

The turn runs as a task of the session's turn queue (``client.turns``) so the cell returns at once and the
view's buttons work. A prompt sent while the session is busy is queued: the cell says so and
shows a placeholder that becomes the turn's view when the turn starts. ``--wait`` awaits the
turn (the extension makes such a cell an awaiting one, so clicks still arrive and a kernel
interrupt cancels the turn; ``--timeout S`` bounds the wait); only if the cell could not be made
awaiting does it block, and then permission requests cancel the turn (``client.policy``) unless
``--permissions`` names a policy that answers them (``magic.waiting``).
"""

from __future__ import annotations

import argparse
from typing import Any

from IPython.display import display

from ..client.errors import AcpError, AuthRequired
from ..client.session import Session
from . import report, waiting
from .errors import MagicError
from .wait_line import waiting_line

QUEUED = "(queued: this turn starts when the running one ends)"


class CellTurn:
    """The output of one ``%%acp`` cell: the turn's view (or a placeholder while queued)."""

    def __init__(self, session: Session, title: str) -> None:
        self.session, self.title = session, title
        self.view: Any = None
        self.handle: Any = None
        self.begun = False  # the turn left the queue

    def show(self, queued: bool) -> None:
        """Display the view now, or a placeholder that the view replaces when the turn starts."""
        if queued:
            self.handle = display({"text/plain": QUEUED}, raw=True, display_id=True)
        else:
            self.view = self._make()
            display(self.view)

    def started(self) -> None:
        """The turn left the queue: build its view from here on; the next prompt's turn is its."""
        self.begun = True
        if self.view is None:
            self.view = self._make()
            if self.handle is not None:
                self.handle.update(self.view)
        else:  # shown at once: the number is sure only now (a turn sent from code may have come first)
            self.view.anchor = self._anchor()
        if self.view.turn_scope is not None:  # an agent's own turn may still come first
            self.view.turn_scope.expect_next()

    def ended(self) -> None:
        """The turn ended: the view keeps updating its items but shows no new ones."""
        if self.view is not None:
            self.view.stop_following()
            if self.view.turn_scope is not None:
                self.view.turn_scope.over()

    def _make(self) -> Any:
        from ..widgets import SessionView

        since, number = len(self.session.state.timeline), len(self.session.turns) + 1
        return SessionView(self.session, since=since, title=self.title, anchor=self._anchor(), turn=number)

    def _anchor(self) -> str:
        """The anchor of the turn about to start (the start cell's header lines link to it)."""
        from ..widgets.header_view import anchor_of

        return anchor_of(self.session, len(self.session.turns) + 1)


def headline(text: str, width: int = 60) -> str:
    """The prompt's first line, shortened."""
    first = text.strip().splitlines()[0] if text.strip() else ""
    return first if len(first) <= width else first[: width - 1] + "…"


async def prompt_cell(commands: Any, args: argparse.Namespace, body: str, blocking: bool) -> None:
    """Send ``body`` to the session ``--name``; with ``--wait``, return when the turn ends."""
    if args.agents is not None:  # several agents, each in its own copy of --cwd
        from .comparing import compare_cell  # the comparison loads only when asked for

        return await compare_cell(commands, args, body.strip(), blocking)
    session = commands.live_session(args.name)
    text = body.strip()
    if not text:
        raise MagicError("the cell has no prompt: write it below the %%acp line", "UsageError")
    turn = CellTurn(session, args.title or args.name)  # the prompt: the cell's source and the view's bubble
    queued = session.busy
    if queued:
        print(f"{args.name} is busy: this prompt is queued and starts when the running turn ends.")
    turn.show(queued)
    policy = waiting.policy_named(args.permissions, commands.shell.user_ns)
    elicitations = waiting.elicitations_named(args.elicitations)
    on_start, on_end = waiting.turn_hooks(session, policy, turn.started, turn.ended, elicitations)
    task = session.prompt_task(text, on_start=on_start, on_end=on_end)
    task.add_done_callback(lambda t: _needs_login(commands, args.name, text, t))
    if not args.wait:
        return
    try:
        with waiting_line(session, args.name, lambda: turn.begun):  # JupyterLab may show "Idle"
            if blocking:
                reason = await session.wait_blocking(task, policy)
            else:
                reason = await waiting.wait_turn(session, task, args.name, args.timeout)
    except AuthRequired as exc:
        lines = report.auth_lines(exc.methods, args.name)
        raise MagicError(
            f"{exc}\n" + "\n".join(lines) + "\n(the prompt is sent again after the login)"
        ) from None
    except AcpError as exc:
        raise MagicError.from_exception(exc) from None
    print(f"{args.name}: turn ended ({reason})")


def _needs_login(commands: Any, name: str, text: str, task: Any) -> None:
    """A prompt the agent refused for want of a login is kept, to be sent after ``%acp login``."""
    if not task.cancelled() and isinstance(task.exception(), AuthRequired):
        commands.awaiting_prompt[name] = text


async def resend(commands: Any, name: str) -> None:
    """After a login: send again the prompt that needed it, with its view (``%acp login``)."""
    text = commands.awaiting_prompt.pop(name, None)
    if text is None:
        return
    session = commands.live_session(name)
    print(f"Sending the prompt that needed the login again: {headline(text)!r}")
    turn = CellTurn(session, name)
    turn.show(session.busy)
    session.prompt_task(text, on_start=turn.started, on_end=turn.ended)
