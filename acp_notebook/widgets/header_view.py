"""SessionHeaderView: the ``%acp start`` cell's view — the session header and one line per turn.

Each turn already shows in its own ``%%acp`` cell, so this view shows none of the entries: only
the header (``header.header``, with the subagents' requests that wait) and, per turn, its number,
the prompt's first line (or, for a turn the agent started, where it came from), its state or stop
reason, its tool-call and subagent counts and duration, and the anchor of the turn's cell view
(``anchor_of``), which the page scrolls to when the line is clicked (format: ``js/WIRE.md``).
It follows the state through the kernel-wide scheduler like ``SessionView``; a patch carries the
header only when it changed and only the turn lines that changed.
"""

from __future__ import annotations

import secrets
import time
import weakref
from collections.abc import Callable
from typing import Any

import anywidget
import traitlets
from ipywidgets import widget_serialization

from .. import frontend
from ..protocol.changes import Change
from .actions import actions_for
from .browser_inbox import stderr_reply
from .header import header
from .message_parts import BoundedSender
from .on_loop import on_loop
from .runtime import Runtime, get_runtime, static_file
from .scheduler import Scheduler, default_scheduler
from .subtree import SUBAGENT_UPDATE, ViewTree
from .tree_entries import waiting_list

PROMPT_CHARS = 80
_TOKENS: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()


def anchor_of(session: Any, number: int) -> str:
    """The anchor of turn ``number``: ``"<session_id>/<token>#<number>"`` (one token per session)."""
    return f"{session.session_id}/{_token(session)}#{number}"


def header_anchor_of(session: Any) -> str:
    """The anchor of the session's header view (the start cell): ``"<session_id>/<token>#header"``."""
    return f"{session.session_id}/{_token(session)}#header"


def _token(session: Any) -> str:
    token = _TOKENS.get(session)
    if token is None:
        token = _TOKENS[session] = secrets.token_hex(4)
    return token


def first_line(text: str, width: int = PROMPT_CHARS) -> str:
    """The first non-empty line of ``text``, clipped to ``width`` characters."""
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    return line if len(line) <= width else line[: width - 1] + "…"


class _Record:
    """What the view saw of one turn: when it started and ended, its prompt message, and where in
    the timeline it began (``since``; None when not known)."""

    __slots__ = ("ended", "prompt_id", "since", "started")

    def __init__(self, started: float | None, prompt_id: str | None = None, since: int | None = None) -> None:
        self.started, self.ended, self.prompt_id, self.since = started, None, prompt_id, since


