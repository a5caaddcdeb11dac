"""The real Claude's background subagent, from Python: its permission request comes after the
parent's turn ended and still reaches the user; its end makes the agent start a turn of its own.

The mock holds the background child's first model reply until the parent's turn has ended (the
model script of ``record_claude.py --subagents``, which records the shipped trace of the same run).
"""

from __future__ import annotations

import asyncio
import threading

from tests.real_agents.record_claude import NOTIFIED, SUBAGENTS_PROMPT, subagent_script
from tests.real_agents.test_claude import ALLOW, TURN, Run, claude  # noqa: F401  (the fixture)
from tests.support import until_async


async def test_background_subagent_asks_after_the_turn_ended(claude: Run) -> None:  # noqa: F811
    held = threading.Event()
    subagent_script(claude.script, held)
    session = await claude.manual_session()
    session.permission_handler = lambda request: ALLOW  # the foreground child's request
    try:
        assert await asyncio.wait_for(session.prompt(f"[sub] {SUBAGENTS_PROMPT}"), TURN) == "end_turn"
        foreground, background = session.subagents.values()
        assert (claude.project / "child.txt").exists() and foreground.run_state == "idle"
        assert session.state.background == [{"type": "subagent", "sessionId": background.session_id}]
        session.permission_handler = None  # the background child's request waits for the user
        held.set()
        pending = await until_async(lambda: session.pending_permissions, TURN, message="the late request")
        assert [p.session_id for p in pending] == [background.session_id]
        assert session.state.run_state == "idle" and not session.busy, "no turn runs while it asks"
        assert not (claude.project / "notes.txt").exists()
        pending[0].select(ALLOW)
        assert await session.wait_idle(TURN, background=True)
        said = lambda: any(NOTIFIED in m.text for m in session.state.messages.values())  # noqa: E731
        ended = lambda: said() and session.state.run_state == "idle"  # noqa: E731
        await until_async(ended, TURN, message="the agent's own turn")
    finally:
        held.set()
    assert (claude.project / "notes.txt").exists() and background.run_state == "idle"
    assert [(t.origin, t.origin_kind) for t in session.turns] == [
        ("user", "human"),
        ("agent", "task-notification"),
    ]
    assert session.turns[-1].stop_reason == "end_turn" and session.state.background == []
    for child in (foreground, background):
        assert [str(d) for d in child.state.diagnostics] == []
        assert child.state.tool_calls and not set(child.state.tool_calls) & set(session.state.tool_calls)
    await claude.close_and_check()
