"""Interactive terminals and the agent's stdout in a SessionView (kernel side, recording comm)."""

from __future__ import annotations

import pytest

from acp_notebook import SessionState
from acp_notebook.client.summary import AgentSummary, SessionSummary
from acp_notebook.widgets.actions import SessionActions
from acp_notebook.widgets.header import header
from acp_notebook.widgets.inbound import MAX_INPUT_BYTES

from .support import recording as recording  # the autouse recording comm
from .test_widgets import chunk, make_view, patches, tool

LOGIN_URL = "https://accounts.example.com/o/oauth2/auth?" + "&".join(f"p{i}=v{i:04d}" for i in range(70))


class FakeSession:
    """What SessionView and SessionActions use of a live Session, recording terminal calls."""

    def __init__(self, state: SessionState, interactive=("t1",), stdout=(), partial=None) -> None:
        self.state = state
        self.interactive = list(interactive)
        self.stdout, self.partial = tuple(stdout), partial
        self.calls: list[tuple] = []

    def summary(self) -> SessionSummary:
        agent = AgentSummary(
            "fake", None, "1.0", 1, None, False, None, stdout=self.stdout, stdout_partial=self.partial
        )
        return SessionSummary("s1", "/tmp", agent, self.state.run_state, False, 0)

    def terminal_input(self, terminal_id: str, data: bytes) -> bool:
        self.calls.append(("input", terminal_id, data))
        return True

    def terminal_resize(self, terminal_id: str, cols: int, rows: int) -> bool:
        self.calls.append(("resize", terminal_id, cols, rows))
        return True

    def interactive_terminals(self) -> list[str]:
        return list(self.interactive)


class LoginActions:
    """A duck-typed actions object (not an ``Actions``), as a login flow would pass."""

    def __init__(self) -> None:
        self.calls: list[tuple] = []

    def terminal_input(self, terminal_id: str, data: bytes) -> None:
        self.calls.append(("input", terminal_id, data))

    def terminal_resize(self, terminal_id: str, cols: int, rows: int) -> None:
        self.calls.append(("resize", terminal_id, cols, rows))

    def interactive_terminals(self) -> list[str]:
        return ["login"]


def terminal_state(*ids: str) -> SessionState:
    state = SessionState()
    for i, terminal_id in enumerate(ids):
        state.apply(tool(f"c{i}", content=[{"type": "terminal", "terminalId": terminal_id}]))
        state.apply(chunk(terminal_id, b"$ "))
    return state


def live_view(**kwargs):
    state = terminal_state("t1", "t2")
    session = FakeSession(state, **kwargs)
    view, fake, _ = make_view(session)
    return view, session, fake


def test_header_lists_interactive_terminals_and_stdout(recording):
    view, _, _ = live_view(stdout=["Open this URL to log in:", LOGIN_URL], partial="Enter the code: ")
    hdr = view.snapshot["header"]
    assert hdr["interactive_terminals"] == ["t1"]
    assert hdr["stdout"] == ["Open this URL to log in:", LOGIN_URL] and len(LOGIN_URL) > 500
    assert hdr["stdout_partial"] == "Enter the code: "
    bare = header(SessionState())
    assert (bare["interactive_terminals"], bare["stdout"], bare["stdout_partial"]) == ([], [], None)
    bare_view, _, _ = make_view(terminal_state("t1"))
    assert bare_view.snapshot["header"]["interactive_terminals"] == []


def test_header_in_each_patch_follows_the_interactive_list(recording):
    view, session, fake = live_view()
    session.interactive = []  # t1 exited
    session.state.apply(chunk("t1", b"bye\n"))
    fake.advance(1)
    assert patches(recording, view)[-1][0]["header"]["interactive_terminals"] == []


def test_refresh_sends_a_changed_list_without_a_state_change(recording):
    view, session, fake = live_view()
    session.interactive = ["t1", "t2"]
    view.refresh()
    fake.advance(1)
    assert patches(recording, view)[-1][0]["header"]["interactive_terminals"] == ["t1", "t2"]


def test_keystrokes_and_sizes_reach_the_session(recording):
    view, session, _ = live_view()
    view._handle_browser_msg({"type": "terminal_input", "id": "t1", "data": "ls -l\r€"})
    view._handle_browser_msg({"type": "terminal_resize", "id": "t1", "cols": 120, "rows": 30})
    assert session.calls == [("input", "t1", "ls -l\r€".encode()), ("resize", "t1", 120, 30)]
    assert session.state.diagnostics == []


