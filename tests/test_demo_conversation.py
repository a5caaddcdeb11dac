"""The demo agent answers what it is asked: prompts route to help, the story, recaps and answers."""

from __future__ import annotations

import asyncio
import sys

import pytest

from acp_notebook import start_agent
from acp_notebook.demo_agent import router

DEMO = [sys.executable, "-m", "acp_notebook.demo_agent", "--speed", "0"]
STORY_IDS = ["call_read", "call_edit", "call_test", "call_search", "call_index", "call_fetch", "call_think"]
TIMEOUT = 30
VERSIONS = pytest.mark.parametrize("version", [1, 2])

HELP = (
    "I'm the offline ACP demo agent: no model, no network, just scripted turns.\n"
    "Here is what I can show, and words that ask for it:\n\n"
    "- **Subagents (v2)**: child sessions: a reviewer that asks before its edit and runs a linter of its "
    "own (which cannot be cancelled), and a changelog writer in the background that asks after the turn "
    "ended and then makes me start a turn of my own. Try `delegate to subagents`, `use a subagent`.\n"
    "- **Questions for you (elicitation)**: a form with every kind of field for a release, a sign-in link "
    "to consent to, and a question I withdraw once I find the answer myself; I use what you answer (start "
    "me with `--scenario elicitation` and I also ask for a profile while `session/new` waits). Try "
    "`fill in a form`, `ask me with a form`.\n"
    "- **The story**: fixing a failing test: a plan, a file read, an edit whose diff waits for your "
    "permission, the tests in a terminal, a streamed search, a custom tool call and a failed fetch. "
    "Try `fix the failing test`, `show me a plan`, `edit with a diff`.\n"
    "- **A permission request**: one tool call that waits for your answer, then says which option you "
    "chose. Try `ask my permission`, `delete build`.\n"
    "- **A slow command**: a terminal printing a line every 0.05 s until you cancel it. "
    "Try `run a slow command`, `terminal`.\n"
    "- **Your data**: the objects you shared from the kernel, through the `notebook` MCP server: it "
    "lists them, describes a DataFrame and (with run_code allowed) computes on it and plots it. "
    "Try `look at my data`, `plot the dataframe`.\n"
    "- **An echo**: your words, repeated back. Try `echo hello`.\n"
    "- **A recap** of this session's tool calls. Try `summarise what you changed`, `recap`.\n"
    "- **Answers** about this session's tool calls: ask anything ending in `?`.\n"
)
FILES = "`pyproject.toml`, `src/app.py`, `src/util.py`, `assets/logo.png`, `docs/new.md`, `docs/old.md`"
RECAP = (
    "Done. Here is what I did in this session: 7 tool calls.\n\n"
    "1. `Read pyproject.toml` (read): completed; files `pyproject.toml`.\n"
    "2. `Edit src/app.py, add src/util.py` (edit): completed; files `src/app.py`, `src/util.py`, "
    "`assets/logo.png`, `docs/new.md`, `docs/old.md`; permission allowed once.\n"
    "3. `Run pytest -q` (execute): completed; command `pytest -q`, exit code 0; permission allowed once.\n"
    "4. `Search for TODO` (search): completed.\n"
    "5. `Index the project` (_index): completed.\n"
    "6. `Fetch https://docs.invalid/api` (fetch): failed; error: network disabled: offline demo agent.\n"
    "7. `Check <img src=x onerror=alert(1)> is shown as text` (think): completed.\n"
    f"\nFiles touched: {FILES}.\n"
    "Commands: `pytest -q` (exit code 0).\n"
    "Permissions asked: 2 (allowed once, allowed once).\n"
)
OFFLINE = "I'm an offline demo agent with no model, so I can only answer from what this session did. "
NEXT = "Say `summary` for a recap of every tool call, or `help` to see what I can show."


async def demo(tmp_path, version: int, *args: str):
    """The demo agent in `version`, one session in `tmp_path`, permissions allowed once."""
    agent = await start_agent([*DEMO, *args], protocol_version=version)
    session = await agent.new_session(str(tmp_path))
    session.permission_handler = lambda request: "allow-once"
    return agent, session


async def ask(session, text: str) -> tuple[str, list[str]]:
    """Prompt, wait for the end of the turn; the last agent message and the new tool call ids."""
    before = list(session.state.tool_calls)
    assert await asyncio.wait_for(session.prompt(text), TIMEOUT) == "end_turn"
    agent = [m.text for m in session.state.messages.values() if m.role == "agent"]
    return agent[-1], [k for k in session.state.tool_calls if k not in before]


@VERSIONS
async def test_help_lists_what_the_demo_can_show(tmp_path, version):
    agent, session = await demo(tmp_path, version)
    for text in ("help", "What can you do?", "?"):
        assert await ask(session, text) == (HELP, [])
    await agent.close()


@VERSIONS
async def test_a_recap_names_the_story_s_files_and_command(tmp_path, version):
    agent, session = await demo(tmp_path, version)
    assert (await ask(session, "Fix the failing test, please."))[1] == STORY_IDS
    assert await ask(session, "Now summarise what you changed.") == (RECAP, [])
    assert list(session.state.tool_calls) == STORY_IDS
    await agent.close()


