"""Replay: ``replay(path)`` (len, seek, step, play, view; deterministic) and the replay agent,
which plays a trace's agent side against a live client (the shipped demo and Claude traces)."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest

import acp_notebook
from acp_notebook.playback.replayer import Replay
from acp_notebook.protocol import trace
from acp_notebook.traces import path
from acp_notebook.widgets.snapshot import timeline_items
from tests.record_demo import CWD, PROMPT, allow_once
from tests.support import until_async

ROOT = Path(__file__).resolve().parents[1]
ENV = {"PYTHONPATH": str(ROOT)}  # the agent subprocess imports this checkout
CLAUDE_PROMPT = "[turn] Update the greeting, then print it."


def snapshot(state: Any) -> dict[str, Any]:
    """Everything a replay must reproduce: tool calls, terminals (bytes), messages, permissions."""
    return {
        "tool_calls": {k: tc.to_dict() for k, tc in state.tool_calls.items()},
        "terminals": {k: (t.to_dict(), t.exit_status) for k, t in state.terminals.items()},
        "messages": [m.to_dict() for m in state.messages.values()],
        "plans": {k: p.to_dict() for k, p in state.plans.items()},
        "permissions": {k: (p.options, p.outcome) for k, p in state.permissions.items()},
        "run": (state.run_state, state.stop_reason),
        "diagnostics": [d.code for d in state.diagnostics],
    }


@pytest.fixture
def demo() -> Any:
    rep = acp_notebook.replay("demo_v2.jsonl", position=0)
    yield rep
    rep.close()


def test_len_is_the_entries_after_the_header(demo: Replay) -> None:
    lines = path("demo_v2.jsonl").read_text().splitlines()
    assert len(demo) == len(lines) - 1 and demo.position == 0
    assert snapshot(demo.state)["tool_calls"] == {}


def test_seek_is_deterministic_and_step_back_equals_seek(demo: Replay) -> None:
    middle = len(demo) // 2
    first = snapshot(demo.seek(middle))
    assert first["tool_calls"] and demo.position == middle
    demo.seek(3)
    assert snapshot(demo.seek(middle)) == first
    demo.seek(middle + 1)
    assert snapshot(demo.step(-1)) == first and demo.position == middle
    assert snapshot(demo.step(1)) == snapshot(demo.seek(middle + 1))
    assert demo.seek(10**6) is demo.state and demo.position == len(demo)  # clamped
    assert demo.state.run_state == "idle" and demo.state.stop_reason == "end_turn"
    demo.seek(-5)
    assert demo.position == 0


@pytest.mark.parametrize("name", ["demo_v2.jsonl", "demo_v1.jsonl", "claude_v1.jsonl"])
def test_every_position_rebuilds_the_same_state(name: str) -> None:
    forward = acp_notebook.replay(name, position=0)
    try:
        states = []
        for _ in range(len(forward)):
            states.append(json.dumps(snapshot(forward.step(1)), sort_keys=True, default=str))
        for position in (len(forward), len(forward) // 3, 1):
            assert (
                json.dumps(snapshot(forward.seek(position)), sort_keys=True, default=str)
                == states[position - 1]
            )
    finally:
        forward.close()


async def test_play_is_a_task_that_reaches_the_end(demo: Replay) -> None:
    seen: list[int] = []
    demo.on_seek.append(lambda rep: seen.append(rep.position))
    task = demo.play(speed=None)
    assert isinstance(task, asyncio.Task) and demo.playing
    await asyncio.wait_for(task, 30)
    assert demo.position == len(demo) and seen == list(range(1, len(demo) + 1))
    demo.seek(0)
    task = demo.play(speed=0.01, max_gap=0.05)  # the recorded pace, 100 times slower (gaps <= 5 s)
    await until_async(lambda: demo.position > 0, 10)
    demo.pause()
    await asyncio.gather(task, return_exceptions=True)
    assert task.cancelled() and not demo.playing and 0 < demo.position < len(demo)


def test_the_view_follows_the_replay(demo: Replay) -> None:
    view = demo.view()
    first = view.session_view
    assert first is not None and first.state is demo.state
    view.bar.position = 20  # as the page's slider sets it
    assert demo.position == 20 and view.session_view.state is demo.state and view.session_view is first
    assert view.session_view.entry_keys == list(timeline_items(demo.state)[0])  # the whole state at 20
    demo.seek(5)  # a seek from code moves the slider too
    assert view.bar.position == 5 and view.session_view.state is demo.state
    assert view.bar.where == f"5/{len(demo)} · {demo.time_at(5):.2f} s"
    assert view.session_view.entry_keys == list(timeline_items(demo.state)[0])  # fewer: rebuilt at 5
    view.bar._handle({"type": "step", "by": 1})  # the page's "on ›"
    assert demo.position == 6
    view.bar._handle({"type": "step", "by": -1})
    assert demo.position == 5
    view.bar._handle({"type": "step", "by": "x"})  # not a step: ignored
    assert demo.position == 5
    view.close()
    assert view._before not in demo.before_seek


def test_a_file_that_is_not_a_trace_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "x.jsonl"
    bad.write_text('{"jsonrpc": "2.0"}\n')
    with pytest.raises(ValueError, match="acp_trace"):
        acp_notebook.replay(bad)
    head, _ = trace.parse(path("demo_v1.jsonl").read_text().splitlines())
    assert head["client"] == "acp_notebook"


# -- the replay agent ---------------------------------------------------------------------------------
async def _run(name: str, prompt: str, handler: Any, cwd: str, version: int = 2) -> tuple[Any, Any, int]:
    command = [sys.executable, "-m", "acp_notebook.replay_agent", str(path(name)), "--timeout", "5"]
    agent = await acp_notebook.start_agent(command, cwd, ENV, protocol_version=version)
    session = await agent.new_session(cwd)
    session.permission_handler = handler
    await asyncio.wait_for(session.prompt(prompt), 30)
    code = await agent.close()
    return agent, session, code


@pytest.mark.parametrize(("name", "version"), [("demo_v2.jsonl", 2), ("demo_v1.jsonl", 1)])
async def test_the_replay_agent_reproduces_the_demo_traces(name: str, version: int) -> None:
    Path(CWD).mkdir(exist_ok=True)
    recorded = acp_notebook.replay(name)
    want = snapshot(recorded.state)
    recorded.close()
    agent, session, code = await _run(name, PROMPT, allow_once, CWD, version)
    assert snapshot(session.state) == want
    assert session.state.terminals and any(t.output for t in session.state.terminals.values())
    assert code == 0 and not [line for line in agent.stderr_tail(50) if "divergence" in line]


async def test_the_claude_trace_replays_with_no_key_and_no_node() -> None:
    recorded = acp_notebook.replay("claude_v1.jsonl")
    want = snapshot(recorded.state)
    recorded.close()
    assert list(want["tool_calls"]) == ["toolu_a_read", "toolu_a_edit", "toolu_a_bash"]
    assert want["run"] == ("idle", "end_turn") and want["diagnostics"] == []
    agent, session, code = await _run("claude_v1.jsonl", CLAUDE_PROMPT, lambda r: "allow", "/tmp")
    assert snapshot(session.state) == want and code == 0
    assert agent.info["name"] == "@agentclientprotocol/claude-agent-acp" and agent.protocol_version == 1
    terminal = session.state.terminals["toolu_a_bash"]
    assert terminal.output == "café".encode() and terminal.exit_status == {"exitCode": 0, "signal": None}


async def test_the_replay_agent_reports_a_divergence() -> None:
    def reject(request: Any) -> str:
        return next(o["optionId"] for o in request.options if o["kind"].startswith("reject"))

    agent, _, code = await _run("demo_v2.jsonl", PROMPT, reject, "/tmp")
    assert code == 1
    lines = [line for line in agent.stderr_tail(50) if "replay_agent" in line]
    assert any("divergence" in line and "the client answered" in line for line in lines), lines


async def test_a_loaded_session_replays_its_history(tmp_path: Path) -> None:
    from acp_notebook.client.agent import Agent
    from acp_notebook.playback.memory import MemoryStream

    chunk = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "earlier"}}

    def answer(message: Any) -> None:
        if message.get("method") == "initialize":
            result = {"protocolVersion": 1, "agentCapabilities": {"loadSession": True}}
        elif message.get("method") == "session/load":
            update = {"sessionId": "old", "update": chunk}
            stream.push({"jsonrpc": "2.0", "method": "session/update", "params": update})
            result = {}
        else:
            return
        stream.push({"jsonrpc": "2.0", "id": message["id"], "result": result})

    stream = MemoryStream(on_sent=answer)
    out = tmp_path / "load.jsonl"
    agent = Agent(stream, record=out)
    await agent.initialize(1)
    session = await agent.resume_session("old", tmp_path)
    live = snapshot(session.state)
    await agent.close()
    rep = acp_notebook.replay(out)
    try:
        assert [e["message"].get("method") for e in rep.entries if e["dir"] == "out"] == [
            "initialize",
            "session/load",
        ]
        assert snapshot(rep.state) == live and [m.text for m in rep.state.messages.values()] == ["earlier"]
    finally:
        rep.close()
