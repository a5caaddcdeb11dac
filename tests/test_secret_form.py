"""SecretForm (kernel side): values reach the callback and nothing secret is synced, sent or kept."""

from __future__ import annotations

import json

import pytest

from acp_notebook.widgets import SecretForm

from .support import record_comms

KEY = "sk-test-4b1d5ec7e7"
FIELDS = [
    {"name": "OPENAI_API_KEY", "label": "OpenAI API key"},
    {"name": "OPENAI_ORG", "label": "Organisation", "optional": True},
]


@pytest.fixture(autouse=True)
def recording(monkeypatch):
    return record_comms(monkeypatch, fresh_runtime=False)


class Calls:
    def __init__(self) -> None:
        self.submitted: list[dict] = []
        self.cancelled = 0

    def submit(self, values: dict) -> None:
        self.submitted.append(dict(values))

    def cancel(self) -> None:
        self.cancelled += 1


def make_form(fields=FIELDS):
    calls = Calls()
    return SecretForm(fields, "Log in to OpenAI", calls.submit, calls.cancel), calls


def from_page(form, content):
    """What ipywidgets does with a custom message from the page."""
    form._handle_msg({"content": {"data": {"method": "custom", "content": content}}, "buffers": []})


def everything_sent(log) -> str:
    return json.dumps([data for _, _, data, _ in log], default=repr)


def test_values_reach_on_submit_and_nothing_secret_is_synced(recording):
    form, calls = make_form()
    message = {"type": "submit", "values": {"OPENAI_API_KEY": KEY, "OPENAI_ORG": ""}}
    from_page(form, message)
    assert calls.submitted == [{"OPENAI_API_KEY": KEY}]  # the empty optional one left out
    assert message == {"type": "submit"}  # wiped in place: the kernel's parent message keeps no value
    state = form.get_state()
    assert KEY not in json.dumps(state, default=repr)
    assert state["fields"] == [
        {"name": "OPENAI_API_KEY", "label": "OpenAI API key", "optional": False},
        {"name": "OPENAI_ORG", "label": "Organisation", "optional": True},
    ]
    assert (state["phase"], state["status"]) == ("submitted", "submitted")
    assert KEY not in everything_sent(recording)  # no comm message from the kernel carried it
    assert KEY not in repr(vars(form))  # the widget kept no reference


def test_status_is_the_callers_and_a_second_submit_is_ignored(recording):
    form, calls = make_form()
    from_page(form, {"type": "submit", "values": {"OPENAI_API_KEY": KEY}})
    form.set_status("Logged in as dev@example.com")
    from_page(form, {"type": "submit", "values": {"OPENAI_API_KEY": "other"}})
    from_page(form, {"type": "cancel"})
    assert calls.submitted == [{"OPENAI_API_KEY": KEY}] and calls.cancelled == 0
    assert form.status == "Logged in as dev@example.com" and form.phase == "submitted"


@pytest.mark.parametrize(
    ("values", "reason"),
    [
        ({"OPENAI_ORG": KEY}, "OPENAI_API_KEY is required"),
        ({"OPENAI_API_KEY": ""}, "OPENAI_API_KEY is required"),
        ({"OPENAI_API_KEY": KEY, "PATH": KEY}, "unknown field PATH"),
        ({"OPENAI_API_KEY": [KEY]}, "OPENAI_API_KEY is not a text"),
        ({"OPENAI_API_KEY": KEY * 10_000}, "OPENAI_API_KEY is not a text"),
        ([KEY], "no values"),
    ],
)
def test_a_bad_submission_is_rejected_by_field_name(recording, values, reason):
    form, calls = make_form()
    from_page(form, {"type": "submit", "values": values})
    assert calls.submitted == [] and form.phase == "open"
    replies = [d["content"] for _, kind, d, _ in recording if kind == "comm_msg" and d["method"] == "custom"]
    assert len(replies) == 1 and replies[0]["type"] == "rejected" and reason in replies[0]["reason"]
    assert KEY not in everything_sent(recording)


def test_cancel(recording):
    form, calls = make_form()
    from_page(form, {"type": "cancel"})
    from_page(form, {"type": "submit", "values": {"OPENAI_API_KEY": KEY}})
    assert calls.cancelled == 1 and calls.submitted == []
    assert (form.phase, form.status) == ("cancelled", "cancelled")
    SecretForm(FIELDS, "no cancel handler", lambda values: None)._handle({"type": "cancel"})


def test_a_failing_handler_shows_its_type_only(recording):
    def fails(values):
        raise RuntimeError(f"bad key {values['OPENAI_API_KEY']}")

    form = SecretForm(FIELDS, "t", fails)
    from_page(form, {"type": "submit", "values": {"OPENAI_API_KEY": KEY}})
    assert form.status == "submitted, but the handler failed (RuntimeError)"
    assert KEY not in everything_sent(recording)


def test_fields_keep_names_labels_and_flags_only(recording):
    form, _ = make_form([{"name": "TOKEN", "value": KEY, "placeholder": KEY}])
    assert form.fields == [{"name": "TOKEN", "label": "TOKEN", "optional": False}]
    assert KEY not in everything_sent(recording)
    for bad in ([{"label": "no name"}], [{"name": "A"}, {"name": "A"}], ["A"]):
        with pytest.raises(ValueError, match="distinct non-empty 'name'"):
            SecretForm(bad, "t", lambda values: None)
