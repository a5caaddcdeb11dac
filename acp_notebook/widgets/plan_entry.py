"""The view entry of a plan, for every plan type (format: ``js/WIRE.md``, ``plan``). No I/O.

``items``: the checklist's entries; ``markdown``: the text, which the page renders as sanitised
markdown; ``file``: the ``uri`` only — the client never reads the file; a ``file:`` URI's local
``path`` lets the view open it in JupyterLab when it lies under the server root (``rel``, set by
the view model); any other type: the plan ``raw``. A removed plan (``plan_removed``) is
``removed: true`` with nothing else.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote, urlsplit

from ..protocol.plans import Plan


def plan_entry(plan: Plan) -> dict[str, Any]:
    """A plan: its checklist, markdown, file link or raw object, by type."""
    out: dict[str, Any] = {"kind": "plan", "id": plan.plan_id, "type": plan.type}
    out["entries"] = [e for e in plan.entries if isinstance(e, dict)]
    if plan.type == "markdown":
        out["markdown"] = plan.content
    elif plan.type == "file":
        out.update(uri=plan.uri, path=file_uri_path(plan.uri))
    elif plan.type != "items":
        out["raw"] = plan.to_dict()
    return out


def removed_plan_entry(plan_id: str) -> dict[str, Any]:
    """A plan the agent removed (``plan_removed``)."""
    return {"kind": "plan", "id": plan_id, "type": None, "entries": [], "removed": True}


def file_uri_path(uri: Any) -> str | None:
    """The local absolute path of a ``file:`` URI (no host, or ``localhost``), else None."""
    if not isinstance(uri, str):
        return None
    parts = urlsplit(uri)
    if parts.scheme.lower() != "file" or parts.netloc not in ("", "localhost") or not parts.path:
        return None
    path = unquote(parts.path)
    return path if path.startswith("/") and "\0" not in path else None
