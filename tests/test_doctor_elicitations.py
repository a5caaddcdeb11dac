"""The doctor's elicitation rules (``doctor_elicitations``): each on a hand-written trace that
triggers it and one that does not, in both versions, each citing sentences the spec really has."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from acp_notebook.playback import doctor_spec
from acp_notebook.playback.doctor_rules import diagnose

from .test_doctor import SCHEMAS, codes, inn, out

SID = "sess_1"
SPEC = Path("/work/shared/spec") if Path("/work/shared/spec").exists() else None
BOTH = {"form": {}, "url": {}}
NAME = {"type": "object", "properties": {"name": {"type": "string"}}}


def init(version: int = 2, offer: Any = BOTH) -> list[dict[str, Any]]:
    """The client's ``initialize`` offering ``offer`` (None: no elicitation key) and the answer."""
    caps = {} if offer is None else {"elicitation": offer}
    key = "capabilities" if version == 2 else "clientCapabilities"
    other = "clientCapabilities" if version == 2 else "capabilities"  # our v2 offer carries both
    params = {"protocolVersion": version, key: caps, other: {}}
    return [
        out({"id": 0, "method": "initialize", "params": params}),
        inn({"id": 0, "result": {"protocolVersion": version}}),
    ]


def ask(rid: int, mode: str = "form", **params: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"mode": mode, "message": "?", **params}
    if "requestId" not in body:
        body.setdefault("sessionId", SID)
    if mode == "form":
        body.setdefault("requestedSchema", NAME)
    return inn({"id": rid, "method": "elicitation/create", "params": body})


def url(rid: int, elicitation_id: str = "el-1", **params: Any) -> dict[str, Any]:
    return ask(rid, "url", url="https://a.example/x", elicitationId=elicitation_id, **params)


def answer(rid: int, action: str = "accept") -> dict[str, Any]:
    return out({"id": rid, "result": {"action": action}})


def complete(elicitation_id: str = "el-1") -> dict[str, Any]:
    return inn({"method": "elicitation/complete", "params": {"elicitationId": elicitation_id}})


def new_session(rid: int = 1) -> dict[str, Any]:
    return out({"id": rid, "method": "session/new", "params": {"cwd": "/"}})


def opened(rid: int = 1) -> dict[str, Any]:
    return inn({"id": rid, "result": {"sessionId": SID}})


# -- the mode -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("version", [1, 2])
def test_a_mode_not_advertised(version: int) -> None:
    found = diagnose([*init(version, {"form": {}, "url": None}), url(5), ask(6)])
    assert [(f.code, f.index, f.kind) for f in found] == [("elicitation-mode-not-advertised", 2, "violation")]
    assert "'url'" in found[0].message and "`form`" in found[0].message
    assert f"v{version}/elicitation.mdx (Checking support)" in found[0].cite
    assert "**MUST NOT** request a mode the Client has not advertised" in found[0].cite
    assert codes([*init(version), url(5), ask(6)]) == []


def test_no_elicitation_offered_flags_every_mode_and_unknown_modes() -> None:
    found = diagnose([*init(2, None), ask(5), url(6), ask(7, "_custom")])
    assert [f.code for f in found] == ["elicitation-mode-not-advertised"] * 3
    assert "advertised none" in found[0].message
    assert codes([*init(2, {}), ask(5)]) == ["elicitation-mode-not-advertised"]  # {} offers no mode


def test_v2_reads_capabilities_and_v1_client_capabilities() -> None:
    v2_offer_in_v1_key = [*init(2, None)]
    v2_offer_in_v1_key[0]["message"]["params"]["clientCapabilities"] = {"elicitation": BOTH}
    assert codes([*v2_offer_in_v1_key, ask(5)]) == ["elicitation-mode-not-advertised"]


def test_without_the_initialize_the_offer_is_unknown() -> None:
    assert codes([ask(5), url(6, requestId=99), complete("nobody")]) == []


# -- request scope ------------------------------------------------------------------------------------
def test_a_request_scoped_one_must_name_a_pending_request() -> None:
    ok = [*init(), new_session(1), ask(5, requestId=1), answer(5), opened(1)]
    assert codes(ok) == []
    late = [*init(), new_session(1), opened(1), ask(5, requestId=1)]
    found = diagnose(late)
    assert [(f.code, f.index) for f in found] == [("elicitation-unknown-request", 4)]
    assert "request 1" in found[0].message
    assert "v2.schema.json (ElicitationRequestScope)" in found[0].cite
    assert "The pending Client-to-Agent request this elicitation is tied to." in found[0].cite
    never = [*init(1), ask(5, requestId="x-7")]
    found = diagnose(never)
    assert [f.code for f in found] == ["elicitation-unknown-request"]
    assert "The request this elicitation is tied to." in found[0].cite  # v1's wording
    own = [*init(), ask(5, requestId=5)]  # the agent's own request id is no request of the client's
    assert codes(own) == ["elicitation-unknown-request"]


def test_a_request_of_the_initialize_itself_counts_as_pending() -> None:
    entries = [
        out(
            {
                "id": 0,
                "method": "initialize",
                "params": {"protocolVersion": 2, "capabilities": {"elicitation": BOTH}},
            }
        )
    ]
    entries += [ask(5, requestId=0), answer(5), inn({"id": 0, "result": {"protocolVersion": 2}})]
    assert codes(entries) == []


