"""When the agent is gone, everything it left open in a session ends.

Pending permissions end ``cancelled`` and pending elicitations ``cancel``, nothing sent (a later
``select()`` / ``accept()`` says it is too late); unfinished tool
calls end — ``failed`` with an "agent exited" note when it died, ``cancelled`` when it was closed
on purpose; the waiting turn ends, with an ``error`` stop (the exit code and stderr tail as its
details) when the exit was not expected.
"""

from __future__ import annotations

from typing import Any

from ..protocol.state import SessionState
from .elicitations import ElicitationDesk
from .errors import AgentExited
from .permissions import PermissionDesk
from .turn_runner import TurnRunner


def settle_exit(
    state: SessionState,
    permissions: PermissionDesk,
    elicitations: ElicitationDesk,
    runner: TurnRunner,
    error: AgentExited,
    expected: bool,
) -> None:
    """End what the exited agent left open in one session."""
    lead = str(error).splitlines()[0]
    elicitations.withdraw_all(
        "the agent was closed" if expected else lead, "agent closed" if expected else "agent exited"
    )
    if expected:
        permissions.withdraw_all("the agent was closed", "agent closed")
        end_tool_calls(state, "cancelled", None)
        runner.fail(error)
        return
    state.diagnose("agent-exited", lead, error.returncode, "error")
    permissions.withdraw_all(lead, "agent exited")
    end_tool_calls(state, "failed", exit_note(error))
    runner.fail(error, exit_details(error))


def end_tool_calls(state: SessionState, status: str, note: dict[str, Any] | None) -> None:
    """The agent will never finish its unfinished tool calls: mark them ``status``."""
    for tc_id, tc in list(state.tool_calls.items()):
        if tc.finished:
            continue
        state.apply({"sessionUpdate": "tool_call_update", "toolCallId": tc_id, "status": status})
        if note is not None:
            state.add_note(tc_id, note)


def exit_note(error: AgentExited) -> dict[str, Any]:
    """The note on a tool call the exited agent left unfinished (``ToolCall.notes``)."""
    code = "unknown" if error.returncode is None else error.returncode
    return {"kind": "agent_exited", "message": f"agent exited (code {code})", "exit_code": error.returncode}


def exit_details(error: AgentExited) -> dict[str, Any]:
    """The ``error`` of the stop an agent's exit makes (``state.stop_error``, ``last_error``)."""
    data = {"exitCode": error.returncode, "stderr": list(error.stderr_tail)}
    return {"message": str(error).splitlines()[0], "data": data}
