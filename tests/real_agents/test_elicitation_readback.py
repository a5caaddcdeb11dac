"""Real agents' elicitations read back: the real Codex (codex-acp 2.6, ``request_user_input``) and
the real Claude (claude-agent-acp 0.101, ``AskUserQuestion``) ask through our client; their traffic,
written as a trace, replays to the same elicitation with the same answer, the X-ray finds the
messages that built it (and, for Claude, its tool call's card), and the doctor finds only what is
known (Codex names a tool call it never reports)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import acp_notebook
from acp_notebook.playback.xray_source import XRaySource
from acp_notebook.protocol import trace
from tests.real_agents import test_claude_elicitation as claude_asks
from tests.real_agents.test_claude import claude  # noqa: F401  (fixtures)
from tests.real_agents.test_codex import Run, _agents_installed, codex, prompt  # noqa: F401  (fixtures)
from tests.real_agents.test_codex_elicitation import ASK, plan_session, script


async def test_codex_s_question_replays_with_its_answer(codex: Run, tmp_path: Path) -> None:  # noqa: F811
    script(codex)
    session = await plan_session(codex)
    session.elicitation_handler = lambda e: {"db_choice": "Postgres", "db_choice_note": "on port 5433"}
    assert await prompt(codex, session, ASK) == "end_turn"
    [live] = session.state.elicitations.values()
    entries = list(codex.agent.traffic)
    await codex.close_and_check()
    path = written(tmp_path / "codex.jsonl", entries)
    rep = acp_notebook.replay(path)
    try:
        [again] = rep.state.elicitations.values()
        seen = (again.key, again.tool_call_id, again.schema, again.outcome, again.decided_by, again.status)
        assert seen == (live.key, "call_ask", live.schema, live.outcome, "handler", "accepted")
        xray = XRaySource.of_replay(rep)
        built = xray.built_by(f"elicitation:{again.key}", rep.state)
        xray.close()
    finally:
        rep.close()
    methods = [_what(entries[i]) for i in built]
    assert methods == [("in", "elicitation/create"), ("out", None)]  # its request and our answer
    found = acp_notebook.doctor(path)  # codex names the model's call id, a tool call it never reports
    assert [(f.code, f.kind) for f in found] == [("elicitation-unknown-tool-call", "hazard")]
    assert "'call_ask'" in found[0].message


async def test_claude_s_question_replays_with_its_answer(claude: Any, tmp_path: Path) -> None:  # noqa: F811
    claude_asks.script(claude)
    session = await claude.agent.new_session(cwd=claude.project)
    session.elicitation_handler = lambda e: {"question_0": ["Unit tests", "Browser tests"]}
    assert await claude_asks.ask(claude, session) == "end_turn"
    [live] = session.state.elicitations.values()
    entries = list(claude.agent.traffic)
    await claude.close_and_check()
    path = written(tmp_path / "claude.jsonl", entries)
    rep = acp_notebook.replay(path)
    try:
        [again] = rep.state.elicitations.values()
        assert (again.tool_call_id, again.message, again.outcome) == (
            claude_asks.ASK_ID,
            live.message,
            live.outcome,
        )
        xray = XRaySource.of_replay(rep)
        card = xray.built_by(f"tool_call:{claude_asks.ASK_ID}", rep.state)
        xray.close()
    finally:
        rep.close()
    kinds = {_what(entries[i]) for i in card}
    assert {("in", "elicitation/create"), ("out", None)} <= kinds  # the card shows its question
    assert list(acp_notebook.doctor(path)) == []


def written(path: Path, entries: list[dict[str, Any]]) -> Path:
    """``entries`` (an agent's ring) as a trace file."""
    lines = [trace.header("0", ["agent"]), *entries]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def _what(entry: dict[str, Any]) -> tuple[Any, Any]:
    message = entry.get("message") if isinstance(entry.get("message"), dict) else {}
    return entry.get("dir"), message.get("method")
