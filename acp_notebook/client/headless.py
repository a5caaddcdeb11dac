"""Headless runs never hang silently: say what a pending permission asks, and how to answer it.

While a cell waits for a turn (``session.prompt``, ``%%acp --wait``, ``%acp wait``), a permission
request still pending ``DELAY`` seconds after it arrived, when no view has rendered
(``frontend.headless``), prints one line in *that* cell's output (the callback runs in the waiting
cell's context, so ipykernel routes the print there): what is asked, its options, and the code
that answers it. Each request is described once.
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
    """While the body runs, describe each permission request left pending in a headless run."""
    watcher = _Watcher(session, name)
    unsubscribe = session.state.subscribe(watcher.changed)
    for request in session.pending_permissions:
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


def pending_lines(session: Any, name: str = "session") -> list[str]:
    """``describe`` for every pending request (what a timed-out wait reports)."""
    return [describe(session, request, name, "  pending:") for request in session.pending_permissions]


class _Watcher:
    def __init__(self, session: Any, name: str) -> None:
        self.session, self.name = session, name
        self.context = contextvars.copy_context()  # the waiting cell's: its prints go to that cell
        self.loop = asyncio.get_running_loop()
        self.handles: list[asyncio.TimerHandle] = []

    def changed(self, change: Any) -> None:
        if change.kind == "permission" and change.created:
            self.schedule(change.id)

    def schedule(self, key: str, delay: float | None = None) -> None:
        delay = DELAY if delay is None else delay
        handle = self.loop.call_later(delay, self.check, key, context=self.context)
        self.handles.append(handle)

    def check(self, key: str) -> None:
        request = self.session.state.permissions.get(key)
        described = _described.setdefault(self.session, set())
        if request is None or not request.pending or key in described or frontend.rendered():
            return
        left = frontend.undecided_for()
        if left > 0:  # a view was shown a moment ago: give it time to render (and policies time to answer)
            self.schedule(key, left + DELAY)
            return
        described.add(key)
        print(describe(self.session, request, self.name), file=sys.stdout, flush=True)

    def stop(self) -> None:
        for handle in self.handles:
            handle.cancel()
