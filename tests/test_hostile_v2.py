"""Issue 17, item 6: what a hostile v2 agent (``tests/agents/hostile.py``) showed. Deeply nested
messages, a flood for unknown sessions, NUL paths, a write whose file vanishes, and an agent that
closes its stdout leave the session, its views, exports and trace working, and every request
answered."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest
from jupyter_client.session import json_packer

import acp_notebook
from acp_notebook import SessionState
from acp_notebook.client import connection as connection_module
from acp_notebook.client.errors import RpcError
from acp_notebook.client.host import FilePolicy, Host
from acp_notebook.client.host import fs as fs_module
from acp_notebook.client.sessions import UNKNOWN_KEPT
from acp_notebook.protocol.depth import CUT, MAX_DEPTH, depth_of
from acp_notebook.protocol.jsonrpc import INVALID_PARAMS, METHOD_NOT_FOUND, RESOURCE_NOT_FOUND
from acp_notebook.protocol.trace import parse
from acp_notebook.widgets.browser_inbox import dispatch
from acp_notebook.widgets.message_parts import json_size

from .support import recording as recording  # the autouse recording comm
from .support import running, until_async
from .test_comm_bounds import MB, view_messages
from .test_widgets import make_view

HOSTILE = Path(__file__).parent / "agents" / "hostile.py"
KERNEL_FRAMES = 150  # roughly how deep an ipykernel's stack is when a comm message is packed


async def hostile(tmp_path: Path, mode: str, n: int, **start):
    """A started hostile agent, its session, and the file of what it received."""
    log = tmp_path / "hostile.jsonl"
    command = [sys.executable, str(HOSTILE), mode, str(n), str(log)]
    agent = await acp_notebook.start_agent(command, **start)
    return agent, await agent.new_session(cwd=str(tmp_path)), log


def received(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text().splitlines() if line.strip()]


def packed_in_a_kernel(value) -> None:
    """Pack ``value`` as Jupyter does (``json_packer``), from a stack as deep as a kernel's."""

    def nest(k: int) -> None:
        return json_packer(value) if k == 0 else nest(k - 1)

    nest(KERNEL_FRAMES)


# -- 1. nesting depth ----------------------------------------------------------------------------
@pytest.mark.parametrize("depth", [100, 500, 975, 5000, 100_000])
async def test_any_nesting_depth_leaves_session_views_exports_and_trace_working(tmp_path, recording, depth):
    agent, session, log = await hostile(tmp_path, "deep", depth, record=tmp_path / "trace.jsonl")
    view, _, _ = make_view(session)
    try:
        assert await asyncio.wait_for(session.prompt("go"), 30) == "end_turn"
        view.flush_patch()
        meta = session.state.tool_calls["c1"].meta  # the update was applied, cut at the bound
        assert depth_of(meta) == MAX_DEPTH - 3 and CUT in json.dumps(meta)  # message, params, update, _meta
        assert any(d.code == "too-deep" for d in session.state.diagnostics)
        for _cid, _kind, data, _bufs in recording:  # every comm message packs in a kernel
            packed_in_a_kernel(data)
        make_view(session)
        acp_notebook.export_json(session, tmp_path / "s.json")
        acp_notebook.export_html(session, tmp_path / "s.html")
    finally:
        await agent.close()
    answers = [m for m in received(log) if m.get("id") == 77 and "method" not in m]
    assert [a["error"]["code"] for a in answers] == [METHOD_NOT_FOUND]  # the request in it was answered
    _, entries = parse((tmp_path / "trace.jsonl").read_text().splitlines())
    deep = [e for e in entries if e["dir"] == "in" and e.get("cut")]
    assert len(deep) == 2 and all(depth_of(e["message"]) <= MAX_DEPTH for e in deep)


