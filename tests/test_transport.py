"""The agent's stdout as lines: overlong lines dropped once, prompts without a newline shown."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from acp_notebook import start_agent
from acp_notebook.client.lines import LineBuffer

from .support import until_async

PROMPTING = Path(__file__).parent / "agents" / "prompting.py"


def test_line_buffer_splits_chunks_and_keeps_the_rest():
    lines = LineBuffer(limit=100)
    for chunk in (b"ab", b"c\nde", b"f\n\ng"):
        lines.feed(chunk)
    out = []
    while (line := lines.next_line()) is not None:
        out.append(line)
    assert out == [b"abc\n", b"def\n", b"\n"]
    assert lines.pending and lines.pending_text() == "g"
    assert lines.rest() == b"g" and lines.rest() is None


def test_an_overlong_line_is_dropped_and_reported_once():
    lines = LineBuffer(limit=10)
    lines.feed(b"x" * 11)
    with pytest.raises(ValueError):
        lines.next_line()
    lines.feed(b"y" * 20)
    assert lines.next_line() is None, "reported once, still dropping"
    lines.feed(b"z\nok\n")
    assert lines.next_line() == b"ok\n"
    assert not lines.pending


async def test_a_login_prompt_without_a_newline_is_shown_whole():
    agent = await start_agent([sys.executable, str(PROMPTING)])
    login = asyncio.ensure_future(agent.authenticate("oauth-personal"))
    await until_async(lambda: agent.stdout_partial, timeout=10, message="the partial prompt")
    assert agent.stdout_partial == "Enter the authorization code: "
    assert agent.stdout_lines[0] == "Please visit the following URL to authorize:"
    assert len(agent.stdout_lines[1]) == len("https://accounts.example.test/o/oauth2/auth?") + 500
    summary = agent.summary()
    assert summary.stdout == tuple(agent.stdout_lines) and summary.stdout_partial == agent.stdout_partial
    login.cancel()
    await agent.close()


async def test_authenticate_takes_a_timeout_and_withdraws_the_request():
    agent = await start_agent([sys.executable, str(PROMPTING)])
    sent = []
    write = agent.process.write
    agent.process.write = lambda data: sent.append(data) or write(data)
    with pytest.raises(TimeoutError):
        await agent.authenticate("oauth-personal", timeout=0.5)
    assert b'"method":"$/cancel_request"' in sent[-1] and b'"requestId":' in sent[-1]
    await agent.close()
