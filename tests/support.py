"""Helpers shared by the tests: bounded waits, the scripted peer with its message builders, the
``session/update`` bodies the state tests apply, and the recording comm of the view tests.

A test never writes ``while not x: sleep()`` and never sleeps a fixed time before an assert; it
waits with ``until`` (or ``until_async`` inside a coroutine) on the state it is about to check.
To check that something did *not* happen, it waits for a later event that proves the client got
past that point (the peer sends a marker after the message under test), then asserts the negative.
"""

from __future__ import annotations

import asyncio
import base64
import inspect
import json
import shlex
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar, TypeVar

import comm
import pytest

from acp_notebook.protocol import SessionState

T = TypeVar("T")
Message = str | Callable[[], str] | None


def until(predicate: Callable[[], T], timeout: float, interval: float = 0.05, message: Message = None) -> T:
    """Call ``predicate()`` until it returns a truthy value (returned); AssertionError after ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        left = deadline - time.monotonic()
        if left <= 0:
            raise AssertionError(_failure(message, timeout, value))
        time.sleep(min(interval, left))


async def until_async(
    predicate: Callable[[], Any], timeout: float, interval: float = 0.05, message: Message = None
) -> Any:
    """``until`` for coroutines: polls without blocking the loop; ``predicate`` may return an awaitable."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if inspect.isawaitable(value):
            value = await value
        if value:
            return value
        left = deadline - time.monotonic()
        if left <= 0:
            raise AssertionError(_failure(message, timeout, value))
        await asyncio.sleep(min(interval, left))


def _failure(message: Message, timeout: float, last: object) -> str:
    """The failure text: what was awaited (``message``, called if callable), the bound, the last value."""
    what = message() if callable(message) else message
    return f"{what or 'condition'}: still not true after {timeout:g}s (last value: {last!r})"


def running(pid: int) -> bool:
    """True while process ``pid`` exists and is not a zombie (Linux ``/proc``)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


# -- the scripted peer (tests/agents/scripted.py) and the JSON-RPC it plays ---------------------------
SCRIPTED = Path(__file__).parent / "agents" / "scripted.py"
INIT_V2 = {"expect": "initialize", "reply": {"protocolVersion": 2, "info": {"name": "s", "version": "1"}}}
INIT_V1 = {"expect": "initialize", "reply": {"protocolVersion": 1, "agentCapabilities": {}}}
NEW = {"expect": "session/new", "reply": {"sessionId": "s1"}}


def update(body: dict, session_id: str = "s1") -> dict:
    """A ``session/update`` notification carrying ``body`` for session ``session_id``."""
    return {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": session_id, "update": body}}


class Peer:
    """A scripted agent process playing ``steps``, and the log of what our client sent it."""

    def __init__(self, tmp_path: Path, steps: list, name: str = "script") -> None:
        script = tmp_path / f"{name}.json"
        script.write_text(json.dumps(steps))
        self.log = tmp_path / f"{name}.jsonl"
        self.log.touch()
        self.command = [sys.executable, str(SCRIPTED), str(script), str(self.log)]

    @property
    def command_line(self) -> str:
        """``command`` as one shell line (for ``%acp start``)."""
        return shlex.join(self.command)

    def received(self) -> list:
        """Every line the peer read from the client, parsed (a batch reply is one list)."""
        return [json.loads(line) for line in self.log.read_text().splitlines() if line.strip()]

    def responses(self) -> list[dict]:
        """The client's responses (the entries of a batch reply included)."""
        flat = [e for m in self.received() for e in (m if isinstance(m, list) else [m])]
        return [m for m in flat if "method" not in m]

    def batch_replies(self) -> list[list[dict]]:
        """The client's batch replies, one array each."""
        return [m for m in self.received() if isinstance(m, list)]

    def requests(self, method: str) -> list[dict]:
        """The params of every ``method`` message the client sent, in order."""
        return [m["params"] for m in self.received() if isinstance(m, dict) and m.get("method") == method]


# -- session/update bodies, and the pure state they are applied to -----------------------------------
def b64(data: bytes | str) -> str:
    """``data`` (text as UTF-8) in base64, as the wire carries bytes."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    return base64.b64encode(raw).decode("ascii")


def item(text: str) -> dict[str, Any]:
    """A tool call's text content item."""
    return {"type": "content", "content": {"type": "text", "text": text}}


def upd(tool_call_id: Any = "c1", **fields: Any) -> dict[str, Any]:
    """A ``tool_call_update`` body."""
    return {"sessionUpdate": "tool_call_update", "toolCallId": tool_call_id, **fields}


def tupd(terminal_id: Any = "t1", **fields: Any) -> dict[str, Any]:
    """A ``terminal_update`` body."""
    return {"sessionUpdate": "terminal_update", "terminalId": terminal_id, **fields}


def st(state: str, **extra: Any) -> dict[str, Any]:
    """A ``state_update`` body (v2)."""
    return {"sessionUpdate": "state_update", "state": state, **extra}


def plan(**fields: Any) -> dict[str, Any]:
    """A ``plan_update`` body for plan ``p1``."""
    return {"sessionUpdate": "plan_update", "plan": {"planId": "p1", **fields}}


def apply_all(*updates: dict[str, Any], state: SessionState | None = None) -> SessionState:
    """``state`` (a new one by default) after applying ``updates`` in order."""
    state = state or SessionState()
    for update in updates:
        state.apply(update)
    return state


def codes(state: SessionState) -> list[str]:
    """The codes of the state's diagnostics, in order."""
    return [d.code for d in state.diagnostics]


# -- the views' comm, recorded instead of sent --------------------------------------------------------
class RecordingComm(comm.base_comm.BaseComm):
    """A comm that records every message instead of sending it."""

    log: ClassVar[list] = []

    def publish_msg(self, msg_type, data=None, metadata=None, buffers=None, **keys):
        RecordingComm.log.append((self.comm_id, msg_type, data, list(buffers or [])))


def record_comms(monkeypatch: pytest.MonkeyPatch, fresh_runtime: bool = True) -> list:
    """Make every new comm a ``RecordingComm`` (and, with ``fresh_runtime``, the views' runtime new)."""
    from acp_notebook.widgets import runtime as runtime_module

    RecordingComm.log = []
    monkeypatch.setattr(comm, "create_comm", lambda *a, **k: RecordingComm(*a, **k))
    if fresh_runtime:
        monkeypatch.setattr(runtime_module, "_runtime", None)
    return RecordingComm.log


def unpack(content: Any, buffers: list) -> tuple[Any, list]:
    """A view's message as the page reads it: a packed one's JSON from the buffer ``json`` names."""
    at = content.get("json") if isinstance(content, dict) and content.get("type") != "part" else None
    if not isinstance(at, int):
        return content, buffers
    return json.loads(bytes(buffers[at])), list(buffers[:at])


@pytest.fixture(autouse=True)
def recording(monkeypatch):
    """Every comm records its messages (autouse in each module that imports it); the log."""
    return record_comms(monkeypatch)
