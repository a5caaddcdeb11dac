"""The kernel side of the views, with a recording comm and an injectable clock (no browser)."""

from __future__ import annotations

import asyncio
import base64
import heapq
import json
import sys

from acp_notebook import SessionState, start_agent
from acp_notebook.protocol import PermissionRequest
from acp_notebook.widgets import Scheduler, SessionView

from .support import recording as recording  # the autouse recording comm
from .support import unpack, until_async


class FakeTime:
    """A clock and a timer queue driven by hand."""

    def __init__(self) -> None:
        self.now = 0.0
        self.timers: list = []
        self.seq = 0

    def clock(self) -> float:
        return self.now

    def call_later(self, delay, callback):
        self.seq += 1
        entry = [self.now + delay, self.seq, callback, False]
        heapq.heappush(self.timers, entry)
        return _Handle(entry)

    def advance(self, seconds: float) -> None:
        end = self.now + seconds
        while self.timers and self.timers[0][0] <= end:
            when, _, callback, cancelled = heapq.heappop(self.timers)
            self.now = max(self.now, when)
            if not cancelled:
                callback()
        self.now = end


class _Handle:
    def __init__(self, entry) -> None:
        self.entry = entry

    def cancel(self) -> None:
        self.entry[3] = True


def patches(log, view):
    """The custom messages sent to ``view``'s page, unpacked: ``(content, buffers)``."""
    return [
        unpack(data["content"], bufs)
        for cid, kind, data, bufs in log
        if cid == view.comm.comm_id and kind == "comm_msg" and data.get("method") == "custom"
    ]


def updates(log, view):
    """Trait updates sent for ``view``; binary traits travel as buffers, named in buffer_paths."""
    out = []
    for cid, kind, data, bufs in log:
        if cid == view.comm.comm_id and kind == "comm_msg" and data.get("method") == "update":
            state = dict(data["state"])
            for path, buf in zip(data.get("buffer_paths", []), bufs, strict=True):
                state[path[0]] = bytes(buf)
            out.append(state)
    return out


def tool(tc_id, **fields):
    return {"sessionUpdate": "tool_call_update", "toolCallId": tc_id, **fields}


def chunk(term_id, data: bytes):
    return {
        "sessionUpdate": "terminal_output_chunk",
        "terminalId": term_id,
        "data": base64.b64encode(data).decode(),
    }


def make_view(state, fake=None, **kwargs):
    fake = fake or FakeTime()
    scheduler = Scheduler(clock=fake.clock, call_later=fake.call_later)
    return SessionView(state, scheduler=scheduler, **kwargs), fake, scheduler


def test_initial_snapshot_holds_entries_in_order_and_terminal_bytes(recording):
    state = SessionState()
    state.apply(tool("c1", title="Run", kind="execute", content=[{"type": "terminal", "terminalId": "t1"}]))
    state.apply(chunk("t1", b"hello \xe2\x9c"))
    state.apply(chunk("t1", b"\x93"))
    state.apply(
        {"sessionUpdate": "agent_message_chunk", "messageId": "m1", "content": {"type": "text", "text": "hi"}}
    )
    view, _, _ = make_view(state)
    snap = view.snapshot
    assert snap["order"] == ["tool_call:c1", "message:m1"]
    assert snap["entries"]["tool_call:c1"]["items"] == [{"type": "terminal", "id": "t1"}]
    start, length = snap["terminals"]["t1"]["blob"]
    assert view.terminal_bytes[start : start + length] == "hello ✓".encode()


def test_patch_carries_only_what_changed_and_new_bytes_as_buffers(recording):
    state = SessionState()
    state.apply(tool("c1", content=[{"type": "terminal", "terminalId": "t1"}]))
    state.apply(tool("c2", title="other"))
    view, fake, _ = make_view(state)
    fake.advance(1)
    state.apply(chunk("t1", b"abc"))
    state.apply(tool("c1", status="in_progress"))
    fake.advance(0.1)
    state.apply(chunk("t1", b"def"))
    fake.advance(0.1)
    (first, bufs1), (second, bufs2) = patches(recording, view)
    assert (
        list(first["entries"]) == ["tool_call:c1"]
        and first["entries"]["tool_call:c1"]["status"] == "in_progress"
    )
    assert first["bytes"] == [{"id": "t1", "gen": 0, "at": 0, "buf": 0, "reset": False}]
    assert [bytes(b) for b in bufs1] == [b"abc"] and isinstance(bufs1[0], bytes | memoryview)
    assert second["entries"] == {} and second["bytes"] == [
        {"id": "t1", "gen": 0, "at": 3, "buf": 0, "reset": False}
    ]
    assert [bytes(b) for b in bufs2] == [b"def"]


