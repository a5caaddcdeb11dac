"""The demo agent's elicitation scenario, driven by a raw JSON-RPC client (no acp_notebook client):
what it asks, in which scope, only in the modes the client advertised, every message by the v1 / v2
schema, and what it does with accept, decline, cancel, a bad answer and a withdrawn question."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from acp_notebook.demo_agent import forms
from acp_notebook.demo_agent.elicitation import CONNECT_URL, answer_of, modes

from .test_demo_agent import CWD, Driver, of_kind

BOTH = {"form": {}, "url": {}}
GOOD = {
    "name": "autumn",
    "version": "1.2.3",
    "contact": "dev@example.org",
    "homepage": "https://example.org/notes",
    "day": "2026-12-24",
    "announce": "2026-12-24T09:30:00Z",
    "codename": "walrus",
    "strategy": "aggressive",
    "channel": "beta",
    "coverage": 92.5,
    "retries": 3,
    "notify": False,
    "platforms": ["linux", "windows"],
    "reviewers": ["ada", "alan"],
}
Answer = Callable[[dict], dict | None]


class Asker(Driver):
    """A raw client that answers `elicitation/create` with `self.elicit(params)` (None: hold it)."""

    def __init__(self, *args: str, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.elicit: Answer = lambda params: {"action": "cancel"}
        self.held_elicitations: list[dict] = []

    def _answer(self, message: dict) -> None:
        if message.get("method") == "$/cancel_request":  # withdrawn: answered `cancel`, as our client does
            withdrawn = [m for m in self.held_elicitations if m["id"] == message["params"]["requestId"]]
            for held in withdrawn:
                self.held_elicitations.remove(held)
                self.respond(held["id"], {"action": "cancel"})
            return
        if message.get("method") == "elicitation/create" and "id" in message:
            answer = self.elicit(message["params"])
            if answer is None:
                self.held_elicitations.append(message)
            else:
                self.respond(message["id"], answer)
            return
        super()._answer(message)

    def initialize_with(self, version: int, elicitation: Any) -> dict:
        """`initialize` advertising `elicitation` in the version's key (None: not at all)."""
        extra = {} if elicitation is None else {"elicitation": elicitation}
        params = {
            "protocolVersion": version,
            "info": {"name": "raw-test-client", "version": "0"},
            "capabilities": extra if version == 2 else {},
            "clientInfo": {"name": "raw-test-client", "version": "0"},
            "clientCapabilities": {"terminal": False, **(extra if version == 1 else {})},
        }
        result = self.call("initialize", params)["result"]
        self.version = result["protocolVersion"]
        return result

    def prompt(self, session_id: str, text: str = "Fix the bug") -> int:
        self.root = session_id
        return super().prompt(session_id, text)

    def finish_turn(self, req_id: int, timeout: float = 10.0) -> str:
        """The end of the root session's turn (a subagent's `idle` is not it)."""
        if self.version == 1:
            return super().finish_turn(req_id, timeout)

        def root_idle(m: dict) -> bool:
            update = m.get("params", {}).get("update", {})
            ours = m.get("params", {}).get("sessionId") == self.root
            return (
                ours and update.get("state") == "idle" and any(r.get("id") == req_id for r in self.messages)
            )

        return self.until(root_idle, timeout)["params"]["update"]["stopReason"]

    def asked(self) -> list[dict]:
        """Every `elicitation/create` request the agent sent."""
        return [m for m in self.messages if m.get("method") == "elicitation/create" and "id" in m]

    def said(self) -> str:
        """Everything the agent said in its messages."""
        chunks = of_kind(self.updates(), "agent_message_chunk")
        return "".join(u["content"]["text"] for u in chunks)


def by_message(answers: dict[str, dict | None]) -> Answer:
    """Answer each question by the first words of its `message` (any other: cancel)."""
    cancel = {"action": "cancel"}
    return lambda params: next((v for k, v in answers.items() if params["message"].startswith(k)), cancel)


def turn(version: int, elicitation: Any, answer: Answer, *args: str, text: str = "fill in a form") -> Asker:
    """Initialize advertising `elicitation`, open a session and play one prompt."""
    driver = Asker(*args)
    spawn_list.append(driver)
    driver.elicit = answer
    driver.initialize_with(version, elicitation)
    session_id = driver.call("session/new", {"cwd": CWD, "mcpServers": []})["result"]["sessionId"]
    driver.stop_reason = driver.finish_turn(driver.prompt(session_id, text))
    driver.session_id = session_id
    return driver


spawn_list: list[Asker] = []


@pytest.fixture(autouse=True)
def _close_askers():
    yield
    while spawn_list:
        spawn_list.pop().close()


ACCEPT_ALL = by_message(
    {
        "How should": {"action": "accept", "content": GOOD},
        "Sign in": {"action": "accept"},
        "Which test runner": None,
    }
)


# -- pure helpers -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("caps", "found"),
    [
        ({"elicitation": {"form": {}, "url": {}}}, {"form", "url"}),
        ({"elicitation": {"form": {}}}, {"form"}),
        ({"elicitation": {"url": {}, "form": None}}, {"url"}),
        ({"elicitation": {}}, set()),
        ({"elicitation": None}, set()),
        ({}, set()),
    ],
)
def test_modes_are_the_present_non_null_keys(caps, found):
    assert modes(caps) == found


