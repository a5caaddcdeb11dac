"""Parsing ``%acp`` lines and ``%%acp`` first lines (argparse, raising instead of exiting)."""

from __future__ import annotations

import argparse
import shlex
from typing import Any, NoReturn

from .errors import HelpShown, MagicError

DEFAULT_NAME = "acp"


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise MagicError(f"{self.prog}: {message}\n{self.format_usage().strip()}", "UsageError")

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        if status:
            raise MagicError(message or f"{self.prog}: error", "UsageError")
        raise HelpShown


def _parser(name: str, help_text: str, *, named: bool = True) -> _Parser:
    parser = _Parser(prog=f"%acp {name}".strip(), description=help_text)
    if named:
        parser.add_argument("--name", default=DEFAULT_NAME, help="the session's name (default: acp)")
    return parser


def _start() -> _Parser:
    p = _parser("start", "Start an agent (default: the bundled demo agent) and a session.")
    p.add_argument("--cwd", help="the agent's working directory and the session's root")
    p.add_argument("--env", action="append", default=[], metavar="K=V", help="an environment variable")
    p.add_argument("--protocol", type=int, choices=(1, 2), default=2, help="offer v2 (default) or force v1")
    p.add_argument("--timeout", type=float, default=30.0, help="seconds to wait for initialize")
    p.add_argument("--no-view", action="store_true", help="do not display the session's header view")
    p.add_argument("--record", metavar="PATH", help="record the connection to this trace file (.jsonl)")
    p.add_argument(
        "--review",
        action="store_true",
        help="hold v1 writes through the client for review (accept/reject hunks)",
    )
    p.add_argument("--share", metavar="NAMES", help="share these variables (a,b) through `notebook`")
    p.add_argument("--run-code", action="store_true", help="let the agent run code here (each call approved)")
    p.add_argument(
        "--elicitations",
        choices=("decline", "cancel", "ask"),
        help="answer the agent's elicitations (while it starts, and the session's): decline, cancel, "
        "or ask (you answer: the default)",
    )
    p.add_argument("command", nargs=argparse.REMAINDER, help="the agent command line")
    return p


def _build() -> dict[str, _Parser]:
    parsers = {"start": _start()}
    for name, text in (
        ("status", "Agents, sessions, turn state and pending permissions."),
        ("cancel", "Cancel the running turn and drop queued prompts."),
        ("view", "Display the live view of the whole session."),
        ("xray", "Display the session's view with the protocol X-ray beside it."),
    ):
        parsers[name] = _parser(name, text)
    parsers["status"].set_defaults(name=None)
    parsers["list"] = _parser("list", "The agents started in this kernel.", named=False)
    parsers["sessions"] = _parser("sessions", "The sessions of those agents.", named=False)
    parsers["help"] = _parser("help", "Show the documentation (same as %acp?).", named=False)
    stop = parsers["stop"] = _parser("stop", "Close the agent of a session (and its other sessions).")
    stop.add_argument("--all", action="store_true", help="close every agent")
    new = parsers["new"] = _parser("new", "Open a new session on the agent of --on, bound to --name.")
    new.set_defaults(name=None)
    new.add_argument("--on", default=DEFAULT_NAME, help="the session whose agent to use (default: acp)")
    new.add_argument("--cwd", help="the new session's root (default: the current directory)")
    wait = parsers["wait"] = _parser("wait", "Wait until the session's running and queued turns end.")
    wait.add_argument("--timeout", type=float, default=None, help="give up after this many seconds")
    wait.add_argument(
        "--background",
        action="store_true",
        help="also wait for background work: subagents, background commands, the agent's own turns",
    )
    mode = parsers["mode"] = _parser("mode", "Show the modes, or switch to MODE.")
    mode.add_argument("mode", nargs="?", help="the mode id to switch to")
    login = parsers["login"] = _parser("login", "Show the agent's auth methods, or log in with METHOD.")
    login.add_argument("method", nargs="?", help="the authMethod id to log in with")
    login.add_argument("--timeout", type=float, default=None, help="seconds an agent-run login may take")
    parsers["logout"] = _parser("logout", "Log the agent out (v1 `logout`, v2 `auth/logout`).")
    share = parsers["share"] = _parser("share", "Share variables with the agent's `notebook` server.")
    share.add_argument("names", nargs="*", help="variables of this namespace (none: list what is shared)")
    share.add_argument("--stop", action="store_true", help="stop sharing NAMES instead")
    config = parsers["config"] = _parser("config", "Show the config options, or set ID to VALUE.")
    config.add_argument("config_id", nargs="?", metavar="ID")
    config.add_argument("value", nargs="?", metavar="VALUE")
    code = parsers["cell"] = _parser("cell", "Put a code block of an agent message into a new cell below.")
    code.add_argument("block", nargs="?", type=int, metavar="K", help="the block, from 1 (default: the last)")
    code.add_argument("--message", type=int, metavar="N", help="the agent message, from 1")
    code.add_argument("--list", action="store_true", help="list the code blocks instead")
    return parsers


def _cell() -> _Parser:
    p = _parser("", "Send the cell body as a prompt and show this turn.")
    p.prog = "%%acp"
    p.add_argument("--wait", action="store_true", help="wait for the end of the turn (clicks still work)")
    p.add_argument("--title", default=None, help="the view's title (default: NAME and the prompt's start)")
    p.add_argument("--timeout", type=float, default=None, help="with --wait: give up after this many seconds")
    p.add_argument(
        "--permissions",
        metavar="POLICY",
        help="answer this turn's permission requests: a policy name (allow-once, reject, cancel, ...) "
        "or a variable holding an acp_notebook.policies policy",
    )
    p.add_argument(
        "--elicitations",
        choices=("decline", "cancel", "ask"),
        help="answer this turn's elicitations (forms, URLs the agent asks about): decline, cancel, "
        "or ask (leave them to you, not the handler)",
    )
    p.add_argument(
        "--agents",
        metavar="A,B,...",
        help="compare: run the prompt on each of these agents, each in its own copy of --cwd",
    )
    p.add_argument("--cwd", help="with --agents: the working tree to copy (default: the current directory)")
    p.add_argument("--keep", action="store_true", help="with --agents: keep the copies when they close")
    return p


PARSERS = _build()
CELL = _cell()


def split(line: str) -> list[str]:
    """Shell-like words of a magic line."""
    try:
        return shlex.split(line)
    except ValueError as exc:
        raise MagicError(f"cannot parse {line!r}: {exc}", "UsageError") from None


def parse_line(line: str) -> tuple[str, argparse.Namespace]:
    """The subcommand and its arguments (an empty line means ``status``)."""
    words = split(line)
    command = words[0] if words else "status"
    parser = PARSERS.get(command)
    if parser is None:
        known = ", ".join(sorted(PARSERS))
        raise MagicError(f"unknown subcommand {command!r}; one of: {known} (see %acp?)", "UsageError")
    args = parser.parse_args(words[1:])
    if command == "start" and args.command[:1] == ["--"]:
        args.command = args.command[1:]
    return command, args


def parse_cell(line: str) -> argparse.Namespace:
    """The options of a ``%%acp`` cell."""
    return CELL.parse_args(split(line))


def parse_env(pairs: list[str]) -> dict[str, Any]:
    """``K=V`` strings as a dict."""
    env = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise MagicError(f"--env takes K=V, not {pair!r}", "UsageError")
        env[key] = value
    return env