def test_the_header_travels_only_when_it_changed(recording):
    state = SessionState()
    view, fake, _ = make_view(state)
    for update in (tool("c1"), tool("c1", status="in_progress")):
        state.apply(update)
        fake.advance(0.1)
    state.diagnose("test-code", "something the header lists")
    fake.advance(0.1)
    view._handle_browser_msg({"type": "resync"})
    first, second, third, full = (message for message, _ in patches(recording, view))
    assert first["header"]["diagnostic_count"] == 0 and "header" not in second
    assert third["header"]["diagnostic_count"] == 1 and third["entries"] == {}
    assert full["full"] and full["header"] == third["header"]
    view.flush_snapshot()
    assert view.snapshot["header"] == third["header"]
    fake.advance(1)
    assert len(patches(recording, view)) == 4  # nothing changed: nothing sent


def test_snapshot_output_resets_the_terminal(recording):
    state = SessionState()
    state.apply(tool("c1", content=[{"type": "terminal", "terminalId": "t1"}]))
    state.apply(chunk("t1", b"old"))
    view, fake, _ = make_view(state)
    state.apply(chunk("t1", b"+"))
    fake.advance(0.1)
    state.apply(
        {
            "sessionUpdate": "terminal_update",
            "terminalId": "t1",
            "output": {"data": base64.b64encode(b"new").decode()},
        }
    )
    fake.advance(0.1)
    last, bufs = patches(recording, view)[-1]
    assert (
        last["bytes"] == [{"id": "t1", "gen": 1, "at": 0, "buf": 0, "reset": True}]
        and bytes(bufs[0]) == b"new"
    )


def test_burst_of_10k_updates_is_coalesced_and_exact(recording):
    state = SessionState()
    state.apply(tool("c1", content=[{"type": "terminal", "terminalId": "t1"}]))
    view, fake, _scheduler = make_view(state)
    expected = bytearray()
    for i in range(10_000):  # 10k updates over 2 simulated seconds
        data = f"line {i}\r\n".encode()
        expected += data
        state.apply(chunk("t1", data))
        if i % 100 == 0:
            state.apply(tool("c1", title=f"step {i}"))
        fake.advance(0.0002)
    fake.advance(3)
    sent = patches(recording, view)
    times_ok = len(sent) <= 2 / 0.05 + 1
    assert times_ok, f"{len(sent)} patches for 2 s of updates"
    received = bytearray()
    for message, bufs in sent:
        for move in message["bytes"]:
            if move["reset"]:
                received = bytearray()
            received += bytes(bufs[move["buf"]])
    assert bytes(received) == bytes(expected) == state.terminals["t1"].output
    titles = [m["entries"]["tool_call:c1"]["title"] for m, _ in sent if "tool_call:c1" in m["entries"]]
    assert titles[-1] == "step 9900"
    snap = updates(recording, view)[-1]
    assert snap["snapshot"]["entries"]["tool_call:c1"]["title"] == "step 9900"


def test_global_cap_holds_across_many_views(recording):
    fake = FakeTime()
    scheduler = Scheduler(clock=fake.clock, call_later=fake.call_later)
    states = [SessionState() for _ in range(40)]
    for state in states:
        state.apply(tool("c", content=[{"type": "terminal", "terminalId": "t"}]))
    views = [SessionView(s, scheduler=scheduler) for s in states]
    start = len(recording)
    per_second = []
    for _second in range(3):
        before = scheduler.sent
        for _ in range(100):
            for state in states:
                state.apply(chunk("t", b"x"))
            fake.advance(0.01)
        per_second.append(scheduler.sent - before)
    assert max(per_second) <= 200 + scheduler.burst
    assert len(recording) > start and all(patches(recording, v) for v in views)


def test_at_most_one_flush_per_view_per_interval(recording):
    state = SessionState()
    view, fake, _ = make_view(state)
    for i in range(50):
        state.apply(tool(f"c{i}"))
        fake.advance(0.01)
    times = [message["seq"] for message, _ in patches(recording, view)]
    assert len(times) <= 0.5 / 0.05 + 1 and times == sorted(times)


def test_per_turn_view_and_stop_following(recording):
    state = SessionState()
    state.apply(tool("before"))
    view, fake, _ = make_view(state, since=len(state.timeline))
    state.apply(tool("during"))
    view.stop_following()
    state.apply(tool("after"))
    state.apply(tool("during", status="completed"))
    fake.advance(1)
    assert view.entry_keys == ["tool_call:during"]
    assert view.snapshot["entries"]["tool_call:during"]["status"] == "completed"


