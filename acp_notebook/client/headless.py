"""Headless runs never hang silently: say what a pending permission asks, and how to answer it.

While a cell waits for a turn (``session.prompt``, ``%%acp --wait``, ``%acp wait``), a permission
request still pending ``DELAY`` seconds after it arrived, when no view has rendered
(``frontend.headless``), prints one line in *that* cell's output (the callback runs in the waiting
cell's context, so ipykernel routes the print there): what is asked, its options, and the code
that answers it. Each request is described once. So is each pending elicitation (a form: its
message and fields; a URL: only ``scheme://host/path``). When such a wait gives up
(``%%acp --timeout``), ``time_out`` answers the pending elicitations ``cancel`` (``who="timeout"``)
in a run nobody watches: no click can come.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import json
import sys
import weakref
from collections.abc import Iterator
from typing import Any

from .. import frontend, policies
from .subagents import descendant

DELAY = 1.0  # s a request may wait (for a policy, a handler, a click) before it is described

_described: weakref.WeakKeyDictionary[Any, set[str]] = weakref.WeakKeyDictionary()


@contextlib.contextmanager
def notices(session: Any, name: str = "session") -> Iterator[None]:
    """While the body runs, describe each permission request and elicitation left pending in a
    headless run."""
    with _watching(_Watcher(session, name)):
        yield


@contextlib.contextmanager
def starting_notices(agent: Any, hint: str) -> Iterator[None]:
    """While an agent starts (``session/new``, a login), describe each elicitation about it left
    pending in a headless run: nothing can answer it from the waiting cell, ``hint`` says what can."""
    with _watching(_Watcher(_Starting(agent), hint, starting=True)):
        yield


@contextlib.contextmanager
def _watching(watcher: _Watcher) -> Iterator[None]:
    session = watcher.session
    unsubscribe = session.state.subscribe(watcher.changed)
    for request in [*session.pending_permissions, *session.pending_elicitations]:
        watcher.schedule(request.key)
    try:
        yield
    finally:
        unsubscribe()
        watcher.stop()


def describe(
    session: Any, request: Any, name: str = "session", lead: str = "acp: waiting for permission"
) -> str:
    """One line: what ``request`` asks, its options, and how to answer it from code."""
    pending = session.pending_permissions
    index = pending.index(request) if request in pending else 0
    options = ", ".join(request.option_ids) or "none"
    first = next(iter(request.option_ids), "...")
    child = descendant(session.subagents, request.session_id) if request.session_id else None
    kind = policies.facts_of(request, child.state if child else session.state).kind
    hint = f"kinds=[{json.dumps(kind)}]" if kind else ""
    who = f" (subagent {child.title or child.session_id!r})" if child else ""
    return (
        f"{lead} {request.key}{who} {request.title!r} (options: {options}) — answer with "
        f'{name}.pending_permissions[{index}].select("{first}") or set a policy: '
        f"{name}.permission_handler = acp_notebook.policies.allow({hint})"
    )


def describe_elicitation(
    session: Any, elicitation: Any, name: str = "session", lead: str = "acp: waiting for an answer to"
) -> str:
    """One line: what ``elicitation`` asks, and how to answer it from code."""
    pending = session.pending_elicitations
    index = pending.index(elicitation) if elicitation in pending else 0
    child = descendant(session.subagents, elicitation.session_id) if elicitation.session_id else None
    who = f" (subagent {child.title or child.session_id!r})" if child else ""
    ref = f"{name}.pending_elicitations[{index}]"
    if elicitation.mode == "url":
        what = f"consent to open {elicitation.redacted_url}"
        how = f"{ref}.accept() (prints the URL to open), .decline() or .cancel()"
    else:
        fields = ", ".join(f.name + ("*" if f.required else "") for f in elicitation.fields) or "none"
        what = f"a form (fields: {fields})"
        how = f"{ref}.accept({{...}}), .decline() or .cancel()"
    return (
        f"{lead} {elicitation.key}{who} {elicitation.message!r}: {what} — answer with {how}, or set "
        f"{name}.elicitation_handler = acp_notebook.policies.decline_elicitations()"
    )


def pending_lines(session: Any, name: str = "session") -> list[str]:
    """``describe`` for every pending request and elicitation (what a timed-out wait reports)."""
    lines = [describe(session, request, name, "  pending:") for request in session.pending_permissions]
    asked = session.pending_elicitations
    return lines + [describe_elicitation(session, e, name, "  pending:") for e in asked]


def time_out(session: Any) -> int:
    """A wait gave up: in a run nobody watches, answer every pending elicitation ``cancel``
    (``who="timeout"``); how many."""
    if frontend.rendered():
        return 0
    pending = list(session.pending_elicitations)
    for elicitation in pending:
        elicitation.cancel(by="timeout")
    return len(pending)


class _Starting:
    """An agent while it starts, read as ``_Watcher`` reads a session: its request-scoped elicitations."""

    pending_permissions: tuple[Any, ...] = ()

    def __init__(self, agent: Any) -> None:
        self.agent, self.state = agent, agent.elicitation_state

    @property
    def pending_elicitations(self) -> list[Any]:
        return self.agent.pending_elicitations


def describe_starting(elicitation: Any, hint: str) -> str:
    """One line about an elicitation the agent asks while it starts (no cell can answer it)."""
    scope = (elicitation.scope_request or {}).get("method")
    what = "consent to open " + str(elicitation.redacted_url) if elicitation.mode == "url" else "a form"
    return f"acp: the agent asks {elicitation.key} {elicitation.message!r} during {scope}: {what} — {hint}"


class _Watcher:
    def __init__(self, session: Any, name: str, starting: bool = False) -> None:
        self.session, self.name, self.starting = session, name, starting
        self.context = contextvars.copy_context()  # the waiting cell's: its prints go to that cell
        self.loop = asyncio.get_running_loop()
        self.handles: list[asyncio.TimerHandle] = []

    def changed(self, change: Any) -> None:
        if change.kind in ("permission", "elicitation") and change.created:
            self.schedule(change.id)

    def schedule(self, key: str, delay: float | None = None) -> None:
        delay = DELAY if delay is None else delay
        handle = self.loop.call_later(delay, self.check, key, context=self.context)
        self.handles.append(handle)

    def check(self, key: str) -> None:
        state = self.session.state
        request = state.permissions.get(key) or state.elicitations.get(key)
        described = _described.setdefault(self.session, set())
        if request is None or not request.pending or key in described or frontend.rendered():
            return
        left = frontend.undecided_for()
        if left > 0:  # a view was shown a moment ago: give it time to render (and policies time to answer)
            self.schedule(key, left + DELAY)
            return
        described.add(key)
        if self.starting:
            line = describe_starting(request, self.name)
        elif key in state.permissions:
            line = describe(self.session, request, self.name)
        else:
            line = describe_elicitation(self.session, request, self.name)
        print(line, file=sys.stdout, flush=True)

    def stop(self) -> None:
        for handle in self.handles:
            handle.cancel()
