"""The real Claude (claude-agent-acp 0.101) asks the user through our client: ``AskUserQuestion``
becomes a titled multi-select form, answered in Python, and the choice reaches the model.

Measured (claude-agent-acp 0.101.0 over v2, offline against ``mock_anthropic``):
- With ``capabilities.elicitation.form`` advertised, ``AskUserQuestion`` is among the tools of every
  main-loop request — offered directly, not deferred behind ``ToolSearch`` (which lists only Cron*,
  EnterPlanMode, EnterWorktree, ExitPlanMode, ExitWorktree, Monitor, NotebookEdit, SendMessage,
  TaskStop, WebFetch, WebSearch). Its input is ``{"questions": [{question, header, options:
  [{label, description}], multiSelect}]}``. The default ``auto`` mode asks no permission for it.
- The tool call is reported first (``tool_call_update`` ``name`` AskUserQuestion, title "Asking for
  your input", then the question as its title), then one ``elicitation/create``: ``mode: "form"``,
  ``sessionId``, ``toolCallId`` = the tool use id, ``message`` the question, and per question
  ``question_<n>`` — for ``multiSelect`` an array whose ``items.anyOf`` are the titled options (``title``
  the header) — plus an optional ``question_<n>_custom`` string ("Other"); nothing ``required``.
- Forced v1 (``clientCapabilities.elicitation``) it is the same: the tool, the form, the answer.
- The model's next request carries the tool result ``The user answered: "<question>"="<choice>,
  <choice>[, <custom>]". ...``; declined: "The user did not answer the questions."; cancelled: an
  error result "Tool permission request failed: Error: Tool use aborted". The turn ends ``end_turn``.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tests.real_agents.mock_anthropic import text, tool_use
from tests.real_agents.test_claude import (  # noqa: F401  (fixtures)
    TURN,
    Run,
    _agents_installed,
    assert_requests_answered,
    claude,
    claude_v1,
)
from tests.support import until_async

MARKER = "[ask-checks]"
QUESTION = "Which checks should run before the release?"
OPTIONS = [
    {"label": "Unit tests", "description": "Fast, always useful."},
    {"label": "Type check", "description": "mypy on the core."},
    {"label": "Browser tests", "description": "Slow, needs Chromium."},
]
ASK = {"questions": [{"question": QUESTION, "header": "Checks", "options": OPTIONS, "multiSelect": True}]}
ASK_ID = "toolu_ask_checks"


def script(run: Run) -> None:
    """The model asks one multi-select question, then acknowledges."""
    run.script.prompt(MARKER, tool_use(ASK_ID, "AskUserQuestion", ASK))
    run.script.after(ASK_ID, text("Running what you chose."))


def tool_result(run: Run) -> dict[str, Any]:
    """The ``tool_result`` of the question in the model's last request."""
    return run.mock.main_requests()[-1].tool_results()[ASK_ID]


def result_text(result: dict[str, Any]) -> str:
    """The text of a ``tool_result`` block (a string or text blocks)."""
    content = result.get("content")
    if isinstance(content, str):
        return content
    return "".join(b.get("text", "") for b in content or [] if isinstance(b, dict))


async def ask(run: Run, session: Any) -> str | None:
    """Play the question's turn."""
    return await asyncio.wait_for(session.prompt(f"{MARKER} Prepare the release."), TURN)


async def test_ask_user_question_is_a_titled_multi_select_answered_in_python(claude: Run) -> None:  # noqa: F811
    script(claude)
    session = await asyncio.wait_for(claude.agent.new_session(cwd=claude.project), TURN)
    asked: list[Any] = []

    def choose(elicitation: Any) -> dict[str, Any]:
        asked.append(elicitation)
        return {"question_0": ["Unit tests", "Browser tests"]}

    session.elicitation_handler = choose
    assert await ask(claude, session) == "end_turn"
    assert "AskUserQuestion" in claude.mock.main_requests()[0].tool_names  # offered directly
    [elicitation] = asked
    assert (elicitation.mode, elicitation.session_id, elicitation.tool_call_id, elicitation.message) == (
        "form",
        session.session_id,
        ASK_ID,
        QUESTION,
    )
    field = elicitation.schema["properties"]["question_0"]
    assert field["type"] == "array" and field["title"] == "Checks"
    assert [(o["const"], o["title"]) for o in field["items"]["anyOf"]] == [(o["label"],) * 2 for o in OPTIONS]
    assert elicitation.outcome == {
        "action": "accept",
        "content": {"question_0": ["Unit tests", "Browser tests"]},
    }
    assert f'"{QUESTION}"="Unit tests, Browser tests"' in result_text(tool_result(claude))
    assert session.state.tool_calls[ASK_ID].name == "AskUserQuestion"
    assert session.state.tool_calls[ASK_ID].status == "completed"
    assert claude.script.unused() == [] and claude.mock.unmatched == []
    await claude.close_and_check()


async def test_the_question_waits_for_the_user_and_other_text_is_added(claude: Run) -> None:  # noqa: F811
    script(claude)
    session = await asyncio.wait_for(claude.agent.new_session(cwd=claude.project), TURN)
    turn = asyncio.ensure_future(ask(claude, session))
    [pending] = await until_async(lambda: session.pending_elicitations, TURN, message="the question")
    pending.accept({"question_0": ["Type check"], "question_0_custom": "and the linters"})
    assert await turn == "end_turn"
    assert f'"{QUESTION}"="Type check, and the linters"' in result_text(tool_result(claude))
    assert_requests_answered(claude)
    await claude.close_and_check()


@pytest.mark.parametrize(
    ("action", "said", "error"),
    [
        ("decline", "The user did not answer the questions.", False),
        ("cancel", "Tool permission request failed: Error: Tool use aborted", True),
    ],
)
async def test_decline_and_cancel_reach_the_model(claude: Run, action: str, said: str, error: bool) -> None:  # noqa: F811
    script(claude)
    session = await asyncio.wait_for(claude.agent.new_session(cwd=claude.project), TURN)
    session.elicitation_handler = lambda elicitation: action
    assert await ask(claude, session) == "end_turn"
    result = tool_result(claude)
    assert result_text(result) == said and bool(result.get("is_error")) == error
    [request] = claude.tee.requests("elicitation/create")
    assert claude.tee.answers_to(request["id"])[0]["result"] == {"action": action}
    await claude.close_and_check()


async def test_over_v1_the_question_is_the_same(claude_v1: Run) -> None:  # noqa: F811
    """Forced v1 (``clientCapabilities.elicitation``): the same tool, the same form, the same answer."""
    script(claude_v1)
    session = await asyncio.wait_for(claude_v1.agent.new_session(cwd=claude_v1.project), TURN)
    session.elicitation_handler = lambda elicitation: {"question_0": ["Type check"]}
    assert await ask(claude_v1, session) == "end_turn"
    assert "AskUserQuestion" in claude_v1.mock.main_requests()[0].tool_names
    [elicitation] = session.state.elicitations.values()
    assert (elicitation.mode, elicitation.tool_call_id) == ("form", ASK_ID)
    assert f'"{QUESTION}"="Type check"' in result_text(tool_result(claude_v1))
    await claude_v1.close_and_check()
