"""The pure elicitation model: answers, validation before sending, URL waiting, the state's record."""

from __future__ import annotations

import json
from typing import Any

import pytest

from acp_notebook.protocol.elicitation import (
    Elicitation,
    ElicitationAlreadyAnswered,
    ElicitationInvalid,
    ElicitationTooLate,
    check_params,
)
from acp_notebook.protocol.state import SessionState

SCHEMA = {
    "type": "object",
    "title": "Refactoring",
    "properties": {
        "strategy": {"type": "string", "enum": ["conservative", "balanced", "aggressive"]},
        "passes": {"type": "integer", "minimum": 1, "maximum": 5, "default": 2},
        "notes": {"type": "string", "maxLength": 10},
    },
    "required": ["strategy"],
}
FORM = {
    "sessionId": "s1",
    "mode": "form",
    "message": "How?",
    "requestedSchema": SCHEMA,
    "toolCallId": "call_1",
}
URL = {
    "requestId": 3,
    "mode": "url",
    "message": "Authorize",
    "elicitationId": "oauth-1",
    "url": "https://auth.example.com/connect?state=abc",
}


def make(params: dict[str, Any], sent: list | None = None, **kw: Any) -> Elicitation:
    def on_answer(e: Elicitation, outcome: dict[str, Any]) -> None:
        if sent is not None:
            sent.append(outcome)

    return Elicitation("elic_1", 43, params, on_answer=on_answer, **kw)


def test_a_form_is_read_with_its_scope_and_fields() -> None:
    e = make(FORM)
    assert (e.mode, e.message, e.session_id, e.tool_call_id, e.scope_request, e.url) == (
        "form", "How?", "s1", "call_1", None, None,
    )  # fmt: skip
    assert [f.name for f in e.fields] == ["strategy", "passes", "notes"] and e.schema is SCHEMA
    assert e.pending and e.status == "pending" and e.defaults() == {"passes": 2}


def test_accept_validates_first_and_sends_nothing_when_invalid() -> None:
    sent: list = []
    e = make(FORM, sent)
    with pytest.raises(ElicitationInvalid) as info:
        e.accept({"strategy": "wild", "notes": "far too long here", "extra": 1})
    assert set(info.value.errors) == {"strategy", "notes", "extra"} and "strategy" in str(info.value)
    assert isinstance(info.value, ValueError) and sent == [] and e.pending
    e.accept({"strategy": "balanced"}, by="handler")
    assert sent == [{"action": "accept", "content": {"strategy": "balanced", "passes": 2}}]
    assert (e.status, e.decided_by, e.values) == (
        "accepted",
        "handler",
        {"strategy": "balanced", "passes": 2},
    )


def test_accept_values_override_defaults_and_none_removes_one() -> None:
    sent: list = []
    make(FORM, sent).accept({"strategy": "aggressive", "passes": None})
    assert sent == [{"action": "accept", "content": {"strategy": "aggressive"}}]
    required_missing = make(FORM)
    with pytest.raises(ElicitationInvalid):
        required_missing.accept()
    with pytest.raises(TypeError):
        required_missing.accept(["strategy"])  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("answer", "outcome", "status"), [("decline", "decline", "declined"), ("cancel", "cancel", "cancelled")]
)
def test_decline_and_cancel(answer: str, outcome: str, status: str) -> None:
    sent: list = []
    e = make(FORM, sent)
    getattr(e, answer)(by="user")
    assert sent == [{"action": outcome}] and e.status == status and e.values is None


def test_answering_twice_raises_and_sends_nothing() -> None:
    sent: list = []
    e = make(FORM, sent)
    e.decline()
    with pytest.raises(ElicitationAlreadyAnswered):
        e.cancel()
    assert sent == [{"action": "decline"}]


def test_a_failed_send_leaves_it_pending() -> None:
    def broken(e: Elicitation, outcome: dict[str, Any]) -> None:
        raise ValueError("pipe closed")

    e = Elicitation("elic_1", 1, FORM, on_answer=broken)
    with pytest.raises(ValueError, match="pipe closed"):
        e.decline(by="user")
    assert e.pending and e.decided_by is None


def test_withdraw_ends_it_cancel_and_later_answers_are_too_late() -> None:
    sent: list = []
    e = make(FORM, sent)
    assert e.withdraw("the agent exited", by="agent exited") and not e.withdraw("again", by="x")
    assert e.outcome == {"action": "cancel"} and e.too_late == "the agent exited" and sent == []
    with pytest.raises(ElicitationTooLate):
        e.accept({"strategy": "balanced"})


