"""The real Codex (codex-acp 2.6) asks the user through our client: ``request_user_input`` becomes a
form elicitation, answered in Python, and the answer reaches the model.

Measured (codex-acp 2.6.0 over v2, offline against ``mock_openai``):
- ``request_user_input`` is offered to the model only in the Plan collaboration mode (config option
  ``collaboration_mode`` = ``plan``). Its arguments are ``{"questions": [{id, header, question,
  options: [{label, description}]}]}``.
- With ``capabilities.elicitation.form`` advertised, codex sends one ``elicitation/create`` (its first
  request: JSON-RPC id ``0``) per call: ``mode: "form"``, ``sessionId``, ``toolCallId`` = the model's
  ``call_id`` (a tool call codex never reports with a ``tool_call_update``), ``message`` "Codex needs
  your input to continue.", and per question a titled single-select (``title`` the question,
  ``description`` the header, ``oneOf`` the options plus "None of the above") and an optional
  ``<id>_note`` string; the questions are ``required``. It reports ``requires_action`` while it waits.
- The answer goes to the model as the function call's output: ``{"answers": {"<id>": {"answers":
  ["<choice>", "user_note: <note>"]}}}``. Declined or cancelled — or without our capability, as
  before — the model gets ``{"answers": {}}`` and the turn goes on.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from tests.real_agents.mock_openai import Step, answered, function_call, message, user_said
from tests.real_agents.test_codex import (  # noqa: F401  (fixtures)
    TURN,
    Run,
    _agents_installed,
    assert_requests_answered,
    codex,
    prompt,
)
from tests.support import until_async

ASK = "Plan the storage layer"
QUESTION = {
    "id": "db_choice",
    "header": "Database",
    "question": "Which database should the app use?",
    "options": [
        {"label": "SQLite (Recommended)", "description": "Zero setup, one file."},
        {"label": "Postgres", "description": "A server to run."},
    ],
}
CHOICES = ["SQLite (Recommended)", "Postgres", "None of the above"]
EMPTY = {"answers": {}}


def script(run: Run) -> None:
    """The model asks one question, then says what it got."""
    run.mock.add(
        Step(
            user_said(ASK),
            [function_call("call_ask", "request_user_input", {"questions": [QUESTION]})],
            "ask",
        ),
        Step(answered("call_ask"), [message("Noted.")], "after"),
    )


async def plan_session(run: Run) -> Any:
    """A session in the Plan collaboration mode (where codex offers ``request_user_input``)."""
    session = await asyncio.wait_for(run.agent.new_session(cwd=run.project), TURN)
    await asyncio.wait_for(session.set_config_option("collaboration_mode", "plan"), TURN)
    return session


def model_got(run: Run) -> Any:
    """What the model got back for ``call_ask`` (decoded)."""
    outputs = run.mock.model_requests()[-1].outputs("call_ask")
    assert len(outputs) == 1, outputs
    return json.loads(outputs[0])


def elicitation_requests(run: Run) -> list[dict[str, Any]]:
    """The ``elicitation/create`` requests codex sent."""
    return run.tee.requests("elicitation/create")


async def test_request_user_input_reaches_the_handler_and_the_answer_the_model(codex: Run) -> None:  # noqa: F811
    script(codex)
    session = await plan_session(codex)
    asked: list[Any] = []

    def fill(elicitation: Any) -> dict[str, Any]:
        asked.append(elicitation)
        return {"db_choice": "Postgres", "db_choice_note": "on port 5433"}

    session.elicitation_handler = fill
    assert await prompt(codex, session, ASK) == "end_turn"
    assert "request_user_input" in codex.mock.model_requests()[0].tool_names()
    [elicitation] = asked
    assert (elicitation.mode, elicitation.session_id, elicitation.tool_call_id) == (
        "form",
        session.session_id,
        "call_ask",
    )
    field = elicitation.schema["properties"]["db_choice"]
    assert field["title"] == QUESTION["question"] and [o["const"] for o in field["oneOf"]] == CHOICES
    content = {"db_choice": "Postgres", "db_choice_note": "on port 5433"}
    assert elicitation.outcome == {"action": "accept", "content": content}
    assert elicitation.decided_by == "handler" and session.pending_elicitations == []
    [request] = elicitation_requests(codex)
    assert codex.tee.answers_to(request["id"]) == [
        {"jsonrpc": "2.0", "id": request["id"], "result": elicitation.outcome}
    ]
    assert model_got(codex) == {
        "answers": {"db_choice": {"answers": ["Postgres", "user_note: on port 5433"]}}
    }
    assert_requests_answered(codex)
    # codex names the model's call_id, a tool call it never reports: the question shows in the turn
    assert [d.code for d in session.state.diagnostics] == ["elicitation-unknown-tool-call"]
    assert "call_ask" not in session.state.tool_calls
    await codex.close_and_check()


async def test_a_question_left_to_the_user_waits_and_is_answered_from_code(codex: Run) -> None:  # noqa: F811
    script(codex)
    session = await plan_session(codex)
    turn = asyncio.ensure_future(prompt(codex, session, ASK))
    pending = await until_async(lambda: session.pending_elicitations, TURN, message="the question")
    assert session.state.run_state == "requires_action"
    assert [step.label for step in codex.mock.pending] == ["after"]  # the model waits for the answer
    pending[0].accept({"db_choice": "SQLite (Recommended)"})
    assert await turn == "end_turn"
    assert model_got(codex) == {"answers": {"db_choice": {"answers": ["SQLite (Recommended)"]}}}
    await codex.close_and_check()


@pytest.mark.parametrize("action", ["decline", "cancel"])
async def test_decline_and_cancel_give_the_model_no_answers(codex: Run, action: str) -> None:  # noqa: F811
    script(codex)
    session = await plan_session(codex)
    session.elicitation_handler = lambda elicitation: action
    assert await prompt(codex, session, ASK) == "end_turn"
    [request] = elicitation_requests(codex)
    assert codex.tee.answers_to(request["id"])[0]["result"] == {"action": action}
    assert model_got(codex) == EMPTY
    await codex.close_and_check()
