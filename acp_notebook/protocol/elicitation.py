"""Elicitations (``elicitation/create``): the agent asks the user a question, by a form or a URL.

An ``Elicitation`` is a pending question plus an answer callback, like a ``PermissionRequest``
(``answering``: the response is sent before the outcome is recorded; twice raises). Its scope is
a session (``session_id``, optionally ``tool_call_id``) or one of the client's own pending
requests (``scope_request``: ``{"id", "method"}`` of our ``initialize``, ``session/new`` …;
``session_id`` is then None). The answers are exactly ``{"action": "accept", "content": {…}}``
(form: validated first against ``requestedSchema`` — ``elicitation_schema`` —; an invalid value
raises ``ElicitationInvalid``, a ``ValueError`` naming each field's problem, and nothing is
sent), ``{"action": "accept"}`` (URL: consent to open it), ``{"action": "decline"}`` and
``{"action": "cancel"}``. ``accept(values)`` sends the form's defaults overridden by ``values``
(``None`` for a field removes its default).

A URL elicitation accepted is not finished: its ``status`` is ``"waiting"`` ("opened — waiting
for the agent") until ``complete()`` (the agent's ``elicitation/complete`` with its
``elicitationId``; an unknown or repeated id changes nothing) or ``dismiss()`` (the user closed the
card). ``withdraw`` ends it ``cancel`` with nothing sent (the agent is gone). ``check_params``
says why a request cannot be taken (answered -32602), and ``MODES`` are those we advertise.
Who answers tells the state (``SessionState.elicitation_changed``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from . import answering, elicitation_schema
from .diagnostics import Diagnostic
from .elicitation_schema import Field
from .url_view import UrlView, redacted, url_view

MODES = ("form", "url")  # what the client advertises: ``{"form": {}, "url": {}}``
ACTIONS = ("accept", "decline", "cancel")


class ElicitationAlreadyAnswered(RuntimeError):
    """Raised when an elicitation that already has an answer is answered again."""


class ElicitationTooLate(ElicitationAlreadyAnswered):
    """Raised when an elicitation is answered after it was withdrawn (the agent exited)."""


class ElicitationInvalid(ValueError):
    """The values do not fit the form: ``errors`` maps each field name to its problem."""

    def __init__(self, key: str, errors: dict[str, str]) -> None:
        self.errors = errors
        listed = "; ".join(f"{name or 'values'}: {message}" for name, message in errors.items())
        super().__init__(f"elicitation {key}: invalid values, nothing sent ({listed})")


def check_params(params: Any, modes: tuple[str, ...] = MODES) -> str | None:
    """Why ``elicitation/create`` params cannot be taken (an ``invalid params`` answer), or None."""
    if not isinstance(params, dict):
        return "elicitation/create params must be an object"
    mode = params.get("mode")
    if mode not in modes:
        return f"elicitation mode {mode!r} was not advertised (the client supports {list(modes)})"
    scoped = [k for k in ("sessionId", "requestId") if params.get(k) is not None]
    if len(scoped) != 1:
        return "an elicitation needs exactly one scope: `sessionId` or `requestId`"
    if "sessionId" in scoped and not isinstance(params["sessionId"], str):
        return "`sessionId` must be a string"
    if mode == "form" and not isinstance(params.get("requestedSchema"), dict):
        return "a form elicitation needs a `requestedSchema` object"
    if mode == "url" and not (
        isinstance(params.get("url"), str) and isinstance(params.get("elicitationId"), str)
    ):
        return "a URL elicitation needs a string `url` and `elicitationId`"
    return None


class Elicitation:
    """One question from the agent; answer it with ``accept``, ``decline`` or ``cancel``."""

    def __init__(
        self,
        key: str,
        request_id: Any,
        params: dict[str, Any],
        *,
        scope_request: dict[str, Any] | None = None,
        on_answer: Callable[[Elicitation, dict[str, Any]], None] | None = None,
    ) -> None:
        self.key, self.request_id, self.raw = key, request_id, params
        session_id, tool_call_id = params.get("sessionId"), params.get("toolCallId")
        self.session_id: str | None = session_id if isinstance(session_id, str) else None
        self.tool_call_id: str | None = tool_call_id if isinstance(tool_call_id, str) else None
        self.scope_request = scope_request  # our pending request it belongs to: {"id", "method"}
        self.mode: str = _str(params.get("mode")) or ""
        message = params.get("message")
        self.message: str = message if isinstance(message, str) else ""
        self.schema: Any = params.get("requestedSchema") if self.mode == "form" else None
        self.url: str | None = _str(params.get("url")) if self.mode == "url" else None
        self.elicitation_id: str | None = _str(params.get("elicitationId"))
        self.diagnostics: list[Diagnostic] = []
        self.fields: list[Field] = self._read_fields(message)
        self.outcome: dict[str, Any] | None = None
        self.decided_by: str | None = None  # who answered ("user", "handler", "policy", ...)
        self.on_answer = on_answer
        self.answering = False
        self.too_late: str | None = None  # why it can no longer be answered (``withdraw``)
        self.completed = False  # the agent said the URL interaction finished
        self.dismissed = False  # the user closed a waiting URL card

    def _read_fields(self, message: Any) -> list[Field]:
        if not isinstance(message, str):
            self.diagnostics.append(Diagnostic("malformed-elicitation", "elicitation without a `message`"))
        if self.mode != "form":
            return []
        found, problems = elicitation_schema.read(self.schema)
        self.diagnostics += [
            Diagnostic("malformed-elicitation", f"{self.key}: {p}", level="info") for p in problems
        ]
        return found

    # -- what it is --------------------------------------------------------------------------
    @property
    def pending(self) -> bool:
        """True until it has been answered."""
        return self.outcome is None

    @property
    def action(self) -> str | None:
        """``accept``, ``decline`` or ``cancel`` once answered."""
        return (self.outcome or {}).get("action")

    @property
    def values(self) -> dict[str, Any] | None:
        """The content an ``accept`` sent (form mode), else None."""
        return (self.outcome or {}).get("content")

    @property
    def status(self) -> str:
        """``pending``, ``accepted``, ``declined``, ``cancelled``; a URL accepted: ``waiting``,
        then ``completed`` (the agent said so) or ``dismissed`` (the user closed it)."""
        action = self.action
        if action is None:
            return "pending"
        if action == "accept" and self.mode == "url":
            return "completed" if self.completed else "dismissed" if self.dismissed else "waiting"
        return {"accept": "accepted", "decline": "declined"}.get(action, "cancelled")

    @property
    def url_view(self) -> UrlView | None:
        """The URL split for display (host, registrable domain, warnings); None for a form."""
        return url_view(self.url) if self.url is not None else None

    @property
    def redacted_url(self) -> str | None:
        """``scheme://host/path`` of the URL: what records, traces and exports keep."""
        return redacted(self.url) if self.url is not None else None

    def defaults(self) -> dict[str, Any]:
        """The form's defaults by field name (what a pre-filled form holds)."""
        return {f.name: f.default for f in self.fields if f.default is not None}

    def validate(self, values: Mapping[str, Any] | None = None) -> dict[str, str]:
        """``{field: problem}`` for the values ``accept(values)`` would send (defaults included)."""
        return elicitation_schema.validate(self.schema, self._merged(values)) if self.mode == "form" else {}

    # -- answering ---------------------------------------------------------------------------
    def accept(self, values: Mapping[str, Any] | None = None, *, by: str | None = None) -> None:
        """Accept: a form sends the defaults overridden by ``values`` once they validate (else
        ``ElicitationInvalid``, nothing sent); a URL means consent to open it (no values)."""
        if self.mode == "url":
            if values:
                raise ValueError(f"elicitation {self.key} is a URL: accept() takes no values")
            self._answer({"action": "accept"}, by)
            return
        merged = self._merged(values)
        errors = elicitation_schema.validate(self.schema, merged)
        if errors:
            raise ElicitationInvalid(self.key, errors)
        self._answer({"action": "accept", "content": elicitation_schema.content(self.schema, merged)}, by)

    def decline(self, *, by: str | None = None) -> None:
        """Decline: the user said no."""
        self._answer({"action": "decline"}, by)

    def cancel(self, *, by: str | None = None) -> None:
        """Cancel: dismissed without a choice (also the answer when the agent withdraws it)."""
        self._answer({"action": "cancel"}, by)

    def withdraw(self, reason: str, *, by: str) -> bool:
        """End ``cancel`` without sending (nobody to send to); False if it was not pending."""
        return answering.withdraw(self, {"action": "cancel"}, reason, by)

    def complete(self) -> bool:
        """The agent's ``elicitation/complete``: True if this accepted URL was waiting for it."""
        if self.status not in ("waiting", "dismissed") or self.completed:
            return False
        self.completed = True
        return True

    def dismiss(self) -> bool:
        """The user closed a waiting URL card; True if it was waiting."""
        if self.status != "waiting":
            return False
        self.dismissed = True
        return True

    def _merged(self, values: Mapping[str, Any] | None) -> dict[str, Any]:
        if values is not None and not isinstance(values, Mapping):
            raise TypeError(f"values must be a mapping of field name to value, not {type(values).__name__}")
        merged = {**self.defaults(), **(values or {})}
        return {name: value for name, value in merged.items() if value is not None}

    def _answer(self, outcome: dict[str, Any], by: str | None) -> None:
        answering.give(self, outcome, by, ElicitationAlreadyAnswered, ElicitationTooLate, "elicitation")

    def to_dict(self) -> dict[str, Any]:
        """A JSON-friendly description (the URL in full: for the consent card only)."""
        view = self.url_view
        return {
            "key": self.key,
            "mode": self.mode,
            "message": self.message,
            "session_id": self.session_id,
            "tool_call_id": self.tool_call_id,
            "scope_request": self.scope_request,
            "title": _str((self.schema or {}).get("title")) if isinstance(self.schema, dict) else None,
            "description": _str(self.schema.get("description")) if isinstance(self.schema, dict) else None,
            "fields": [f.to_dict() for f in self.fields],
            "url": self.url,
            "url_view": view.to_dict() if view is not None else None,
            "elicitation_id": self.elicitation_id,
            "status": self.status,
            "outcome": self.outcome,
            "decided_by": self.decided_by,
            "too_late": self.too_late,
        }

    def __repr__(self) -> str:
        return f"Elicitation({self.key!r}, {self.mode}, {self.message[:40]!r}, {self.status})"


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None