def test_an_unknown_action_counts_as_cancel():
    assert answer_of({"action": "_later"}) == ("cancel", {})
    assert answer_of({"action": "accept", "content": None}) == ("accept", {})
    assert answer_of("junk") == ("cancel", {})


def test_the_agent_checks_every_constraint_of_the_release_form():
    assert forms.problems(forms.RELEASE, GOOD) == []
    defaults = {k: p["default"] for k, p in forms.RELEASE["properties"].items() if "default" in p}
    assert forms.problems(forms.RELEASE, defaults) == []
    bad = {
        "name": "ab",
        "version": "1.2",
        "contact": "nobody",
        "homepage": "not a uri",
        "day": "2026-13-01",
        "announce": "2026-12-24",
        "codename": "x" * 21,
        "strategy": "reckless",
        "channel": "Beta",
        "coverage": 100.5,
        "retries": 2.5,
        "notify": "yes",
        "platforms": [],
        "reviewers": ["ada", "grace", "alan"],
        "extra": 1,
    }
    found = forms.problems(forms.RELEASE, bad)
    assert sorted({p.split(":")[0] for p in found}) == sorted(bad)
    assert forms.problems(forms.RELEASE, {}) == [f"{k}: required" for k in forms.RELEASE["required"]]
    assert forms.problems(forms.RELEASE, {**GOOD, "retries": True}) == ["retries: not an integer"]
    assert forms.problems(forms.RELEASE, {**GOOD, "platforms": ["linux", "linux"]}) == [
        "platforms: a choice is repeated"
    ]


def test_every_property_schema_variant_is_in_the_release_form():
    props = forms.RELEASE["properties"].values()
    strings = [p for p in props if p["type"] == "string"]
    assert {p.get("format") for p in strings} >= {"email", "uri", "date", "date-time", "_demo-codename"}
    assert any("pattern" in p for p in strings) and any(
        "minLength" in p and "maxLength" in p for p in strings
    )
    assert any("enum" in p for p in strings) and any("oneOf" in p for p in strings)
    assert {p["type"] for p in props} == {"string", "number", "integer", "boolean", "array"}
    arrays = [p for p in props if p["type"] == "array"]
    assert any("enum" in p["items"] for p in arrays) and any("anyOf" in p["items"] for p in arrays)
    assert any("minItems" in p for p in arrays) and any("maxItems" in p for p in arrays)
    assert all("default" in p for p in props if p["type"] in ("number", "integer", "boolean"))


# -- the scenario over the wire ----------------------------------------------------------------------


@pytest.mark.parametrize("version", [2, 1])
def test_every_message_is_by_the_schema_and_the_answers_are_used(version):
    driver = turn(version, BOTH, ACCEPT_ALL, "--scenario", "elicitation")
    assert driver.stop_reason == "end_turn"
    driver.assert_all_valid()
    asked = driver.asked()
    tagger = ["form"] if version == 2 else []  # a subagent's question (v2 only)
    assert [a["params"]["mode"] for a in asked] == ["form", "form", "url", "form", *tagger]
    profile, release, url = (a["params"] for a in asked[:3])
    assert "requestId" in profile and "sessionId" not in profile
    assert release["sessionId"] == driver.session_id and release["toolCallId"] == "call_release"
    assert release["requestedSchema"] == forms.release_form(version)
    assert ("format" in release["requestedSchema"]["properties"]["codename"]) == (version == 2)
    assert url["url"] == CONNECT_URL.format(url["elicitationId"]) and "toolCallId" not in url
    completes = [m for m in driver.messages if m.get("method") == "elicitation/complete"]
    assert [c["params"] for c in completes] == [{"elicitationId": url["elicitationId"]}]
    cancels = [m["params"] for m in driver.messages if m.get("method") == "$/cancel_request"]
    assert cancels == [{"requestId": asked[3]["id"]}]
    said = driver.said()
    assert "Release **autumn** 1.2.3 with the aggressive strategy on linux, windows" in said
    assert "Reviewers: Ada Lovelace, Alan Turing" in said and "coverage=92.5" in said
    assert "Aggressive: I'll skip the slow checks" in said and "connected to the release service" in said
    assert "withdrew it" in said and "careful** profile (cancel at session/new)" in said
    if version == 2:
        child = f"{driver.session_id}.tagger"
        assert asked[4]["params"]["sessionId"] == child and asked[4]["params"]["requestedSchema"] == forms.TAG
        reports = of_kind(driver.updates(), "session_message_chunk")
        assert (
            "".join(u["content"]["text"] for u in reports) == "You dismissed the question: I did not tag it."
        )


