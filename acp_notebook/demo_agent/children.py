"""Subagent sessions on the wire (ACP v2, unstable schema): announce, message, run, mirror, report.

How the demo agent runs a child session, by the schema's `SubagentUpdate`, `SessionMessage` and
`SessionMessageChunk`:

- A child is announced by a `subagent_update` on its immediate parent's session before anything
  bears its id: title, description, `state`, and `capabilities.cancel: {}` only where the client may
  cancel it (unset capabilities permit nothing). Its own updates and permission requests carry its
  own `sessionId`; the agent's table holds it, so `session/cancel` with its id cancels its work when,
  and only when, it advertised cancel.
- Every state the child reports on its own session is mirrored onto the parent's association
  (`subagent_update` with the same snapshot). While a foreground child waits for the user, its parent
  reports `requires_action` too (its turn cannot go on), as claude-agent-acp does.
- A message between sessions is sent twice: the outgoing view on the sender's session (its own
  `messageId`, `recipientMessageId`) and the incoming view on the recipient's (`senderMessageId`).
  The report a child sends back streams on the parent as `session_message_chunk`s first; the upsert
  naming the participants follows (a chunk may arrive before it).
- A foreground child stops with its parent's turn; a background child goes on after it, listed in
  the parent's `state_update.background` as `{type: "subagent", sessionId}` until it ends.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import Any

from .emitter import Session, TurnCancelled
from .shapes_v2 import V2Emitter

Work = Callable[["ChildEmitter"], Awaitable[list[str]]]  # a child's work; returns its report's chunks
Then = Callable[["ChildEmitter", str, list[str]], Callable[[Any], Awaitable[None]]]


class ChildEmitter(V2Emitter):
    """Emits one subagent session's own updates and mirrors its state onto its parent's."""

    def __init__(self, parent: V2Emitter, session: Session, foreground: bool) -> None:
        super().__init__(parent.out, session, parent.speed, parent.client)
        self.parent, self.foreground, self.blocked = parent, foreground, False
        self.sessions, self.start_turn = parent.sessions, parent.start_turn

    @property
    def session_id(self) -> str:
        """The child's session id."""
        return self.session.session_id

    def state(self, state: str, stop_reason: str | None = None) -> None:
        """Report the child's state on its session and on its parent's association."""
        snapshot = {"state": state, **({"stopReason": stop_reason} if stop_reason else {})}
        self.parent.update(
            {"sessionUpdate": "subagent_update", "sessionId": self.session_id, "state": snapshot}
        )
        super().state(state, stop_reason)
        if self.foreground and (state == "requires_action") != self.blocked:
            self.blocked = state == "requires_action"
            if not self.parent.cancelled.is_set():  # a cancelled parent reports its own idle next
                self.parent.state("requires_action" if self.blocked else "running")

    def begin(self) -> None:
        """The child's work starts (its announcement already told the parent it runs)."""
        V2Emitter.state(self, "running")

    async def run(self, work: Work) -> tuple[str, list[str]]:
        """Play `work` as the child's turn: ('end_turn', its report) or ('cancelled', []) when the
        client or (for a foreground child) the parent's turn cancelled it."""
        self.session.active.append(self)
        follow = asyncio.ensure_future(self._follow()) if self.foreground else None
        said: list[str] = []
        try:
            try:
                self.begin()
                said = await work(self)
                stop = "end_turn"
            except TurnCancelled:
                stop = "cancelled"
            await self.finish(stop)
        finally:
            if follow is not None:
                follow.cancel()
            self.session.active.remove(self)
            self.ended.set()
        return stop, said

    async def _follow(self) -> None:
        """A foreground child is cancelled with its parent's turn."""
        with contextlib.suppress(asyncio.CancelledError):
            await self.parent.cancelled.wait()
            self.cancel()


def open_child(
    parent: V2Emitter, name: str, title: str, description: str, *, cancel: bool, foreground: bool = True,
    cwd: str | None = None,
) -> ChildEmitter:  # fmt: skip
    """Register a child session of `parent`'s and announce it (`subagent_update`) as running."""
    child_id = f"{parent.session.session_id}.{parent.sfx(name)}"
    session = Session(child_id, cwd or parent.cwd, parent_id=parent.session.session_id, cancellable=cancel)
    parent.sessions[child_id] = session
    update = {"sessionUpdate": "subagent_update", "sessionId": child_id, "title": title}
    update.update({"description": description, "state": {"state": "running"}})
    if cancel:
        update["capabilities"] = {"cancel": {}}
    if cwd is not None:
        update["cwd"] = cwd
    update["_meta"] = {"acpNotebookDemo": {"role": name}}
    parent.update(update)
    return ChildEmitter(parent, session, foreground)


def give_task(parent: V2Emitter, child: ChildEmitter, text: str) -> None:
    """The parent's message to the child: its outgoing view, then the child's incoming view."""
    out_id, in_id = parent.message_id("out"), child.message_id("in")
    content = [{"type": "text", "text": text}]
    ends = {"senderSessionId": parent.session.session_id, "recipientSessionId": child.session_id}
    outgoing = {"sessionUpdate": "session_message", "messageId": out_id, **ends, "recipientMessageId": in_id}
    parent.update({**outgoing, "content": content})
    incoming = {"sessionUpdate": "session_message", "messageId": in_id, **ends, "senderMessageId": out_id}
    child.update({**incoming, "content": content})


async def report(child: ChildEmitter, to: V2Emitter, chunks: list[str]) -> None:
    """The child's report to `to` (its parent): the child's outgoing view whole, then the incoming
    view on `to` streamed chunk by chunk, and the upsert that names who sent it."""
    out_id, in_id = child.message_id("out"), to.message_id("in")
    ends = {"senderSessionId": child.session_id, "recipientSessionId": to.session.session_id}
    content = [{"type": "text", "text": chunk} for chunk in chunks]
    outgoing = {"sessionUpdate": "session_message", "messageId": out_id, **ends, "recipientMessageId": in_id}
    child.update({**outgoing, "content": content})
    for block in content:
        await to.pause(0.05)
        to.update({"sessionUpdate": "session_message_chunk", "messageId": in_id, "content": block})
    to.update({"sessionUpdate": "session_message", "messageId": in_id, **ends, "senderMessageId": out_id})


async def wait_for(em: V2Emitter, event: asyncio.Event) -> None:
    """Wait until `event` is set; raise TurnCancelled if `em` is cancelled first."""
    waiters = [asyncio.ensure_future(event.wait()), asyncio.ensure_future(em.cancelled.wait())]
    try:
        await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for waiter in waiters:
            waiter.cancel()
    em.check()


def in_background(parent: V2Emitter, child: ChildEmitter, work: Work, then: Then) -> None:
    """Run `child` beyond `parent`'s turn: listed in the parent's `background` until it ends, then
    `then(child, stop, report)` plays as a turn the agent starts in the parent's session."""
    session = parent.session
    session.background = [*(session.background or []), {"type": "subagent", "sessionId": child.session_id}]
    parent.state("running")  # the snapshot that lists it

    async def go() -> None:
        stop, said = await child.run(work)
        session.background = [b for b in session.background or [] if b.get("sessionId") != child.session_id]
        if session.session_id in parent.sessions and parent.start_turn is not None:
            await parent.start_turn(session, then(child, stop, said))

    task = asyncio.ensure_future(go())
    session.work.add(task)
    task.add_done_callback(session.work.discard)
