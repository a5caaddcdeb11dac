"""One received line is JSON-decoded once on its whole path, the traffic recorder included, and a
line the client sends is encoded once and never decoded back; the trace stays the same.

The agent side is played in memory (``MemoryStream``) through a real ``Agent``: connection, wire,
sessions, session, state, recorder. Decodes are counted at every JSON decoder the client has:
``json.loads`` (the module's default decoder) and the strict decoder of ``rpccheck``.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from acp_notebook.client.agent import Agent
from acp_notebook.playback.memory import MemoryStream
from acp_notebook.protocol import rpccheck, trace
from acp_notebook.protocol.depth import MAX_DEPTH
from acp_notebook.protocol.jsonrpc import Notification, Request, Response, encode_plain, parse_line

from .support import update
from .test_adversarial import CASES

SESSION_UPDATE = {
    "sessionUpdate": "tool_call_update",
    "toolCallId": "c1",
    "title": "Read /src/a.py",
    "kind": "read",
    "status": "in_progress",
    "rawInput": {"path": "/src/a.py", "ratio": 0.5},
}
ENTRIES = [{"content": f"step {i}", "priority": "low", "status": "pending"} for i in range(MAX_DEPTH)]
BIG_PLAN = {"sessionUpdate": "plan_update", "plan": {"type": "items", "planId": "p", "entries": ENTRIES}}


class Counted(json.JSONDecoder):
    """A JSON decoder that counts what it decodes (``decode`` and direct ``scan_once`` calls)."""

    def __init__(self, counts: list[str], name: str, **options: Any) -> None:
        super().__init__(**options)
        inner = self.scan_once
        self.counts, self.name = counts, name

        def scan(text: str, index: int) -> Any:
            counts.append(f"{name}.scan_once")
            return inner(text, index)

        self.scan_once_counted = scan

    def decode(self, s: str, *args: Any, **kwargs: Any) -> Any:
        self.counts.append(f"{self.name}.decode")
        return super().decode(s, *args, **kwargs)


@pytest.fixture
def decodes(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every JSON decode from now on, by decoder (``json.loads`` and ``rpccheck``'s)."""
    counts: list[str] = []
    monkeypatch.setattr(json, "_default_decoder", Counted(counts, "json.loads"))
    strict = Counted(
        counts, "rpccheck", parse_float=rpccheck._finite_float, parse_constant=rpccheck._not_held
    )
    monkeypatch.setattr(rpccheck, "_DECODER", strict)
    monkeypatch.setattr(rpccheck, "_SCAN", strict.scan_once_counted)
    counts.clear()
    return counts


def _answer(stream: MemoryStream, message: Any) -> None:
    if isinstance(message, dict) and message.get("method") == "initialize":
        stream.push({"jsonrpc": "2.0", "id": message["id"], "result": {"protocolVersion": 2}})
    elif isinstance(message, dict) and message.get("method") == "session/new":
        stream.push({"jsonrpc": "2.0", "id": message["id"], "result": {"sessionId": "s1"}})


async def _connected() -> tuple[MemoryStream, Agent, Any]:
    stream = MemoryStream()
    stream.on_sent = lambda message: _answer(stream, message)
    agent = Agent(stream)
    await agent.initialize(2)
    session = await agent.new_session("/tmp")
    await stream.idle()
    return stream, agent, session


@pytest.mark.parametrize("body", [SESSION_UPDATE, BIG_PLAN], ids=["tool_call_update", "plan_of_64_entries"])
async def test_a_received_session_update_is_decoded_exactly_once(decodes: list[str], body: dict) -> None:
    stream, agent, session = await _connected()
    decodes.clear()
    stream.push(json.dumps(update(body)))
    await stream.idle()
    assert decodes == ["rpccheck.scan_once"]  # the connection's parse; the recorder reused it
    assert session.state.timeline[-1][0] in ("tool_call", "plan")
    entry = agent.traffic_log.ring.list()[-1]
    assert entry["dir"] == "in" and entry["message"] == update(body)
    assert entry["session"] == "s1"
    await agent.close()


async def test_a_sent_line_is_encoded_once_and_never_decoded_back(
    decodes: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    stream, agent, _ = await _connected()
    monkeypatch.setattr(stream, "write", lambda data: stream.raw.append(data) or True)  # no peer decode
    decodes.clear()
    agent.rpc.notify("_x/note", {"sessionId": "s1", "items": [1, 2.5, "é"]})
    assert decodes == []
    entry = agent.traffic_log.ring.list()[-1]
    assert entry["dir"] == "out" and entry["message"] == json.loads(stream.raw[-1])
    assert entry["session"] == "s1"
    await agent.close()


def _lines() -> list[bytes]:
    """Received lines of every shape the trace distinguishes, plus the adversarial corpus."""
    deep = "[" * (MAX_DEPTH + 5) + "1" + "]" * (MAX_DEPTH + 5)
    special = [
        b"\xef\xbb\xbf" + json.dumps(update(SESSION_UPDATE)).encode(),  # BOM: stdout for json.loads
        b'{"jsonrpc":"2.0","id":1,"result":{"v":NaN}}',
        b'{"jsonrpc":"2.0","id":2,"result":{"v":1e400}}',
        b'{"jsonrpc":"2.0","method":"m","params":{"text":"NaN and Infinity in a string"}}',
        b'{"jsonrpc":"2.0","method":"m","params":{"t":"\xff\xfe"}}',  # invalid UTF-8
        b'{"jsonrpc":"2.0","method":"m","params":{"deep":' + deep.encode() + b"}}",
        b"[" * 100_000 + b"]" * 100_000,
        b'[{"jsonrpc":"2.0","method":"m"},{"jsonrpc":"2.0","id":3,"method":"x"}]',
        b"   \r\n",
        b"plain stdout noise\r\n",
        b"42\n",
        b'{"jsonrpc":"2.0","method":"authenticate","id":4,"params":{"_meta":{"token":"s3cret"}}}',
    ]
    corpus = [
        c.line if isinstance(c.line, bytes) else c.line.encode("utf-8", "surrogatepass")
        for c in CASES.values()
    ]
    return special + corpus


@pytest.mark.parametrize("line", _lines(), ids=lambda line: repr(line[:40]))
def test_an_entry_from_the_parse_is_the_entry_from_decoding_the_line(line: bytes) -> None:
    reused = trace.decode("in", 1.25, line, parse_line(line).plain)
    assert trace.dumps(reused) == trace.dumps(trace.decode("in", 1.25, line))


@pytest.mark.parametrize(
    "message",
    [
        Request(7, "session/prompt", {"sessionId": "s1", "prompt": [{"type": "text", "text": "hé \ud800"}]}),
        Notification("session/cancel", {"sessionId": "s1"}),
        Response(8, {"outcome": {"outcome": "selected", "optionId": "ok"}}),
        Response(9, {"deep": json.loads("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1))}),
        [Response(1, {}), Response(2, {"n": 1.5})],
        Request(
            10,
            "session/new",
            {"cwd": "/", "mcpServers": [{"name": "m", "env": [{"name": "K", "value": "v"}]}]},
        ),
    ],
)
def test_an_entry_from_the_encoded_object_is_the_entry_from_decoding_the_line(message: Any) -> None:
    line, plain = encode_plain(message)
    reused = trace.decode("out", 2.5, line, plain)
    assert trace.dumps(reused) == trace.dumps(trace.decode("out", 2.5, line))