class SessionHeaderView(anywidget.AnyWidget):
    """A live header of a session with one clickable line per turn (no entries)."""

    _esm = static_file("loader.js")
    runtime = traitlets.Instance(Runtime).tag(sync=True, **widget_serialization)
    kind = traitlets.Unicode("header").tag(sync=True)
    snapshot = traitlets.Dict().tag(sync=True)
    anchor = traitlets.Unicode("").tag(sync=True)  # the page's data-acp-anchor: turn views link here

    def __init__(
        self,
        session: Any,
        *,
        title: str | None = None,
        hint: str | None = None,
        scheduler: Scheduler | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        super().__init__(runtime=get_runtime(), anchor=header_anchor_of(session))
        frontend.mark_shown()
        self.session, self.state, self.title, self.hint = session, session.state, title, hint
        self.actions = actions_for(session, self.state)
        self.scheduler = scheduler or default_scheduler()
        self.clock = clock
        self._records = _earlier_turns(session)
        self._announced = announcements(self.state.timeline, self.state.other_updates)
        self._state_at: float | None = None  # when the run state last changed (a turn's end)
        self._sent_header: dict[str, Any] | None = None
        self._sent_lines: dict[int, dict[str, Any]] = {}
        self._seq = 0
        self._bounded = BoundedSender(super().send)
        self._unsubscribe = self.state.subscribe(self._on_change)
        self.on_msg(on_loop(self._handle_browser_msg))
        self.flush_snapshot()

    # -- what it shows ----------------------------------------------------------------------------
    def turn_lines(self) -> list[dict[str, Any]]:
        """One line per turn so far (WIRE.md ``TurnLine``)."""
        self._note_turns(self.clock())
        turns = self.session.turns
        lines = [self._line(n, turns[n - 1], record) for n, record in enumerate(self._records, 1)]
        for i, line in enumerate(lines):
            later = self._records[i + 1] if i + 1 < len(self._records) else None
            line["subagents"] = self._subagents_in(self._records[i], later)
        return lines

    def _subagents_in(self, record: _Record, later: _Record | None) -> int | None:
        """How many subagents were announced during a turn (None when where it began is unknown)."""
        if record.since is None:
            return None
        end = later.since if later is not None and later.since is not None else len(self.state.timeline)
        return sum(1 for i in self._announced if record.since <= i < end)

    def _line(self, number: int, turn: Any, record: _Record) -> dict[str, Any]:
        if turn.ended and record.ended is None and record.started is not None:
            record.ended = max(record.started, self._state_at or self.clock())
        message = self.state.messages.get(record.prompt_id) if record.prompt_id else None
        if turn.ended:
            state = "ended"
        else:
            state = "requires_action" if self.state.run_state == "requires_action" else "running"
        duration = None if record.ended is None or record.started is None else record.ended - record.started
        return {
            "n": number,
            "anchor": anchor_of(self.session, number),
            "origin": getattr(turn, "origin", "user"),
            "origin_kind": getattr(turn, "origin_kind", None),
            "origin_label": getattr(turn, "origin_label", None),
            "prompt": first_line(message.text) if message is not None else None,
            "state": state,
            "stop_reason": turn.stop_reason,
            "error": turn.error is not None or turn.stop_reason == "error",
            "tool_calls": len(turn.tool_call_ids),
            "started": record.started,
            "duration": round(duration, 3) if duration is not None else None,
        }

    def _header(self) -> dict[str, Any]:
        waiting = waiting_list(ViewTree(self.state, self.session))
        return header(self.state, self.session.summary(), self.title, (), waiting)

    # -- changes ----------------------------------------------------------------------------------
    def _on_change(self, change: Change) -> None:
        now = self.clock()
        noted = change.created and change.kind in TIMELINE  # the item is in the timeline already
        self._note_turns(now, len(self.state.timeline) - (1 if noted else 0))
        if change.kind == "subagent" and change.created:
            self._announced.append(len(self.state.timeline) - 1)  # its raw update, just noted
        if change.kind == "run_state":
            self._state_at = now
        elif change.kind == "message" and change.created and self._records:
            message = self.state.messages.get(change.id)
            last = self._records[-1]
            if message is not None and message.role == "user" and last.prompt_id is None:
                last.prompt_id = change.id
        self.scheduler.mark(self)

    def _note_turns(self, now: float, since: int | None = None) -> None:
        turns = self.session.turns
        fallback = since if since is not None else len(self.state.timeline)
        for n in range(len(self._records), len(turns)):
            start = getattr(turns[n], "timeline_start", None)  # where the turn runner says it began
            self._records.append(_Record(now, since=start if isinstance(start, int) else fallback))

    # -- flushing (called by the scheduler) -------------------------------------------------------
    def flush_patch(self) -> int:
        """Send what changed since the last patch (header, turn lines); returns messages sent."""
        return self._send_patch(full=False)

    def flush_full(self) -> int:
        """Send the header and every line (the answer to a browser's ``resync``)."""
        return self._send_patch(full=True)

    def _send_patch(self, *, full: bool) -> int:
        if self.comm is None:
            return 0
        hdr, lines = self._header(), self.turn_lines()
        changed = [line for line in lines if full or self._sent_lines.get(line["n"]) != line]
        if not full and not changed and hdr == self._sent_header:
            return 0
        self._seq += 1
        message: dict[str, Any] = {"type": "patch", "seq": self._seq, "full": full, "turns": changed}
        if full or hdr != self._sent_header:
            message["header"] = hdr
        if full:
            message["hint"] = self.hint
        self._sent_header = hdr
        self._sent_lines.update((line["n"], line) for line in changed)
        return self._bounded.send(message, [])

    def send(self, content: Any, buffers: Any = None) -> None:
        """Send a custom message, encoded once (``js/WIRE.md``, Bounded messages)."""
        self._bounded.send(content, list(buffers or []))

    def flush_snapshot(self) -> int:
        """Refresh the ``snapshot`` trait (what reloads and saved notebooks show)."""
        if self.comm is None:
            return 0
        self.snapshot = {
            "seq": self._seq, "header": self._header(), "turns": self.turn_lines(), "hint": self.hint,
            "saved_at": self.clock(),  # a running turn's clock stops there while no kernel answers
        }  # fmt: skip
        return 1

    # -- from the browser -------------------------------------------------------------------------
    def _handle_browser_msg(self, content: Any) -> None:
        kind = content.get("type") if isinstance(content, dict) else None
        if kind == "resync":
            self.flush_full()
        elif kind == "rendered":
            frontend.mark_rendered()
        elif kind == "cancel_turn":
            self.actions.cancel_turn()
        elif kind == "stderr_line":
            stderr_reply(self, content.get("n"))

    def close(self) -> None:
        """Stop observing the state and close the widget."""
        self._unsubscribe()
        self.scheduler.forget(self)
        super().close()


def _earlier_turns(session: Any) -> list[_Record]:
    """Records of the turns before the view: times unknown; prompts (and where each turn began)
    paired with the user messages in order when there are as many of those as turns (else unknown)."""
    timeline, messages = session.state.timeline, session.state.messages
    users = [(i, key) for i, (kind, key) in enumerate(timeline) if kind == "message"]
    users = [(i, key) for i, key in users if messages[key].role == "user"]
    turns = session.turns
    prompted = [t for t in turns if getattr(t, "origin", "user") != "agent"]  # an agent's has no prompt
    pairs = iter(users if len(users) == len(prompted) else [(None, None)] * len(prompted))
    records = []
    for turn in turns:
        since, prompt_id = (None, None) if getattr(turn, "origin", "user") == "agent" else next(pairs)
        start = getattr(turn, "timeline_start", None)
        records.append(_Record(None, prompt_id, start if isinstance(start, int) else since))
    return records


TIMELINE = frozenset(
    {"tool_call", "message", "permission", "elicitation", "plan", "notice", "other", "file_write"}
)


def announcements(timeline: list[tuple[str, Any]], raw: list[dict[str, Any]]) -> list[int]:
    """Where in the timeline each subagent was first announced (its first raw ``subagent_update``)."""
    seen: set[Any] = set()
    out = []
    for i, (kind, key) in enumerate(timeline):
        update = raw[key] if kind == "other" else None
        child = update.get("sessionId") if update is not None else None
        if update is not None and update.get("sessionUpdate") == SUBAGENT_UPDATE and child not in seen:
            seen.add(child)
            out.append(i)
    return out
