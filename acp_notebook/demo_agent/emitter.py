"""The version-neutral "emitter" a scenario talks to, plus neutral content helpers."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .data import absolute
from .memory import SessionMemory

FINAL_STATUSES = frozenset({"completed", "failed", "cancelled"})


class TurnCancelled(Exception):
    """Raised inside a scenario once the client cancelled the turn."""


@dataclass
class FileChange:
    """One file touched by an edit, rich enough for a v2 change and a v1 diff."""

    operation: str
    path: str
    old_path: str | None = None
    file_type: str = "text"
    mime_type: str | None = None
    old_text: str | None = None
    new_text: str | None = None


@dataclass
class Session:
    """Agent-side state of one session."""

    session_id: str
    cwd: str
    turns: int = 0
    messages: int = 0
    title: str | None = None
    always: set[str] = field(default_factory=set)
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    active: list[Any] = field(default_factory=list)
    memory: SessionMemory = field(default_factory=SessionMemory)
    plays: dict[Any, int] = field(default_factory=dict)
    mcp_servers: list[Any] = field(default_factory=list)  # as given in `session/new`
    parent_id: str | None = None  # a subagent session: the session that announced it
    cancellable: bool = True  # a subagent honours `session/cancel` only if it advertised it
    background: list[dict] | None = None  # v2 `state_update.background`, once reported (then always)
    work: set[asyncio.Task] = field(default_factory=set)  # background work running for this session
    settings: dict | None = None  # what the user answered at `session/new` (the elicitation scenario)
    elicitations: int = 0  # URL elicitations asked in this session (for unique elicitation ids)

    def played(self, scenario: Any) -> int:
        """Count one more play of `scenario` in this session; how many there have been."""
        self.plays[scenario] = self.plays.get(scenario, 0) + 1
        return self.plays[scenario]


def prompt_text(prompt: Any) -> str:
    """The text blocks of a prompt joined together."""
    blocks = prompt if isinstance(prompt, list) else []
    texts = [b for b in blocks if isinstance(b, dict) and b.get("type") == "text"]
    return "".join(str(b.get("text", "")) for b in texts)


def text_item(text: str) -> dict:
    """A `content` tool-call item holding one text block."""
    return {"type": "content", "content": {"type": "text", "text": text}}


def terminal_item(terminal_id: str) -> dict:
    """A tool-call item referencing a terminal."""
    return {"type": "terminal", "terminalId": terminal_id}


def diff_item(files: list[FileChange], patch: str | None) -> dict:
    """A version-neutral diff item; each shapes module renders it its own way."""
    return {"type": "diff", "files": files, "patch": patch}


class BaseEmitter:
    """Turn-scoped plumbing shared by the v1 and v2 shapes: ids, pauses, cancel, requests."""

    version = 0

    def __init__(self, out: Any, session: Session, speed: float, client: dict) -> None:
        session.turns += 1
        self.out, self.session, self.speed, self.client = out, session, speed, client
        self.turn_no = session.turns
        self.play_no = self.turn_no  # the agent sets it: how often this turn's scenario has played
        self.cancelled = asyncio.Event()
        self.ended = asyncio.Event()  # set once the turn has ended (its final update was sent)
        self.sessions: dict[str, Session] = {}  # the agent's table (subagent sessions are added to it)
        self.start_turn: Callable[[Session, Callable], Any] | None = None  # agent-started turns (v2)
        self.tools: dict[str, dict] = {}
        self.tool_cancels: dict[str, asyncio.Event] = {}
        self.prompt: list = []

    @property
    def cwd(self) -> str:
        """The session's absolute working directory."""
        return self.session.cwd

    def sfx(self, base: str) -> str:
        """A session-unique id: `base` on the scenario's first play, `base_N` on its Nth play."""
        return base if self.play_no == 1 else f"{base}_{self.play_no}"

    def path(self, rel: str) -> str:
        """Absolute path of a project-relative file."""
        return absolute(self.cwd, rel)

    def message_id(self, kind: str) -> str:
        """A fresh message id, unique within the session."""
        self.session.messages += 1
        return f"msg_{kind}_{self.session.messages}"

    def prompt_text(self) -> str:
        """The text blocks of the user's prompt joined together."""
        return prompt_text(self.prompt)

    # -- timing and cancellation ----------------------------------------------

    def cancel(self) -> None:
        """Mark the turn cancelled; the scenario stops at its next step or pause."""
        self.cancelled.set()

    def check(self) -> None:
        """Raise TurnCancelled if the turn was cancelled."""
        if self.cancelled.is_set():
            raise TurnCancelled

    async def pause(self, seconds: float) -> None:
        """A realistic pause scaled by --speed; wakes early on cancel."""
        await self.sleep(seconds * self.speed)

    async def sleep(self, delay: float) -> None:
        """An unscaled, cancellable sleep (raises TurnCancelled)."""
        self.check()
        if delay <= 0:
            await asyncio.sleep(0)
        else:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.cancelled.wait(), delay)
        self.check()

    def cancel_tool(self, call_id: str) -> bool:
        """Handle `tool_call/cancel`; False if the call is unknown, final or not cancellable."""
        event = self.tool_cancels.get(call_id)
        status = self.tools.get(call_id, {}).get("status")
        if event is None or status in FINAL_STATUSES:
            return False
        event.set()
        return True

    def tool_cancel_requested(self, call_id: str) -> bool:
        """Whether the client asked to cancel this one tool call."""
        event = self.tool_cancels.get(call_id)
        return bool(event and event.is_set())

    def unfinished_tools(self) -> list[str]:
        """Ids of tool calls reported in this turn that have no final status yet."""
        return [cid for cid, f in self.tools.items() if f.get("status") not in FINAL_STATUSES]

    # -- session-level extras (the same in both versions) ---------------------------

    def usage(self, used: int, size: int) -> None:
        """Report context usage (`usage_update`, in both versions' schemas)."""
        self.update({"sessionUpdate": "usage_update", "used": used, "size": size})

    def info(self, title: str) -> None:
        """Update the session title."""
        self.session.title = title
        self.update({"sessionUpdate": "session_info_update", "title": title})

    # -- wire helpers -----------------------------------------------------------

    def update(self, update: dict) -> None:
        """Send one `session/update` notification for this session."""
        self.out.notify("session/update", {"sessionId": self.session.session_id, "update": update})

    async def call(self, method: str, params: dict) -> Any:
        """Send a request and await it, raising TurnCancelled if the turn is cancelled first."""
        req_id, future = self.out.start_request(method, params)
        waiter = asyncio.ensure_future(self.cancelled.wait())
        try:
            await asyncio.wait({future, waiter}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            waiter.cancel()
        if future.done():
            return future.result()
        future.cancel()
        self.abandoned(req_id, method)
        raise TurnCancelled

    def abandoned(self, req_id: int, method: str) -> None:
        """Hook: a request was left unanswered because the turn was cancelled."""

    async def permission(self, params: dict, call_id: str, command: str | None = None) -> str | None:
        """Ask for permission about `call_id`; the selected optionId, or None for anything else."""
        from .wire import RpcError

        try:
            result = await self.call("session/request_permission", params)
        except RpcError:
            result = None
        except TurnCancelled:
            self.session.memory.answered(call_id, None, command)
            raise
        option = selected_option(result)
        self.session.memory.answered(call_id, option, command)
        return option

    def remember(self, call_id: str, fields: dict) -> dict:
        """Merge a tool-call patch into what this turn knows about the call."""
        known = self.tools.setdefault(call_id, {})
        known.update(fields)
        self.session.memory.record(call_id, self.turn_no, fields)
        return known


def selected_option(result: Any) -> str | None:
    """The optionId of a `selected` permission outcome, else None."""
    outcome = result.get("outcome") if isinstance(result, dict) else None
    if isinstance(outcome, dict) and outcome.get("outcome") == "selected":
        option = outcome.get("optionId")
        return option if isinstance(option, str) else None
    return None
