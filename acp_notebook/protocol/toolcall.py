"""The tool-call model and the seed's patch rules for one `tool_call_update`.

Rules (ACP v2 "Tool Calls", the seed; ``ToolCallUpdate`` in the v2 schema):
- an omitted field keeps its value; ``null`` clears it (``kind`` → ``other``, ``status`` →
  ``pending``, the rest → unset); a concrete value replaces it;
- ``content`` and ``locations`` are replaced as whole arrays (``[]``/``null`` clear them);
- ``_meta`` is patched by top-level key (see ``patch_meta``);
- a field of the wrong type counts as omitted (+ a diagnostic), except ``capabilities``: a
  malformed value falls back to *no controls* (schema ``ToolCallCapabilities``): a non-object
  clears it, a malformed ``cancel`` is dropped from it;
- invalid content items and locations are skipped (``content.py``, + a diagnostic); unknown
  content types and unknown fields are kept and patched alike.
"""

from __future__ import annotations

from typing import Any

from .content import clean_content, clean_locations
from .diagnostics import Report
from .patch import cancel_supported, json_copy, patch_meta, read_capabilities, type_name, wire_fields

STATUSES = frozenset({"pending", "in_progress", "paused", "completed", "failed", "cancelled"})
FINAL_STATUSES = frozenset({"completed", "failed", "cancelled"})
KINDS = frozenset(
    {
        "read",
        "edit",
        "delete",
        "move",
        "search",
        "execute",
        "think",
        "fetch",
        "switch_mode",
        "other",
    }
)

# wire key -> (attribute, expected type or None for any JSON value)
_FIELDS: dict[str, tuple[str, Any]] = {
    "title": ("title", str),
    "name": ("name", str),
    "kind": ("kind", str),
    "status": ("status", str),
    "content": ("content", list),
    "locations": ("locations", list),
    "rawInput": ("raw_input", None),
    "rawOutput": ("raw_output", None),
    "capabilities": ("capabilities", dict),
}
_DEFAULTS: dict[str, Any] = {"kind": "other", "status": "pending"}
_OPTIONAL = (
    ("title", "title"),
    ("name", "name"),
    ("rawInput", "raw_input"),
    ("rawOutput", "raw_output"),
    ("capabilities", "capabilities"),
)


class ToolCall:
    """Current state of one tool call, as the agent's updates left it."""

    __slots__ = (
        "background",
        "capabilities",
        "content",
        "created_at",
        "ended_at",
        "extra",
        "kind",
        "locations",
        "meta",
        "name",
        "notes",
        "raw_input",
        "raw_output",
        "status",
        "title",
        "tool_call_id",
        "updated_at",
        "updates",
    )

    def __init__(self, tool_call_id: str, now: float = 0.0) -> None:
        self.tool_call_id = tool_call_id
        self.title: str | None = None
        self.name: str | None = None
        self.kind = "other"
        self.status = "pending"
        self.content: list[Any] = []
        self.locations: list[Any] = []
        self.raw_input: Any = None
        self.raw_output: Any = None
        self.capabilities: dict[str, Any] | None = None
        self.meta: dict[str, Any] | None = None
        self.extra: dict[str, Any] = {}
        self.notes: list[dict[str, Any]] = []  # the client's own (code run in the kernel), not the wire's
        self.created_at = self.updated_at = now
        self.ended_at: float | None = None
        self.updates = 0  # updates and content chunks applied to it (the reducer counts them)
        self.background = False  # listed in the session's last ``background`` snapshot (the state sets it)

    @property
    def phase(self) -> str:
        """The status to act on: custom and unknown statuses count as ``in_progress``."""
        return self.status if self.status in STATUSES else "in_progress"

    @property
    def display_kind(self) -> str:
        """The kind to draw: unknown and custom kinds show as ``other``."""
        return self.kind if self.kind in KINDS else "other"

    @property
    def finished(self) -> bool:
        """True once the status is completed, failed or cancelled."""
        return self.status in FINAL_STATUSES

    @property
    def duration(self) -> float | None:
        """Seconds from first report to the first final status (None while unfinished)."""
        return None if self.ended_at is None else self.ended_at - self.created_at

    @property
    def cancellable(self) -> bool:
        """True when the agent advertises ``capabilities.cancel`` for this tool call."""
        return cancel_supported(self.capabilities)

    def to_dict(self) -> dict[str, Any]:
        """ACP wire shape of the current state (camelCase, no ``sessionUpdate``)."""
        out: dict[str, Any] = {
            "toolCallId": self.tool_call_id,
            "kind": self.kind,
            "status": self.status,
            "content": json_copy(self.content),
            "locations": json_copy(self.locations),
        }
        return wire_fields(out, self, _OPTIONAL)

    def __repr__(self) -> str:
        return f"ToolCall({self.tool_call_id!r}, status={self.status!r}, title={self.title!r})"


def apply_fields(tc: ToolCall, update: dict[str, Any], report: Report, now: float) -> list[str]:
    """Patch ``tc`` with one update's fields; returns the wire names of the changed fields."""
    changed = []
    for key, value in update.items():
        spec = _FIELDS.get(key)  # the schema's fields first: the common case
        if spec is not None:
            if _set_field(tc, key, spec, value, report):
                changed.append(key)
        elif key == "_meta":
            if value is None or isinstance(value, dict):
                tc.meta = patch_meta(tc.meta, value)
                changed.append(key)
            else:
                report("invalid-field", f"`_meta` is {type_name(value)}, not an object", value)
        elif key != "sessionUpdate" and key != "toolCallId":
            _patch_extra(tc.extra, key, value)
            changed.append(key)
    tc.updated_at = now
    if tc.ended_at is None and tc.status in FINAL_STATUSES:
        tc.ended_at = now
    return changed


def _set_field(tc: ToolCall, key: str, spec: tuple[str, Any], value: Any, report: Report) -> bool:
    attr, expected = spec
    if value is None:
        setattr(tc, attr, [] if expected is list else _DEFAULTS.get(key))
        return True
    if key == "capabilities":
        tc.capabilities = read_capabilities(value, "tool call", report)
        return True
    if expected is not None and not isinstance(value, expected):
        report(
            "invalid-field",
            f"tool call `{key}` is {type_name(value)}, not {type_name(expected())}",
            value,
        )
        return False
    if key == "content":
        value = clean_content(value, report)  # a new list
    elif key == "locations":
        value = clean_locations(value, report)  # a new list
    elif key == "status" and value not in STATUSES and not value.startswith("_"):
        report("unknown-status", f"unknown tool call status {value!r} (kept, shown as running)", value)
    elif key == "kind" and value not in KINDS and not value.startswith("_"):
        report("unknown-kind", f"unknown tool kind {value!r} (kept, shown as other)", value)
    setattr(tc, attr, value)
    return True


def _patch_extra(extra: dict[str, Any], key: str, value: Any) -> None:
    if value is None:
        extra.pop(key, None)
    else:
        extra[key] = value
