"""Starting an agent: spawn it, initialize it, clean up if that fails; also as a blocking call.

Whatever goes wrong during the start (the command cannot run, the agent exits, ``initialize``
hangs, the version is unknown, the caller is interrupted) closes the process — its whole tree,
reaped (``transport``) — and raises one ``AgentStartError`` with the tail of the agent's stderr.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Sequence
from typing import Any

from .agent import Agent
from .agents import resolve
from .errors import AgentExited, AgentStartError
from .registry import registry
from .sync import run_sync
from .transport import AgentProcess


def demo_command() -> list[str]:
    """The bundled offline demo agent, run by this interpreter."""
    return [sys.executable, "-m", "acp_notebook.demo_agent"]


def start_agent_sync(
    command: str | Sequence[str] | None = None, cwd: Any = None, env: Any = None, **options: Any
) -> Agent:
    """``start_agent`` as a blocking call (default command: the demo agent); the agent is tracked."""
    agent = run_sync(start_agent(command or demo_command(), cwd, env, **options))
    registry().add_agent(agent)
    return agent


async def start_agent(
    command: str | Sequence[str],
    cwd: str | os.PathLike | None = None,
    env: dict[str, str] | None = None,
    *,
    protocol_version: int = 2,
    init_timeout: float = 30.0,
    files: bool = True,
    terminals: bool = True,
    terminal_output: bool = True,
    record: str | os.PathLike | None = None,
    elicitation_handler: Any = None,
) -> Agent:
    """Spawn an ACP agent (a command, or a known name such as ``"claude"``) and initialize it;
    ``protocol_version=1`` forces v1.

    ``files``/``terminals`` say whether a v1 agent is offered ``fs/*`` and ``terminal/*``;
    ``terminal_output`` offers the ``_meta.terminal_output`` extension (agent-run shell output);
    ``record`` writes every line of the connection to that trace file (README "Record and replay");
    ``elicitation_handler`` answers elicitations scoped to our own requests (``initialize``,
    ``session/new`` …: ``agent.elicitation_handler``), from the first one on.
    """
    argv, _ = resolve(command)  # a known name means its table entry; a missing program, one line
    try:
        process = await AgentProcess.spawn(argv, os.fspath(cwd) if cwd else None, env)
    except (OSError, ValueError) as exc:
        raise AgentStartError(f"could not start agent {command!r}: {exc}") from None
    try:
        agent = Agent(
            process, files=files, terminals=terminals, terminal_output=terminal_output, record=record,
            elicitation_handler=elicitation_handler,
        )  # fmt: skip
    except OSError as exc:  # the trace file cannot be written
        await process.close(0.5)
        raise AgentStartError(f"could not record to {record!r}: {exc}") from None
    try:
        await asyncio.wait_for(agent.initialize(protocol_version), init_timeout)
    except TimeoutError:
        await agent.close(0.5)
        raise AgentStartError(
            f"the agent did not answer initialize within {init_timeout:g} s", agent.stderr_tail()
        ) from None
    except AgentExited as exc:
        await agent.close(0.5)  # reaped, and what it left of its process group ended
        raise AgentStartError(
            f"the agent exited during initialize (exit code {exc.returncode})", exc.stderr_tail
        ) from None
    except BaseException:  # incl. cancellation (an interrupt during a slow start): no stray process
        await agent.close(0.5)
        raise
    return agent
