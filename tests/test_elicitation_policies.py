"""Policies answer elicitations: the vocabulary, ``a | b``, ``when_headless``; permission rules never do."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from acp_notebook import frontend, policies
from acp_notebook.protocol.elicitation import Elicitation

FORM = {
    "sessionId": "s1",
    "mode": "form",
    "message": "Name?",
    "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
}


@pytest.fixture(autouse=True)
def nobody_watches() -> Any:
    frontend.reset()
    yield
    frontend.reset()


def ask() -> Elicitation:
    return Elicitation("elic_1", 1, FORM)


@pytest.mark.parametrize(
    ("policy", "answer"),
    [
        (policies.decline_elicitations(), "decline"),
        (policies.cancel_elicitations(), "cancel"),
        (policies.named("cancel"), "cancel"),
        (policies.named("decline"), "decline"),
        (policies.named("allow-once"), None),
        (policies.ask(), None),
        (policies.allow(kinds=["read"]), None),
        (policies.reject(), None),
        (policies.as_policy(lambda request: "ok"), None),
        (policies.allow() | policies.decline_elicitations(), "decline"),
        (policies.ask() | "cancel", "cancel"),
        (policies.when_headless(policies.decline_elicitations()), "decline"),
    ],
)
def test_what_each_policy_answers_an_elicitation(policy: Any, answer: Any) -> None:
    assert policy.answer_elicitation(ask()) == answer


def test_elicitation_policies_never_answer_a_permission_request() -> None:
    request = type("R", (), {"option_ids": ["ok"], "options": [], "subject": None, "raw": {}})()
    assert policies.decline_elicitations().answer(request) is None
    assert policies.decline_elicitations()(request) is None
    assert repr(policies.cancel_elicitations()) == "cancel_elicitations()"


def test_when_headless_stays_silent_once_a_view_rendered() -> None:
    frontend.mark_rendered()
    assert policies.when_headless(policies.cancel_elicitations()).answer_elicitation(ask()) is None


async def test_an_async_part_is_awaited_before_the_next() -> None:
    class Later(policies.Policy):
        def __init__(self, value: Any) -> None:
            self.value = value

        async def answer_elicitation(self, elicitation: Any, state: Any = None) -> Any:
            await asyncio.sleep(0)
            return self.value

    first = (Later(None) | policies.decline_elicitations()).answer_elicitation(ask())
    assert await first == "decline"
    assert await (Later({"name": "Ada"}) | "cancel").answer_elicitation(ask()) == {"name": "Ada"}


def test_elicitations_named_knows_three_names() -> None:
    assert policies.elicitations_named("decline").answer_elicitation(ask()) == "decline"
    assert policies.elicitations_named("ask").answer_elicitation(ask()) is None
    with pytest.raises(KeyError):
        policies.elicitations_named("accept")
