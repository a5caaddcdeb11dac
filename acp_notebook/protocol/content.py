"""Tool-call content items and locations: checks that never drop what was received.

An item is kept exactly as received whatever its shape; these functions only say what is wrong
with it, so the state can record a diagnostic. Unknown ``type`` values are preserved (the seed).
"""

from __future__ import annotations

from typing import Any

from .patch import is_absolute, type_name

KNOWN_CONTENT_TYPES = frozenset({"content", "diff", "terminal"})
DIFF_OPERATIONS = frozenset({"add", "delete", "modify", "move", "copy"})
PAIR_OPERATIONS = frozenset({"move", "copy"})


def content_problem(item: Any) -> str | None:
    """Why a tool-call content item is malformed, or None if it is well formed."""
    if not isinstance(item, dict):
        return f"content item is {type_name(item)}, not an object"
    kind = item.get("type")
    if not isinstance(kind, str):
        return "content item has no string `type`"
    if kind == "content":
        block = item.get("content")
        if not isinstance(block, dict) or not isinstance(block.get("type"), str):
            return "`content` item needs a content block with a `type`"
    elif kind == "terminal":
        if not isinstance(item.get("terminalId"), str):
            return "`terminal` item needs a string `terminalId`"
    elif kind == "diff":
        return diff_problem(item)
    return None


def diff_problem(item: dict[str, Any]) -> str | None:
    """Why a diff item (v2 ``changes``/``patch`` or v1 ``path``/``newText``) is malformed."""
    if "changes" not in item and "path" in item:
        if not isinstance(item.get("path"), str) or not isinstance(item.get("newText"), str):
            return "v1 diff needs string `path` and `newText`"
        old = item.get("oldText")
        return None if old is None or isinstance(old, str) else "v1 diff `oldText` not a string"
    changes = item.get("changes")
    if not isinstance(changes, list):
        return "diff needs a `changes` array"
    for change in changes:
        problem = change_problem(change)
        if problem:
            return problem
    patch = item.get("patch")
    if patch is not None and not (
        isinstance(patch, dict)
        and isinstance(patch.get("format"), str)
        and isinstance(patch.get("text"), str)
    ):
        return "diff `patch` needs string `format` and `text`"
    return None


def change_problem(change: Any) -> str | None:
    """Why one entry of a diff's ``changes`` is malformed (unknown operations are fine)."""
    if not isinstance(change, dict) or not isinstance(change.get("operation"), str):
        return "diff change needs a string `operation`"
    if not is_absolute(change.get("path")):
        return "diff change needs an absolute `path`"
    if change["operation"] in PAIR_OPERATIONS and not is_absolute(change.get("oldPath")):
        return f"`{change['operation']}` change needs an absolute `oldPath`"
    return None


def location_problem(location: Any) -> str | None:
    """Why a tool-call location is malformed, or None."""
    if not isinstance(location, dict) or not isinstance(location.get("path"), str):
        return "location needs a string `path`"
    if not is_absolute(location["path"]):
        return "location `path` must be absolute"
    line = location.get("line")
    if line is not None and (not isinstance(line, int) or isinstance(line, bool) or line < 1):
        return "location `line` must be a positive integer"
    return None


def terminal_refs(items: list[Any]) -> list[str]:
    """The terminal ids referenced by `terminal` content items, in order."""
    return [
        item["terminalId"]
        for item in items
        if isinstance(item, dict)
        and item.get("type") == "terminal"
        and isinstance(item.get("terminalId"), str)
    ]
