"""Views that never contradict themselves (issue 21, items 1, 2 and 10).

A turn's view (a ``%%acp`` cell's, an agent-started turn's) is about its turn: its own state and
stop reason, its own duration, a Stop only while it runs that cancels only it, and a compact line
linking to the start cell's header instead of a copy of the session header. The start cell's
header says "agent stopped" / "agent exited" the moment the agent ends. A ``%%acp --wait`` cell
says in its output what it waits for (JupyterLab shows the kernel "Idle" meanwhile).
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys

import pytest

from acp_notebook import SessionState, start_agent
from acp_notebook.magic import wait_line
from acp_notebook.protocol import PermissionRequest
from acp_notebook.protocol.changes import Change
from acp_notebook.protocol.turn import Turn
from acp_notebook.widgets import Scheduler, SessionHeaderView, SessionView
from acp_notebook.widgets.agent_turns import AgentTurnViews
from acp_notebook.widgets.header_view import anchor_of, header_anchor_of
from acp_notebook.widgets.turn_scope import TurnScope

from .support import RecordingComm, until_async
from .support import recording as recording  # the autouse recording comm
from .test_magic import DEMO, cell, displayed, ip, start  # noqa: F401 - fixtures shared with test_magic
from .test_widgets import FakeTime, patches

pytestmark = pytest.mark.usefixtures("recording")

SLOW = [sys.executable, "-m", "acp_notebook.demo_agent", "--speed", "0", "--scenario", "slow"]
SESSION_CHROME = {"run_state", "usage", "stderr", "stdout", "diagnostics", "commands", "config_options"}


def cell_view(session) -> SessionView:
    """A view made as a ``%%acp`` cell makes it: before its turn, for the next turn's number."""
    since, number = len(session.state.timeline), len(session.turns) + 1
    return SessionView(session, since=since, title="cell", anchor=anchor_of(session, number), turn=number)


async def test_a_turn_view_shows_its_own_state_and_its_stop_cancels_only_its_turn(tmp_path):
    agent = await start_agent(SLOW)
    session = await agent.new_session(str(tmp_path))
    first = cell_view(session)
    assert first._header()["turn_state"] == "starting" and not first._header()["running"]
    one = session.prompt_task("run", on_start=first.turn_scope.expect_next)
    await until_async(lambda: first._header()["turn_state"] == "running", 20, message="turn 1 running")
    head = first._header()
    assert head["scope"] == "turn" and head["turn"] == 1 and head["running"]
    assert not SESSION_CHROME & set(head), "a turn view carries no copy of the session header"
    assert head["session_anchor"] == header_anchor_of(session) and head["agent"]["name"]
    assert first.anchor == anchor_of(session, 1)
    first._handle_browser_msg({"type": "cancel_turn", "turn": 1})
    assert await asyncio.wait_for(one, 20) == "cancelled"

    second = cell_view(session)
    two = session.prompt_task("run", on_start=second.turn_scope.expect_next)
    await until_async(lambda: second._header()["turn_state"] == "running", 20, message="turn 2 running")
    earlier = first._header()
    assert earlier["turn_state"] == "ended" and earlier["stop_reason"] == "cancelled"
    assert not earlier["running"], "a finished turn's view offers no Stop while a later turn runs"
    assert isinstance(earlier["duration"], float) and earlier["duration"] >= 0
    for stale in (1, 2, None):
        first._handle_browser_msg({"type": "cancel_turn", "turn": stale})
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    assert session.running and not session.turns[1].cancel_requested, "turn 1's view cannot cancel turn 2"
    whole = SessionView(session)
    assert whole._header()["run_state"] == "running", "the whole-session view keeps the session header"
    second._handle_browser_msg({"type": "cancel_turn", "turn": 2})
    assert await asyncio.wait_for(two, 20) == "cancelled"
    assert second.anchor == anchor_of(session, 2) and second._header()["stop_reason"] == "cancelled"
    await agent.close()


