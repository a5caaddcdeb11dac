"""The trace format: one JSON object per line, pure functions only (no I/O).

A trace starts with one header line, then one entry per line of the connection, in order::

    {"acp_trace": 1, "client": "acp_notebook", "client_version": "0.1.0", "command": [...]}
    {"dir": "out", "t": 0.0012, "kind": "message", "message": {...}}
    {"dir": "in",  "t": 0.0154, "kind": "message", "message": {...}, "session": "sess_1"}
    {"dir": "in",  "t": 0.0160, "kind": "stdout", "text": "a line that is not JSON"}
    {"dir": "in",  "t": 0.0161, "kind": "stderr", "text": "a line the agent wrote to stderr"}

``dir`` is ``out`` (the client sent it) or ``in`` (the agent did); ``t`` is seconds since the
recording started (monotonic); ``message`` is the line decoded as JSON (an object, or a batch
array); ``session`` is the session the message belongs to, where one is known (its own
``sessionId``, or the request it answers). Secrets never enter an entry: ``redact`` replaces
the values of login ``_meta`` keys and the ``headers``/``env`` values of MCP server entries by
``"<redacted>"`` and lists what it replaced under ``redacted`` (paths such as
``params.mcpServers[0].headers[0].value``); an agent's login status notification keeps its kind,
state and labels only, never what may name a person (``authStatus.detail``/``account``, an
account's ``name``/``email``/``organization``, anything else, any text with an ``@``). The
client's answer to a permission request also carries ``decided_by`` (``"user"``, ``"policy"``,
``"handler"``, ``"memory"``, ``"cancel"``...), so a replay shows who answered. A message nested
deeper than ``depth.MAX_DEPTH`` is recorded with those parts cut, as the client handled it, and
``cut`` says how many. Readers keep unknown keys: the format only grows.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable
from typing import Any

from .depth import Decoded, loads_bounded

FORMAT_VERSION = 1
REDACTED = "<redacted>"
LOGIN_METHODS = frozenset({"authenticate", "auth/login"})
SESSION_METHODS = frozenset({"session/new", "session/load", "session/resume"})
AUTH_STATUS_METHODS = frozenset({"_auth/status_update", "auth/status_update"})
PAIRS_KEPT = 10_000  # requests awaiting an answer remembered for the session tag


def header(client_version: str, command: list[str] | None, **extra: Any) -> dict[str, Any]:
    """The first line of a trace (never the environment: only the agent's argv)."""
    head = {"acp_trace": FORMAT_VERSION, "client": "acp_notebook", "client_version": client_version}
    head["command"] = list(command or [])
    head.update(extra)
    return head


def decode(direction: str, t: float, line: bytes, plain: Decoded | None = None) -> dict[str, Any]:
    """One connection line as an entry: a ``message``, or ``stdout`` when it is not JSON.

    ``plain`` is the line's JSON value and cuts when the connection already has them (as
    ``loads_bounded`` reads the line), so the line is not decoded a second time.
    """
    if plain is None:
        text = line.decode("utf-8", "replace").rstrip("\r\n")
        try:
            plain = loads_bounded(text)
        except ValueError:
            return {"dir": direction, "t": round(t, 6), "kind": "stdout", "text": text}
    message, cuts = plain
    entry: dict[str, Any] = {"dir": direction, "t": round(t, 6), "kind": "message", "message": message}
    if cuts:
        entry["cut"] = cuts
    message, paths = redact(message)
    if paths:
        entry["message"], entry["redacted"] = message, paths
    return entry


def stderr(t: float, text: str) -> dict[str, Any]:
    """One line the agent wrote to stderr."""
    return {"dir": "in", "t": round(t, 6), "kind": "stderr", "text": text}


def redact(message: Any) -> tuple[Any, list[str]]:
    """A copy of ``message`` without its secrets, and the paths of what was replaced."""
    if isinstance(message, list):
        out: list[Any] = []
        where: list[str] = []
        for i, item in enumerate(message):
            clean, found = redact(item)
            out.append(clean)
            where += [f"[{i}].{p}" for p in found]
        return out, where
    if not isinstance(message, dict) or not isinstance(message.get("params"), dict):
        return message, []
    method = message.get("method")
    if method in AUTH_STATUS_METHODS:
        return _without_identity(message)
    if method not in LOGIN_METHODS and method not in SESSION_METHODS:
        return message, []
    message = copy.deepcopy(message)
    params = message["params"]
    paths: list[str] = []
    if method in LOGIN_METHODS and isinstance(params.get("_meta"), dict):
        paths += _blank_values(params["_meta"], "params._meta")
    servers = params.get("mcpServers")
    for i, server in enumerate(servers if isinstance(servers, list) else []):
        if isinstance(server, dict):
            for key in ("headers", "env"):
                if key in server:
                    paths += _blank_values(server[key], f"params.mcpServers[{i}].{key}", named=True)
    return message, paths


def _without_identity(message: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """A login status notification with only what names no person: ``authStatus.kind``/``label``,
    ``state``, each account's ``label``/``active`` (a value with an ``@`` is blanked too)."""
    message = copy.deepcopy(message)
    paths = _keep_only(message["params"], ("authStatus", "state", "accounts"), "params")
    paths += _keep_only(message["params"].get("authStatus"), ("kind", "label"), "params.authStatus")
    accounts = message["params"].get("accounts")
    for i, account in enumerate(accounts if isinstance(accounts, list) else []):
        paths += _keep_only(account, ("label", "active"), f"params.accounts[{i}]")
    return message, paths


def _keep_only(holder: Any, keys: tuple[str, ...], path: str) -> list[str]:
    """Blank every value of ``holder`` but those of ``keys`` (a kept text with an ``@`` too)."""
    if not isinstance(holder, dict):
        return []
    found = []
    for key, value in holder.items():
        if (
            key not in keys
            or (isinstance(value, str) and "@" in value)
            or (key in ("authStatus", "accounts") and not isinstance(value, (dict, list)))
        ):
            found.append(key)
    for key in found:
        holder[key] = REDACTED
    return [f"{path}.{key}" for key in found]


def _blank_values(holder: Any, path: str, named: bool = False) -> list[str]:
    """Replace every value of a dict (or of each ``{name, value}`` item of a list)."""
    paths: list[str] = []
    if isinstance(holder, dict):
        for key in holder:
            holder[key] = REDACTED
            paths.append(f"{path}.{key}")
    elif isinstance(holder, list) and named:
        for i, item in enumerate(holder):
            if isinstance(item, dict) and "value" in item:
                item["value"] = REDACTED
                paths.append(f"{path}[{i}].value")
            elif not isinstance(item, dict):
                holder[i] = REDACTED
                paths.append(f"{path}[{i}]")
    return paths


class SessionTagger:
    """Finds the session of each message: its ``sessionId``, or that of the request it answers."""

    def __init__(self) -> None:
        self._open: dict[tuple[str, Any], str] = {}  # (who asked, request id) -> session

    def tag(self, entry: dict[str, Any]) -> None:
        """Add ``session`` to a message entry where one is known."""
        message = entry.get("message")
        if not isinstance(message, dict):
            return
        session = _session_id(message)
        if "method" in message and "id" in message:
            if session is not None and len(self._open) < PAIRS_KEPT:
                self._open[(entry["dir"], id_key(message["id"]))] = session
        elif "id" in message:
            asker = "in" if entry["dir"] == "out" else "out"
            session = self._open.pop((asker, id_key(message["id"])), None) or session
        if session is not None:
            entry["session"] = session


def id_key(value: Any) -> Any:
    """A JSON-RPC id usable as a dict key."""
    return json.dumps(value, sort_keys=True) if isinstance(value, dict | list) else value


def _session_id(message: dict[str, Any]) -> str | None:
    for part in ("params", "result"):
        body = message.get(part)
        if isinstance(body, dict) and isinstance(body.get("sessionId"), str):
            return body["sessionId"]
    return None


def parse(lines: Iterable[str]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A trace's header and entries; raises ``ValueError`` for a file that is not a trace."""
    rows = [json.loads(line) for line in lines if line.strip()]
    if not rows or not isinstance(rows[0], dict) or "acp_trace" not in rows[0]:
        raise ValueError("not an acp_notebook trace: the first line has no 'acp_trace' header")
    if not isinstance(rows[0]["acp_trace"], int) or rows[0]["acp_trace"] > FORMAT_VERSION:
        raise ValueError(f"trace format {rows[0]['acp_trace']!r} is newer than this client reads")
    return rows[0], [r for r in rows[1:] if isinstance(r, dict)]


def dumps(entry: dict[str, Any]) -> str:
    """One entry as its line (compact, UTF-8 kept readable), without the newline."""
    return json.dumps(entry, ensure_ascii=False, separators=(",", ":"))
