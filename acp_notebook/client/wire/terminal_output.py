"""The v1 ``terminal_output`` extension: agent-run shell output, as Zed consumes it.

Offered with ``clientCapabilities._meta.terminal_output: true``; claude-agent-acp and codex-acp
then describe a shell command's terminal in the tool call's ``_meta`` instead of client-run
``terminal/*`` requests:

- the tool call: ``_meta.terminal_info {terminal_id, cwd?}`` and a ``{"type": "terminal",
  "terminalId"}`` content item;
- updates: ``_meta.terminal_output {terminal_id, data}`` — ``data`` is *text*, not base64; codex
  streams it in chunks, Claude sends it once when the command ends — and ``_meta.terminal_exit
  {terminal_id, exit_code, signal}``.

Each value is read as its update arrives (the tool call's stored ``_meta`` keeps only the last one
per key) and becomes the v2 terminal updates the reducer already knows: ``terminal_update``
(cwd, command, exit status) and ``terminal_output_chunk`` (the text's UTF-8 bytes). A malformed
value gives one problem and nothing else. Pure: no I/O.
"""

from __future__ import annotations

import base64
import shlex
from dataclasses import dataclass, field
from typing import Any

KEYS = ("terminal_info", "terminal_output", "terminal_exit")


@dataclass
class Translated:
    """The terminal updates one tool-call update implies, and what was wrong with it."""

    updates: list[dict[str, Any]] = field(default_factory=list)
    problems: list[tuple[str, Any]] = field(default_factory=list)


def translate(update: Any, known: Any = None) -> Translated:
    """The terminal updates carried in a v1 tool call's ``_meta`` (none for anything else).

    ``known`` is the tool call's stored ``_meta``: a later update that only brings the command
    (Claude sends ``rawInput`` after the ``terminal_info``) names the terminal announced before.
    """
    out = Translated()
    if not isinstance(update, dict) or update.get("sessionUpdate") not in ("tool_call", "tool_call_update"):
        return out
    meta = update.get("_meta") if isinstance(update.get("_meta"), dict) else {}
    for key in KEYS:
        if key in meta and meta[key] is not None:
            _read(key, meta[key], update, out)
    info = known.get("terminal_info") if isinstance(known, dict) else None
    if "terminal_info" not in meta and isinstance(info, dict) and isinstance(info.get("terminal_id"), str):
        command = _command(update.get("rawInput"))
        if command is not None:
            out.updates.append(
                {"sessionUpdate": "terminal_update", "terminalId": info["terminal_id"], "command": command}
            )
    return out


def _read(key: str, value: Any, update: dict[str, Any], out: Translated) -> None:
    terminal_id = value.get("terminal_id") if isinstance(value, dict) else None
    if not isinstance(terminal_id, str) or not terminal_id:
        out.problems.append((f"`_meta.{key}` needs a string `terminal_id` (ignored)", value))
        return
    base = {"sessionUpdate": "terminal_update", "terminalId": terminal_id}
    if key == "terminal_info":
        out.updates.append({**base, **_info_fields(value, update)})
    elif key == "terminal_output":
        data = value.get("data")
        if not isinstance(data, str):
            out.problems.append(("`_meta.terminal_output.data` must be text (ignored)", value))
            return
        chunk = base64.b64encode(data.encode("utf-8", "surrogatepass")).decode("ascii")
        out.updates.append(
            {"sessionUpdate": "terminal_output_chunk", "terminalId": terminal_id, "data": chunk}
        )
    else:
        status = _exit_status(value)
        if status is None:
            out.problems.append(("`_meta.terminal_exit` needs an integer `exit_code` or a `signal`", value))
            return
        out.updates.append({**base, "exitStatus": status})


def _info_fields(info: dict[str, Any], update: dict[str, Any]) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    if isinstance(info.get("cwd"), str):
        fields["cwd"] = info["cwd"]
    command = _command(update.get("rawInput"))
    if command is not None:
        fields["command"] = command
    return fields


def _command(raw_input: Any) -> str | None:
    command = raw_input.get("command") if isinstance(raw_input, dict) else None
    if isinstance(command, list) and command and all(isinstance(c, str) for c in command):
        return shlex.join(command)
    return command if isinstance(command, str) else None


def _exit_status(value: dict[str, Any]) -> dict[str, Any] | None:
    code, signal = value.get("exit_code"), value.get("signal")
    valid_code = isinstance(code, int) and not isinstance(code, bool)
    if not valid_code and not isinstance(signal, str):
        return None
    return {"exitCode": code if valid_code else None, "signal": signal if isinstance(signal, str) else None}
