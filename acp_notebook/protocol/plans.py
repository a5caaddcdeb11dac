"""Plans: ``plan_update`` replaces the plan named by ``planId``; v1 ``plan`` is the single plan.

Every update replaces the plan whole, whatever its type was before (nothing of an earlier type
survives). ``items``: the entries replace the previous ones; entries without string ``content``,
``priority`` and ``status`` are skipped (schema: ``PlanItems.entries`` skips invalid items), and
``entries`` that is not an array reads as ``[]`` (in ``entries`` and ``to_dict()`` alike).
``markdown`` (unstable ``PlanMarkdown``): its ``content`` text. ``file`` (unstable ``PlanFile``):
only its ``uri`` — the client never reads the file. A wrong-typed ``content`` or ``uri`` counts as
omitted (+ diagnostic). A plan of an unknown type is kept raw. ``plan_removed`` deletes the plan.
"""

from __future__ import annotations

from typing import Any

from .diagnostics import Report
from .patch import json_copy, type_name

V1_PLAN_ID = "plan"
_TEXT_FIELDS = {"markdown": "content", "file": "uri"}  # plan type -> its one string field


class Plan:
    """One plan: ``entries`` (``items``), ``content`` (``markdown``), ``uri`` (``file``), and ``raw``."""

    __slots__ = ("content", "entries", "meta", "plan_id", "raw", "type", "uri")

    def __init__(self, plan_id: str) -> None:
        self.plan_id = plan_id
        self.type = "items"
        self.entries: list[Any] = []
        self.content: str | None = None
        self.uri: str | None = None
        self.meta: dict[str, Any] | None = None
        self.raw: dict[str, Any] = {}

    def to_dict(self) -> dict[str, Any]:
        """The plan object as last received (invalid entries skipped); a deep copy."""
        out: dict[str, Any] = json_copy(self.raw)
        return out

    def __repr__(self) -> str:
        return f"Plan({self.plan_id!r}, type={self.type!r}, entries={len(self.entries)})"


def plan_of_update(update: dict[str, Any], report: Report) -> dict[str, Any] | None:
    """The plan object of a ``plan_update`` (or v1 ``plan``), or None when it has none."""
    if update.get("sessionUpdate") == "plan":
        plan: dict[str, Any] = {"type": "items", "planId": V1_PLAN_ID, "entries": update.get("entries")}
        if "_meta" in update:
            plan["_meta"] = update["_meta"]
        return plan
    received = update.get("plan")
    if not isinstance(received, dict) or not isinstance(received.get("planId"), str):
        report("malformed-update", "plan_update needs a `plan` with a `planId`", update)
        return None
    return received


def set_plan(obj: Plan, plan: dict[str, Any], report: Report) -> None:
    """Replace ``obj`` whole by the received ``plan`` object."""
    kind = plan.get("type")
    obj.type = kind if isinstance(kind, str) else "items"
    meta = plan.get("_meta")
    obj.meta = meta if isinstance(meta, dict) else None
    obj.raw = dict(plan)
    obj.entries, obj.content, obj.uri = [], None, None
    if obj.type == "items":
        obj.entries = obj.raw["entries"] = _entries(plan.get("entries"), plan, report)
    elif obj.type in _TEXT_FIELDS:
        _set_text(obj, _TEXT_FIELDS[obj.type], plan, report)


def _entries(entries: Any, plan: dict[str, Any], report: Report) -> list[Any]:
    if isinstance(entries, list):
        return _clean_entries(entries, report)
    report("invalid-field", "plan `entries` must be an array (read as [])", plan)
    return []


def _set_text(obj: Plan, field: str, plan: dict[str, Any], report: Report) -> None:
    value = plan.get(field)
    if isinstance(value, str):
        setattr(obj, field, value)
    else:
        report("invalid-field", f"{obj.type} plan `{field}` is {type_name(value)}, not a string", plan)


def _clean_entries(entries: list[Any], report: Report) -> list[Any]:
    kept = []
    for entry in entries:
        if _valid_entry(entry):
            kept.append(entry)
        else:
            report("malformed-plan-entry", "plan entry needs string content, priority, status", entry)
    return kept


def _valid_entry(entry: Any) -> bool:
    return (
        isinstance(entry, dict)
        and isinstance(entry.get("content"), str)
        and isinstance(entry.get("priority"), str)
        and isinstance(entry.get("status"), str)
    )
