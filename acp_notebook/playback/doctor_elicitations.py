"""The doctor's rules about elicitations (``elicitation/create``, ``elicitation/complete``). Pure.

``Elicitations`` follows one connection's entries for ``doctor_rules``, all violations:
``elicitation-mode-not-advertised`` — a mode the client's ``initialize`` did not offer (v2
``capabilities.elicitation``, v1 ``clientCapabilities.elicitation``; a mode is offered only when
present and non-null); ``elicitation-unknown-request`` — a request-scoped one whose ``requestId``
names no request of the client's still waiting for its answer; ``elicitation-id-reused`` — a URL
elicitation whose ``elicitationId`` another outstanding one has (asked, neither declined, cancelled
nor completed); ``elicitation-complete-unknown`` — an ``elicitation/complete`` naming no URL
elicitation the agent asked; ``elicitation-secret-in-form`` — a form field whose name (or
``password`` format) names a secret (``elicitation_records.looks_secret``: a password, an API key, a
token ...; not its title: a question's wording may name a key without asking for one — records
still blank a field a title names). One hazard: ``elicitation-unknown-tool-call`` — a
session-scoped one naming a tool call its session never reports, anywhere in the traffic (told at
the end, by ``finish``; codex-acp 2.6 names the model's call id this way).

The mode, request and completion rules need the traffic from its start (the ``initialize`` the
client sent): a ring that forgot it could not tell an offer, a request or an elicitation it no
longer holds, so those are not flagged then.
A URL elicitation that is never completed is not flagged: the completion is a **MAY**.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..protocol.elicitation_records import secret_fields
from . import doctor_spec as spec
from .findings import HAZARD, as_dict, key

Add = Callable[..., None]  # (index, code, message, cite, kind=violation)
ENDED = ("decline", "cancel")


class Elicitations:
    """What the client offered and asked, and the agent's elicitations against it."""

    def __init__(self, add: Add, version: int | None) -> None:
        self._add, self.v = add, version if version in (1, 2) else 2
        self.offered: tuple[str, ...] | None = None  # None: no ``initialize`` among the entries
        self.waiting: dict[Any, str] = {}  # the client's requests still unanswered: id -> method
        self.asked: dict[Any, str] = {}  # the agent's URL elicitations: request id -> elicitationId
        self.outstanding: set[str] = set()  # URL elicitationIds asked and not ended
        self.seen_ids: set[str] = set()  # every URL elicitationId the agent used
        self.named_calls: dict[tuple[str, str], int] = {}  # (session, tool call) -> first naming it

    def client(self, m: dict[str, Any]) -> None:
        """A message the client sent."""
        method, params = m.get("method"), as_dict(m.get("params"))
        if method == "initialize" and self.offered is None:
            caps = params.get("capabilities" if self.v == 2 else "clientCapabilities")
            offer = as_dict(as_dict(caps).get("elicitation"))
            self.offered = tuple(mode for mode in ("form", "url") if offer.get(mode) is not None)
        if method is not None and "id" in m:
            self.waiting[key(m["id"])] = str(method)
        elif method is None and "id" in m:
            elicitation_id = self.asked.pop(key(m.get("id")), None)
            if elicitation_id is not None and as_dict(m.get("result")).get("action") in ENDED:
                self.outstanding.discard(elicitation_id)

    def agent(self, i: int, m: dict[str, Any]) -> None:
        """A message the agent sent."""
        method, params = m.get("method"), as_dict(m.get("params"))
        if method is None and "id" in m:
            self.waiting.pop(key(m["id"]), None)
        elif method == "elicitation/create":
            self._create(i, m, params)
        elif method == "elicitation/complete":
            self._complete(i, params.get("elicitationId"))

    def _create(self, i: int, m: dict[str, Any], params: dict[str, Any]) -> None:
        mode, sid, call = params.get("mode"), params.get("sessionId"), params.get("toolCallId")
        if isinstance(sid, str) and isinstance(call, str):
            self.named_calls.setdefault((sid, call), i)
        secret = secret_fields(params.get("requestedSchema"), titles=False) if mode == "form" else []
        if secret:
            text = f"a form asks for what looks like a secret: {', '.join(map(repr, secret))}"
            self._add(i, "elicitation-secret-in-form", text, spec.ELICITATION_SECRET.format(v=self.v))
        if mode == "url" and isinstance(params.get("elicitationId"), str):
            self._url(i, m, params["elicitationId"])
        if self.offered is None:
            return
        if mode not in self.offered:
            offered = ", ".join(f"`{o}`" for o in self.offered) or "none"
            text = f"an elicitation in mode {mode!r}; the client advertised {offered}"
            self._add(i, "elicitation-mode-not-advertised", text, spec.ELICITATION_MODE.format(v=self.v))
        scope = params.get("requestId")
        if scope is not None and key(scope) not in self.waiting:
            text = f"a request-scoped elicitation names request {scope!r}: no request of the client's waits"
            field = spec.REQUEST_SCOPE_FIELD[self.v]
            cite = spec.ELICITATION_REQUEST_SCOPE.format(v=self.v, field=field)
            self._add(i, "elicitation-unknown-request", text, cite)

    def finish(self, reported: Callable[[str], set[str]]) -> None:
        """The end of the traffic: the tool calls named that their session (``reported(sid)``: the
        tool call ids it reported) never reported."""
        for (sid, call), i in self.named_calls.items():
            if call not in reported(sid):
                text = f"an elicitation names tool call {call!r}, which session {sid!r} never reports"
                self._add(
                    i,
                    "elicitation-unknown-tool-call",
                    text,
                    spec.ELICITATION_TOOL_CALL.format(v=self.v),
                    HAZARD,
                )

    def _url(self, i: int, m: dict[str, Any], elicitation_id: str) -> None:
        if elicitation_id in self.outstanding:
            text = f"URL elicitation {elicitation_id!r} asked while another with that id is outstanding"
            self._add(i, "elicitation-id-reused", text, spec.ELICITATION_ID_REUSED.format(v=self.v))
        self.outstanding.add(elicitation_id)
        self.seen_ids.add(elicitation_id)
        if "id" in m:
            self.asked[key(m["id"])] = elicitation_id

    def _complete(self, i: int, elicitation_id: Any) -> None:
        if self.offered is None:
            return
        if elicitation_id not in self.seen_ids:
            text = f"elicitation/complete for {elicitation_id!r}: no URL elicitation the agent asked has it"
            self._add(i, "elicitation-complete-unknown", text, spec.ELICITATION_COMPLETE.format(v=self.v))
        self.outstanding.discard(elicitation_id)
