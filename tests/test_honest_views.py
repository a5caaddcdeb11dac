"""Views that tell the truth (issue 21, items 3 to 9): quiet info diagnostics, one-line setting
results, plain printed words, plans named by their content, turns counted right."""

from __future__ import annotations

import sys

from acp_notebook import SessionState
from acp_notebook.widgets.header import header, state_time

from .support import recording as recording  # the autouse recording comm
from .test_magic import cell, config_agent, displayed, ip, start  # noqa: F401 - fixtures shared with test_magic
from .test_widgets import make_view, tool


def test_info_diagnostics_are_counted_but_not_alerts():
    state = SessionState()
    state.diagnose("permission-unanswered", "left for a person", level="info")
    state.diagnose("permission-unanswered", "left for a person", level="info")
    quiet = header(state)
    assert (quiet["diagnostic_count"], quiet["diagnostic_alerts"]) == (2, 0)
    state.diagnose("malformed-update", "bad field")
    loud = header(state)
    assert (loud["diagnostic_count"], loud["diagnostic_alerts"]) == (3, 1)


# -- printed lines: plain words, turns counted right, one-line setting results ----------------------
ECHO = f"{sys.executable} -m acp_notebook.demo_agent --scenario echo"


def test_printed_lines_have_no_backticks_and_status_counts_a_starting_turn(ip, capsys, displayed):  # noqa: F811
    _, started, _ = cell(ip, f"%acp start --no-view --name acp {ECHO}", capsys)
    _, ended, _ = cell(ip, "%%acp --wait\nhello", capsys)
    assert "`" not in started + ended and ended.strip() == "acp: turn ended (end_turn)"
    assert started.strip().endswith("is acp.")
    assert displayed.views()[0].title == "acp"  # the prompt: the cell's source and the view's bubble only
    cell(ip, "%%acp\nagain", capsys)  # not waited for: its turn starts after its checkpoint
    cell(ip, "%%acp\nonce more", capsys)  # queued behind it
    _, status, _ = cell(ip, "%acp status", capsys)
    assert "starting a turn, 1 queued, 2 turns," in status, status  # the second prompt's turn counted
    _, waited, _ = cell(ip, "%acp wait", capsys)
    assert waited.strip() == "acp: idle (end_turn)"
    _, status, _ = cell(ip, "%acp status", capsys)
    assert "idle (end_turn), 3 turns," in status and "`" not in status


def test_set_config_option_returns_one_line_and_keeps_the_list_reachable(ip, capsys, tmp_path):  # noqa: F811
    peer = config_agent(tmp_path, 2)
    session = start(ip, capsys, "cfg", f"--no-view {peer.command_line}")
    result, out, _ = cell(ip, "await cfg.set_config_option('model', 'm2')", capsys)
    assert repr(result.result) == "model = 'm2'  (Model)"
    assert (
        out.strip().splitlines()[-1].endswith("model = 'm2'  (Model)") and len(out.strip().splitlines()) == 1
    )
    assert [o["configId"] for o in session.settings.options] == ["model", "mode", "brave"]
    assert session.settings.options[0]["currentValue"] == "m2"
    mode, _, _ = cell(ip, "await cfg.set_mode('code')", capsys)
    assert mode.result == "code"


def test_a_past_state_carries_its_own_time_and_a_live_one_none():
    times = iter([100.0, 102.5, 103.0])
    state = SessionState(clock=lambda: next(times))
    state.apply(tool("c1", title="Read", status="pending"))
    state.apply(tool("c1", title="Read a.py"))
    state.apply(
        {"sessionUpdate": "agent_message_chunk", "messageId": "m1", "content": {"type": "text", "text": "x"}}
    )
    assert state_time(state) == 103.0 and state_time(SessionState()) is None
    live, _, _ = make_view(state)
    past, _, _ = make_view(state, past=True)  # a replay's
    assert live.snapshot["header"]["frozen_at"] is None and live.snapshot["saved_at"] == 103.0
    assert past.snapshot["header"]["frozen_at"] == 103.0  # the page's clocks stop there