@VERSIONS
async def test_a_recap_before_any_tool_call_says_so(tmp_path, version):
    agent, session = await demo(tmp_path, version)
    text, calls = await ask(session, "recap")
    assert calls == [] and text == (
        "I have made no tool calls in this session yet, so there is nothing to summarise. " + NEXT
    )
    await agent.close()


@VERSIONS
async def test_questions_are_answered_from_the_session(tmp_path, version):
    agent, session = await demo(tmp_path, version)
    empty = OFFLINE + "I have made no tool calls in this session yet. Say `help` to see what I can show."
    assert await ask(session, "Why is the sky blue?") == (empty, [])
    await ask(session, "Fix the bug")
    fetch = "`Fetch https://docs.invalid/api` (fetch): failed; error: network disabled: offline demo agent"
    closest = OFFLINE + f"The tool call closest to your question was {fetch}. "
    assert await ask(session, "Why did the fetch fail?") == (
        closest + "This session has 7 tool calls so far. " + NEXT,
        [],
    )
    think = "`Check <img src=x onerror=alert(1)> is shown as text` (think): completed"
    last = OFFLINE + f"My last tool call was {think}. This session has 7 tool calls so far. " + NEXT
    assert await ask(session, "how are you?") == (last, [])
    await agent.close()


@VERSIONS
async def test_a_second_story_turn_gets_fresh_ids(tmp_path, version):
    agent, session = await demo(tmp_path, version)
    assert (await ask(session, "help"))[1] == []
    assert (await ask(session, "Fix the failing test"))[1] == STORY_IDS  # the first story: today's ids
    assert (await ask(session, "Run the tests again."))[1] == [f"{k}_2" for k in STORY_IDS]
    if version == 2:
        assert list(session.state.terminals) == ["term_001", "term_001_2"]
    text, _ = await ask(session, "summary")
    assert text.startswith("Done. Here is what I did in this session: 14 tool calls over 2 turns.\n\n")
    assert "8. `Read pyproject.toml` (read): completed; files `pyproject.toml` (turn 3).\n" in text
    await agent.close()


async def test_a_rejected_command_is_recapped_as_not_run(tmp_path):
    agent, session = await demo(tmp_path, 2)
    answers = {"tool_call": "allow-once", "command": "reject-once"}
    session.permission_handler = lambda request: answers[request.subject_type]
    await ask(session, "fix it")
    text, _ = await ask(session, "What did you do")
    assert (
        "3. `Run pytest -q` (execute): failed; command `pytest -q`, not run; permission rejected.\n" in text
    )
    assert text.endswith("Commands: `pytest -q` (not run).\nPermissions asked: 2 (allowed once, rejected).\n")
    await agent.close()


@VERSIONS
async def test_other_words_pick_other_scenarios(tmp_path, version):
    agent, session = await demo(tmp_path, version)
    assert await ask(session, "Ask my permission") == ("Chosen: allow-once", ["call_perm"])
    assert await ask(session, "echo hello") == ("You said: echo hello", [])
    await agent.close()


async def test_an_explicit_scenario_plays_for_every_prompt(tmp_path):
    agent, session = await demo(tmp_path, 2, "--scenario", "echo")
    assert await ask(session, "help") == ("You said: help", [])
    assert await ask(session, "summarise") == ("You said: summarise", [])
    await agent.close()


# -- the router, pure ----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("help", router.HELP),
        ("  HELP!  ", router.HELP),
        ("?", router.HELP),
        ("What can you do?", router.HELP),
        ("help please", router.HELP),
        ("Help me fix the bug", router.STORY),
        ("Fix the failing test, please.", router.STORY),
        ("The average() test fails. Please fix it and run the tests.", router.STORY),
        ("Run the tests again.", router.STORY),
        ("go", router.STORY),
        ("", router.STORY),
        ("/demo", router.STORY),
        ("Can you fix the bug?", router.STORY),
        ("Now summarise what you changed.", router.RECAP),
        ("Summarize", router.RECAP),
        ("what did you change?", router.RECAP),
        ("recap please", router.RECAP),
        ("Why did the test fail?", router.QUESTION),
        ("is it done", router.QUESTION),
        ("tell me more?", router.QUESTION),
        ("Delete the build directory", router.PERMISSION),
        ("Could you ask my permission?", router.PERMISSION),
        ("run something slow", router.SLOW),
        ("open a terminal", router.SLOW),
        ("echo hi", router.ECHO),
        ("Have a subagent fix the bug", router.SUBAGENTS),
        ("Delegate the tests to child sessions", router.SUBAGENTS),
    ],
)
def test_route(text, expected):
    assert router.route(text) == expected


def test_every_topic_is_a_scenario_and_its_examples_route_to_it():
    from acp_notebook.demo_agent import SCENARIOS

    for topic in router.TOPICS:
        assert topic.route in SCENARIOS
        assert {router.route(example) for example in topic.examples} == {topic.route}
