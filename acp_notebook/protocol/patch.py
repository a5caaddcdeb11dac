"""Patch helpers shared by every upsert: `_meta` by top-level key, value checks, snapshots."""

from __future__ import annotations

import copy
from typing import Any

from .diagnostics import Report

_ATOMS = (str, int, float, bool, type(None), bytes)


def patch_meta(current: dict[str, Any] | None, value: dict[str, Any] | None) -> dict[str, Any] | None:
    """Apply a `_meta` patch: null clears; an object sets its keys, a null key is removed.

    Nested objects are replaced, never merged (schema text of ``ToolCallUpdate._meta``).
    """
    if value is None:
        return None
    new = dict(current) if current else {}
    for key, item in value.items():
        if item is None:
            new.pop(key, None)
        else:
            new[key] = item
    return new


def type_name(value: Any) -> str:
    """The JSON name of a Python value's type, for diagnostics."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def int_in_range(value: Any, low: int, high: int) -> bool:
    """True for a JSON integer (not a boolean, not a float) within ``[low, high]``."""
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high


def json_copy(value: Any) -> Any:
    """A deep copy of a JSON-like value (fast for dicts, lists and scalars, any depth)."""
    try:
        return _copy(value)
    except RecursionError:  # deeper than Python's stack: copy without recursion
        return _copy_deep(value)


def _copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _copy(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_copy(item) for item in value]
    if isinstance(value, _ATOMS):
        return value
    return copy.deepcopy(value)


def _copy_deep(value: Any) -> Any:
    root: list[Any] = [None]
    stack: list[tuple[Any, Any, Any]] = [(root, 0, value)]  # (container, key, value to copy there)
    while stack:
        target, key, item = stack.pop()
        if isinstance(item, dict):
            new: dict[Any, Any] = dict.fromkeys(item)  # keys in order; values filled below
            target[key] = new
            stack.extend((new, k, v) for k, v in item.items())
        elif isinstance(item, list):
            target[key] = new_list = [None] * len(item)
            stack.extend((new_list, i, v) for i, v in enumerate(item))
        else:
            target[key] = item if isinstance(item, _ATOMS) else copy.deepcopy(item)
    return root[0]


def is_absolute(path: Any) -> bool:
    """True for an absolute POSIX or Windows path string."""
    if not isinstance(path, str) or not path:
        return False
    return (
        path.startswith("/")
        or path.startswith("\\\\")
        or (len(path) > 2 and path[1] == ":" and path[2] in "\\/")
    )


def cancel_supported(capabilities: Any) -> bool:
    """True when ``capabilities.cancel`` is a well-formed object (a malformed one means no)."""
    return isinstance(capabilities, dict) and isinstance(capabilities.get("cancel"), dict)


def read_capabilities(value: Any, owner: str, report: Report) -> dict[str, Any] | None:
    """``capabilities`` as stored: a malformed value falls back to no controls (schema)."""
    if not isinstance(value, dict):
        report("invalid-field", f"{owner} `capabilities` is {type_name(value)} (no controls)", value)
        return None
    cancel = value.get("cancel")
    if cancel is not None and not isinstance(cancel, dict):
        report("invalid-field", f"{owner} `capabilities.cancel` is {type_name(cancel)} (unsupported)", value)
        return {k: v for k, v in value.items() if k != "cancel"}
    return value


def patch_fields(target: dict[str, Any], update: dict[str, Any], skip: tuple[str, ...] = ()) -> None:
    """Patch a flat record: an omitted key keeps, null removes, a value replaces; `_meta` by key."""
    for key, value in update.items():
        if key in skip:
            continue
        if key == "_meta" and isinstance(value, dict):
            value = patch_meta(target.get("_meta"), value)
        if value is None:
            target.pop(key, None)
        else:
            target[key] = value


def wire_fields(out: dict[str, Any], obj: Any, optional: tuple[tuple[str, str], ...]) -> dict[str, Any]:
    """Finish a ``to_dict``: the optional fields that are set, unknown extras, then ``_meta``.

    Every value is a deep copy: changing the returned dict never changes ``obj``.
    """
    for key, attr in optional:
        value = getattr(obj, attr)
        if value is not None:
            out[key] = json_copy(value)
    out.update(json_copy(obj.extra))
    if obj.meta is not None:
        out["_meta"] = json_copy(obj.meta)
    return out
