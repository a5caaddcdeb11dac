"""Patch helpers shared by every upsert: `_meta` by top-level key, and value checks."""

from __future__ import annotations

from typing import Any


def patch_meta(current: dict[str, Any] | None, value: dict[str, Any] | None) -> dict | None:
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
    """Finish a ``to_dict``: the optional fields that are set, unknown extras, then ``_meta``."""
    for key, attr in optional:
        value = getattr(obj, attr)
        if value is not None:
            out[key] = value
    out.update(obj.extra)
    if obj.meta is not None:
        out["_meta"] = obj.meta
    return out