class FakeSession:
    """What a turn scope reads of a session: state, turns, current turn, pending requests."""

    def __init__(self, clock=None) -> None:
        self.session_id = "sess_t"
        self.state = SessionState(clock=clock) if clock is not None else SessionState()
        self.turns: list[Turn] = []

    @property
    def turn(self):
        return self.turns[-1] if self.turns else None

    @property
    def pending_permissions(self):
        return self.state.pending_permissions

    def summary(self):
        return None

    def begin(self, turn: Turn) -> int:
        self.turns.append(turn)
        turn.place(len(self.turns), len(self.state.timeline))
        self.state.turn_changed(len(self.turns), ("origin",), True)
        return len(self.turns)

    def end(self, turn: Turn, reason: str) -> None:
        turn.abandon(reason)
        self.state.turn_changed(self.turns.index(turn) + 1, ("ended",))


def test_a_cell_view_binds_to_its_prompts_turn_even_when_the_agent_starts_one_first():
    fake = FakeTime()
    session = FakeSession(fake.clock)
    bound: list[int] = []
    scope = TurnScope(session, 1, on_bound=bound.append)
    scope.expect_next()
    agents = Turn.by_agent()
    session.begin(agents)
    assert scope.state() == "starting" and bound == [], "an agent's own turn is not the cell's"
    fake.now = 100.0
    mine = Turn(ends_on_response=True)
    session.begin(mine)
    assert bound == [2] and scope.number == 2 and scope.state() == "running"
    session.end(agents, "end_turn")
    assert scope.state() == "running", "another turn ending is not this one's end"
    request = PermissionRequest("perm_1", 1, {"toolCall": {"toolCallId": "c1"}, "options": []})
    session.state.add_permission(request)
    assert scope.state() == "requires_action" and scope.header("t")["pending"] == 1
    request.cancel()
    fake.now = 102.5
    session.end(mine, "max_tokens")
    head = scope.header("t")
    assert (head["turn_state"], head["stop_reason"], head["duration"], head["running"]) == (
        "ended", "max_tokens", 2.5, False,
    )  # fmt: skip
    assert not scope.cancels(2)
    late = TurnScope(session, 2)
    assert late.header("t")["duration"] == 2.5, "a view made later knows the turn's times too"
    failed = TurnScope(session, 3)
    failed.expect_next()
    failed.over()  # its task ended before its turn started (e.g. a failure before the prompt)
    assert failed.state() == "ended" and failed.header("t")["stop_reason"] is None


def test_an_agent_started_turn_view_is_about_that_turn():
    session = FakeSession()
    views = AgentTurnViews(session, "acp")
    turn = Turn.by_agent()
    session.begin(turn)
    (view,) = views.views.values()
    head = view._header()
    assert head["scope"] == "turn" and head["turn"] == 1 and head["turn_state"] == "running"
    session.end(turn, "cancelled")
    assert view._header()["stop_reason"] == "cancelled" and not view._header()["running"]
    views.close()


def header_patches(session):
    fake = FakeTime()
    view = SessionHeaderView(session, scheduler=Scheduler(clock=fake.clock, call_later=fake.call_later))
    fake.advance(0.1)
    return view, fake


async def test_the_start_header_says_the_agent_stopped_the_moment_it_closes(tmp_path):
    agent = await start_agent([sys.executable, "-m", "acp_notebook.demo_agent", "--speed", "0"])
    session = await agent.new_session(str(tmp_path))
    heard: list[Change] = []
    session.state.subscribe(heard.append)
    view, fake = header_patches(session)
    assert view.anchor == header_anchor_of(session), "turn views link to this anchor"
    await agent.close()
    assert Change("session", "agent", ("closed",)) in heard, "the state tells its views"
    fake.advance(0.1)
    message, _ = patches(RecordingComm.log, view)[-1]
    assert message["header"]["closed"] and message["header"]["stopped"]


