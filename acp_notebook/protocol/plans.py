"""Plans: ``plan_update`` replaces the plan named by ``planId``; v1 ``plan`` is the single plan.

An ``items`` plan's entries replace the previous ones whole; entries without string ``content``,
``priority`` and ``status`` are skipped (schema: ``PlanItems.entries`` skips invalid items). A
plan of an unknown type is kept raw and still replaces the earlier plan with its ``planId``.
"""

from __future__ import annotations

from typing import Any

from .diagnostics import Report
from .patch import json_copy

V1_PLAN_ID = "plan"


class Plan:
    """One plan: its ``entries`` for ``items`` plans, the raw object for other types."""

    __slots__ = ("entries", "meta", "plan_id", "raw", "type")

    def __init__(self, plan_id: str) -> None:
        self.plan_id = plan_id
        self.type = "items"
        self.entries: list[Any] = []
        self.meta: dict[str, Any] | None = None
        self.raw: dict[str, Any] = {}

    def to_dict(self) -> dict[str, Any]:
        """The plan object as last received (invalid entries skipped); a deep copy."""
        out: dict[str, Any] = json_copy(self.raw)
        return out

    def __repr__(self) -> str:
        return f"Plan({self.plan_id!r}, entries={len(self.entries)})"


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
    """Replace ``obj`` by the received ``plan`` object."""
    kind = plan.get("type")
    obj.type = kind if isinstance(kind, str) else "items"
    meta = plan.get("_meta")
    obj.meta = meta if isinstance(meta, dict) else None
    obj.raw = dict(plan)
    if obj.type != "items":
        return
    entries = plan.get("entries")
    if isinstance(entries, list):
        obj.entries = obj.raw["entries"] = _clean_entries(entries, report)
    else:
        report("invalid-field", "plan `entries` must be an array", plan)


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
