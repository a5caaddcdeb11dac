"""SessionHeaderView (the ``%acp start`` cell's view): the header and one line per turn, no entries.

Driven with a hand-fed state and turns (a recording comm, an injectable clock), then through the
magic: the start cell shows it, ``%acp view`` still shows the whole session, and each ``%%acp``
cell's turn view carries the anchor its header line points to.
"""

from __future__ import annotations

import asyncio

import pytest

from acp_notebook import SessionState
from acp_notebook.protocol import PermissionRequest
from acp_notebook.protocol.turn import Turn
from acp_notebook.widgets import Scheduler, SessionHeaderView
from acp_notebook.widgets.header_view import anchor_of, first_line

from .support import RecordingComm
from .support import recording as recording  # the autouse recording comm
from .test_magic import DEMO, cell, displayed, ip, start  # noqa: F401 - fixtures shared with test_magic
from .test_widgets import FakeTime, patches, tool, updates

pytestmark = pytest.mark.usefixtures("recording")


class FakeSession:
    """What the header view reads of a session: its state, its turns, its summary (none here)."""

    def __init__(self) -> None:
        self.session_id = "sess_x"
        self.state = SessionState()
        self.turns: list[Turn] = []
        self.cancelled = 0

    def summary(self):
        return None

    async def cancel(self) -> None:
        self.cancelled += 1


def make(fake: FakeTime | None = None):
    fake = fake or FakeTime()
    session = FakeSession()
    scheduler = Scheduler(clock=fake.clock, call_later=fake.call_later)
    view = SessionHeaderView(session, title="acp", hint="the whole session: %acp view", scheduler=scheduler,
                             clock=fake.clock)  # fmt: skip
    return view, session, fake


def begin(session: FakeSession, prompt: str) -> Turn:
    """A turn as the runner starts it: appended, then the prompt echo and ``running``."""
    turn = Turn(ends_on_response=True)
    session.turns.append(turn)
    session.state.apply({"sessionUpdate": "user_message_chunk", "content": {"type": "text", "text": prompt}})
    session.state.apply({"sessionUpdate": "state_update", "state": "running"})
    return turn


def end(session: FakeSession, turn: Turn, reason: str = "end_turn") -> None:
    reply = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "done"}}
    session.state.apply(reply)
    session.state.apply({"sessionUpdate": "state_update", "state": "idle", "stopReason": reason})
    turn.on_response({"stopReason": reason})


def test_the_snapshot_holds_the_header_and_no_entries():
    view, _, fake = make()
    snap = view.snapshot
    assert set(snap) == {"seq", "header", "turns", "hint", "saved_at"}
    assert snap["saved_at"] == fake.clock()  # a running turn's clock stops there in a saved notebook
    assert snap["header"]["title"] == "acp" and snap["header"]["run_state"] == "idle"
    assert snap["turns"] == [] and snap["hint"] == "the whole session: %acp view"
    assert view.kind == "header"


def test_one_line_per_turn_updates_live_and_when_the_turn_ends():
    view, session, fake = make()
    fake.now = 10.0
    turn = begin(session, "Fix the failing test\nand run it")
    session.state.apply(tool("c1", title="edit", status="in_progress"))
    turn.saw_tool_call("c1")
    fake.advance(0.1)
    (message, _), *_ = patches(RecordingComm.log, view)
    (line,) = message["turns"]
    assert line == {
        "n": 1, "anchor": anchor_of(session, 1), "prompt": "Fix the failing test", "state": "running",
        "stop_reason": None, "error": False, "tool_calls": 1, "started": 10.0, "duration": None,
        "origin": "user", "origin_kind": None, "origin_label": None, "subagents": 0,
    }  # fmt: skip
    assert message["header"]["run_state"] == "running"
    assert "entries" not in message and "order" not in message

    fake.now = 12.5
    end(session, turn)
    fake.advance(0.2)
    message, _ = patches(RecordingComm.log, view)[-1]
    assert [(t["n"], t["state"], t["stop_reason"], t["duration"]) for t in message["turns"]] == [
        (1, "ended", "end_turn", 2.5)
    ]
    assert message["header"]["run_state"] == "idle" and message["header"]["stop_reason"] == "end_turn"
    fake.advance(3)
    assert [t["state"] for t in updates(RecordingComm.log, view)[-1]["snapshot"]["turns"]] == ["ended"]


