"""The JSON a view draws, built from a ``SessionState`` (format: ``js/WIRE.md``). No I/O.

Each entry is keyed ``"<kind>:<id>"``; agent-provided values pass through as data — the browser
inserts them as text or sanitised HTML, never as markup.
"""

from __future__ import annotations

import os
import posixpath
from typing import Any

from ..protocol.content import terminal_refs
from ..protocol.messages import Message
from ..protocol.patch import cancel_supported
from ..protocol.permission import PermissionRequest
from ..protocol.state import SessionState
from ..protocol.terminal import Terminal
from ..protocol.toolcall import ToolCall
from ..protocol.v1 import unified_patch
from .elicitation_entry import elicitation_entry
from .entry_bound import bounded
from .header import header as header  # the view header lives in its own module
from .plan_entry import plan_entry, removed_plan_entry
from .review_entry import review_entry


def entry_key(kind: str, key: Any) -> str:
    """The view key of a timeline item."""
    return f"{kind}:{key}"


def build_entry(
    state: SessionState, kind: str, key: Any, root: str | None = None, *, whole: bool = False
) -> dict[str, Any]:
    """The entry for one timeline item (``kind`` as in ``state.timeline``); a message, notice or
    other update is cut to ``entry_bound.ENTRY_TEXT`` characters unless ``whole``."""
    entry = _entry(state, kind, key, root)
    return entry if whole or entry["kind"] not in BOUNDED_KINDS else bounded(entry)


BOUNDED_KINDS = frozenset({"message", "notice", "other"})


def _entry(state: SessionState, kind: str, key: Any, root: str | None) -> dict[str, Any]:
    if kind == "tool_call":
        return tool_call_entry(state.tool_calls[key], root, shown_in_background(state, key))
    if kind == "message":
        return message_entry(state.messages[key])
    if kind == "permission":
        return permission_entry(state.permissions[key])
    if kind == "elicitation":
        return elicitation_entry(state.elicitations[key])
    if kind == "plan":
        return plan_view(state, key, root)
    if kind == "file_write":
        write = state.file_writes[key]
        if "review" in write:  # held for review (``FilePolicy(review=True)``)
            return review_entry(key, write["review"])
        return file_write_entry(key, write)
    if kind == "notice":
        notice = state.notices[key]
        return {
            "kind": "notice",
            "severity": notice.get("severity"),
            "title": notice.get("title"),
            "raw": notice,
        }
    raw = state.other_updates[key]
    return {"kind": "other", "update_kind": str(raw.get("sessionUpdate")), "raw": raw}


def message_entry(msg: Message) -> dict[str, Any]:
    """A message: its blocks and its text as markdown."""
    return {"kind": "message", "role": msg.role, "blocks": list(msg.content), "markdown": msg.text}


def tool_call_entry(tc: ToolCall, root: str | None = None, background: bool = False) -> dict[str, Any]:
    """A tool-call card (``background``: its work, or its terminal, still runs in the background)."""
    out: dict[str, Any] = {
        "kind": "tool_call",
        "id": tc.tool_call_id,
        "title": tc.title,
        "fallback_title": fallback_title(tc),
        "tool_kind": tc.kind,
        "display_kind": tc.display_kind,
        "status": tc.status,
        "phase": tc.phase,
        "locations": [location(loc, root) for loc in tc.locations if isinstance(loc, dict)],
        "items": [view_item(item) for item in tc.content],
        "cancellable": tc.cancellable and (not tc.finished or tc.background),
        "background": background,
        "created_at": tc.created_at,
        "ended_at": tc.ended_at,
    }
    for key, value in (("raw_input", tc.raw_input), ("raw_output", tc.raw_output), ("name", tc.name)):
        if value is not None:
            out[key] = value
    if tc.notes:
        out["notes"] = tc.notes  # the client's own: code run in the notebook kernel (WIRE.md)
    return out


def file_write_entry(index: int, write: dict[str, Any]) -> dict[str, Any]:
    """A file the agent wrote through the client (v1 ``fs/write_text_file``), as an edit card."""
    return {
        "kind": "tool_call",
        "id": f"fs_write_{index}",
        "title": f"Wrote {write['path']}",
        "fallback_title": f"Wrote {write['path']}",
        "tool_kind": "edit",
        "display_kind": "edit",
        "status": "completed",
        "phase": "completed",
        "locations": [],
        "items": [diff_item({"type": "diff", **write})],
        "cancellable": False,
        "created_at": None,
        "ended_at": None,
    }


def fallback_title(tc: ToolCall) -> str:
    """A title for a tool call that has none: its kind and first location."""
    label = (
        tc.display_kind.replace("_", " ").capitalize() if tc.kind in ("other", tc.display_kind) else tc.kind
    )
    paths = [loc.get("path") for loc in tc.locations if isinstance(loc, dict)]
    if paths and isinstance(paths[0], str):
        return f"{label} {posixpath.basename(paths[0]) or paths[0]}"
    return f"{label} ({tc.tool_call_id})"


def location(loc: dict[str, Any], root: str | None) -> dict[str, Any]:
    """A location with its path relative to the Jupyter server root, where known."""
    path, line = loc.get("path"), loc.get("line")
    return {
        "path": path if isinstance(path, str) else str(path),
        "line": line if isinstance(line, int) and not isinstance(line, bool) else None,
        "rel": relative_to_root(path, root),
    }


def relative_to_root(path: Any, root: str | None) -> str | None:
    """``path`` relative to ``root`` when it lies inside it, else None."""
    if not isinstance(path, str) or not root or not os.path.isabs(path):
        return None
    rel = os.path.relpath(os.path.normpath(path), root)
    return None if rel.startswith("..") else rel.replace(os.sep, "/")