def test_snapshot_traits_sync_together(recording):
    state = SessionState()
    state.apply(tool("c1", content=[{"type": "terminal", "terminalId": "t1"}]))
    view, fake, _ = make_view(state)
    state.apply(chunk("t1", b"zz"))
    fake.advance(5)
    last = updates(recording, view)[-1]
    assert {"snapshot", "terminal_bytes"} <= set(last)


def test_resync_sends_everything(recording):
    state = SessionState()
    state.apply(tool("c1", content=[{"type": "terminal", "terminalId": "t1"}]))
    state.apply(chunk("t1", b"abc"))
    view, _, _ = make_view(state)
    view._handle_browser_msg({"type": "resync"})
    message, bufs = patches(recording, view)[-1]
    assert message["full"] and message["order"] == ["tool_call:c1"]
    assert message["bytes"][0]["reset"] and bytes(bufs[0]) == b"abc"


def test_click_on_a_bare_state_records_the_outcome(recording):
    state = SessionState()
    params = {
        "sessionId": "s",
        "title": "Go?",
        "options": [{"optionId": "y", "name": "Yes", "kind": "allow_once"}],
    }
    state.add_permission(PermissionRequest("perm_1", 1, params))
    view, fake, _ = make_view(state)
    view._handle_browser_msg({"type": "select", "key": "perm_1", "option": "y"})
    fake.advance(1)
    assert state.permissions["perm_1"].selected_option == "y"
    assert view.snapshot["entries"]["permission:perm_1"]["outcome"] == {
        "outcome": "selected",
        "optionId": "y",
    }


def test_bytes_per_extra_view_and_terminal_stay_small(recording):
    def opened():
        return [d for _, kind, d, _ in recording if kind == "comm_open"]

    states = []
    for i in range(20):
        state = SessionState()
        state.apply(tool(f"c{i}", content=[{"type": "terminal", "terminalId": f"t{i}"}]))
        state.apply(chunk(f"t{i}", b"x" * 100))
        states.append(state)
    SessionView(states[0])
    first = sum(len(json.dumps(d)) for d in opened())
    for state in states[1:]:
        SessionView(state)
    total = sum(len(json.dumps(d)) for d in opened())
    per_extra = (total - first) / 19
    assert per_extra <= 50_000, per_extra
    assert first > 100_000  # the runtime (xterm and all) travels once, with the first view


async def test_click_reaches_the_agent(recording, tmp_path):
    agent = await start_agent(
        [sys.executable, "-m", "acp_notebook.demo_agent", "--speed", "0", "--scenario", "permission"]
    )
    session = await agent.new_session(str(tmp_path))
    view = SessionView(session)
    turn = asyncio.ensure_future(session.prompt("delete build"))
    await until_async(lambda: session.pending_permissions, 20, message="the permission request")
    key = session.pending_permissions[0].key
    view._handle_browser_msg({"type": "select", "key": key, "option": "allow-once"})
    assert await asyncio.wait_for(turn, 20) == "end_turn"
    texts = [m.text for m in session.state.messages.values() if m.role == "agent"]
    assert texts == ["Chosen: allow-once"]
    assert session.state.tool_calls["call_perm"].status == "completed"
    await agent.close()


def test_browser_messages_arrive_through_the_widget_comm_dispatch(recording):
    """What ipywidgets does with a comm message from the page (guards against shadowing its dispatcher)."""
    state = SessionState()
    state.apply(tool("c1"))
    view, _, _ = make_view(state)
    view._handle_msg(
        {"content": {"data": {"method": "custom", "content": {"type": "resync"}}}, "buffers": []}
    )
    message, _ = patches(recording, view)[-1]
    assert message["full"] and message["order"] == ["tool_call:c1"]


async def test_stop_button_cancels_the_turn(recording, tmp_path):
    agent = await start_agent(
        [sys.executable, "-m", "acp_notebook.demo_agent", "--speed", "0", "--scenario", "slow"]
    )
    session = await agent.new_session(str(tmp_path))
    view = SessionView(session)
    turn = asyncio.ensure_future(session.prompt("run"))
    await until_async(lambda: "call_slow" in session.state.tool_calls, 20, message="the slow tool call")
    view._handle_browser_msg({"type": "cancel_turn"})
    assert await asyncio.wait_for(turn, 20) == "cancelled"
    await agent.close()
