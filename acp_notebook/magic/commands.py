"""The ``%acp`` subcommands, as coroutines run on the agents' event loop."""

from __future__ import annotations

import argparse
import contextlib
from typing import Any

from IPython.display import display

from .. import policies
from ..client import headless, settings
from ..client.agent import Agent
from ..client.errors import AcpError, AuthRequired
from ..client.host import FilePolicy
from ..client.launch import demo_command, start_agent
from ..client.registry import registry
from ..client.session import Session
from . import report, waiting
from .errors import MagicError
from .parser import parse_env


def _view(session: Session, **options: Any) -> Any:
    from ..widgets import SessionView  # the widgets load the browser bundle: only when shown

    return SessionView(session, **options)


def _header_view(session: Session, name: str) -> Any:
    """The start cell's view: the session's header and one line per turn (each turn has its cell)."""
    from ..widgets import SessionHeaderView

    hint = "Each turn shows in its own cell: click its line to go there."
    hint += f" The whole session: %acp view --name {name}"
    return SessionHeaderView(session, title=name, hint=hint)


def _show_start(session: Session, name: str) -> None:
    """Show the start cell's header view; the turns the agent starts by itself (they have no cell)
    show under it: the cell's output becomes the header and their box when the first one starts."""
    from ipywidgets import VBox

    from ..widgets.agent_turns import AgentTurnViews

    header = _header_view(session, name)
    handle = display(header, display_id=True)
    AgentTurnViews(session, name, on_first=lambda box: handle.update(VBox([header, box])))


