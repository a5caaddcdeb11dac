"""The small scenarios used by tests, and the registry of every scenario by name."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from . import client_write, elicitation, notebook_tools, story, subagents
from .data import ALLOW_OPTION_IDS

SLOW_TICK = 0.05
SLOW_LIMIT = 60.0


@dataclass(frozen=True)
class Scenario:
    """How the agent behaves: the turn it plays plus a few lifecycle quirks."""

    play: Callable[[Any], Awaitable[None]]
    answers_initialize: bool = True
    announce_version: int | None = None
    noisy: bool = False
    idle_first: bool = False
    on_new: Callable[[Any, dict, Any], Awaitable[dict]] | None = None  # asks while session/new waits


async def echo(em: Any) -> None:
    """One message chunk echoing the prompt's text."""
    await em.stream("agent_message", [f"You said: {em.prompt_text()}"])


async def slow(em: Any) -> None:
    """A running command printing a line every 0.05 s (ignoring --speed) until cancelled."""
    call_id, terminal_id = em.sfx("call_slow"), em.sfx("term_slow")
    em.start_terminal(call_id, terminal_id, "Run a slow command", "sleep 60")
    for tick in range(1, int(SLOW_LIMIT / SLOW_TICK) + 1):
        await em.sleep(SLOW_TICK)
        if em.tool_cancel_requested(call_id):
            em.end_terminal(call_id, terminal_id, None, "SIGINT", "cancelled")
            await em.stream("agent_message", ["The slow command was cancelled."])
            return
        em.output(call_id, terminal_id, f"tick {tick}\r\n".encode())
    em.end_terminal(call_id, terminal_id, 0, None, "completed")


async def crash(em: Any) -> None:
    """Report one tool call, then die mid-turn with exit code 3."""
    em.tool(em.sfx("call_crash"), title="About to crash", kind="other", status="in_progress")
    print("demo agent: simulated crash", file=sys.stderr, flush=True)
    os._exit(3)


async def permission(em: Any) -> None:
    """One tool call and one permission request; then say which option was chosen."""
    call_id = em.sfx("call_perm")
    em.tool(
        call_id,
        title="Delete the build directory",
        kind="delete",
        status="pending",
        locations=[{"path": em.path("build")}],
    )
    option = await em.ask_tool(call_id, "Allow the demo tool call?", "Delete build/ (demo only).")
    em.tool(call_id, status="completed" if option in ALLOW_OPTION_IDS else "failed")
    await em.stream("agent_message", [f"Chosen: {option or 'cancelled'}"])


SCENARIOS: dict[str, Scenario] = {
    "default": Scenario(story.play),
    "echo": Scenario(echo),
    "slow": Scenario(slow),
    "crash": Scenario(crash),
    "hang": Scenario(echo, answers_initialize=False),
    "version3": Scenario(echo, announce_version=3),
    "noise": Scenario(echo, noisy=True),
    "permission": Scenario(permission),
    "idle_first": Scenario(echo, idle_first=True),
    "write": Scenario(client_write.play),
    "notebook": Scenario(notebook_tools.play),
    "subagents": Scenario(subagents.play),
    "elicitation": Scenario(elicitation.play, on_new=elicitation.ask_at_new),
}


def noise_lines(session_id: str) -> list[str]:
    """Junk a robust client must survive: non-JSON, non-RPC and malformed updates."""

    def update(body: dict) -> str:
        params = {"sessionId": session_id, "update": body}
        return json.dumps({"jsonrpc": "2.0", "method": "session/update", "params": params})

    return [
        "log: starting",
        json.dumps({"hello": 1}),
        update(
            {
                "sessionUpdate": "terminal_output_chunk",
                "terminalId": "term_noise",
                "data": "%%% not base64 %%%",
            }
        ),
        update({"sessionUpdate": "tool_call_update", "toolCallId": "call_noise", "title": 5}),
        update({"sessionUpdate": "tool_call_update", "toolCallId": "call_noise", "status": "weird"}),
        update({"sessionUpdate": "_custom_kind", "value": 1}),
    ]


class NoisyOut:
    """Wraps the wire so every real message of a turn is preceded by noise lines."""

    def __init__(self, wire: Any, session_id: str) -> None:
        self.wire, self.session_id = wire, session_id

    def _noise(self) -> None:
        """Write one burst of noise."""
        for line in noise_lines(self.session_id):
            self.wire.write_line(line)

    def notify(self, method: str, params: dict) -> None:
        """Noise, then the notification."""
        self._noise()
        self.wire.notify(method, params)

    def respond(self, req_id: Any, result: Any) -> None:
        """Noise, then the response."""
        self._noise()
        self.wire.respond(req_id, result)

    def start_request(self, method: str, params: dict) -> tuple[int, Any]:
        """Noise, then the request."""
        self._noise()
        return self.wire.start_request(method, params)
