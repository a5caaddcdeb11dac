"""Tool-call content items, content blocks and locations: what to keep of what was received.

The schema's fallbacks (``x-deserialize-skip-invalid-items`` on ``content``, ``locations``,
``Diff.changes`` and message ``content``): an invalid item is *skipped* (+ a diagnostic, whose
``detail`` keeps it). Invalid means not an object, no string ``type``, or a known type
(``content``, ``diff``, ``terminal``; blocks ``text``, ``image``, ``audio``, ``resource_link``,
``resource``) without its required fields. Unknown types are kept verbatim (the seed). A valid
item is kept as received, except that an invalid entry of a diff's ``changes`` is dropped, and
a malformed optional ``patch`` (diff) or ``line`` (location) reads as absent.
"""

from __future__ import annotations

from typing import Any

from .diagnostics import Report
from .patch import int_in_range, is_absolute, type_name

KNOWN_CONTENT_TYPES = frozenset({"content", "diff", "terminal"})
DIFF_OPERATIONS = frozenset({"add", "delete", "modify", "move", "copy"})
PAIR_OPERATIONS = frozenset({"move", "copy"})
# known content block types -> their required string fields
BLOCK_FIELDS: dict[str, tuple[str, ...]] = {
    "text": ("text",),
    "image": ("data", "mimeType"),
    "audio": ("data", "mimeType"),
    "resource_link": ("name", "uri"),
    "resource": ("resource",),
}
UINT32_MAX = 2**32 - 1


def block_problem(block: Any) -> str | None:
    """Why a content block (text, image, ...) is invalid, or None (unknown types are valid)."""
    if not isinstance(block, dict):
        return f"content block is {type_name(block)}, not an object"
    kind = block.get("type")
    if not isinstance(kind, str):
        return "content block has no string `type`"
    if kind == "resource":
        return _resource_problem(block.get("resource"))
    for key in BLOCK_FIELDS.get(kind, ()):
        if not isinstance(block.get(key), str):
            return f"`{kind}` block needs a string `{key}`"
    return None


def _resource_problem(resource: Any) -> str | None:
    if not isinstance(resource, dict) or not isinstance(resource.get("uri"), str):
        return "`resource` block needs a `resource` with a string `uri`"
    if not isinstance(resource.get("text"), str) and not isinstance(resource.get("blob"), str):
        return "`resource` block needs a string `text` or `blob`"
    return None


def content_problem(item: Any) -> str | None:
    """Why a tool-call content item is invalid (it is then skipped), or None."""
    if not isinstance(item, dict):
        return f"content item is {type_name(item)}, not an object"
    kind = item.get("type")
    if not isinstance(kind, str):
        return "content item has no string `type`"
    if kind == "content":
        problem = block_problem(item.get("content"))
        return None if problem is None else f"`content` item: {problem}"
    if kind == "terminal":
        return None if isinstance(item.get("terminalId"), str) else "`terminal` item needs a `terminalId`"
    if kind == "diff":
        return diff_problem(item)
    return None


def diff_problem(item: dict[str, Any]) -> str | None:
    """Why a diff item (v2 ``changes`` or v1 ``path``/``newText``) is invalid, or None."""
    if "changes" not in item and "path" in item:
        if not isinstance(item.get("path"), str) or not isinstance(item.get("newText"), str):
            return "v1 diff needs string `path` and `newText`"
        old = item.get("oldText")
        return None if old is None or isinstance(old, str) else "v1 diff `oldText` not a string"
    return None if isinstance(item.get("changes"), list) else "diff needs a `changes` array"


def change_problem(change: Any) -> str | None:
    """Why one entry of a diff's ``changes`` is invalid (custom operations need only a name)."""
    if not isinstance(change, dict) or not isinstance(change.get("operation"), str):
        return "diff change needs a string `operation`"
    operation = change["operation"]
    if operation in DIFF_OPERATIONS and not isinstance(change.get("path"), str):
        return f"`{operation}` change needs a string `path`"
    if operation in PAIR_OPERATIONS and not isinstance(change.get("oldPath"), str):
        return f"`{operation}` change needs a string `oldPath`"
    return None


def clean_content(items: list[Any], report: Report) -> list[Any]:
    """The items to keep of a received ``content`` array (invalid ones skipped, reported)."""
    kept = []
    for item in items:
        item = clean_item(item, report)
        if item is not None:
            kept.append(item)
    return kept


def clean_item(item: Any, report: Report) -> Any:
    """The item to store for one received content item, or None to skip it."""
    problem = content_problem(item)
    if problem is not None:
        report("malformed-content", problem + " (skipped)", item)
        return None
    if item["type"] == "diff" and "changes" in item:
        return _clean_diff(item, report)
    return item


def _clean_diff(item: dict[str, Any], report: Report) -> dict[str, Any]:
    changes = []
    for change in item["changes"]:
        problem = change_problem(change)
        if problem:
            report("malformed-content", problem + " (change skipped)", change)
            continue
        for key in ("path", "oldPath"):
            if key in change and not is_absolute(change[key]):
                report("relative-path", f"diff change `{key}` {change[key]!r} is not absolute (kept)", change)
        changes.append(change)
    patch = item.get("patch")
    bad_patch = patch is not None and not (
        isinstance(patch, dict)
        and isinstance(patch.get("format"), str)
        and isinstance(patch.get("text"), str)
    )
    if len(changes) == len(item["changes"]) and not bad_patch:
        return item
    out = {**item, "changes": changes}
    if bad_patch:
        report("malformed-content", "diff `patch` needs string `format` and `text` (ignored)", patch)
        del out["patch"]
    return out


def clean_blocks(blocks: list[Any], report: Report) -> list[Any]:
    """The content blocks to keep of a received message ``content`` array."""
    kept = []
    for block in blocks:
        problem = block_problem(block)
        if problem is None:
            kept.append(block)
        else:
            report("malformed-content", problem + " (skipped)", block)
    return kept


def clean_locations(locations: list[Any], report: Report) -> list[Any]:
    """The locations to keep: no string ``path`` skips one; a malformed ``line`` reads as absent."""
    kept = []
    for location in locations:
        if not isinstance(location, dict) or not isinstance(location.get("path"), str):
            report("malformed-location", "location needs a string `path` (skipped)", location)
            continue
        if not is_absolute(location["path"]):
            report("relative-path", f"location path {location['path']!r} is not absolute (kept)", location)
        line = location.get("line")
        if line is not None and not int_in_range(line, 1, UINT32_MAX):
            report("malformed-location", "location `line` must be a positive integer (ignored)", location)
            location = {k: v for k, v in location.items() if k != "line"}
        kept.append(location)
    return kept


def terminal_refs(items: list[Any]) -> list[str]:
    """The terminal ids referenced by `terminal` content items, in order."""
    return [
        item["terminalId"]
        for item in items
        if isinstance(item, dict)
        and item.get("type") == "terminal"
        and isinstance(item.get("terminalId"), str)
    ]