def test_a_patch_carries_only_what_changed():
    view, session, fake = make()
    end(session, begin(session, "one"))
    fake.advance(0.1)
    second = begin(session, "two")
    fake.advance(0.1)
    message, _ = patches(RecordingComm.log, view)[-1]
    assert [t["n"] for t in message["turns"]] == [2], "the ended first turn is not sent again"
    sent = len(patches(RecordingComm.log, view))
    session.state.apply(tool("c9", title="unseen by the turn"))  # changes neither header nor lines
    fake.advance(0.1)
    assert len(patches(RecordingComm.log, view)) == sent, "nothing changed: nothing sent"
    second.saw_tool_call("c9")
    session.state.apply(tool("c9", status="completed"))
    fake.advance(0.1)
    message, _ = patches(RecordingComm.log, view)[-1]
    assert "header" not in message and [(t["n"], t["tool_calls"]) for t in message["turns"]] == [(2, 1)]


async def test_resync_sends_everything_and_stop_cancels():
    view, session, fake = make()
    end(session, begin(session, "one"))
    begin(session, "two")
    fake.advance(0.1)
    view._handle_browser_msg({"type": "resync"})
    message, _ = patches(RecordingComm.log, view)[-1]
    assert message["full"] and [t["n"] for t in message["turns"]] == [1, 2] and "header" in message
    assert message["hint"] == "the whole session: %acp view"
    view._handle_browser_msg({"type": "cancel_turn"})
    await asyncio.sleep(0)
    assert session.cancelled == 1


def test_turns_before_the_view_are_listed_with_their_prompts():
    fake = FakeTime()
    session = FakeSession()
    end(session, begin(session, "earlier prompt"))
    scheduler = Scheduler(clock=fake.clock, call_later=fake.call_later)
    view = SessionHeaderView(session, scheduler=scheduler, clock=fake.clock)
    (line,) = view.snapshot["turns"]
    assert (line["prompt"], line["state"], line["started"], line["duration"]) == (
        "earlier prompt", "ended", None, None,
    )  # fmt: skip


def test_a_line_counts_the_subagents_its_turn_announced_and_the_header_lists_who_waits():
    view, session, fake = make()
    first = begin(session, "Explore")
    for child in ("a", "b", "a"):  # "a" twice: one subagent
        session.state.apply({"sessionUpdate": "subagent_update", "sessionId": child, "title": child.upper()})
    end(session, first)
    begin(session, "Again")
    session.state.apply({"sessionUpdate": "subagent_update", "sessionId": "c", "title": "C"})
    fake.advance(0.1)
    assert [line["subagents"] for line in view.turn_lines()] == [2, 1]
    options = [{"optionId": "ok", "name": "Allow", "kind": "allow_once"}]
    params = {"sessionId": "b", "title": "Run it?", "subject": {"type": "other"}, "options": options}
    session.state.add_permission(PermissionRequest("perm_1", 1, params))
    fake.advance(0.1)
    message, _ = patches(RecordingComm.log, view)[-1]
    assert message["header"]["waiting"] == [{"session_id": "b", "subagent": "B", "title": "Run it?"}]


def test_first_line_and_anchors():
    assert first_line("\n  hello world  \nsecond") == "hello world"
    assert first_line("x" * 100) == "x" * 79 + "…"
    a, b = FakeSession(), FakeSession()
    assert anchor_of(a, 1) == anchor_of(a, 1) != anchor_of(b, 1), "same session id, other session"
    assert anchor_of(a, 2).startswith("sess_x/") and anchor_of(a, 2).endswith("#2")


def test_the_start_cell_shows_the_header_view_and_turn_views_carry_its_anchors(ip, capsys, displayed):  # noqa: F811
    session = start(ip, capsys, "hv", f"{DEMO} --scenario echo")
    (header,) = [o for o in displayed.objects if isinstance(o, SessionHeaderView)]
    assert header.session is session and displayed.views() == [], "no full SessionView in the start cell"
    assert "%acp view --name hv" in header.snapshot["hint"]
    cell(ip, "%%acp --wait --name hv\nfirst", capsys)
    cell(ip, "%%acp --wait --name hv\nsecond", capsys)
    first, second = displayed.views()
    lines = header.turn_lines()
    assert [(t["prompt"], t["stop_reason"]) for t in lines] == [("first", "end_turn"), ("second", "end_turn")]
    assert (
        [first.anchor, second.anchor]
        == [t["anchor"] for t in lines]
        == [anchor_of(session, 1), anchor_of(session, 2)]
    )
    cell(ip, "%acp view --name hv", capsys)
    whole = displayed.views()[-1]
    assert len(whole.entry_keys) == 4 and whole.anchor == "", "the whole session: both turns' messages"
    cell(ip, "%acp stop --name hv", capsys)