def test_the_request_scoped_question_names_the_pending_session_new():
    driver = Asker("--scenario", "elicitation")
    spawn_list.append(driver)
    driver.elicit = lambda params: None
    driver.initialize_with(2, {"form": {}})
    new_id = driver.request("session/new", {"cwd": CWD, "mcpServers": []})
    question = driver.until(lambda m: m.get("method") == "elicitation/create", what="the question")
    assert question["params"]["requestId"] == new_id
    assert question["params"]["requestedSchema"] == forms.PROFILE
    assert not any(m.get("id") == new_id for m in driver.messages if "result" in m)
    content = {"profile": "quick", "verbose": True}
    driver.respond(question["id"], {"action": "accept", "content": content})
    driver.until(lambda m: m.get("id") == new_id and "result" in m, what="session/new's answer")
    driver.elicit = by_message({"How should": {"action": "decline"}, "Which test runner": None})
    session_id = next(m["result"]["sessionId"] for m in driver.messages if m.get("id") == new_id)
    driver.finish_turn(driver.prompt(session_id, "elicitation"))
    assert "the **quick** profile (accepted at session/new)" in driver.said()
    driver.assert_all_valid()


@pytest.mark.parametrize("action", ["decline", "cancel"])
def test_decline_and_cancel_leave_the_release_unprepared(action):
    answer = by_message(
        {
            "How should": {"action": action},
            "Sign in": {"action": action},
            "Which test runner": None,  # held: the agent withdraws it
        }
    )
    driver = turn(2, BOTH, answer)
    release = [u for u in driver.updates() if u.get("toolCallId") == "call_release"]
    assert release[-1]["status"] == "failed"
    said = driver.said()
    opening = "You declined" if action == "decline" else "You dismissed the question"
    assert said.count(opening) == 2 and "I left the release unprepared" in said
    assert "I withdrew it" in said
    assert not [m for m in driver.messages if m.get("method") == "elicitation/complete"]
    driver.assert_all_valid()


def test_an_answer_that_does_not_fit_is_refused_by_the_agent():
    answer = by_message(
        {
            "How should": {"action": "accept", "content": {**GOOD, "retries": 9}},
            "Sign in": {"action": "decline"},
            "Which test runner": None,
        }
    )
    driver = turn(2, BOTH, answer)
    release = [u for u in driver.updates() if u.get("toolCallId") == "call_release"]
    assert release[-1]["status"] == "failed" and "retries: 9 is outside [0, 5]" in driver.said()


def test_an_answer_before_the_withdrawal_is_used():
    """At speed 1 the agent waits 1.5 s before it withdraws; this client answers at once."""
    answer = by_message({"Which test runner": {"action": "accept", "content": {"runner": "nose"}}})
    driver = turn(2, {"form": {}}, answer, "--speed", "1")
    assert "You answered before I found it: nose." in driver.said()
    assert not [m for m in driver.messages if m.get("method") == "$/cancel_request"]


def test_states_while_waiting_for_the_user():
    driver = turn(2, {"form": {}}, ACCEPT_ALL)
    root = [
        m["params"]["update"]
        for m in driver.messages
        if m.get("method") == "session/update" and m["params"]["sessionId"] == driver.session_id
    ]
    states = [u["state"] for u in of_kind(root, "state_update")]
    asking = ["requires_action", "running"]
    assert states == [
        "running",
        *asking,
        *asking,
        *asking,
        "idle",
    ]  # the form, the withdrawn one, the tagger's


@pytest.mark.parametrize(
    ("caps", "modes_asked", "note"),
    [
        (None, [], "advertises no elicitation modes"),
        ({}, [], "advertises no elicitation modes"),
        ({"form": None, "url": {}}, ["url"], "did not advertise form mode"),
        ({"form": {}}, ["form", "form", "form"], "did not advertise url mode"),
    ],
)
@pytest.mark.parametrize("version", [2, 1])
def test_only_advertised_modes_are_asked(version, caps, modes_asked, note):
    driver = turn(version, caps, ACCEPT_ALL, "--scenario", "elicitation")
    in_session = [a["params"]["mode"] for a in driver.asked() if "sessionId" in a["params"]]
    assert in_session == modes_asked[: 2 if version == 1 and len(modes_asked) == 3 else None]
    assert note in driver.said()
    driver.assert_all_valid()


def test_cancelling_the_turn_withdraws_the_pending_question():
    driver = Asker()
    spawn_list.append(driver)
    driver.elicit = lambda params: None
    driver.initialize_with(2, BOTH)
    session_id = driver.call("session/new", {"cwd": CWD, "mcpServers": []})["result"]["sessionId"]
    prompt = driver.prompt(session_id, "fill in a form")
    question = driver.until(lambda m: m.get("method") == "elicitation/create", what="the form")
    driver.notify("session/cancel", {"sessionId": session_id})
    assert driver.finish_turn(prompt) == "cancelled"
    cancels = [m["params"] for m in driver.messages if m.get("method") == "$/cancel_request"]
    assert cancels == [{"requestId": question["id"]}]
    driver.respond(question["id"], {"action": "cancel"})  # late, as a client answers a withdrawn one
    driver.assert_all_valid()


def test_the_router_sends_form_words_to_the_scenario():
    from acp_notebook.demo_agent import router

    assert router.route("fill in a form") == router.ELICITATION
    assert router.route("Please fill in a form about the bug") == router.ELICITATION
    assert router.route("fix the failing test") == router.STORY
