"""The path of one ``session/update``: traced with ``sys.setprofile`` from the connection's dispatch
to the state's change callback, it crosses at most ``MAX_MODULES`` of the package's modules and
re-enters none it has left (README "Layout": the connection reads the update, the state applies
it, the turn looks at the result).

A stop is a module the path enters from another; the pure core's modules that a pure-core module
calls while it runs (the state's ``toolcall``, ``messages``, ``changes`` …) are inside that stop,
as a class's helpers are inside the class: the reducer is one stop, ``protocol.state``.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from typing import Any

import pytest

from .test_client_framing import connect

MAX_MODULES = 6
PACKAGE = "acp_notebook"
CORE = "acp_notebook.protocol."


class PathTrace:
    """Package-module calls and returns from ``Connection._dispatch`` until it returns; where the
    change callback ran."""

    def __init__(self) -> None:
        self.on = False
        self.done = False
        self.at_change: int | None = None  # len(path) when the change callback ran
        self.path: list[str] = []  # stops entered, in order (consecutive repeats merged)
        self.reentered: list[str] = []
        self._active: Counter[str] = Counter()
        self._left: set[str] = set()
        self._stops: list[str] = []  # the stop of each package frame on the stack

    def profile(self, frame: Any, event: str, _arg: Any) -> None:
        if self.done or event not in ("call", "return"):
            return
        module = frame.f_globals.get("__name__", "")
        if (
            not self.on
            and event == "call"
            and frame.f_code.co_name == "_dispatch"
            and module.endswith(".connection")
        ):
            self.on = True
        if not self.on or not module.startswith(PACKAGE):
            return
        if event == "call":
            self._enter(module)
        else:
            self._leave(module)
            self.done = not self._stops  # the dispatch returned

    def _enter(self, module: str) -> None:
        outer = self._stops[-1] if self._stops else ""
        if outer.startswith(CORE) and module.startswith(CORE):
            module = outer  # inside the pure-core stop that called it
        self._stops.append(module)
        if not self._active[module] and module in self._left:
            self.reentered.append(module)
        self._active[module] += 1
        if not self.path or self.path[-1] != module:
            self.path.append(module)

    def _leave(self, _module: str) -> None:
        module = self._stops.pop() if self._stops else _module
        self._active[module] -= 1
        if not self._active[module]:
            self._left.add(module)

    def changed(self, _change: Any) -> None:
        """The state's change callback: the end of the path to it."""
        if self.on and self.at_change is None:
            self.at_change = len(self.path)


def line(update: dict[str, Any]) -> bytes:
    """One ``session/update`` notification for session ``s1``."""
    params = {"sessionId": "s1", "update": update}
    return json.dumps({"jsonrpc": "2.0", "method": "session/update", "params": params}).encode()


async def traced(version: int, update: dict[str, Any]) -> PathTrace:
    """The path of ``update`` through an agent speaking ``version``, after a tool call was created."""
    _peer, agent, session = await connect(version)
    create = {"sessionUpdate": "tool_call", "toolCallId": "c1", "title": "Edit", "status": "pending"}
    agent.rpc.feed(line(create if version == 1 else {**create, "sessionUpdate": "tool_call_update"}))
    trace = PathTrace()
    unsubscribe = session.state.subscribe(trace.changed)
    sys.setprofile(trace.profile)
    try:
        agent.rpc.feed(line(update))
    finally:
        sys.setprofile(None)
        unsubscribe()
    await agent.close()
    assert trace.done and trace.at_change is not None, "the change callback never ran"
    return trace


@pytest.mark.parametrize("version", [2, 1])
async def test_one_tool_call_update_crosses_few_modules_and_never_goes_back(version: int) -> None:
    update = {"sessionUpdate": "tool_call_update", "toolCallId": "c1", "status": "in_progress"}
    trace = await traced(version, update)
    to_change = list(dict.fromkeys(trace.path[: trace.at_change]))
    shown = " -> ".join(m.removeprefix("acp_notebook.") for m in trace.path)
    print(
        f"v{version}: {len(to_change)} modules to the change callback, {len(set(trace.path))} in all: {shown}"
    )
    assert trace.reentered == [], f"re-entered after being left: {trace.reentered} (path {trace.path})"
    assert len(to_change) <= MAX_MODULES, f"{len(to_change)} modules: {to_change}"


async def test_the_trace_sees_a_module_left_and_entered_again() -> None:
    """The tracer itself: a path that goes back to a module it left is reported."""
    trace = PathTrace()
    trace.on = True
    for event, module in [("call", "a"), ("call", "b"), ("return", "b"), ("call", "c"), ("call", "b")]:
        if event == "call":
            trace._enter(f"{PACKAGE}.{module}")
        else:
            trace._leave(f"{PACKAGE}.{module}")
    assert trace.reentered == [f"{PACKAGE}.b"] and trace.path[-1] == f"{PACKAGE}.b"
