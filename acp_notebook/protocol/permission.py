"""Permission requests (`session/request_permission`), for both protocol versions.

A request is a pending question plus an answer callback given to its constructor:
``select(option_id)`` or ``cancel()`` first hands the outcome to ``on_answer`` (the client sends
the response there), then records it. If sending raises, the request stays pending and the
exception reaches the caller: an answer is never recorded without being sent. Answering twice
(or again while the first answer is being sent) raises and sends nothing. ``withdraw`` ends a
request ``cancelled`` with nothing sent (the agent exited); answering it then raises
``PermissionTooLate``. Whoever answers calls
``SessionState.permission_answered`` to tell observers. v2 requests carry ``title``,
``description``, ``subject`` (``tool_call`` with a ``toolCall`` upsert, ``command``, or custom,
kept raw) and ``options``; v1 requests carry ``toolCall`` + ``options`` and get a generated title
and a ``tool_call`` subject. The permission's title never replaces the tool call's title.
A ``tool_call`` subject is an upsert (the spec): one that empties the ``content`` or ``rawInput``
the card showed (Claude's plan-mode "Ready to code?" sends ``content: []``, ``rawInput: {}``)
wipes them from the tool call, so ``SessionState.add_permission`` keeps what was shown in
``shown_before`` (``emptied``), for the request's own view.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import answering
from .diagnostics import Diagnostic
from .patch import is_absolute, type_name

OPTION_KINDS = frozenset({"allow_once", "allow_always", "reject_once", "reject_always"})


class PermissionAlreadyAnswered(RuntimeError):
    """Raised when a permission request that already has an outcome is answered again."""


class PermissionTooLate(PermissionAlreadyAnswered):
    """Raised when a request is answered after it was withdrawn (the agent exited)."""


class PermissionRequest:
    """One question from the agent; answer it with ``select`` or ``cancel``."""

    def __init__(
        self,
        key: str,
        request_id: Any,
        params: dict[str, Any],
        version: int = 2,
        *,
        on_answer: Callable[[PermissionRequest, dict[str, Any]], None] | None = None,
    ) -> None:
        self.key = key
        self.request_id = request_id
        self.version = version
        self.raw = params
        self.session_id = params.get("sessionId")
        self.options: list[Any] = []
        self.outcome: dict[str, Any] | None = None
        self.decided_by: str | None = None  # who answered ("user", "policy", ...), as given to select
        self.on_answer = on_answer
        self.answering = False  # an answer is being sent (``answering.give``)
        self.too_late: str | None = None  # why it can no longer be answered (``withdraw``)
        self.shown_before: dict[str, Any] | None = None  # what its subject emptied (``emptied``)
        self.diagnostics: list[Diagnostic] = []
        self.title, self.description, self.subject = _read(params, version, self.diagnostics)
        self.options = _read_options(params.get("options"), self.diagnostics)

    # -- what it asks about ------------------------------------------------------------------
    @property
    def subject_type(self) -> str | None:
        """``tool_call``, ``command``, a custom type, or None when there is no subject."""
        subject = self.subject
        return subject.get("type") if isinstance(subject, dict) else None

    @property
    def tool_call_update(self) -> dict[str, Any] | None:
        """The ``toolCall`` upsert of a ``tool_call`` subject, ready for ``SessionState.apply``."""
        if self.subject_type != "tool_call":
            return None
        update = self.subject.get("toolCall")
        if not isinstance(update, dict) or not isinstance(update.get("toolCallId"), str):
            return None
        if self.version == 1:  # v1: null means "unchanged"
            update = {k: v for k, v in update.items() if v is not None}
        return {**update, "sessionUpdate": "tool_call_update"}

    @property
    def tool_call_id(self) -> str | None:
        """The tool call this request concerns, if any."""
        subject = self.subject if isinstance(self.subject, dict) else {}
        if self.subject_type == "tool_call":
            tool_call = subject.get("toolCall")
            value = tool_call.get("toolCallId") if isinstance(tool_call, dict) else None
        else:
            value = subject.get("toolCallId")
        return value if isinstance(value, str) else None

    @property
    def option_ids(self) -> list[str]:
        """The ids of the well-formed options, in order."""
        return [
            o["optionId"] for o in self.options if isinstance(o, dict) and isinstance(o.get("optionId"), str)
        ]

    # -- answering ---------------------------------------------------------------------------
    @property
    def pending(self) -> bool:
        """True until the request has been answered."""
        return self.outcome is None

    @property
    def selected_option(self) -> str | None:
        """The chosen ``optionId`` once answered with ``selected``."""
        outcome = self.outcome or {}
        return outcome.get("optionId") if outcome.get("outcome") == "selected" else None

    def select(self, option_id: str, *, by: str | None = None) -> None:
        """Answer with the option ``option_id``; raises for an unknown option or a second answer.

        ``by`` names who decided (``"user"``, ``"policy"``, ...); it is kept as ``decided_by``.
        """
        if option_id not in self.option_ids:
            raise ValueError(f"unknown option {option_id!r}; choose one of {self.option_ids}")
        self._answer({"outcome": "selected", "optionId": option_id}, by)

    def cancel(self, *, by: str | None = None) -> None:
        """Answer ``cancelled`` (what the protocol requires when the turn is cancelled)."""
        self._answer({"outcome": "cancelled"}, by)

    def withdraw(self, reason: str, *, by: str) -> bool:
        """End ``cancelled`` without sending (nobody to send to); False if it was not pending."""
        return answering.withdraw(self, {"outcome": "cancelled"}, reason, by)

    def _answer(self, outcome: dict[str, Any], by: str | None = None) -> None:
        answering.give(self, outcome, by, PermissionAlreadyAnswered, PermissionTooLate, "permission")

    def __repr__(self) -> str:
        state = "pending" if self.pending else self.outcome
        return f"PermissionRequest({self.key!r}, title={self.title!r}, {state})"


SHOWN_FIELDS = frozenset({"content", "rawInput"})  # what a card shows that a subject can empty


def emptied(before: dict[str, Any] | None, after: dict[str, Any]) -> dict[str, Any] | None:
    """The fields of ``SHOWN_FIELDS`` a tool call had (``to_dict`` shapes) that are now empty."""
    lost = {
        name: (before or {})[name]
        for name in ("content", "rawInput")
        if _shown((before or {}).get(name)) and not _shown(after.get(name))
    }
    return lost or None


def _shown(value: Any) -> bool:
    return value is not None and value != [] and value != {}


def _read(params: dict[str, Any], version: int, diagnostics: list[Diagnostic]) -> tuple[str, str | None, Any]:
    if version == 1:
        tool_call = params.get("toolCall")
        if not isinstance(tool_call, dict):
            diagnostics.append(Diagnostic("malformed-permission", "v1 request without `toolCall`", params))
            return "Allow this action?", None, None
        name = tool_call.get("title") or tool_call.get("kind") or tool_call.get("toolCallId")
        generated = f"Allow {name}?" if isinstance(name, str) else "Allow this tool call?"
        return generated, None, {"type": "tool_call", "toolCall": tool_call}
    title, description = params.get("title"), params.get("description")
    if not isinstance(title, str):
        diagnostics.append(Diagnostic("malformed-permission", "permission request without `title`", params))
    subject = params.get("subject")
    _check_subject(subject, diagnostics)
    return (
        title if isinstance(title, str) else "Permission requested",
        description if isinstance(description, str) else None,
        subject,
    )


def _check_subject(subject: Any, diagnostics: list[Diagnostic]) -> None:
    if subject is None:
        return
    if not isinstance(subject, dict) or not isinstance(subject.get("type"), str):
        diagnostics.append(Diagnostic("malformed-permission", "subject needs a string `type`", subject))
    elif subject["type"] == "command":
        if not isinstance(subject.get("command"), str) or not is_absolute(subject.get("cwd")):
            diagnostics.append(
                Diagnostic(
                    "malformed-permission", "command subject needs `command` and absolute `cwd`", subject
                )
            )
    elif subject["type"] == "tool_call":
        tool_call = subject.get("toolCall")
        if not isinstance(tool_call, dict) or not isinstance(tool_call.get("toolCallId"), str):
            diagnostics.append(
                Diagnostic("malformed-permission", "tool_call subject needs `toolCall.toolCallId`", subject)
            )


def _read_options(options: Any, diagnostics: list[Diagnostic]) -> list[Any]:
    if not isinstance(options, list) or not options:
        diagnostics.append(
            Diagnostic("malformed-permission", f"`options` is {type_name(options)}, not a list", options)
        )
        return options if isinstance(options, list) else []
    for option in options:
        if not (
            isinstance(option, dict)
            and isinstance(option.get("optionId"), str)
            and isinstance(option.get("name"), str)
            and isinstance(option.get("kind"), str)
        ):
            diagnostics.append(
                Diagnostic("malformed-permission", "option needs `optionId`, `name`, `kind` (kept)", option)
            )
    return list(options)
