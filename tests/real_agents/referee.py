"""The referee of the real-agent tests: what the wire said, folded with the protocol's rules.

Written from the spec, independently of the client (it imports nothing of ``acp_notebook``), so a
test can compare the client's state with it: ``fold(messages, session_id, version)`` applies every
``session/update`` and permission request of one session in arrival order — v2's upserts and
base64 terminals, or v1's patches and Zed's ``_meta.terminal_*`` extension for shell output.
"""

from __future__ import annotations

import base64
import re
from dataclasses import dataclass, field
from typing import Any

ROLES = {"user_message": "user", "user_message_chunk": "user", "agent_message_chunk": "agent"}
TOOL_CALL_DEFAULTS = {"kind": "other", "status": "pending", "content": [], "locations": []}
BASE64 = re.compile(r"(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?")


def strict_b64(data: str) -> bytes:
    """RFC 4648 base64 (the alphabet, a multiple of 4, ``=`` only at the end), decoded."""
    assert BASE64.fullmatch(data), f"not strict base64: {data[:80]!r}"
    return base64.b64decode(data)


@dataclass
class Folded:
    """One session's state as its wire left it."""

    tool_calls: dict[str, dict[str, Any]] = field(default_factory=dict)
    terminals: dict[str, dict[str, Any]] = field(default_factory=dict)  # "output" holds bytes
    messages: dict[str, dict[str, Any]] = field(default_factory=dict)
    session_messages: dict[str, dict[str, Any]] = field(default_factory=dict)  # this session's views
    states: list[dict[str, Any]] = field(default_factory=list)  # the state_updates, in order
    usage: dict[str, Any] = field(default_factory=dict)
    session_info: dict[str, Any] = field(default_factory=dict)
    lists: dict[str, list[Any]] = field(default_factory=dict)  # kind -> the last full list
    mode: str | None = None
    kinds: set[str] = field(default_factory=set)
    updates: int = 0


def _patch_meta(current: dict[str, Any] | None, value: Any) -> dict[str, Any] | None:
    """``_meta`` patches by top-level key: null clears it, a null key is removed."""
    if value is None:
        return None
    new = dict(current or {})
    for key, item in value.items():
        if item is None:
            new.pop(key, None)
        else:
            new[key] = item
    return new


def _set_meta(target: dict[str, Any], value: Any) -> None:
    meta = _patch_meta(target.get("_meta"), value)
    if meta is None:
        target.pop("_meta", None)
    else:
        target["_meta"] = meta


def _upsert_v2(target: dict[str, Any], update: dict[str, Any], skip: tuple[str, ...]) -> None:
    """v2 patch: omitted keeps, ``null`` clears (to the default), a value replaces; ``_meta`` by key."""
    for key, value in update.items():
        if key in skip:
            continue
        if key == "_meta":
            _set_meta(target, value)
        elif value is None and key in TOOL_CALL_DEFAULTS and "toolCallId" in target:
            target[key] = TOOL_CALL_DEFAULTS[key]
        elif value is None:
            target.pop(key, None)
        else:
            target[key] = value


def _patch_v1(target: dict[str, Any], update: dict[str, Any]) -> None:
    """v1 ``tool_call_update``: ``null`` means unchanged; ``_meta`` by key."""
    for key, value in update.items():
        if key == "_meta" and isinstance(value, dict):
            _set_meta(target, value)
        elif key != "sessionUpdate" and value is not None:
            target[key] = value


def _tool_call(folded: Folded, tc_id: str) -> dict[str, Any]:
    return folded.tool_calls.setdefault(tc_id, {"toolCallId": tc_id, **TOOL_CALL_DEFAULTS})


def _terminal(folded: Folded, terminal_id: str) -> dict[str, Any]:
    return folded.terminals.setdefault(terminal_id, {"terminalId": terminal_id, "output": b""})


def _referenced_terminals(folded: Folded, content: Any) -> None:
    for item in content or []:
        if isinstance(item, dict) and item.get("type") == "terminal":
            _terminal(folded, item["terminalId"])


def fold(messages: list[dict[str, Any]], session_id: str, version: int = 2) -> Folded:
    """Fold the agent's ``session/update``s and permission requests for ``session_id``, in
    arrival order, with the rules of ``version`` (a permission's ``toolCall`` is an update too)."""
    folded = Folded()
    for message in messages:
        params = message.get("params") if isinstance(message.get("params"), dict) else {}
        if params.get("sessionId") != session_id:
            continue
        if message.get("method") == "session/request_permission":
            if version == 2:
                subject = params.get("subject") or {}
                if subject.get("type") == "tool_call":
                    call = subject["toolCall"]
                    _upsert_v2(_tool_call(folded, call["toolCallId"]), call, ("toolCallId",))
                    _referenced_terminals(folded, call.get("content"))
            else:
                call = params["toolCall"]
                _patch_v1(_tool_call(folded, call["toolCallId"]), call)
        elif message.get("method") == "session/update":
            folded.updates += 1
            (_fold_v2 if version == 2 else _fold_v1)(folded, params["update"])
    return folded