async def test_the_start_header_says_the_agent_exited_when_it_dies(tmp_path):
    agent = await start_agent([sys.executable, "-m", "acp_notebook.demo_agent", "--speed", "0"])
    session = await agent.new_session(str(tmp_path))
    view, fake = header_patches(session)
    os.killpg(agent.process.pid, signal.SIGKILL)
    await until_async(lambda: agent.closed, 20, message="the agent's exit")
    fake.advance(0.1)
    message, _ = patches(RecordingComm.log, view)[-1]
    assert message["header"]["closed"] and not message["header"]["stopped"]
    await agent.close()


# -- the waiting line of a --wait cell ------------------------------------------------------------
class Shown:
    """Records the waiting line: what was displayed, then each update."""

    def __init__(self) -> None:
        self.texts: list[str | None] = []

    def __call__(self, bundle, **kwargs):
        assert kwargs.get("display_id") is True
        self.texts.append(bundle.get("text/plain"))
        return self

    def update(self, bundle, **kwargs) -> None:
        self.texts.append(bundle.get("text/plain"))


@pytest.fixture
def shown(monkeypatch):
    recorder = Shown()
    monkeypatch.setattr(wait_line, "display", recorder)
    monkeypatch.setattr(wait_line, "in_kernel", lambda: True)
    return recorder


async def test_the_waiting_line_says_what_the_cell_waits_for_and_goes_away(shown):
    session = FakeSession()
    begun = [False]
    with wait_line.waiting_line(session, "acp", lambda: begun[0]):
        assert "waiting for the turn to start" in shown.texts[-1] and "Idle" in shown.texts[-1]
        begun[0] = True
        session.begin(Turn(ends_on_response=True))
        await asyncio.sleep(0)
        assert "waiting for the turn to end" in shown.texts[-1]
        session.state.add_permission(PermissionRequest("perm_1", 1, {"toolCall": {"toolCallId": "c"}}))
        await asyncio.sleep(0)
        assert "waiting for your answer (1 permission request)" in shown.texts[-1]
        count = len(shown.texts)
        chunk = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "x"}}
        session.state.apply(chunk)
        await asyncio.sleep(0)
        assert len(shown.texts) == count, "the line is rewritten only when its text changes"
    assert shown.texts[-1] is None, "the line goes away when the wait ends"


def test_a_wait_cell_shows_the_waiting_line_then_the_result(ip, capsys, displayed, shown):  # noqa: F811
    session = start(ip, capsys, args="--no-view")

    async def answer(request):  # a little later than the request: the line has said it waits
        for _ in range(3):
            await asyncio.sleep(0)
        return "reject-once"

    session.permission_handler = answer
    _, out, _ = cell(ip, "%%acp --wait\nFix the failing test", capsys)
    assert out.strip() == "acp: turn ended (end_turn)"
    assert "waiting for your answer (1 permission request)" in "\n".join(t or "" for t in shown.texts)
    assert shown.texts[0].startswith("acp: waiting for the turn") and shown.texts[-1] is None


def test_the_state_keeps_each_turns_times_and_tells_when_the_agent_ended():
    fake = FakeTime()
    state = SessionState(clock=fake.clock)
    heard: list[Change] = []
    state.subscribe(heard.append)
    fake.now = 5.0
    state.turn_changed(1, ("origin",), True)
    fake.now = 7.0
    state.turn_changed(1, ("origin_kind",))
    assert state.turn_times[1] == (5.0, None), "only an end ends it"
    state.turn_changed(1, ("ended",))
    fake.now = 9.0
    state.turn_changed(1, ("ended",))
    assert state.turn_times[1] == (5.0, 7.0), "the first end counts"
    state.turn_changed(3, ("ended",))
    assert 3 not in state.turn_times, "an end never heard begun has no times"
    state.agent_ended()
    assert heard[-1] == Change("session", "agent", ("closed",))
