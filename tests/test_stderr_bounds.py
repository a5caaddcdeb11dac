"""An agent's stderr is bounded in bytes: what is kept, what an error message quotes, what the
view's header carries — 30 lines of 5 MB and a crash stay small everywhere."""

from __future__ import annotations

import json
import sys

import pytest

from acp_notebook.client import transport
from acp_notebook.client.errors import AgentExited
from acp_notebook.client.summary import AgentSummary
from acp_notebook.client.transport import AgentProcess, clip_line
from acp_notebook.protocol.state import SessionState
from acp_notebook.widgets.header import header

from .support import INIT_V2, NEW, Peer, until_async

FLOOD = (  # 30 lines of 5 MB on stderr, then a crash
    "import sys\nfor i in range(30):\n    sys.stderr.write(str(i) + 'x' * 5_000_000 + '\\n')\n"
    "sys.stderr.flush()\nsys.exit(3)"
)


def test_a_line_is_cut_on_a_character_and_says_how_much_was_left() -> None:
    assert clip_line("short", 10) == "short"
    cut = clip_line("é" * 10, 5)  # 20 bytes; the cut falls inside a two-byte character
    assert cut == "éé… (15 more bytes)"


async def test_a_flood_on_stderr_keeps_at_most_the_byte_budget() -> None:
    proc = await AgentProcess.spawn([sys.executable, "-c", FLOOD])
    try:
        await until_async(lambda: proc.proc.returncode is not None and proc._stderr_task.done(), 60,
                          message="the flood to end")  # fmt: skip
        kept = list(proc.stderr_lines)
        size = sum(len(line.encode()) for line in kept)
        assert size <= transport.STDERR_BYTES and kept, size
        assert kept[-1].startswith("29x") and kept[-1].endswith(
            f"… ({5_000_002 - transport.STDERR_LINE_BYTES:,} more bytes)"
        )
        error = AgentExited(3, proc.stderr_tail())
        assert len(str(error)) < 10_000 and "29xxx" in str(error)
    finally:
        await proc.close(0.5)


@pytest.mark.parametrize("lines", [1, 60])
def test_the_header_clips_each_stderr_line(lines: int) -> None:
    agent = AgentSummary("a", None, None, 2, 1, False, None, tuple("y" * 64_000 for _ in range(lines)))
    got = header(SessionState(), _Summary(agent), None, [])
    shown = got["stderr"]
    assert len(shown) == min(lines, 50) and all(len(line) < 600 for line in shown)
    assert shown[-1].endswith("(63,500 more characters)") and len(json.dumps(got)) < 40_000


class _Summary:
    """The few fields ``header`` reads from a session summary."""

    def __init__(self, agent: AgentSummary) -> None:
        self.agent, self.session_id, self.cwd, self.running, self.queued = agent, "s", "/", False, 0
        self.usage, self.last_error, self.extras, self.run_state = None, None, {}, "idle"


def test_the_header_numbers_its_stderr_lines_and_marks_the_cut_ones() -> None:
    lines = tuple("short" if i % 7 else "z" * 2_000 for i in range(60))
    agent = AgentSummary("a", None, None, 2, 1, False, None, lines, stderr_count=130)
    got = header(SessionState(), _Summary(agent), None, [])
    assert got["stderr_from"] == 80  # 130 seen, the last 50 shown
    assert got["stderr_cut"] == [i for i, line in enumerate(lines[-50:]) if len(line) > 500]
    unnumbered = header(SessionState(), _Summary(AgentSummary("a", None, None, 2, 1, False, None, lines)))
    assert unnumbered["stderr_from"] is None  # a host that does not count its lines offers no "show all"


async def test_a_view_fetches_a_cut_stderr_line_whole_on_demand(tmp_path) -> None:
    from acp_notebook import start_agent
    from acp_notebook.widgets import browser_inbox

    long_line = "L" * 3_000
    steps = [{"stderr": "first"}, {"stderr": long_line}, {"stderr": "last"}, INIT_V2, NEW, {"sleep": 30}]
    agent = await start_agent(Peer(tmp_path, steps).command)
    try:
        session = await agent.new_session(str(tmp_path))
        await until_async(lambda: agent.side.stderr_count == 3, 10, message="three stderr lines")
        hdr = header(session.state, session.summary(), None, [])
        cut = hdr["stderr_from"] + hdr["stderr_cut"][0]
        assert hdr["stderr"][hdr["stderr_cut"][0]].endswith("(2,500 more characters)")
        sent: list = []
        view = _View(session, sent)
        browser_inbox.dispatch(view, {"type": "stderr_line", "n": cut})
        browser_inbox.dispatch(view, {"type": "stderr_line", "n": 99})  # never seen
        browser_inbox.dispatch(view, {"type": "stderr_line", "n": "1"})  # malformed: a diagnostic
        assert sent == [
            {"type": "stderr_line", "n": cut, "text": long_line},
            {"type": "stderr_line", "n": 99, "text": None},
        ]
        assert session.state.diagnostics[-1].code == "view-bad-message"
    finally:
        await agent.close()


class _View:
    """What ``browser_inbox`` reads of a view for a ``stderr_line`` ask."""

    def __init__(self, session, sent: list) -> None:
        self.session, self.state, self.send = session, session.state, sent.append
