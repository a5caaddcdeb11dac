"""What a permission request is about, read from its subject (never from its title).

Policies and remembered decisions match these facts, so they must come from what the client can
check, not from text the agent writes for people: the title is ignored. A v2 ``command`` subject
gives the command and its ``cwd`` (kind ``execute``); a ``tool_call`` subject (v2, and every v1
request) gives the tool call's kind, its ``locations`` and its ``rawInput`` (``command``;
``file_path`` / ``path``). Fields the request omits are taken from the tool call as the session
state knows it (``known``). Paths are normalised (``..`` resolved, no filesystem access); commands
are split into words as a shell would (``sh -c SCRIPT`` counts as SCRIPT).
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

SHELLS = frozenset({"sh", "bash", "zsh", "dash", "/bin/sh", "/bin/bash", "/bin/zsh", "/usr/bin/bash"})
CONTROL = (";", "&", "|", "<", ">", "`", "$(", "\n")  # one of these: more than one command
SUBCOMMANDS = frozenset({"git", "npm", "npx", "pnpm", "yarn", "cargo", "go", "pip", "uv", "docker"})


@dataclass(frozen=True)
class Facts:
    """The checkable facts of one request: tool kind, paths touched, command words."""

    kind: str | None
    paths: tuple[str, ...]
    command: tuple[str, ...] | None
    simple_command: bool = True  # False when the command chains others (``;``, ``&&``, pipes, ...)


def facts(request: Any, known: Any = None) -> Facts:
    """The facts of ``request``; ``known`` is the state's ``ToolCall`` for it, if any."""
    subject = request.subject if isinstance(request.subject, dict) else {}
    if subject.get("type") == "command":
        command = subject.get("command")
        words, simple = split_command(command)
        cwd = subject.get("cwd")
        return Facts("execute", tuple(_paths([cwd])), words, simple)
    tool_call = subject.get("toolCall") if subject.get("type") == "tool_call" else None
    tool_call = tool_call if isinstance(tool_call, dict) else {}
    kind = _pick(tool_call.get("kind"), getattr(known, "kind", None))
    locations = _pick(tool_call.get("locations"), getattr(known, "locations", None)) or []
    raw = _pick(tool_call.get("rawInput"), getattr(known, "raw_input", None))
    raw = raw if isinstance(raw, dict) else {}
    paths = [loc.get("path") for loc in locations if isinstance(loc, dict)]
    paths += [raw.get(key) for key in ("file_path", "path", "notebook_path")]
    words, simple = split_command(raw.get("command"))
    return Facts(kind if isinstance(kind, str) else None, tuple(_paths(paths)), words, simple)


def facts_of(request: Any, state: Any = None) -> Facts:
    """The request's facts, completed from the state's tool call when there is one."""
    tool_calls = getattr(state, "tool_calls", None) or {}
    return facts(request, tool_calls.get(request.tool_call_id))


def option_of(request: Any, kinds: Iterable[str]) -> str | None:
    """The request's first option of the first of ``kinds`` it has."""
    options = [o for o in request.options if isinstance(o, dict) and o.get("optionId") in request.option_ids]
    for kind in kinds:
        for option in options:
            if option.get("kind") == kind:
                return option["optionId"]
    return None


def split_command(command: Any) -> tuple[tuple[str, ...] | None, bool]:
    """A command (a string, or a list of words) as words, and whether it is a single command."""
    if isinstance(command, list) and all(isinstance(w, str) for w in command):
        words = list(command)
        if len(words) == 3 and words[0] in SHELLS and words[1] in ("-c", "-lc"):
            return split_command(words[2])
        return (tuple(words), True) if words else (None, True)
    if not isinstance(command, str) or not command.strip():
        return None, True
    simple = not any(mark in command for mark in CONTROL)
    try:
        words = shlex.split(command)
    except ValueError:
        words, simple = command.split(), False
    if len(words) == 3 and words[0] in SHELLS and words[1] in ("-c", "-lc"):
        return split_command(words[2])
    return tuple(words), simple


def command_words(command: str | Iterable[str]) -> tuple[str, ...]:
    """A rule's command prefix as words (``"git status"`` -> ``("git", "status")``)."""
    return tuple(shlex.split(command)) if isinstance(command, str) else tuple(command)


def has_prefix(words: tuple[str, ...] | None, prefix: tuple[str, ...]) -> bool:
    """True when ``words`` start with every word of ``prefix``."""
    return words is not None and bool(words) and bool(prefix) and words[: len(prefix)] == prefix


def command_prefix(words: tuple[str, ...]) -> tuple[str, ...]:
    """The words a remembered decision keeps: the program, plus its subcommand for ``git`` & co."""
    if len(words) > 1 and os.path.basename(words[0]) in SUBCOMMANDS and not words[1].startswith("-"):
        return words[:2]
    return words[:1]


def under(path: str, root: str) -> bool:
    """True when ``path`` is ``root`` or inside it (both normalised first)."""
    path, root = os.path.normpath(path), os.path.normpath(root)
    return path == root or path.startswith(root.rstrip("/") + "/")


def common_root(paths: tuple[str, ...]) -> str | None:
    """The directory holding every path (a file's own directory when there is one)."""
    if not paths:
        return None
    dirs = [os.path.dirname(p) or p for p in paths]
    try:
        return os.path.commonpath(dirs)
    except ValueError:  # mixed absolute and relative paths
        return None


def _paths(values: Iterable[Any]) -> list[str]:
    seen: dict[str, None] = {}
    for value in values:
        if isinstance(value, str) and value:
            seen[os.path.normpath(value)] = None
    return list(seen)


def _pick(value: Any, fallback: Any) -> Any:
    return value if value is not None else fallback