def test_through_the_widget_comm_dispatch(recording):
    view, session, _ = live_view()
    msg = {"type": "terminal_input", "id": "t1", "data": "y\r"}
    view._handle_msg({"content": {"data": {"method": "custom", "content": msg}}, "buffers": []})
    assert session.calls == [("input", "t1", b"y\r")]


@pytest.mark.parametrize(
    "msg",
    [
        {"type": "terminal_input", "id": "t2", "data": "x"},  # shown, but not interactive
        {"type": "terminal_input", "id": "elsewhere", "data": "x"},  # interactive elsewhere, not in this view
        {"type": "terminal_resize", "id": "t2", "cols": 80, "rows": 24},
    ],
)
def test_terminals_that_do_not_take_input_drop_it_quietly(recording, msg):
    view, session, _ = live_view(interactive=("t1", "elsewhere"))
    view._handle_browser_msg(msg)
    assert session.calls == [] and session.state.diagnostics == []


@pytest.mark.parametrize(
    "msg",
    [
        {"type": "terminal_input", "id": "t1", "data": b"x"},
        {"type": "terminal_input", "id": "t1"},
        {"type": "terminal_input", "id": 7, "data": "x"},
        {"type": "terminal_input", "id": "t1", "data": "s3cret" + "x" * MAX_INPUT_BYTES},
        {
            "type": "terminal_input",
            "id": "t1",
            "data": "s3cret" + "€" * (MAX_INPUT_BYTES // 3),
        },  # bytes count
        {"type": "terminal_resize", "id": "t1", "cols": 0, "rows": 24},
        {"type": "terminal_resize", "id": "t1", "cols": 80, "rows": 1001},
        {"type": "terminal_resize", "id": "t1", "cols": True, "rows": 24},
        {"type": "terminal_resize", "id": "t1", "cols": 80.0, "rows": 24},
        {"type": "terminal_resize", "id": "t1", "cols": "80", "rows": 24},
        {"type": "terminal_resize", "id": None, "cols": 80, "rows": 24},
    ],
)
def test_malformed_messages_are_dropped_and_never_quoted(recording, msg):
    view, session, _ = live_view()
    view._handle_browser_msg(msg)
    assert session.calls == []
    assert [d.code for d in session.state.diagnostics] == ["view-bad-message"]
    assert all("s3cret" not in f"{d.message}{d.detail}" for d in session.state.diagnostics)


def test_limits_themselves_are_accepted(recording):
    view, session, _ = live_view()
    view._handle_browser_msg({"type": "terminal_input", "id": "t1", "data": "x" * MAX_INPUT_BYTES})
    view._handle_browser_msg({"type": "terminal_resize", "id": "t1", "cols": 1000, "rows": 1})
    assert [c[0] for c in session.calls] == ["input", "resize"] and session.state.diagnostics == []


def test_a_failing_session_is_a_diagnostic_without_the_keystrokes(recording):
    view, session, _ = live_view()

    def broken(terminal_id, data):
        raise OSError(f"pty closed while writing {data!r}")

    session.terminal_input = broken
    view._handle_browser_msg({"type": "terminal_input", "id": "t1", "data": "hunter2"})
    (diag,) = session.state.diagnostics
    assert diag.code == "view-action-error" and "OSError" in diag.message and "hunter2" not in diag.message


def test_any_actions_object_will_do(recording):
    state = terminal_state("login")
    actions = LoginActions()
    view, _, _ = make_view(state, actions=actions)
    assert view.snapshot["header"]["interactive_terminals"] == ["login"]
    view._handle_browser_msg({"type": "terminal_input", "id": "login", "data": "4/0Ab-code\r"})
    view._handle_browser_msg({"type": "terminal_resize", "id": "login", "cols": 100, "rows": 20})
    assert actions.calls == [("input", "login", b"4/0Ab-code\r"), ("resize", "login", 100, 20)]


def test_session_actions_forward(recording):
    session = FakeSession(terminal_state("t1"), interactive=("t1",))
    actions = SessionActions(session)
    actions.terminal_input("t1", b"q")
    actions.terminal_resize("t1", 90, 10)
    assert actions.interactive_terminals() == ["t1"]
    assert session.calls == [("input", "t1", b"q"), ("resize", "t1", 90, 10)]