class Commands:
    """Looks sessions up by name and runs the subcommands."""

    def __init__(self, shell: Any) -> None:
        self.shell = shell
        self.registry = registry()
        self.awaiting_login: dict[str, tuple[Agent, argparse.Namespace]] = {}
        self.awaiting_prompt: dict[str, str] = {}  # a prompt refused for want of a login, by name

    # -- names ------------------------------------------------------------------------------------
    def session(self, name: str) -> Session:
        """The session bound to ``name`` (the user namespace first, then the registry)."""
        value = self.shell.user_ns.get(name)
        session = value if isinstance(value, Session) else self.registry.names.get(name)
        if session is None:
            raise MagicError(f"no session named {name!r}: start one with %acp start --name {name}")
        agent = self.registry.agent_of(session)
        if agent is not None and not agent.closed:
            self.registry.bind(name, session)
        return session

    def agent(self, session: Session) -> Agent:
        """The agent ``session`` was opened on."""
        agent = self.registry.agent_of(session)
        if agent is None:
            raise MagicError(f"session {session.session_id!r} belongs to no agent of this kernel")
        return agent

    def live_session(self, name: str) -> Session:
        """``session(name)``, checking its agent still runs."""
        session = self.session(name)
        agent = self.agent(session)
        if agent.closed:
            code = agent.returncode
            raise MagicError(f"the agent of {name!r} has exited (code {code}): %acp start it again")
        return session

    def bind(self, name: str, session: Session) -> None:
        """Bind ``session`` to ``name`` in the user namespace and the registry."""
        self.shell.user_ns[name] = session
        self.registry.bind(name, session)

    def _in_use(self, agent: Agent, but: str) -> bool:
        named = {n: s for n, s in self.registry.names.items() if n != but}
        named.update({n: v for n, v in self.shell.user_ns.items() if n != but and isinstance(v, Session)})
        return any(self.registry.agent_of(s) is agent for s in named.values())

    # -- lifecycle --------------------------------------------------------------------------------
    async def start(self, args: argparse.Namespace) -> None:
        """``%acp start``: a new agent and session bound to ``--name``; the previous one is closed."""
        command = args.command or demo_command()
        answers = _elicitations(args)
        try:
            agent = await start_agent(
                command,
                args.cwd,
                parse_env(args.env),
                protocol_version=args.protocol,
                init_timeout=args.timeout,
                record=getattr(args, "record", None),
                elicitation_handler=answers,
            )
        except (AcpError, OSError) as exc:
            raise MagicError.from_exception(exc) from None
        self.registry.add_agent(agent)
        try:
            with headless.starting_notices(agent, START_HINT):
                session = await agent.new_session(args.cwd, files=_files(args), **self._sharing(args))
            session.elicitation_handler = answers
        except AuthRequired as exc:  # keep the agent: `%acp login METHOD` continues from here
            self.awaiting_login[args.name] = (agent, args)
            print(f"{report.describe(agent)} needs a login before a session can start.")
            print("\n".join(report.auth_lines(exc.methods or agent.auth_methods, args.name)))
            return
        except AcpError as exc:
            await agent.close(0.5)
            self.registry.forget(agent)
            raise MagicError.from_exception(exc, "session/new failed: ") from None
        await self._bind_started(agent, session, args)

    def _sharing(self, args: argparse.Namespace) -> dict[str, Any]:
        """``--share a,b`` / ``--run-code``: the ``new_session`` arguments for the notebook server."""
        names = [n.strip() for n in (getattr(args, "share", None) or "").split(",") if n.strip()]
        if not names and not getattr(args, "run_code", False):
            return {}
        return {"share": self._variables(names), "run_code": bool(getattr(args, "run_code", False))}

    def _variables(self, names: list[str]) -> dict[str, Any]:
        namespace = self.shell.user_ns
        missing = [n for n in names if n not in namespace]
        if missing:
            raise MagicError(f"no variable named {', '.join(missing)} in this namespace to share")
        return {n: namespace[n] for n in names}

    async def share(self, args: argparse.Namespace) -> None:
        """``%acp share NAME...`` (``--stop``: unshare); alone, what is shared."""
        session = self.session(args.name)
        try:
            if args.stop:
                session.unshare(*args.names)
            elif args.names:
                session.share(**self._variables(args.names))
        except AcpError as exc:
            raise MagicError.from_exception(exc) from None
        shared = ", ".join(session.notebook.share.objects) if session.notebook else ""
        run = session.notebook is not None and session.notebook.share.run_code
        print(f"{args.name} shares: {shared or 'nothing'}" + (" (run_code on)" if run else ""))

    async def _bind_started(self, agent: Agent, session: Session, args: argparse.Namespace) -> None:
        await self._replace(args.name)
        self.bind(args.name, session)
        print(f"Started {report.describe(agent)}; session {session.session_id} is {args.name}.")
        if getattr(args, "review", False):
            print(_review_note(agent))
        if not args.no_view:
            _show_start(session, args.name)

    async def login(self, args: argparse.Namespace) -> None:
        """``%acp login [METHOD]``: list the auth methods, or log in (and finish a pending start)."""
        from .login import run_login  # the login views load the widgets: only when needed
        from .prompting import resend

        waiting = self.awaiting_login.get(args.name)
        agent = waiting[0] if waiting else self.agent(self.live_session(args.name))
        if args.method is None:
            print("\n".join(report.auth_lines(agent.auth_methods, args.name)))
            return
        method = agent.auth_method(args.method)
        if method is None:
            raise MagicError(f"no auth method {args.method!r}: " + report.auth_choices(agent.auth_methods))
        before = agent.process
        with _agent_errors():
            print(await run_login(agent, method, args.timeout))
        if waiting:
            start_args = waiting[1]
            with _agent_errors():
                session = await _open_after_login(
                    agent, start_args.cwd, method.runs_in_terminal, _files(start_args)
                )
            del self.awaiting_login[args.name]
            await self._bind_started(agent, session, start_args)
        elif agent.process is not before:  # restarted: its sessions ended; open the name's again
            old = self.session(args.name)
            with _agent_errors():
                session = await agent.new_session(old.cwd)
            self.bind(args.name, session)
            print(f"The agent was restarted: {args.name} is a new session ({session.session_id}).")
        await resend(self, args.name)

    async def logout(self, args: argparse.Namespace) -> None:
        """``%acp logout``."""
        agent = self.agent(self.live_session(args.name))
        with _agent_errors():
            await agent.logout()
        print(f"Logged out of {report.describe(agent)}.")

    async def _replace(self, name: str) -> None:
        old = self.registry.names.get(name) or self.shell.user_ns.get(name)
        agent = self.registry.agent_of(old) if isinstance(old, Session) else None
        if agent is None or agent.closed or self._in_use(agent, name):
            return
        await agent.close()
        self.registry.forget(agent)
        print(f"Stopped the previous agent of {name} (pid {agent.process.pid}).")

    async def new(self, args: argparse.Namespace) -> None:
        """``%acp new``: another session on the agent of ``--on``."""
        agent = self.agent(self.live_session(args.on))
        name = args.name or args.on
        try:
            session = await agent.new_session(args.cwd)
        except AcpError as exc:
            raise MagicError.from_exception(exc, "session/new failed: ") from None
        self.bind(name, session)
        print(f"New session {session.session_id} on agent [{self.registry.number(agent)}] is {name}.")

    async def stop(self, args: argparse.Namespace) -> None:
        """``%acp stop``: close an agent (``--all``: every agent)."""
        agents = list(self.registry.agents) if args.all else [self.agent(self.session(args.name))]
        numbers = [self.registry.number(a) if a in self.registry.agents else "?" for a in agents]
        if not agents:
            print("no agents to stop")
        for agent, number in zip(agents, numbers, strict=True):
            code = await agent.close()
            self.registry.forget(agent)
            print(f"Stopped agent [{number}] {report.describe(agent)}: exit code {code}.")

    # -- turns ------------------------------------------------------------------------------------
    async def cancel(self, args: argparse.Namespace) -> None:
        """``%acp cancel``: cancel the running turn and drop queued prompts."""
        session = self.live_session(args.name)
        dropped = session.drop_queued()
        running = session.running
        await session.cancel()
        what = "cancelled the running turn" if running else "no turn was running (session/cancel sent)"
        print(f"{args.name}: {what}" + (f"; dropped {dropped} queued prompt(s)" if dropped else "") + ".")

    async def wait(self, args: argparse.Namespace) -> None:
        """``%acp wait [--background]``: wait for the running and queued turns (an interrupt cancels
        them), with ``--background`` for background work too."""
        session = self.live_session(args.name)
        await waiting.wait_idle(session, args.name, args.timeout, args.background)
        print(f"{args.name}: {report.turn_state(session)}")

    # -- settings ---------------------------------------------------------------------------------
    async def mode(self, args: argparse.Namespace) -> None:
        """``%acp mode [MODE]``."""
        session = self.live_session(args.name)
        if args.mode is not None:
            with _agent_errors():
                await session.set_mode(args.mode)
        print("\n".join(report.mode_report(session)))

    async def config(self, args: argparse.Namespace) -> None:
        """``%acp config [ID [VALUE]]``."""
        session = self.live_session(args.name)
        if args.config_id is not None and args.value is not None:
            option = session.settings.option(args.config_id)
            try:
                value = settings.parse_value(option, args.value)
            except ValueError as exc:
                raise MagicError(str(exc), "UsageError") from None
            with _agent_errors():
                await session.set_config_option(args.config_id, value)
        lines = report.config_report(session)
        if args.config_id is not None:
            lines = [line for line in lines if line.startswith(f"{args.config_id} =")] or [
                f"no config option {args.config_id!r}"
            ]
        print("\n".join(lines))

    # -- reports ----------------------------------------------------------------------------------
    async def status(self, args: argparse.Namespace) -> None:
        """``%acp status``."""
        only = self.session(args.name) if args.name else None
        print("\n".join(report.status_report(self.registry, only)))

    async def list(self, args: argparse.Namespace) -> None:
        """``%acp list``."""
        print("\n".join(report.agents_report(self.registry)))

    async def sessions(self, args: argparse.Namespace) -> None:
        """``%acp sessions``."""
        print("\n".join(report.sessions_report(self.registry)))

    async def view(self, args: argparse.Namespace) -> None:
        """``%acp view``: the live view of the whole session."""
        display(_view(self.session(args.name), title=args.name))

    async def xray(self, args: argparse.Namespace) -> None:
        """``%acp xray``: the session's view with the raw messages beside it."""
        display(_view(self.session(args.name), title=args.name, xray=True))

    async def cell(self, args: argparse.Namespace) -> None:
        """``%acp cell [K] [--message N]``: a code block of an agent message into the next cell."""
        from ..protocol.code_blocks import listing, pick  # markdown-it loads on first use

        messages = self.session(args.name).state.messages.values()
        try:
            if args.list:
                print("\n".join(listing(messages, args.message)))
                return
            block = pick(messages, args.block, args.message)
        except LookupError as exc:
            raise MagicError(f"{args.name}: {exc}") from None
        self.shell.set_next_input(block.code)
        where = f"code block {block.block} of agent message {block.message}"
        print(f"{args.name}: {where} ({block.language or 'no language'}) is in the next cell.")


