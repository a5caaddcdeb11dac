"""Code blocks of agent messages (``protocol.code_blocks``) and ``%acp cell`` (through IPython's shell)."""

from __future__ import annotations

import sys

import pytest

from acp_notebook.protocol.code_blocks import CodeBlock, code_blocks, listing, parse, pick
from acp_notebook.protocol.state import SessionState
from tests import test_magic

DEMO = f"{sys.executable} -m acp_notebook.demo_agent"


def state_with(*messages: tuple[str, str]) -> SessionState:
    """A v2 state holding one message per ``(role, text)``."""
    state = SessionState()
    kinds = {"agent": "agent_message_chunk", "user": "user_message_chunk", "thought": "agent_thought_chunk"}
    for number, (role, text) in enumerate(messages, 1):
        update = {
            "sessionUpdate": kinds[role],
            "messageId": f"m{number}",
            "content": {"type": "text", "text": text},
        }
        state.apply(update)
    return state


# -- parsing ----------------------------------------------------------------------------------------
def test_fences_with_and_without_a_language():
    text = "Try this:\n```python title=x.py\nprint(1)\nprint(2)\n```\nor\n```\nplain\n```\n"
    assert parse(text) == [("python", "print(1)\nprint(2)"), ("", "plain")]


def test_tilde_fences_and_a_longer_fence_around_a_shorter_one():
    text = "~~~sh\nls -la\n~~~\n\n````markdown\n```py\ninner()\n```\n````\n"
    assert parse(text) == [("sh", "ls -la"), ("markdown", "```py\ninner()\n```")]


def test_nested_in_lists_and_quotes_and_indented_code():
    text = (
        "1. step\n\n   ```js\n   run();\n   ```\n\n> ```bash\n> echo hi\n> ```\n\n    four spaces\n    more\n"
    )
    assert parse(text) == [("js", "run();"), ("bash", "echo hi"), ("", "four spaces\nmore")]


def test_an_unclosed_fence_runs_to_the_end_and_inline_code_is_not_a_block():
    assert parse("use `x` here\n```r\nx <- 1\n") == [("r", "x <- 1")]
    assert parse("no ``` fence ``` here, `inline` only") == []


def test_code_inside_raw_html_is_still_a_block_as_the_view_shows_it():
    # raw HTML is off in the view: a fence after a <div> line is a fence, not HTML
    assert parse("<div>\n\n```py\nx = 1\n```\n</div>\n") == [("py", "x = 1")]


def test_blocks_number_agent_messages_only_from_one():
    state = state_with(
        ("user", "```py\nuser_code()\n```"),
        ("agent", "first\n```py\na()\n```"),
        ("thought", "```py\nthinking()\n```"),
        ("agent", "no code here"),
        ("agent", "```sh\nb\n```\n```sh\nc\n```"),
    )
    blocks = code_blocks(state.messages.values())
    assert blocks == [
        CodeBlock("py", "a()", 1, "m2", 1),
        CodeBlock("sh", "b", 3, "m5", 1),
        CodeBlock("sh", "c", 3, "m5", 2),
    ]
    assert code_blocks(state.messages.values(), 3) == blocks[1:]
    assert code_blocks(state.messages.values(), -3) == blocks[:1]
    assert listing(state.messages.values()) == [
        "message 1 block 1 [py, 1 line]: a()",
        "message 3 block 1 [sh, 1 line]: b",
        "message 3 block 2 [sh, 1 line]: c",
    ]


def test_streamed_chunks_form_one_message_whose_fence_closes_later():
    state = state_with(("agent", "Here:\n```py\nx = 1\n"))
    assert pick(state.messages.values()).code == "x = 1"
    state.apply(
        {
            "sessionUpdate": "agent_message_chunk",
            "messageId": "m1",
            "content": {"type": "text", "text": "y = 2\n```\nDone."},
        }
    )
    assert pick(state.messages.values()) == CodeBlock("py", "x = 1\ny = 2", 1, "m1", 1)


def test_pick_defaults_and_errors():
    state = state_with(("agent", "```a\n1\n```\n```b\n2\n```"), ("agent", "summary, no code"))
    messages = state.messages.values()
    assert pick(messages).code == "2", "default: the last block of the last message that has one"
    assert pick(messages, 1).code == "1"
    assert pick(messages, -2, 1).code == "1"
    with pytest.raises(
        LookupError, match=r"agent message 2 has no code block \(messages with code blocks: 1;"
    ):
        pick(messages, message=2)
    with pytest.raises(LookupError, match="no code block 3 in agent message 1: there are 2"):
        pick(messages, 3)
    with pytest.raises(LookupError, match="no agent message 5: there are 2"):
        pick(messages, message=5)
    with pytest.raises(LookupError, match="no agent message 0"):
        pick(messages, message=0)
    with pytest.raises(LookupError, match="none of the agent's 1 message"):
        pick(state_with(("agent", "plain")).messages.values())
    with pytest.raises(LookupError, match="has not written any message"):
        pick(state_with(("user", "```\nx\n```")).messages.values())


# -- the magic ----------------------------------------------------------------------------------------
ip = test_magic.ip  # the IPython shell with the extension loaded (one per module)


def run(ip, code: str, capsys, ok: bool = True) -> str:
    capsys.readouterr()
    result = ip.run_cell(code)
    out, err = capsys.readouterr()
    assert result.success is ok, f"{code!r}: {result.error_in_exec or result.error_before_exec}\n{out}{err}"
    return out + err


def test_cell_puts_the_block_into_the_next_input(ip, capsys):
    ip.rl_next_input = None
    out = run(ip, "%acp start --name cb --no-view", capsys)
    assert "is cb" in out
    session = ip.user_ns["cb"]
    run(ip, "%%acp --name cb --wait\necho this:\n```python\nprint('one')\n```\nand\n~~~sh\nls\n~~~", capsys)
    assert [(b.language, b.code) for b in session.code_blocks()] == [("python", "print('one')"), ("sh", "ls")]
    out = run(ip, "%acp cell --name cb", capsys)
    assert ip.rl_next_input == "ls"
    assert "cb: code block 2 of agent message 1 (sh) is in the next cell." in out
    run(ip, "%acp cell 1 --message 1 --name cb", capsys)
    assert ip.rl_next_input == "print('one')"
    out = run(ip, "%acp cell --list --name cb", capsys)
    assert (
        "message 1 block 1 [python, 1 line]: print('one')" in out
        and "message 1 block 2 [sh, 1 line]: ls" in out
    )


def test_cell_says_clearly_when_there_is_no_such_block(ip, capsys):
    ip.rl_next_input = None
    run(ip, "%acp start --name cb2 --no-view", capsys)
    out = run(ip, "%acp cell --name cb2", capsys, ok=False)
    assert "cb2: the agent has not written any message yet" in out
    run(ip, "%%acp --name cb2 --wait\necho plain words", capsys)
    out = run(ip, "%acp cell 4 --name cb2", capsys, ok=False)
    assert "cb2: none of the agent's 1 message(s) has a code block" in out
    out = run(ip, "%acp cell --message 9 --name cb2", capsys, ok=False)
    assert "no agent message 9: there is 1" in out
    out = run(ip, "%acp cell x --name cb2", capsys, ok=False)
    assert "invalid int value: 'x'" in out
    assert ip.rl_next_input is None, "a failed %acp cell leaves the next input alone"
    assert "cb2" in ip.user_ns and ip.user_ns["cb2"].state.run_state == "idle"
