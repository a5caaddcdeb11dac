"""ACP v1 quirks, normalised before the shared reducer sees them.

A v1 ``tool_call_update`` uses ``null`` for "unchanged" (v2 uses it for "clear"), so its null
fields are dropped. v1 ``tool_call`` creates or replaces a tool call whole, v1 ``plan`` and
``current_mode_update`` and id-less message chunks are understood by ``SessionState`` itself.
v1 diffs ``{path, oldText, newText}`` stay as received; ``unified_patch`` renders them.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import Any


def normalize_v1_update(update: Any) -> Any:
    """The v2-rules equivalent of one v1 update object (other kinds pass through)."""
    if isinstance(update, dict) and update.get("sessionUpdate") == "tool_call_update":
        return {k: v for k, v in update.items() if v is not None}
    return update


def unified_patch(item: dict[str, Any]) -> str:
    """A git-style unified patch for a v1 diff item ``{path, oldText, newText}``."""
    path = item.get("path", "")
    old, new = item.get("oldText"), item.get("newText") or ""
    old_lines = (old or "").splitlines(keepends=True)
    new_lines = new.splitlines(keepends=True)
    header = [f"diff --git a{path} b{path}\n"]
    if old is None:
        header.append("new file mode 100644\n")
    body = difflib.unified_diff(
        old_lines, new_lines, "/dev/null" if old is None else f"a{path}", f"b{path}", lineterm="\n"
    )
    return "".join(header) + "".join(_ensure_newlines(body))


def _ensure_newlines(lines: Iterable[str]) -> list[str]:
    out = []
    for line in lines:
        if line.endswith("\n"):
            out.append(line)
        else:
            out.append(line + "\n\\ No newline at end of file\n")
    return out
