"""The ``%acp`` / ``%%acp`` magics: parse, call the client, display (thin, as anywidget's)."""

from __future__ import annotations

import inspect
from typing import Any

from IPython.core.magic import Magics, line_cell_magic, magics_class

from ..client.sync import run_sync
from .commands import Commands
from .errors import HelpShown
from .parser import parse_cell, parse_line
from .prompting import prompt_cell

SYNC_COMMANDS = frozenset({"status", "list", "sessions", "view", "xray", "share"})


async def _nothing() -> None:
    return None


@magics_class
class AcpMagics(Magics):
    """``%acp`` and ``%%acp`` (plus ``acp_await``, the awaitable form the extension rewrites to)."""

    def __init__(self, shell: Any) -> None:
        super().__init__(shell)
        self.commands = Commands(shell)

    @line_cell_magic
    def acp(self, line: str, cell: str | None = None) -> None:
        """Drive ACP agents from cells: start them, prompt them, watch and answer them.

        Line magic — ``%acp SUBCOMMAND [options]`` (``%acp`` alone is ``%acp status``):

          start [--name NAME] [--cwd DIR] [--env K=V ...] [--protocol 1|2] [--timeout S]
                [--no-view] [--share A,B] [--run-code] [--review] [COMMAND ...]
              Start an agent and a session (``--share``: these variables, and ``--run-code``: code
              runs, each approved, through the session's ``notebook`` MCP server), bind the
              session to NAME in the user namespace
              (default: ``acp``) and display its header, one line per turn (a click goes to the
              turn's cell; ``%acp view`` shows the whole session). COMMAND is a command, or a known
              agent name — ``claude``, ``codex``, ``gemini``, ``opencode``, ``goose`` — and
              defaults to the bundled offline demo agent (``python -m acp_notebook.demo_agent``; ``--env
              ACP_DEMO_SPEED=0`` makes it instant). ``--cwd`` is the agent's working directory
              and the session's root; ``--protocol 1`` forces ACP v1. Starting NAME again closes
              the agent NAME held (unless another name still uses it). If the agent cannot
              start, the error shows the last lines of its stderr.
          new [--name NAME] [--on NAME] [--cwd DIR]
              A new session on the agent of ``--on`` (default ``acp``), bound to ``--name``
              (default: the ``--on`` name, i.e. a fresh conversation in its place).
          status [--name NAME]   agents, sessions, turn state, queued prompts, pending permissions
          list                   the agents started in (or adopted by) this kernel
          sessions               the sessions of those agents
          view [--name NAME]     display the live view of the whole session
          xray [--name NAME]     the same view with the protocol X-ray: the raw messages beside
                                 the tree (filter; pick a card or a message; see js/WIRE.md)
          share [NAME ...] [--stop] [--name NAME]
                                 share variables with the agent's ``notebook`` MCP server (the
                                 session must have one: ``start --share a,b`` / ``--run-code``)
          cancel [--name NAME]   cancel the running turn (``session/cancel``; pending permission
                                 requests are answered ``cancelled``) and drop queued prompts
          wait [--name NAME] [--timeout S]
                                 wait until the running and queued turns have ended
          mode [MODE] [--name NAME]
                                 show the modes, or switch to MODE (v2: the config option of
                                 category ``mode``; v1: ``session/set_mode``)
          config [ID [VALUE]] [--name NAME]
                                 show the config options, or set one
                                 (``session/set_config_option``; true/false for booleans)
          login [METHOD] [--name NAME] [--timeout S]
                                 show the agent's auth methods, or log in with METHOD the way
                                 it works: a ``terminal`` method runs the agent's own login in
                                 an interactive terminal in the cell; an ``env_var`` method
                                 asks for each variable in a password field and restarts the
                                 agent with them; others call ``authenticate`` (v2
                                 ``auth/login``). When ``start`` met an auth-required error,
                                 logging in then opens the session
          logout [--name NAME]   log out (v1 ``logout``, v2 ``auth/logout``)
          stop [--name NAME] [--all]
                                 close the agent (stdin closed, then terminate, then kill)
          cell [K] [--message N] [--list] [--name NAME]
                                 put code block K (from 1; default: the last) of agent message
                                 N (from 1; default: the last one with a code block; negative
                                 counts from the end) into a new cell below this one (one per
                                 run, as Jupyter allows); ``--list`` lists them. From Python:
                                 ``acp.code_blocks()``. The view has a Copy button on each block
          help                   this text (also ``%acp?``); ``%acp SUBCOMMAND -h`` for one

        Cell magic — ``%%acp [--name NAME] [--wait] [--timeout S] [--permissions POLICY] [--title TEXT]``:

          The cell body is the prompt, sent to session NAME (default ``acp``). The cell shows
          the view of this turn only — its messages, tool calls, terminals and permission
          requests, live — and returns at once: the turn runs as a task on the kernel's event
          loop, so its buttons work and other cells can run. A prompt sent while the session is
          busy is queued (the cell says so) and starts when the running turn ends.
          ``--wait`` makes the cell wait for the end of the turn; permission buttons still work
          while it waits, and interrupting the kernel (■) cancels the turn, answers pending
          permissions ``cancelled`` and leaves the agent running. ``--timeout S`` gives up
          waiting after S seconds, saying what permission requests are pending (the turn goes
          on). ``--permissions POLICY`` answers this turn's requests with a policy: a name
          (``allow-once``, ``allow-always``, ``reject``, ``cancel``, ``ask``) or a variable
          holding an ``acp_notebook.policies`` policy, e.g. ``allow(kinds=["edit"])``. In a run
          with no frontend (no view rendered) a waiting cell prints, once per request, what a
          pending permission asks and the code that answers it.

        Several agents — ``%%acp --agents A,B,... [--cwd DIR] [--permissions POLICY] [--wait]
        [--timeout S] [--keep] [--name NAME]``:

          The prompt goes to each agent (a known name, ``demo``, or a command) in its own copy of
          ``--cwd`` (a ``git worktree`` of HEAD plus the uncommitted changes in a repository, else
          a copy of the tree), all at once; the cell shows their views side by side. The
          ``acp_notebook.Comparison`` is bound to NAME (default ``comparison``):
          ``comparison.frame()`` compares stop reason, duration, tool calls, files and lines
          changed, usage and cost; ``comparison.diff("claude")``; ``comparison.close()`` stops the
          agents and removes the copies (``--keep`` keeps them). ``--timeout S`` cancels a turn
          that takes longer. From Python: ``await acp_notebook.compare([...], prompt, cwd=...)``.

        How it works: the extension rewrites top-level ``%acp`` lines and ``%%acp`` cells into
        ``await`` (an IPython input transformer), so they run as awaiting cells (ipykernel >= 7.4
        handles clicks during an awaiting cell, never during a blocking one). Where that is not
        possible (``x = %acp ...``, inside a function, ``%autoawait off``) the magic blocks the
        cell, running the loop nested (``nest_asyncio2``); a blocking ``--wait`` answers
        permission requests by cancelling the turn, as ``session.prompt_sync`` does (unless
        ``--permissions`` names a policy that answers them).
        ``{var}`` and ``$var`` in the magic line are expanded from the user namespace.

        From Python: NAME is an ``acp_notebook.Session`` — ``acp.state.tool_calls``,
        ``acp.state.terminals[...].output``, ``acp.pending_permissions[0].select("allow-once")``,
        ``acp.permission_handler = fn``, ``await acp.prompt("...")``, ``acp.prompt_task("...")``,
        ``acp.prompt_sync("...", permissions="allow-once")``.
        """
        try:
            work = self._work(line, cell, blocking=True)
        except HelpShown:
            return None
        return run_sync(work) if inspect.iscoroutine(work) else None

    @line_cell_magic
    def acp_await(self, line: str, cell: str | None = None) -> Any:
        """Internal: ``%acp`` / ``%%acp`` as a coroutine (the extension rewrites cells to await it)."""
        try:
            work = self._work(line, cell, blocking=False)
        except HelpShown:
            work = None
        return work if inspect.iscoroutine(work) else _nothing()

    def _work(self, line: str, cell: str | None, blocking: bool) -> Any:
        """Parse and start: a coroutine to run, or None when the work is already done."""
        if cell is not None:
            return prompt_cell(self.commands, parse_cell(line), cell, blocking)
        command, args = parse_line(line)
        if command == "help":
            print(inspect.cleandoc(AcpMagics.acp.__doc__ or ""))
            return None
        method = getattr(self.commands, command)
        if command in SYNC_COMMANDS:
            return _run_now(method(args))
        return method(args)


def _run_now(coroutine: Any) -> None:
    """Run a coroutine that never awaits anything (the reports) without an event loop."""
    try:
        coroutine.send(None)
    except StopIteration:
        return None
    coroutine.close()
    raise RuntimeError("a report command awaited something")