# -- 2. messages for unknown sessions ------------------------------------------------------------
async def test_a_flood_for_unknown_sessions_is_counted_not_kept(tmp_path):
    agent, session, log = await hostile(tmp_path, "flood", 5_000)
    try:
        assert await asyncio.wait_for(session.prompt("go"), 60) == "end_turn"
        stray = [d for d in agent.diagnostics if d.code == "unknown-session"]
        assert len(stray) == UNKNOWN_KEPT + 1  # the sample, and one note that the rest are counted
        assert all(len(json.dumps(d.detail)) < 200 for d in stray)
        assert sum(1 for d in session.state.diagnostics if d.code == "unknown-session") == UNKNOWN_KEPT + 1
        counts = agent.unknown_sessions
        assert sum(counts.values()) == 5_001 and counts["ghost-0"] == 5 and len(counts) <= 101
    finally:
        await agent.close()
    answer = [m for m in received(log) if m.get("id") == 78 and "method" not in m]
    assert [a["error"]["code"] for a in answer] == [RESOURCE_NOT_FOUND]


# -- 4. small ones: NUL paths, a vanishing file, a closed stdout -----------------------------------
@pytest.mark.parametrize("method", ["fs/read_text_file", "fs/write_text_file"])
async def test_a_path_with_a_nul_byte_is_invalid_params(tmp_path, method):
    host = Host(SessionState(), [str(tmp_path)], FilePolicy())
    with pytest.raises(RpcError) as info:
        await host.serve(method, {"path": f"{tmp_path}/a\x00b", "content": "x"})
    assert info.value.code == INVALID_PARAMS and "NUL" in info.value.message


async def test_a_file_that_vanishes_during_a_write_is_a_clean_refusal(tmp_path, monkeypatch):
    def vanished(*_args, **_kwargs):
        raise FileNotFoundError(2, "No such file or directory")

    monkeypatch.setattr(fs_module.safe_open, "open_file", vanished)
    host = Host(SessionState(), [str(tmp_path)], FilePolicy())
    with pytest.raises(RpcError) as info:
        await host.serve("fs/write_text_file", {"path": str(tmp_path / "gone.txt"), "content": "x"})
    assert info.value.code == RESOURCE_NOT_FOUND
    assert "vanished" in info.value.message and "Errno" not in info.value.message


async def test_an_agent_that_closes_its_stdout_is_said_so_and_ended(tmp_path, monkeypatch):
    monkeypatch.setattr(connection_module, "EXIT_WAIT", 0.5)
    agent, session, _ = await hostile(tmp_path, "eof", 60)
    try:
        prompt = asyncio.ensure_future(session.prompt("go"))
        await until_async(lambda: prompt.done(), 15, message="the turn to end")
        assert any(d.code == "stdout-closed" for d in session.state.diagnostics)
        assert "kept running" in str(prompt.exception())
        await until_async(lambda: not running(agent.process.pid), 10, message="the agent to be ended")
        assert session.state.run_state == "idle"
    finally:
        await agent.close()


# -- 3. one huge message ---------------------------------------------------------------------------
def sent_bytes(records) -> int:
    """Bytes of every comm message recorded (views, their saved pages), but the runtime's bundle."""
    return sum(json_size(d) + sum(len(b) for b in bufs) for _cid, _kind, d, bufs in view_messages(records))


async def test_a_50_mb_message_sends_and_saves_a_bounded_entry_and_show_all_fetches_it(tmp_path, recording):
    agent, session, _ = await hostile(tmp_path, "big", 50 * MB)
    view, _, _ = make_view(session)
    try:
        assert await asyncio.wait_for(session.prompt("go"), 60) == "end_turn"
        view.flush_patch()
        view.flush_snapshot()
        assert sent_bytes(recording) < 2 * MB  # two 50 MB entries, each shown and saved as 200 KB
        assert view._entry("message:m1")["cut"]["total"] >= 50 * MB
        start = len(recording)
        dispatch(view, {"type": "entry_full", "key": "message:m1"})
        assert sent_bytes(recording[start:]) > 50 * MB  # "show all": the whole text, in parts
    finally:
        await agent.close()