# -- URL completion -----------------------------------------------------------------------------------
def test_complete_for_an_unknown_id() -> None:
    found = diagnose([*init(), url(5), answer(5), complete("el-2"), complete("el-1")])
    assert [(f.code, f.index) for f in found] == [("elicitation-complete-unknown", 4)]
    assert "'el-2'" in found[0].message
    assert "include the original `elicitationId`" in found[0].cite
    assert codes([*init(), url(5), answer(5), complete()]) == []
    assert codes([*init(), url(5), answer(5)]) == []  # never completed: a MAY, not flagged


def test_an_outstanding_id_reused() -> None:
    found = diagnose([*init(), url(5), answer(5), url(6)])
    assert [(f.code, f.index) for f in found] == [("elicitation-id-reused", 4)]
    assert "unique among outstanding URL elicitations" in found[0].cite
    assert codes([*init(), url(5), answer(5), complete(), url(6)]) == []  # completed: free again
    assert codes([*init(), url(5), answer(5, "decline"), url(6)]) == []  # declined: ended
    assert codes([*init(), url(5), url(6, "el-2")]) == []


# -- secrets in a form --------------------------------------------------------------------------------
def test_a_form_asking_for_a_secret() -> None:
    schema = {"type": "object", "properties": {"user": {"type": "string"}, "apiKey": {"type": "string"}}}
    found = diagnose([*init(), ask(5, requestedSchema=schema)])
    assert [(f.code, f.index) for f in found] == [("elicitation-secret-in-form", 2)]
    assert "'apiKey'" in found[0].message and "**MUST NOT** be used to request secrets" in found[0].cite
    named = {"type": "object", "properties": {"password": {"type": "string", "title": "Yours"}}}
    assert codes([ask(5, requestedSchema=named)]) == ["elicitation-secret-in-form"]  # no start needed
    formatted = {"type": "object", "properties": {"x": {"type": "string", "format": "password"}}}
    assert codes([*init(), ask(5, requestedSchema=formatted)]) == ["elicitation-secret-in-form"]
    worded = {"type": "object", "properties": {"q0": {"type": "string", "title": "Which API key env var?"}}}
    assert codes([*init(), ask(5, requestedSchema=worded)]) == []  # a question about a key: not flagged
    plain = {"type": "object", "properties": {"max_tokens": {"type": "integer"}, "email": {"type": "string"}}}
    assert codes([*init(), ask(5, requestedSchema=plain)]) == []


# -- a tool call never reported -----------------------------------------------------------------------
def tool_call(call_id: str) -> dict[str, Any]:
    body = {"sessionUpdate": "tool_call_update", "toolCallId": call_id, "title": "Ask"}
    return inn({"method": "session/update", "params": {"sessionId": SID, "update": body}})


def test_a_tool_call_its_session_never_reports() -> None:
    found = diagnose([*init(), ask(5, toolCallId="call_ask"), answer(5)])
    assert [(f.code, f.index, f.kind, f.severity) for f in found] == [
        ("elicitation-unknown-tool-call", 2, "hazard", "warning")
    ]
    assert "'call_ask'" in found[0].message and "ElicitationSessionScope" in found[0].cite
    assert codes([*init(), tool_call("c1"), ask(5, toolCallId="c1")]) == []
    assert codes([*init(), ask(5, toolCallId="c1"), tool_call("c1")]) == []  # reported later: placed then
    other = inn({"method": "session/update", "params": {"sessionId": "other", "update": {
        "sessionUpdate": "tool_call_update", "toolCallId": "c1"}}})  # fmt: skip
    assert codes([*init(), other, ask(5, toolCallId="c1")]) == ["elicitation-unknown-tool-call"]


# -- the cites are the spec's words --------------------------------------------------------------------
CITES = [
    doctor_spec.ELICITATION_MODE,
    doctor_spec.ELICITATION_COMPLETE,
    doctor_spec.ELICITATION_ID_REUSED,
    doctor_spec.ELICITATION_SECRET,
]


@pytest.mark.skipif(SPEC is None, reason="the spec pages are not on this machine")
@pytest.mark.parametrize("version", [1, 2])
def test_every_quoted_sentence_is_in_the_page(version: int) -> None:
    assert SPEC is not None
    page = " ".join((SPEC / f"acp-docs/v{version}/elicitation.mdx").read_text().split())
    for cite in CITES:
        for quoted in re.findall(r'"([^"]+)"', cite.format(v=version)):
            assert quoted.rstrip(".") in page, quoted


@pytest.mark.parametrize("version", [1, 2])
def test_the_request_scope_cite_is_the_schema_s(version: int) -> None:
    defs = json.loads((SCHEMAS / f"v{version}.schema.json").read_text())["$defs"]
    scope = defs["ElicitationRequestScope"]
    assert scope["properties"]["requestId"]["description"] == doctor_spec.REQUEST_SCOPE_FIELD[version]
    cite = doctor_spec.ELICITATION_REQUEST_SCOPE.format(v=version, field="")
    first = re.findall(r'"([^"]+)"', cite)[0]
    assert scope["description"].startswith(first)
    session = defs["ElicitationSessionScope"]
    quoted = re.findall(r'"([^"]+)"', doctor_spec.ELICITATION_TOOL_CALL.format(v=version))
    assert quoted[0] in " ".join(session["description"].split())
    assert session["properties"]["toolCallId"]["description"].startswith(quoted[1])