def test_a_url_accepted_waits_for_the_agent_until_complete() -> None:
    sent: list = []
    e = make(URL, sent, scope_request={"id": 3, "method": "session/new"})
    assert e.session_id is None and e.scope_request == {"id": 3, "method": "session/new"} and e.fields == []
    assert e.url_view is not None and e.url_view.registrable_domain == "example.com"
    assert e.redacted_url == "https://auth.example.com/connect"
    assert not e.complete()  # not accepted yet: an early completion changes nothing
    with pytest.raises(ValueError):
        e.accept({"x": 1})
    e.accept()
    assert sent == [{"action": "accept"}] and e.status == "waiting"
    assert e.complete() and e.status == "completed" and not e.complete()


def test_a_waiting_url_can_be_dismissed_then_still_completes() -> None:
    e = make(URL)
    assert not e.dismiss()
    e.accept()
    assert e.dismiss() and e.status == "dismissed" and not e.dismiss()
    assert e.complete() and e.status == "completed"


@pytest.mark.parametrize(
    ("params", "problem"),
    [
        ({**FORM, "mode": "_custom"}, "not advertised"),
        ({**FORM, "mode": None}, "not advertised"),
        ({**FORM, "requestId": 1}, "exactly one scope"),
        ({k: v for k, v in FORM.items() if k != "sessionId"}, "exactly one scope"),
        ({**FORM, "sessionId": 7}, "must be a string"),
        ({**FORM, "requestedSchema": None}, "requestedSchema"),
        ({**URL, "url": None}, "elicitationId"),
        ([], "object"),
    ],
)
def test_check_params_names_what_makes_a_request_invalid(params: Any, problem: str) -> None:
    assert problem in (check_params(params) or "")


def test_check_params_accepts_both_modes_and_respects_what_was_advertised() -> None:
    assert check_params(FORM) is None and check_params(URL) is None
    assert "not advertised" in (check_params(URL, ("form",)) or "")


def test_the_state_records_it_in_the_timeline_and_tells_observers() -> None:
    clock = iter([10.0, 12.5])
    state = SessionState(clock=lambda: next(clock))
    changes: list = []
    state.subscribe(changes.append)
    bad = {
        **FORM,
        "requestedSchema": {"type": "object", "properties": {"a": {"type": "string", "minLength": "x"}}},
    }
    e = make(bad)
    state.add_elicitation(e)
    assert state.elicitations == {"elic_1": e} and state.pending_elicitations == [e]
    assert ("elicitation", "elic_1") in state.timeline
    assert any(d.code == "malformed-elicitation" for d in state.diagnostics)
    e.accept({"a": "ok"})
    state.elicitation_changed(e)
    assert state.pending_elicitations == [] and state.elicitation_times["elic_1"] == (10.0, 12.5)
    kinds = [(c.kind, c.id, c.fields, c.created) for c in changes if c.kind == "elicitation"]
    assert kinds == [("elicitation", "elic_1", (), True), ("elicitation", "elic_1", ("outcome",), False)]


def test_records_keep_values_and_only_the_redacted_url() -> None:
    state = SessionState(clock=lambda: 1.0)
    form, url = make(FORM), Elicitation("elic_2", 44, URL, scope_request={"id": 3, "method": "session/new"})
    state.add_elicitation(form)
    state.add_elicitation(url)
    form.accept({"strategy": "balanced"}, by="user")
    url.accept(by="user")
    state.elicitation_changed(form)
    rows = state.records("elicitations")
    assert [r["key"] for r in rows] == ["elic_1", "elic_2"]
    assert rows[0]["values"] == {"strategy": "balanced", "passes": 2} and rows[0]["fields"] == [
        "strategy",
        "passes",
        "notes",
    ]
    assert (rows[0]["action"], rows[0]["status"], rows[0]["tool_call_id"], rows[0]["decided_by"]) == (
        "accept", "accepted", "call_1", "user",
    )  # fmt: skip
    assert (rows[1]["url"], rows[1]["scope"], rows[1]["status"]) == (
        "https://auth.example.com/connect", "session/new", "waiting",
    )  # fmt: skip
    assert "state=abc" not in repr(rows)
    assert json.loads(json.dumps(url.to_dict())) == url.to_dict()
