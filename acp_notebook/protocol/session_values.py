"""Session-wide updates: run state, commands, config options, mode, info, usage — the rules.

``state_update`` sets ``run_state`` (an unknown state is kept verbatim and is not idle) and
``background`` (a complete snapshot; omitted, null or malformed — not an array, or an item without
a string ``type``, or a ``terminal``/``tool_call`` item without its id — means *not reported*:
``None``, never ``[]``, which says nothing runs). An idle that ends foreground work (the state
before was not idle) sets ``stop_reason``, and ``stop_error`` for an ``error`` stop when it is an
object; a repeated idle is not a turn end: it changes them only when it carries a string
``stopReason`` (an agent that skipped ``running``), so a bare repeat (only ``background``
changed) keeps the last ones;
``available_commands_update`` and ``config_option_update`` replace their list (entries that are
not objects, commands without a string ``name``, options without a string ``configId`` (v1
``id``) are skipped); ``current_mode_update`` keeps the latest mode; ``session_info_update`` and
``usage_update`` patch a flat record (omit keeps, null removes, ``_meta`` by key; a wrong-typed
``title``, ``updatedAt`` or ``cost`` counts as omitted; a usage update without integer ``used``
and ``size`` is ignored). Each function
reads one update and returns the attribute values to set; ``SessionState`` sets them.
"""

from __future__ import annotations

from typing import Any

from .diagnostics import Report
from .patch import int_in_range, patch_fields, type_name

RUN_STATES = frozenset({"idle", "running", "requires_action"})
GENERIC_KINDS = frozenset({"compaction_update", "compaction_summary_chunk"})
SESSION_KINDS = frozenset(
    {
        "state_update",
        "available_commands_update",
        "config_option_update",
        "session_info_update",
        "usage_update",
        "current_mode_update",
    }
)
_LISTS = {
    "available_commands_update": ("availableCommands", "available_commands"),
    "config_option_update": ("configOptions", "config_options"),
}
RECORD_ATTRS = {"session_info_update": "session_info", "usage_update": "usage"}
# optional fields whose wrong-typed value counts as omitted (schema: default-on-error)
_RECORD_TYPES: dict[str, dict[str, type]] = {
    "session_info_update": {"title": str, "updatedAt": str, "_meta": dict},
    "usage_update": {"cost": dict, "_meta": dict},
}
UINT64_MAX = 2**64 - 1
BACKGROUND_IDS = {"terminal": "terminalId", "tool_call": "toolCallId"}  # BackgroundWork item -> its id


def read_session_update(
    update: dict[str, Any], records: dict[str, Any], report: Report
) -> dict[str, Any] | None:
    """The ``SessionState`` attributes one update sets, or None when it changes nothing.

    ``records`` holds the current ``session_info`` and ``usage``, which their updates patch, and
    the ``run_state`` before this update.
    """
    if update["sessionUpdate"] == "state_update":
        return _read_state_update(update, records.get("run_state"), report)
    result = _read_session_value(update, records, report)
    return None if result is None else dict([result])


def _read_state_update(update: dict[str, Any], before: Any, report: Report) -> dict[str, Any] | None:
    state = update.get("state")
    if not isinstance(state, str):
        report("malformed-update", "state_update without string `state`", update)
        return None
    if state not in RUN_STATES and not state.startswith("_"):
        report("unknown-state", f"unknown run state {state!r} (kept)", update, "info")
    values: dict[str, Any] = {"run_state": state, "background": read_background(update, report)}
    reason = update.get("stopReason")
    if state == "idle" and (before != "idle" or isinstance(reason, str)):
        error = update.get("error")
        values["stop_reason"] = reason if isinstance(reason, str) else None
        values["stop_error"] = error if reason == "error" and isinstance(error, dict) else None
    return values


def read_background(update: dict[str, Any], report: Report) -> list[Any] | None:
    """A ``state_update``'s ``background`` list, or None when it is not reported (or malformed)."""
    background = update.get("background")
    if background is None:
        return None
    if not isinstance(background, list) or not all(_background_item(i) for i in background):
        report("invalid-field", "`background` is malformed (read as not reported)", update)
        return None
    return list(background)


def _background_item(item: Any) -> bool:
    if not isinstance(item, dict) or not isinstance(item.get("type"), str):
        return False
    key = BACKGROUND_IDS.get(item["type"])
    return key is None or isinstance(item.get(key), str)


def background_sessions(background: list[Any] | None) -> frozenset[str]:
    """The subagent sessions a ``background`` snapshot lists (``BackgroundSubagent`` items)."""
    return frozenset(
        item["sessionId"]
        for item in background or []
        if isinstance(item, dict)
        and item.get("type") == "subagent"
        and isinstance(item.get("sessionId"), str)
    )


def background_ids(background: list[Any] | None) -> set[tuple[str, str]]:
    """The ``(type, id)`` of each terminal and tool call a ``background`` snapshot lists."""
    ids = set()
    for item in background or []:
        kind = item.get("type") if isinstance(item, dict) else None
        key = BACKGROUND_IDS.get(kind) if isinstance(kind, str) else None
        if key is not None and isinstance(item.get(key), str):
            ids.add((item["type"], item[key]))
    return ids


def _read_session_value(
    update: dict[str, Any], records: dict[str, Any], report: Report
) -> tuple[str, Any] | None:
    kind = update["sessionUpdate"]
    if kind in RECORD_ATTRS:
        if kind == "usage_update" and not all(
            int_in_range(update.get(k), 0, UINT64_MAX) for k in ("used", "size")
        ):
            report("malformed-update", "usage_update needs integer `used` and `size` (ignored)", update)
            return None
        attr = RECORD_ATTRS[kind]
        return attr, _patched_record(records.get(attr), update, report)
    if kind == "current_mode_update":
        mode = update.get("currentModeId", update.get("modeId"))  # `modeId`: the v1 docs' example
        if not isinstance(mode, str):
            report("invalid-field", "`currentModeId` must be a string (mode unchanged)", update)
            return None
        return "current_mode_id", mode
    key, attr = _LISTS[kind]
    entries = update.get(key)
    if not isinstance(entries, list):
        report("invalid-field", f"`{key}` must be an array", update)
        return None
    return attr, _clean_list(kind, entries, report)


def _patched_record(current: Any, update: dict[str, Any], report: Report) -> dict[str, Any]:
    skip = ["sessionUpdate"]
    for key, expected in _RECORD_TYPES[update["sessionUpdate"]].items():
        value = update.get(key)
        if value is not None and not isinstance(value, expected):
            report("invalid-field", f"`{key}` is {type_name(value)} (ignored)", update)
            skip.append(key)
    record = dict(current or {})
    patch_fields(record, update, skip=tuple(skip))
    return record


def _clean_list(kind: str, entries: list[Any], report: Report) -> list[Any]:
    keys = ("name",) if kind == "available_commands_update" else ("configId", "id")
    kept = []
    for entry in entries:
        if isinstance(entry, dict) and any(isinstance(entry.get(k), str) for k in keys):
            kept.append(entry)
        else:
            report("invalid-field", f"{kind} entry needs a string `{keys[0]}` (skipped)", entry)
    return kept
