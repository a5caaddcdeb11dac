"""Export: ``export_json`` (state + redacted trace, no secret) and ``export_html`` (one page: the
runtime inlined once, the snapshot and terminal bytes as inert JSON data that agent text cannot
break out of), for a live session, a bare ``SessionState`` and a ``Replay``."""

from __future__ import annotations

import asyncio
import base64
import json
import re
from pathlib import Path

import acp_notebook
from acp_notebook.export.html_export import script_safe
from acp_notebook.protocol import SessionState
from acp_notebook.traces import path as trace_path

HOSTILE = "</script><img src=x onerror=alert(1)>"
SECRETS = ("SECRET_ENV_VALUE", "SECRET_HEADER_VALUE")
DATA_RE = re.compile(r'<script type="application/json" id="(acp-export-[a-z]+)">(.*?)</script>', re.S)


def data_of(page: str) -> dict:
    """The page's embedded data elements, decoded."""
    return {name: json.loads(text) for name, text in DATA_RE.findall(page)}


def check_page(page: str) -> dict:
    """One bundle, four script elements, nothing raw that could close or open a tag; the data."""
    assert page.count("__acpNotebook.resolve") == 1  # the runtime, inlined once
    assert len(re.findall(r"<script\b", page, re.I)) == 4
    assert len(re.findall(r"</script", page, re.I)) == 4
    assert "<!--" not in page and HOSTILE not in page
    data = data_of(page)
    assert set(data) == {"acp-export-snapshot", "acp-export-bytes"}
    for _, text in DATA_RE.findall(page):
        assert "<" not in text and ">" not in text and "&" not in text
    return data


async def test_live_demo_session_exports_state_trace_and_no_secret(tmp_path: Path) -> None:
    env = {"ACP_DEMO_SPEED": "0", "DEMO_TOKEN": SECRETS[0]}
    agent = await acp_notebook.start_agent("python -m acp_notebook.demo_agent", env=env)
    servers = [{"type": "http", "name": "web", "url": "https://mcp.example/",
                "headers": [{"name": "Authorization", "value": f"Bearer {SECRETS[1]}"}]}]  # fmt: skip
    try:
        session = await agent.new_session(str(tmp_path), servers)
        session.permission_handler = lambda request: "allow-once"
        assert await asyncio.wait_for(session.prompt("Fix the bug"), 30) == "end_turn"
        out = acp_notebook.export_json(session, tmp_path / "s.json")
        page_path = acp_notebook.export_html(session, tmp_path / "s.html")
        traffic = json.loads(json.dumps(session.traffic))
    finally:
        await agent.close()
    text = out.read_text()
    doc = json.loads(text)
    assert doc["format"] == "acp-notebook-export" and doc["version"] == 1
    assert doc["client_version"] == acp_notebook.__version__
    assert doc["agent"]["name"] == "acp-notebook-demo" and doc["agent"]["protocol"] == 2
    assert doc["session_id"] == session.session_id
    state = doc["state"]
    assert list(state["tool_calls"]) == list(session.state.tool_calls)
    assert state["tool_calls"]["call_edit"]["status"] == "completed"
    term_id, term = next(iter(state["terminals"].items()))
    assert base64.b64decode(term["output"]["data"]) == session.state.terminals[term_id].output
    assert state["messages"][0]["role"] == "user"
    assert state["permissions"] and {p["decided_by"] for p in state["permissions"]} == {"handler"}
    assert state["run_state"] == "idle" and state["stop_reason"] == "end_turn"
    assert set(state) >= {"plans", "diagnostics"}
    assert doc["trace"] == traffic and doc["trace"]
    page = page_path.read_text()
    for secret in SECRETS:
        assert secret not in text and secret not in page
    data = check_page(page)
    snapshot = data["acp-export-snapshot"]
    assert [k for k in snapshot["order"] if k.startswith("tool_call:")] == [
        f"tool_call:{k}" for k in session.state.tool_calls
    ]
    blob = base64.b64decode(data["acp-export-bytes"])
    start, length = snapshot["terminals"][term_id]["blob"]
    assert blob[start : start + length] == session.state.terminals[term_id].output
    header = snapshot["header"]
    assert header["can_cancel"] is True and header["interactive_terminals"] == []


def test_bare_state_with_hostile_text(tmp_path: Path) -> None:
    state = SessionState()
    chunk = {"sessionUpdate": "agent_message_chunk", "messageId": "m1"}
    state.apply({**chunk, "content": {"type": "text", "text": f"{HOSTILE} <!-- <script>x</script>"}})
    state.apply({"sessionUpdate": "tool_call", "toolCallId": "t1", "title": HOSTILE, "status": "completed"})
    page = acp_notebook.export_html(state, tmp_path / "bare.html").read_text()
    snapshot = check_page(page)["acp-export-snapshot"]
    assert snapshot["entries"]["tool_call:t1"]["title"] == HOSTILE
    message = next(e for k, e in snapshot["entries"].items() if k.startswith("message:"))
    assert HOSTILE in message["markdown"]
    assert snapshot["header"]["can_cancel"] is False and snapshot["header"]["agent"] is None
    doc = json.loads(acp_notebook.export_json(state, tmp_path / "bare.json").read_text())
    assert doc["agent"] is None and doc["session_id"] is None and doc["trace"] == []
    assert doc["state"]["tool_calls"]["t1"]["title"] == HOSTILE


def test_replay_exports_its_recorded_trace(tmp_path: Path) -> None:
    replay = acp_notebook.replay(trace_path("demo_v2.jsonl"))
    try:
        replay.seek(len(replay))
        doc = json.loads(acp_notebook.export_json(replay, tmp_path / "r.json").read_text())
        assert len(doc["trace"]) == len(replay) and doc["state"]["tool_calls"]
        snapshot = check_page(acp_notebook.export_html(replay, tmp_path / "r.html").read_text())
        assert any(k.startswith("tool_call:") for k in snapshot["acp-export-snapshot"]["order"])
    finally:
        replay.close()


def test_script_safe_keeps_the_javascript_meaning() -> None:
    js = 'const a = "</script>", b = /<!--|<script/i, c = `</SCRIPT >`;'
    safe = script_safe(js)
    assert "</script" not in safe.lower() and "<!--" not in safe and "<script" not in safe.lower()
    assert safe.count("\\x3C") == 4
