"""v1 extensions real agents use, through the real intake: ``_meta.terminal_output`` (Zed's)."""

from __future__ import annotations

import asyncio
import base64
import json
from typing import Any

from acp_notebook.client.agent import Agent
from acp_notebook.client.wire.terminal_output import translate
from acp_notebook.playback.memory import MemoryStream


async def connect(**options: Any) -> tuple[MemoryStream, Agent, Any]:
    def answer(message: Any) -> None:
        if message.get("method") == "initialize":
            stream.push({"jsonrpc": "2.0", "id": message["id"], "result": {"protocolVersion": 1}})
        elif message.get("method") == "session/new":
            stream.push({"jsonrpc": "2.0", "id": message["id"], "result": {"sessionId": "s1"}})

    stream = MemoryStream(on_sent=answer)
    agent = Agent(stream, **options)
    await agent.initialize(2)
    return stream, agent, await agent.new_session("/tmp")


def update(body: dict[str, Any]) -> str:
    return json.dumps(
        {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s1", "update": body}}
    )


def bash_call(tc_id: str = "toolu_1", term: str = "toolu_1", **meta: Any) -> dict[str, Any]:
    return {
        "sessionUpdate": "tool_call",
        "toolCallId": tc_id,
        "title": "printf 'café'",
        "kind": "execute",
        "status": "pending",
        "rawInput": {"command": "printf 'caf\\xc3\\xa9\\n'"},
        "content": [{"type": "terminal", "terminalId": term}],
        "_meta": {"claudeCode": {"toolName": "Bash"}, "terminal_info": {"terminal_id": term}, **meta},
    }


def output(data: str, term: str = "toolu_1", tc_id: str = "toolu_1") -> dict[str, Any]:
    meta = {"terminal_output": {"terminal_id": term, "data": data}}
    return {"sessionUpdate": "tool_call_update", "toolCallId": tc_id, "_meta": meta}


async def feed(stream: MemoryStream, *bodies: dict[str, Any]) -> None:
    for body in bodies:
        stream.push(update(body))
    await asyncio.wait_for(stream.idle(), 5)


async def test_the_offer_is_advertised_in_v1_client_capabilities() -> None:
    stream, agent, _ = await connect()
    init = stream.sent[0]
    assert init["params"]["clientCapabilities"]["_meta"] == {"terminal_output": True, "terminal-auth": True}
    await agent.close()
    stream, agent, _ = await connect(terminal_output=False)
    assert stream.sent[0]["params"]["clientCapabilities"]["_meta"] == {"terminal-auth": True}
    await agent.close()


async def test_the_offer_is_in_v2_capabilities_meta_too() -> None:
    """An agent's SDK router that negotiates our v2 ``initialize`` down to v1 (claude-agent-acp
    under ``CLAUDE_AGENT_ACP_PROTOCOL=v1``) rebuilds ``clientCapabilities`` from the v2
    ``capabilities``: only what is in its ``_meta`` survives, so the offers must be there too."""
    stream, agent, _ = await connect()
    params = stream.sent[0]["params"]
    assert params["protocolVersion"] == 2
    assert params["capabilities"] == {
        "auth": {"terminal": {}},
        "elicitation": {"form": {}, "url": {}},
        "_meta": {"terminal_output": True, "terminal-auth": True},
    }
    await agent.close()
    stream, agent, _ = await connect(terminal_output=False)
    assert stream.sent[0]["params"]["capabilities"]["_meta"] == {"terminal-auth": True}
    await agent.close()
    stream = MemoryStream(
        on_sent=lambda m: stream.push({"jsonrpc": "2.0", "id": m["id"], "result": {"protocolVersion": 1}})
    )
    agent = Agent(stream)
    await agent.initialize(1)
    params = stream.sent[0]["params"]  # a forced v1 offer has only the v1 shape
    assert "capabilities" not in params and params["clientCapabilities"]["_meta"]["terminal_output"] is True
    await agent.close()


async def test_claude_sends_the_output_once_when_the_command_ends() -> None:
    stream, agent, session = await connect()
    exit_meta = {
        "claudeCode": {"toolName": "Bash"},
        "terminal_exit": {"terminal_id": "toolu_1", "exit_code": 0, "signal": None},
    }
    done = {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "toolu_1",
        "status": "completed",
        "_meta": exit_meta,
    }
    await feed(stream, bash_call(), output("café\n"), done)
    term = session.state.terminals["toolu_1"]
    assert term.output == "café\n".encode()
    assert term.exit_status == {"exitCode": 0, "signal": None}
    assert term.command == "printf 'caf\\xc3\\xa9\\n'"
    assert session.state.tool_calls["toolu_1"].status == "completed"
    assert session.state.diagnostics == []  # `claudeCode` is a normal `_meta` key
    await agent.close()


async def test_codex_streams_chunks_appended_as_they_arrive_with_colours() -> None:
    stream, agent, session = await connect()
    info = {"terminal_id": "exec-1", "cwd": "/tmp/project"}
    call = bash_call("call_1", "exec-1")
    call["_meta"] = {"terminal_info": info}
    chunks = ["\x1b[32mok", "\x1b[0m line 1\n", "line 2\n"]
    await feed(stream, call, *[output(c, "exec-1", "call_1") for c in chunks])
    term = session.state.terminals["exec-1"]
    assert term.output == "".join(chunks).encode() and term.cwd == "/tmp/project"
    assert term.exit_status is None
    exit_update = {"_meta": {"terminal_exit": {"terminal_id": "exec-1", "exit_code": 2, "signal": None}}}
    await feed(
        stream,
        {"sessionUpdate": "tool_call_update", "toolCallId": "call_1", "status": "failed", **exit_update},
    )
    assert term.exit_status == {"exitCode": 2, "signal": None}
    # the stored _meta keeps only the last chunk; the terminal has all of them
    assert session.state.tool_calls["call_1"].meta["terminal_output"]["data"] == "line 2\n"
    await agent.close()


async def test_a_malformed_value_gives_one_diagnostic_and_nothing_else_is_lost() -> None:
    stream, agent, session = await connect()
    bad = {"sessionUpdate": "tool_call_update", "toolCallId": "toolu_1", "status": "in_progress"}
    bad["_meta"] = {"terminal_output": {"terminal_id": "toolu_1", "data": 42}}
    await feed(stream, bash_call(), bad, output("after\n"))
    assert [d.code for d in session.state.diagnostics] == ["malformed-extension"]
    assert session.state.tool_calls["toolu_1"].status == "in_progress"
    assert session.state.terminals["toolu_1"].output == b"after\n"
    await agent.close()


def test_translate_reads_only_tool_call_updates_and_rejects_bad_shapes() -> None:
    assert translate({"sessionUpdate": "agent_message_chunk", "_meta": {"terminal_output": {}}}).updates == []
    for value in ("x", {}, {"terminal_id": 3}, {"terminal_id": ""}):
        result = translate({"sessionUpdate": "tool_call_update", "_meta": {"terminal_info": value}})
        assert result.updates == [] and len(result.problems) == 1
    exit_bad = translate(
        {"sessionUpdate": "tool_call_update", "_meta": {"terminal_exit": {"terminal_id": "t"}}}
    )
    assert exit_bad.updates == [] and len(exit_bad.problems) == 1
    signal = translate(
        {
            "sessionUpdate": "tool_call_update",
            "_meta": {"terminal_exit": {"terminal_id": "t", "signal": "SIGKILL"}},
        }
    )
    assert signal.updates == [
        {
            "sessionUpdate": "terminal_update",
            "terminalId": "t",
            "exitStatus": {"exitCode": None, "signal": "SIGKILL"},
        }
    ]
    text = translate(output("é"))
    assert base64.b64decode(text.updates[0]["data"]) == "é".encode()


async def test_the_command_may_come_in_a_later_update_than_the_terminal_info() -> None:
    stream, agent, session = await connect()
    first = bash_call()
    first["rawInput"] = {}  # Claude: the command arrives with the next update
    later = {"sessionUpdate": "tool_call_update", "toolCallId": "toolu_1", "rawInput": {"command": "ls -la"}}
    await feed(stream, first, later)
    assert session.state.terminals["toolu_1"].command == "ls -la"
    await agent.close()
