"""Recording: the trace file (header, both directions, stdout and stderr kinds), redaction of
secrets, the bounded in-memory ring, ``session.traffic``, ``%acp start --record``, the shipped traces."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

import acp_notebook
from acp_notebook.client.agent import Agent
from acp_notebook.client.recorder import RING_LINE_BYTES, Traffic
from acp_notebook.playback.memory import MemoryStream
from acp_notebook.protocol import trace
from acp_notebook.traces import NAMES, path
from tests.support import until_async
from tests.test_magic import cell, ip  # noqa: F401 - the IPython shell fixture

ROOT = Path(__file__).resolve().parents[1]
NOISY_AGENT = r"""
import json, sys
print("hello from the agent, not JSON", flush=True)
print("a stderr line", file=sys.stderr, flush=True)
for line in sys.stdin:
    msg = json.loads(line)
    if msg.get("method") == "initialize":
        result = {"protocolVersion": 2, "info": {"name": "noisy", "version": "1"}}
    elif msg.get("method") == "session/new":
        result = {"sessionId": "s1"}
    else:
        continue
    print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}), flush=True)
"""


def read(file: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    return trace.parse(file.read_text(encoding="utf-8").splitlines())


async def test_a_trace_has_its_header_both_directions_stdout_and_stderr(tmp_path: Path) -> None:
    script = tmp_path / "noisy.py"
    script.write_text(NOISY_AGENT)
    out = tmp_path / "trace.jsonl"
    agent = await acp_notebook.start_agent([sys.executable, str(script)], record=out, env={"SECRET_X": "s3"})
    await agent.new_session(tmp_path)
    await until_async(lambda: any(e["kind"] == "stderr" for e in agent.traffic), 10)
    await agent.close()
    head, entries = read(out)
    assert head == {
        "acp_trace": 1,
        "client": "acp_notebook",
        "client_version": acp_notebook.__version__,
        "command": [sys.executable, str(script)],
    }
    kinds = {(e["dir"], e["kind"]) for e in entries}
    assert kinds == {("out", "message"), ("in", "message"), ("in", "stdout"), ("in", "stderr")}
    methods = [e["message"].get("method") for e in entries if e["dir"] == "out"]
    assert methods == ["initialize", "session/new"]
    assert [e["text"] for e in entries if e["kind"] == "stdout"] == ["hello from the agent, not JSON"]
    assert [e["text"] for e in entries if e["kind"] == "stderr"] == ["a stderr line"]
    times = [e["t"] for e in entries]
    assert all(isinstance(t, float) and t >= 0 for t in times)
    assert [e["t"] for e in entries if e["kind"] == "message"] == sorted(
        e["t"] for e in entries if e["kind"] == "message"
    )
    answers = [e for e in entries if e["dir"] == "in" and e["kind"] == "message"]
    new = next(e for e in answers if e["message"].get("result", {}).get("sessionId"))
    assert new["session"] == "s1"  # the answer to session/new belongs to the session it opened
    assert "SECRET_X" not in out.read_text() and "s3" not in out.read_text()
    assert len(agent.traffic) == len(entries)  # the ring saw the same entries


def _answering(versions: int) -> tuple[MemoryStream, list[Any]]:
    seen: list[Any] = []

    def answer(message: Any) -> None:
        seen.append(message)
        if "id" in message and "method" in message:
            result = (
                {"protocolVersion": versions} if message["method"] == "initialize" else {"sessionId": "s1"}
            )
            stream.push({"jsonrpc": "2.0", "id": message["id"], "result": result})

    stream = MemoryStream(on_sent=answer)
    return stream, seen


@pytest.mark.parametrize("version", [1, 2])
async def test_no_secret_enters_a_trace(tmp_path: Path, version: int) -> None:
    out = tmp_path / "trace.jsonl"
    stream, _ = _answering(version)
    agent = Agent(stream, record=out)
    await agent.initialize(version)
    await agent.authenticate("api-key", api_key="sk-live-SECRET1")
    servers = [
        {
            "type": "http",
            "name": "web",
            "url": "https://mcp.example/",
            "headers": [{"name": "Authorization", "value": "Bearer SECRET2"}],
        },
        {"name": "local", "command": "srv", "args": [], "env": [{"name": "TOKEN", "value": "SECRET3"}]},
        {"name": "dict-env", "command": "srv", "args": [], "env": {"TOKEN": "SECRET4"}},
    ]
    session = await agent.new_session(tmp_path, servers)
    assert stream.sent[-1]["params"]["mcpServers"][0]["headers"][0]["value"] == "Bearer SECRET2"  # sent whole
    await agent.close()
    text = out.read_text()
    for secret in ("SECRET1", "SECRET2", "SECRET3", "SECRET4"):
        assert secret not in text
        assert secret not in json.dumps(agent.traffic) and secret not in json.dumps(session.traffic)
    _, entries = read(out)
    login = next(e for e in entries if e["message"].get("method") in trace.LOGIN_METHODS)
    assert login["message"]["params"]["_meta"] == {"api-key": trace.REDACTED}
    assert login["redacted"] == ["params._meta.api-key"]
    new = next(e for e in entries if e["message"].get("method") == "session/new")
    assert new["redacted"] == [
        "params.mcpServers[0].headers[0].value",
        "params.mcpServers[1].env[0].value",
        "params.mcpServers[2].env.TOKEN",
    ]
    kept = new["message"]["params"]["mcpServers"][0]
    assert kept["url"] == "https://mcp.example/" and kept["headers"][0]["name"] == "Authorization"


def test_redaction_of_a_batch_and_of_other_messages() -> None:
    login = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "auth/login",
        "params": {"methodId": "k", "_meta": {"k": "x"}},
    }
    clean, paths = trace.redact([{"jsonrpc": "2.0", "method": "session/update", "params": {}}, login])
    assert paths == ["[1].params._meta.k"] and clean[1]["params"]["_meta"] == {"k": "<redacted>"}
    assert login["params"]["_meta"] == {"k": "x"}  # the message sent is not changed
    update = {"method": "session/update", "params": {"_meta": {"api-key": "shown: not a login"}}}
    assert trace.redact(update) == (update, [])


def test_the_ring_is_bounded_and_stubs_huge_lines() -> None:
    traffic = Traffic(["x"], ring=10)
    for i in range(50):
        traffic.line("in", json.dumps({"jsonrpc": "2.0", "method": "m", "params": {"i": i}}).encode() + b"\n")
    assert len(traffic.ring) == 10 and traffic.ring.seen == 50
    assert [e["message"]["params"]["i"] for e in traffic.ring.list()] == list(range(40, 50))
    big = {"jsonrpc": "2.0", "id": 7, "method": "big", "params": {"x": "a" * (RING_LINE_BYTES + 10)}}
    traffic.line("out", json.dumps(big).encode())
    last = traffic.ring.list()[-1]
    assert last["truncated"] is True and last["message"] == {"jsonrpc": "2.0", "id": 7, "method": "big"}
    assert last["size"] > RING_LINE_BYTES
    assert traffic.recorder is None  # no file without record=


async def test_session_traffic_is_the_sessions_own(tmp_path: Path) -> None:
    stream, _ = _answering(2)
    agent = Agent(stream)
    await agent.initialize(2)
    session = await agent.new_session(tmp_path)
    for sid in ("s1", "other"):
        update = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": sid}}
        stream.push(
            {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": sid, "update": update}}
        )
    await until_async(lambda: len(agent.traffic) >= 6, 5)
    mine = session.traffic
    assert [e["message"].get("method") for e in mine] == [None, "session/update"]  # answer to session/new
    assert all(e.get("session") == "s1" for e in mine)
    assert len(agent.traffic) == 6  # initialize + answer, session/new + answer, two updates
    await agent.close()


def test_the_shipped_traces_parse_and_hold_no_secret() -> None:
    for name in NAMES:
        text = path(name).read_text(encoding="utf-8")
        head, entries = trace.parse(text.splitlines())
        assert head["acp_trace"] == 1 and head["command"] and entries, name
        assert "test-key" not in text and str(ROOT) not in text and "/root" not in text, name
        redacted = [path_ for e in entries for path_ in e.get("redacted", [])]
        assert set(redacted) <= {"params.authStatus.detail"}, name  # a login's detail is never kept
    _, claude = trace.parse(path("claude_v1.jsonl").read_text(encoding="utf-8").splitlines())
    assert trace.parse(path("claude_v1.jsonl").read_text().splitlines())[0]["command"] == ["claude-agent-acp"]
    methods = {e["message"].get("method") for e in claude if e["kind"] == "message"}
    assert {"initialize", "session/new", "session/prompt", "session/request_permission"} <= methods


def test_acp_start_record_writes_a_trace(ip, capsys, tmp_path: Path) -> None:  # noqa: F811
    out = tmp_path / "magic.jsonl"
    cell(ip, f"%acp start --name rec --no-view --record {out}", capsys)
    cell(ip, "%acp stop --name rec", capsys)
    head, entries = read(out)
    assert head["command"][1:] == ["-m", "acp_notebook.demo_agent"]
    assert [e["message"]["method"] for e in entries if e["dir"] == "out"] == ["initialize", "session/new"]


def test_the_magic_parses_record() -> None:
    from acp_notebook.magic.parser import parse_line

    command, args = parse_line("start --record out/t.jsonl python -m x")
    assert (command, args.record, args.command) == ("start", "out/t.jsonl", ["python", "-m", "x"])
    assert parse_line("start")[1].record is None


def test_the_readme_documents_the_format() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Record and replay", 1)[1].split("\n## ", 1)[0]
    for needle in ('"acp_trace"', '"dir"', '"kind"', '"stderr"', '"stdout"', "<redacted>", "replay_agent"):
        assert needle in section, needle
