"""Remembered decisions and the decision log of one session's permission requests.

When the user picks an ``allow_always`` / ``reject_always`` option, the session learns a rule
from the request's subject (``protocol.subject``): the same tool kind and the same command prefix
(the program, plus its subcommand for ``git``, ``npm`` & co), else the same path root (the
directory holding every path), else the kind alone. Later matching requests are answered the same
way (``decided_by == "memory"``); an allow rule never matches a chained command. Every answer,
whoever gave it, goes into the log with who decided, when, and the option — an elicitation's too
(``kind="elicitation"``: its action as ``outcome``, the values an accepted form sent, and a URL
only as ``scheme://host/path``, never its query).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any, overload

from ..protocol.elicitation_records import kept_values
from ..protocol.subject import Facts, command_prefix, common_root, has_prefix, under

ALWAYS = {"allow_always": ("allow_always", "allow_once"), "reject_always": ("reject_always", "reject_once")}
WHO = ("user", "handler", "policy", "memory", "cancel")


@dataclass(frozen=True)
class PermissionRule:
    """A remembered decision: for requests of ``kind`` whose ``match`` agrees, pick ``decision``."""

    kind: str | None
    match: str | None  # a command prefix ("git push"), a path root ("/proj/src"), or None (kind only)
    scope: str  # "command", "path" or "kind"
    decision: str  # the option kind chosen: "allow_always" or "reject_always"
    from_request: str  # the key of the request the user answered

    def matches(self, f: Facts) -> bool:
        """True when a request with these facts counts as "the same" as the remembered one."""
        if f.kind != self.kind:
            return False
        if self.scope == "command":
            prefix = tuple(self.match.split(" ")) if self.match else ()
            return has_prefix(f.command, prefix) and (f.simple_command or self.decision == "reject_always")
        if self.scope == "path":
            return bool(f.paths) and all(under(p, self.match or "/") for p in f.paths)
        return f.command is None and not f.paths


def learn(key: str, f: Facts, option_kind: str) -> PermissionRule | None:
    """The rule a user's ``*_always`` answer teaches (None for other answers)."""
    if option_kind not in ALWAYS:
        return None
    if f.command:
        return PermissionRule(f.kind, " ".join(command_prefix(f.command)), "command", option_kind, key)
    root = common_root(f.paths)
    if root is not None:
        return PermissionRule(f.kind, root, "path", option_kind, key)
    return PermissionRule(f.kind, None, "kind", option_kind, key) if f.kind else None


class PermissionRules(Sequence):
    """``session.permission_rules``: the remembered decisions, oldest first; ``clear()`` forgets."""

    def __init__(self) -> None:
        self._rules: list[PermissionRule] = []

    def add(self, rule: PermissionRule) -> None:
        """Remember ``rule`` (a newer rule for the same kind and match replaces the older one)."""
        same = (rule.kind, rule.scope, rule.match)
        self._rules = [r for r in self._rules if (r.kind, r.scope, r.match) != same]
        self._rules.append(rule)

    def find(self, f: Facts) -> PermissionRule | None:
        """The newest rule matching these facts."""
        return next((r for r in reversed(self._rules) if r.matches(f)), None)

    def clear(self) -> None:
        """Forget every remembered decision."""
        self._rules.clear()

    @overload
    def __getitem__(self, index: int) -> PermissionRule: ...
    @overload
    def __getitem__(self, index: slice) -> list[PermissionRule]: ...
    def __getitem__(self, index: Any) -> Any:
        return self._rules[index]

    def __len__(self) -> int:
        return len(self._rules)

    def __repr__(self) -> str:
        return f"PermissionRules({self._rules!r})"


@dataclass(frozen=True)
class Decision:
    """One answer to a permission request, in ``session.permission_log``."""

    who: str  # "user", "handler", "policy", "memory" or "cancel"
    at: datetime  # wall clock, UTC
    request: str  # the request's key (``perm_1``)
    tool_call_id: str | None
    outcome: str  # "selected" or "cancelled"
    option_id: str | None = None
    option_kind: str | None = None
    rule: PermissionRule | None = field(default=None, compare=False)  # the rule memory used
    kind: str = "permission"  # or "elicitation"
    values: dict[str, Any] | None = None  # what an accepted elicitation form sent (user data)
    url: str | None = None  # an elicitation's URL, as ``scheme://host/path`` only

    def to_dict(self) -> dict[str, Any]:
        """A plain dict (``at`` as an ISO 8601 string)."""
        record = asdict(self)
        record["at"] = self.at.isoformat()
        return record


class PermissionLog(Sequence):
    """``session.permission_log``: every decision, in the order they were made."""

    def __init__(self) -> None:
        self._entries: list[Decision] = []

    def record(self, request: Any, rule: PermissionRule | None = None) -> Decision:
        """Log the answer ``request`` just got (who decided: its ``decided_by``)."""
        outcome = request.outcome or {}
        option_id = request.selected_option
        options = [o for o in request.options if isinstance(o, dict)]
        kind = next((o.get("kind") for o in options if o.get("optionId") == option_id), None)
        who = request.decided_by or ("cancel" if option_id is None else "user")
        at = datetime.now(UTC)
        entry = Decision(
            who, at, request.key, request.tool_call_id, str(outcome.get("outcome")), option_id, kind, rule
        )
        self._entries.append(entry)
        return entry

    def record_elicitation(self, elicitation: Any) -> Decision:
        """Log the answer an elicitation just got (``outcome``: its action)."""
        who = elicitation.decided_by or "user"
        entry = Decision(
            who, datetime.now(UTC), elicitation.key, elicitation.tool_call_id, str(elicitation.action),
            kind="elicitation", values=kept_values(elicitation), url=elicitation.redacted_url,
        )  # fmt: skip
        self._entries.append(entry)
        return entry

    def records(self) -> list[dict[str, Any]]:
        """The entries as plain dicts."""
        return [e.to_dict() for e in self._entries]

    @overload
    def __getitem__(self, index: int) -> Decision: ...
    @overload
    def __getitem__(self, index: slice) -> list[Decision]: ...
    def __getitem__(self, index: Any) -> Any:
        return self._entries[index]

    def __len__(self) -> int:
        return len(self._entries)

    def __iter__(self) -> Iterator[Decision]:
        return iter(self._entries)

    def __repr__(self) -> str:
        return f"PermissionLog({len(self)} decisions)"