def _session_message(folded: Folded, update: dict[str, Any]) -> None:
    """An upsert by ``messageId`` (ids patch, ``content`` replaces whole, ``_meta`` by key; ``null``
    clears), or a chunk appending its one block; a chunk may come before the upsert."""
    message_id = update["messageId"]
    message = folded.session_messages.setdefault(
        message_id, {"sessionUpdate": "session_message", "messageId": message_id}
    )
    if update["sessionUpdate"] == "session_message_chunk":
        message["content"] = [*message.get("content", []), update["content"]]
    else:
        _upsert_v2(message, update, ("sessionUpdate", "messageId"))


def _fold_common(folded: Folded, update: dict[str, Any]) -> bool:
    kind = update["sessionUpdate"]
    folded.kinds.add(kind)
    if kind in ROLES:  # a whole user message replaces its content; chunks append to theirs
        message = folded.messages.setdefault(
            update["messageId"], {"messageId": update["messageId"], "role": ROLES[kind], "content": []}
        )
        if kind == "user_message":
            message["content"] = list(update["content"])
        else:
            message["content"].append(update["content"])
    elif kind in ("session_message", "session_message_chunk"):  # unstable: SessionMessage(Chunk)
        _session_message(folded, update)
    elif kind == "usage_update":  # used and size are required; cost: omitted keeps, null clears
        folded.usage.update({"used": update["used"], "size": update["size"]})
        if "cost" in update:
            folded.usage["cost"] = update["cost"]
    elif kind == "session_info_update":
        _upsert_v2(folded.session_info, update, ("sessionUpdate",))
    elif kind in ("available_commands_update", "config_option_update"):
        folded.lists[kind] = update["availableCommands" if kind[0] == "a" else "configOptions"]
    elif kind == "current_mode_update":
        folded.mode = update["currentModeId"]
    else:
        return False
    return True


def _fold_v2(folded: Folded, update: dict[str, Any]) -> None:
    kind = update["sessionUpdate"]
    if _fold_common(folded, update):
        return
    if kind == "tool_call_update":  # an upsert
        _upsert_v2(_tool_call(folded, update["toolCallId"]), update, ("sessionUpdate", "toolCallId"))
        _referenced_terminals(folded, update.get("content"))
    elif kind == "terminal_update":  # an upsert; `output` is a whole snapshot in base64
        terminal = _terminal(folded, update["terminalId"])
        for key, value in update.items():
            if key == "output":
                terminal["output"] = b"" if value is None else strict_b64(value["data"])
            elif key not in ("sessionUpdate", "terminalId"):
                _upsert_v2(terminal, {key: value}, ())
    elif kind == "terminal_output_chunk":  # each chunk decoded alone, appended
        _terminal(folded, update["terminalId"])["output"] += strict_b64(update["data"])
    elif kind == "state_update":
        folded.states.append(update)


def _fold_v1(folded: Folded, update: dict[str, Any]) -> None:
    """v1, and Zed's ``_meta.terminal_*`` extension for agent-run shell output."""
    kind = update["sessionUpdate"]
    if _fold_common(folded, update):
        return
    if kind == "tool_call":  # creates, or replaces whole
        folded.tool_calls[update["toolCallId"]] = {"toolCallId": update["toolCallId"], **TOOL_CALL_DEFAULTS}
    _patch_v1(_tool_call(folded, update["toolCallId"]), update)
    meta = update.get("_meta") or {}
    if meta.get("terminal_info"):
        _terminal(folded, meta["terminal_info"]["terminal_id"])
    if meta.get("terminal_output"):  # text, not base64; appended
        out = meta["terminal_output"]
        _terminal(folded, out["terminal_id"])["output"] += out["data"].encode()
    if meta.get("terminal_exit"):
        done = meta["terminal_exit"]
        _terminal(folded, done["terminal_id"])["exitStatus"] = {
            "exitCode": done["exit_code"],
            "signal": done["signal"],
        }
    for terminal_id, terminal in folded.terminals.items():  # its command: the tool call's rawInput
        command = (folded.tool_calls.get(terminal_id, {}).get("rawInput") or {}).get("command")
        if command is not None:
            terminal["command"] = command