def view_item(item: Any) -> dict[str, Any]:
    """One content item in the view's shape (unknown and malformed ones kept raw)."""
    if not isinstance(item, dict):
        return {"type": "other", "label": "malformed", "raw": item}
    kind = item.get("type")
    if kind == "content" and isinstance(item.get("content"), dict):
        return {"type": "content", "block": item["content"]}
    if kind == "terminal" and isinstance(item.get("terminalId"), str):
        return {"type": "terminal", "id": item["terminalId"]}
    if kind == "diff":
        return diff_item(item)
    return {"type": "other", "label": str(kind) if isinstance(kind, str) else "malformed", "raw": item}


def diff_item(item: dict[str, Any]) -> dict[str, Any]:
    """A diff in one shape for both versions: files from ``changes`` (or the v1 path) + patch text."""
    if "changes" not in item and isinstance(item.get("path"), str):
        operation = "add" if item.get("oldText") is None else "modify"
        file = {"operation": operation, "path": item["path"], "old_path": None}
        file.update({"file_type": "text", "mime_type": None, "binary": False})
        return {"type": "diff", "files": [file], "patch": unified_patch(item), "v1": True}
    changes = item.get("changes") if isinstance(item.get("changes"), list) else []
    patch = item.get("patch")
    text = patch.get("text") if isinstance(patch, dict) and isinstance(patch.get("text"), str) else None
    return {
        "type": "diff",
        "files": [diff_file(c) for c in changes if isinstance(c, dict)],
        "patch": text,
        "v1": False,
    }


def diff_file(change: dict[str, Any]) -> dict[str, Any]:
    """One file of a v2 diff's ``changes``."""
    return {
        "operation": change.get("operation"),
        "path": change.get("path"),
        "old_path": change.get("oldPath"),
        "file_type": change.get("fileType"),
        "mime_type": change.get("mimeType"),
        "binary": change.get("fileType") == "binary",
    }


def permission_entry(perm: PermissionRequest) -> dict[str, Any]:
    """A permission request with its options and outcome."""
    subject = perm.subject if isinstance(perm.subject, dict) else {}
    options = [
        {"id": o.get("optionId"), "name": o.get("name"), "kind": o.get("kind")}
        for o in perm.options
        if isinstance(o, dict)
    ]
    return {
        "kind": "permission",
        "key": perm.key,
        "title": perm.title,
        "description": perm.description,
        "subject_type": perm.subject_type,
        "subject": perm.subject,
        "command": subject.get("command") if perm.subject_type == "command" else None,
        "cwd": subject.get("cwd") if perm.subject_type == "command" else None,
        "tool_call_id": perm.tool_call_id,
        "options": options,
        "outcome": perm.outcome,
        "decided_by": perm.decided_by,
        "actionable": perm.pending,
        "too_late": perm.too_late,  # why it can no longer be answered (the agent exited)
        "shown_before": _shown_before(perm.shown_before),
    }


def _shown_before(shown: dict[str, Any] | None) -> dict[str, Any] | None:
    """What the request's subject emptied of its card, drawn in the request itself."""
    if shown is None:
        return None
    out: dict[str, Any] = {"items": [view_item(item) for item in shown.get("content") or []]}
    if "rawInput" in shown:
        out["raw_input"] = shown["rawInput"]
    return out


def plan_view(state: SessionState, plan_id: str, root: str | None) -> dict[str, Any]:
    """A plan by type (``plan_entry``), a file plan's path made relative to ``root`` when under it."""
    plan = state.plans.get(plan_id)
    if plan is None:
        return removed_plan_entry(plan_id)
    entry = plan_entry(plan)
    if entry.get("path") is not None:
        entry["rel"] = relative_to_root(entry["path"], root)
    return entry


def shown_in_background(state: SessionState, tool_call_id: str) -> bool:
    """Whether a card runs on in the background: listed itself, or a terminal it shows is."""
    tc = state.tool_calls[tool_call_id]
    terminals = (state.terminals.get(t) for t in terminal_refs(tc.content))
    return tc.background or any(t is not None and t.background and not t.exited for t in terminals)


def terminal_meta(term: Terminal) -> dict[str, Any]:
    """A terminal's metadata; its bytes travel separately."""
    end = term.end_offset
    return {
        "id": term.terminal_id,
        "command": term.command,
        "cwd": term.cwd,
        "size": term.size,
        "exit_status": term.exit_status,
        "cancellable": cancel_supported(term.capabilities) and not term.exited,
        "background": term.background and not term.exited,
        "gen": term.generation,
        "base": term.base_offset,
        "end": end,
    }


def server_root(cwd: str | None = None, session_name: str | None = None) -> str | None:
    """The Jupyter server root, from ``JPY_SESSION_NAME`` (the notebook's path) and the kernel's cwd."""
    cwd = cwd or os.getcwd()
    name = session_name if session_name is not None else os.environ.get("JPY_SESSION_NAME")
    if not name:
        return None
    if os.path.isabs(name):  # jupyter_server >= 2.x passes an absolute path: ask the servers
        return _root_of_running_server(name)
    folder = posixpath.dirname(name.replace("\\", "/"))
    if not folder:
        return cwd
    suffix = os.sep + folder.replace("/", os.sep)
    return (cwd[: -len(suffix)] or os.sep) if cwd.endswith(suffix) else None


def _root_of_running_server(notebook: str) -> str | None:
    try:
        from jupyter_server.serverapp import list_running_servers
    except ImportError:
        return None
    roots = []
    for server in list_running_servers():
        root = server.get("root_dir")
        if isinstance(root, str) and relative_to_root(notebook, root) is not None:
            roots.append(root)
    return max(roots, key=len) if roots else None
