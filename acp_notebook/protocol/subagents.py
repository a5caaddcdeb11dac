"""A subagent as its parent session knows it: the unstable schema's ``SubagentUpdate`` rules. Pure.

A ``subagent_update`` arrives on the immediate parent session; the first for a ``sessionId``
announces the child. Only ``sessionId`` is required; every other field patches: omitted leaves
the stored value, ``null`` clears it, a value replaces it — except ``_meta``, which patches by
top-level key, and ``state``, whose concrete snapshot replaces the whole report while ``null``
leaves activity unconfirmed (``run_state`` reads ``unknown``, never ``idle``). ``cwd`` and
``additionalDirectories`` are the child's own placement; while unset each inherits the parent's
effective value (``[]`` means none). A child whose ``capabilities`` are unset permits no mutation;
``capabilities.cancel`` as an object (``{}`` included) permits cancelling it. A value of the wrong
type is reported and leaves the stored one as it was; unknown fields are kept.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .patch import patch_meta, type_name

Report = Callable[..., None]
UNKNOWN = "unknown"  # the run state of a child whose state report was cleared or never sent
_TEXT = {"title": "title", "description": "description", "cwd": "cwd"}
_KNOWN = {"sessionUpdate", "sessionId", *_TEXT, "capabilities", "state", "additionalDirectories", "_meta"}


@dataclass
class SubagentInfo:
    """What the parent was told about one child session."""

    session_id: str
    title: str | None = None
    description: str | None = None
    capabilities: dict[str, Any] | None = None
    state: dict[str, Any] | None = None  # the last ``StateUpdate`` snapshot; None: unconfirmed
    cwd: str | None = None  # the child's own; None: the parent's
    additional_directories: list[str] | None = None  # the child's own; None: the parent's
    meta: dict[str, Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict)  # fields this client does not know, kept
    updates: int = 0

    @property
    def run_state(self) -> str:
        """``idle`` / ``running`` / ``requires_action`` / anything the agent said, else ``unknown``."""
        value = self.state.get("state") if self.state is not None else None
        return value if isinstance(value, str) else UNKNOWN

    @property
    def cancellable(self) -> bool:
        """Whether the child permits the client to cancel its work (``capabilities.cancel``)."""
        return isinstance(self.capabilities, dict) and isinstance(self.capabilities.get("cancel"), dict)

    def effective_cwd(self, parent_cwd: str | None) -> str | None:
        """Where the child works: its own ``cwd``, else its parent's."""
        return self.cwd if self.cwd is not None else parent_cwd

    def effective_directories(self, parent: list[str] | None) -> list[str] | None:
        """The child's additional directories: its own (``[]``: none), else its parent's."""
        return list(self.additional_directories) if self.additional_directories is not None else parent

    def to_dict(self) -> dict[str, Any]:
        """The child as one ``subagent_update`` would announce it now (a deep copy)."""
        out: dict[str, Any] = {"sessionUpdate": "subagent_update", "sessionId": self.session_id}
        values = (
            ("title", self.title), ("description", self.description), ("capabilities", self.capabilities),
            ("state", self.state), ("cwd", self.cwd), ("additionalDirectories", self.additional_directories),
            ("_meta", self.meta),
        )  # fmt: skip
        out.update({k: copy.deepcopy(v) for k, v in values if v is not None})
        out.update(copy.deepcopy(self.extra))
        return out


def apply_subagent_update(info: SubagentInfo, update: dict[str, Any], report: Report) -> list[str]:
    """Patch ``info`` with one ``subagent_update``; returns the wire names of the fields it changed."""
    changed = []
    for key, value in update.items():
        if key in ("sessionUpdate", "sessionId"):
            continue
        if key not in _KNOWN:
            info.extra[key] = copy.deepcopy(value)
            changed.append(key)
        elif _patch(info, key, value, report):
            changed.append(key)
    info.updates += 1
    return changed


def _patch(info: SubagentInfo, key: str, value: Any, report: Report) -> bool:
    if key == "_meta":
        return _set_object(info, "meta", key, value, report, merge=True)
    if key in ("capabilities", "state"):
        return _set_object(info, key, key, value, report, merge=False)
    if key == "additionalDirectories":
        return _set_directories(info, value, report)
    if value is not None and not isinstance(value, str):
        report("invalid-field", f"subagent `{key}` is {type_name(value)}, not a string (kept as was)", value)
        return False
    setattr(info, _TEXT[key], value)
    return True


def _set_object(info: SubagentInfo, attr: str, key: str, value: Any, report: Report, merge: bool) -> bool:
    if value is not None and not isinstance(value, dict):
        report("invalid-field", f"subagent `{key}` is {type_name(value)}, not an object (kept as was)", value)
        return False
    new = patch_meta(getattr(info, attr), value) if merge else copy.deepcopy(value)
    setattr(info, attr, new)
    return True


def _set_directories(info: SubagentInfo, value: Any, report: Report) -> bool:
    if value is not None and not (isinstance(value, list) and all(isinstance(d, str) for d in value)):
        report(
            "invalid-field", "subagent `additionalDirectories` is not a list of paths (kept as was)", value
        )
        return False
    info.additional_directories = list(value) if value is not None else None
    return True