async def _open_after_login(agent: Agent, cwd: Any, restartable: bool, files: Any = None) -> Session:
    """``session/new`` after a login; an agent that read its credentials only when it started
    (a terminal login wrote new ones) is restarted once and asked again."""
    try:
        return await agent.new_session(cwd, files=files)
    except AuthRequired:
        if not restartable:
            raise
        print("The agent still needs the login: restarting it so that it reads the new credentials.")
        await agent.restart()
        return await agent.new_session(cwd, files=files)


def _review_note(agent: Agent) -> str:
    if agent.protocol_version == 1:
        return "Writes through the client are held for review: accept or reject them hunk by hunk."
    return (
        "--review holds writes made through the client (ACP v1 `fs/write_text_file`); this agent "
        "speaks v2 and edits files itself, so nothing will be held (try --protocol 1)."
    )


START_HINT = (
    "no cell can answer it while the agent starts: answer it in the view, or start with "
    "%acp start --elicitations decline|cancel"
)


def _elicitations(args: argparse.Namespace) -> policies.Policy | None:
    """``%acp start --elicitations NAME``: the agent's and the session's elicitation policy
    (``ask``, the default: none — the user answers)."""
    name = getattr(args, "elicitations", None)
    return None if name in (None, "ask") else policies.elicitations_named(name)


def _files(args: argparse.Namespace) -> FilePolicy | None:
    """``%acp start --review``: hold the agent's writes through the client for review."""
    return FilePolicy(review=True) if getattr(args, "review", False) else None


@contextlib.contextmanager
def _agent_errors():
    try:
        yield
    except AcpError as exc:
        raise MagicError.from_exception(exc) from None
