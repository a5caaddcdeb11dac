"""Elicitations in everything that reads a session back (issue 20, item 6): the trace records every
request, answer, completion and withdrawal with the URL as ``scheme://host/path`` only and a
secret-looking field's value blanked; a replay rebuilds the same elicitations with the same
outcomes; the replay agent plays them to a live client; the X-ray links their messages; saved
snapshots and exports keep no query string."""

from __future__ import annotations

import asyncio
import base64
import json
import sys
from pathlib import Path
from typing import Any

import pytest

import acp_notebook
from acp_notebook import frontend
from acp_notebook.client.agent import Agent
from acp_notebook.playback.memory import MemoryStream
from acp_notebook.playback.xray import Links
from acp_notebook.playback.xray_source import XRaySource
from acp_notebook.protocol import trace
from acp_notebook.protocol.elicitation_records import (
    Redactor,
    looks_secret,
    redact_create,
    scrub,
    secret_fields,
)
from acp_notebook.replay_agent import Player
from acp_notebook.widgets.snapshot import snapshot_of, timeline_items
from acp_notebook.widgets.snapshot_pages import SavedSnapshot
from acp_notebook.widgets.subtree import ViewTree

from .support import recording as recording  # the recording comm (widgets made here)
from .support import until_async, update

SECRET = "code=Q7SECRETq"  # the URL's query: in no record
URL = f"https://login.example.com/connect?{SECRET}#frag-9f3"
SHOWN = "https://login.example.com/connect"
FORM = {
    "type": "object",
    "title": "Deploy",
    "properties": {
        "target": {"type": "string", "enum": ["staging", "prod"], "default": "staging"},
        "replicas": {"type": "integer", "minimum": 1, "maximum": 9},
        "notify": {"type": "boolean", "default": True},
        "apiKey": {"type": "string", "title": "API key"},
        "tags": {"type": "array", "items": {"enum": ["a", "b", "c"]}},
    },
    "required": ["target", "replicas"],
}
OFFER = {"protocolVersion": 2, "capabilities": {"elicitation": {"form": {}, "url": {}}}}
ASK_NAME = {"type": "object", "properties": {"workspace": {"type": "string"}}, "required": ["workspace"]}


def create(rid: int, **params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "method": "elicitation/create", "params": params}


def notify(method: str, **params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": method, "params": params}


class Peer:
    """The agent side: asks a request-scoped question while ``session/new`` waits (answering it
    once that question is answered), records what the client answers."""

    def __init__(self) -> None:
        self.stream = MemoryStream(on_sent=self._on_sent)
        self.new_id: Any = None

    def _on_sent(self, message: Any) -> None:
        if not isinstance(message, dict):
            return
        if message.get("method") == "initialize":
            self.send({"jsonrpc": "2.0", "id": message["id"], "result": {"protocolVersion": 2}})
        elif message.get("method") == "session/new":
            self.new_id = message["id"]
            self.send(
                create(90, requestId=message["id"], mode="form", message="Name it", requestedSchema=ASK_NAME)
            )
        elif message.get("id") == 90 and "method" not in message:
            self.send({"jsonrpc": "2.0", "id": self.new_id, "result": {"sessionId": "s1"}})

    def send(self, message: dict[str, Any]) -> None:
        self.stream.push(json.dumps(message))

    async def settled(self) -> None:
        await asyncio.wait_for(self.stream.idle(), 5)

    def answer_to(self, rid: int) -> Any:
        return next(
            m for m in self.stream.sent if isinstance(m, dict) and m.get("id") == rid and "method" not in m
        )


async def record(path: Path) -> tuple[Agent, Any, Peer]:
    """A session with a request-scoped form (answered by the agent's handler), a form on a tool call
    (accepted by the user, a secret-looking field among its values), a URL (accepted, then
    completed), a withdrawn form and a declined one; the agent stays open (close it)."""
    peer = Peer()
    agent = Agent(peer.stream, record=path, elicitation_handler=lambda e: {"workspace": "demo"})
    await agent.initialize(2)
    session = await agent.new_session("/tmp")
    session.prompt_task("go")
    peer.send(update({"sessionUpdate": "state_update", "state": "running"}))
    peer.send(
        update(
            {"sessionUpdate": "tool_call_update", "toolCallId": "c1", "title": "Deploy", "status": "pending"}
        )
    )
    peer.send(
        create(
            91, sessionId="s1", toolCallId="c1", mode="form", message="Deploy where?", requestedSchema=FORM
        )
    )
    url_params = {"mode": "url", "elicitationId": "el-1", "url": URL}
    peer.send(create(92, sessionId="s1", message=f"Sign in at {URL} please", **url_params))
    peer.send(create(93, sessionId="s1", mode="form", message="Withdrawn", requestedSchema=ASK_NAME))
    peer.send(create(94, sessionId="s1", mode="form", message="Declined", requestedSchema=ASK_NAME))
    await peer.settled()
    form, link, _, declined = session.pending_elicitations
    form.accept({"replicas": 3, "apiKey": "sk-typed-by-user", "tags": ["a", "c"]}, by="user")
    link.accept(by="handler")  # not a click: the URL is printed for the user to open
    declined.decline(by="user")
    await peer.settled()
    peer.send(notify("$/cancel_request", requestId=93))
    peer.send(notify("elicitation/complete", elicitationId="el-1"))
    peer.send(notify("elicitation/complete", elicitationId="el-unknown"))
    peer.send(update({"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"}))
    await peer.settled()
    await until_async(lambda: not session.running, 5)
    return agent, session, peer


def summary(e: Any) -> dict[str, Any]:
    """What a replay must give back of an elicitation (the message as records keep it)."""
    return {
        "key": e.key,
        "mode": e.mode,
        "message": scrub(e.message, [e.url] if e.url else []),
        "session_id": e.session_id,
        "tool_call_id": e.tool_call_id,
        "scope": (e.scope_request or {}).get("method"),
        "url": e.redacted_url,
        "fields": [f.name for f in e.fields],
        "status": e.status,
        "outcome": e.outcome,
        "decided_by": e.decided_by,
    }


def recorded_outcome(e: Any) -> Any:
    """The outcome as the trace holds it: a secret-looking field's value blanked."""
    if e.values is None:
        return e.outcome
    secret = secret_fields(e.schema)
    return {**e.outcome, "content": {k: "<redacted>" if k in secret else v for k, v in e.values.items()}}


@pytest.fixture
async def recorded(tmp_path: Path) -> Any:
    path = tmp_path / "elicit.jsonl"
    agent, session, peer = await record(path)
    yield path, agent, session, peer
    await agent.close()


# -- live, then recorded ------------------------------------------------------------------------------
async def test_live_answers_reach_the_agent(recorded: Any) -> None:
    _, agent, session, peer = recorded
    assert peer.answer_to(90)["result"] == {"action": "accept", "content": {"workspace": "demo"}}
    assert peer.answer_to(91)["result"]["content"]["apiKey"] == "sk-typed-by-user"  # the agent gets it
    assert peer.answer_to(92)["result"] == {"action": "accept"}
    assert peer.answer_to(93)["result"] == {"action": "cancel"}
    assert peer.answer_to(94)["result"] == {"action": "decline"}
    statuses = [e.status for e in session.state.elicitations.values()]
    assert statuses == ["accepted", "completed", "cancelled", "declined"]
    assert [e.status for e in agent.elicitation_state.elicitations.values()] == ["accepted"]


async def test_the_trace_holds_every_message_and_no_secret(recorded: Any) -> None:
    path, *_ = recorded
    text = path.read_text()
    assert SECRET not in text and "frag-9f3" not in text and "sk-typed-by-user" not in text
    _, entries = trace.parse(text.splitlines())
    methods = [e["message"].get("method") for e in entries if isinstance(e.get("message"), dict)]
    assert methods.count("elicitation/create") == 5 and methods.count("elicitation/complete") == 2
    assert "$/cancel_request" in methods
    url_entry = next(
        e for e in entries if _method(e) == "elicitation/create" and e["message"]["params"]["mode"] == "url"
    )
    assert url_entry["message"]["params"]["url"] == SHOWN
    assert url_entry["message"]["params"]["message"] == f"Sign in at {SHOWN} please"
    assert url_entry["redacted"] == ["params.message", "params.url"]
    answer = next(e for e in entries if e["dir"] == "out" and e["message"].get("id") == 91)
    assert answer["message"]["result"]["content"] == {
        "target": "staging", "replicas": 3, "notify": True, "apiKey": "<redacted>", "tags": ["a", "c"]
    }  # fmt: skip
    assert answer["redacted"] == ["result.content.apiKey"] and answer["decided_by"] == "user"
    scoped = next(e for e in entries if e["dir"] == "out" and e["message"].get("id") == 90)
    assert scoped["decided_by"] == "handler"


async def test_the_ring_is_redacted_too_and_the_client_kept_the_url(recorded: Any) -> None:
    _, agent, session, _ = recorded
    assert SECRET not in json.dumps(list(agent.traffic)) and "sk-typed" not in json.dumps(list(agent.traffic))
    link = next(e for e in session.state.elicitations.values() if e.mode == "url")
    assert link.url == URL  # the live card shows it whole: only records drop the query


def _method(entry: dict[str, Any]) -> Any:
    message = entry.get("message")
    return message.get("method") if isinstance(message, dict) else None


# -- replay -------------------------------------------------------------------------------------------
async def test_replay_rebuilds_the_elicitations_with_their_outcomes(capsys: Any, recorded: Any) -> None:
    path, agent, session, _ = recorded
    assert (
        capsys.readouterr().out.count(f"open this URL yourself to continue (nothing was opened): {URL}") == 1
    )
    rep = acp_notebook.replay(path)
    try:
        live = [summary(e) for e in session.state.elicitations.values()]
        for item, e in zip(live, session.state.elicitations.values(), strict=True):
            item["outcome"] = recorded_outcome(e)
        assert [summary(e) for e in rep.state.elicitations.values()] == live
        scoped = [summary(e) for e in rep.agent.elicitation_state.elicitations.values()]
        assert scoped == [summary(e) for e in agent.elicitation_state.elicitations.values()]
        assert scoped[0]["scope"] == "session/new" and scoped[0]["decided_by"] == "handler"
        assert rep.state.pending_elicitations == [] and rep.agent.pending_elicitations == []
        assert "elicitation-complete-ignored" in [d.code for d in rep.agent.diagnostics]
        rep.seek(0)
        rep.seek(len(rep))  # rebuilt from the start: the same again
        assert [summary(e)["status"] for e in rep.state.elicitations.values()] == [s["status"] for s in live]
    finally:
        rep.close()
    assert "open this URL" not in capsys.readouterr().out  # a replay's client prints nothing


async def test_a_replay_shows_no_question_where_the_live_client_did(tmp_path: Path, monkeypatch: Any) -> None:
    """The request-scoped question is shown in the awaiting cell live (``frontend.asked``), never by
    a replay's client (nor by the X-ray's private re-enactments)."""
    asked: list[str] = []
    monkeypatch.setattr(frontend, "_asked_hooks", [lambda agent, e: asked.append(e.key)])
    agent, _, _ = await record(tmp_path / "asked.jsonl")
    await agent.close()
    assert asked == ["elic_1"]
    rep = acp_notebook.replay(tmp_path / "asked.jsonl")
    try:
        assert len(rep.agent.elicitation_state.elicitations) == 1
        xray = XRaySource.of_replay(rep)
        assert (
            len(xray.built_by("elicitation:elic_1", rep.state)) == 2
        )  # the session's own elic_1 (re-enacted)
        xray.close()
    finally:
        rep.close()
    assert asked == ["elic_1"]


async def test_replay_midway_shows_them_pending(recorded: Any) -> None:
    path, *_ = recorded
    _, entries = trace.parse(path.read_text().splitlines())
    before_answers = next(
        i for i, e in enumerate(entries) if e["dir"] == "out" and e["message"].get("id") == 91
    )
    rep = acp_notebook.replay(path, position=before_answers)
    try:
        assert [e.status for e in rep.state.elicitations.values()] == ["pending"] * 4
        rep.step()
        assert rep.state.elicitations["elic_1"].status == "accepted"
    finally:
        rep.close()


# -- what records keep ---------------------------------------------------------------------------------
def test_secret_looking_fields() -> None:
    for name in (
        "password",
        "apiKey",
        "api_key",
        "OPENAI_API_KEY",
        "accessToken",
        "token",
        "otp",
        "cardNumber",
    ):
        assert looks_secret(name), name
    for name in ("name", "max_tokens", "email", "username", "spinner", "replicas", "description"):
        assert not looks_secret(name), name
    assert looks_secret("value", {"title": "Recovery codes"}) and looks_secret("x", {"format": "password"})
    assert secret_fields(FORM) == ["apiKey"] and secret_fields(None) == []


def test_redact_create_keeps_a_clean_url_as_is_and_copies() -> None:
    clean = create(1, sessionId="s", mode="url", elicitationId="e", url="https://a.example/p", message="m")
    assert redact_create(clean) == (clean, [])
    dirty = create(
        2, sessionId="s", mode="url", elicitationId="e", url="https://u:pw@a.example/p?x=1", message="m"
    )
    out, paths = redact_create(dirty)
    assert out["params"]["url"] == "https://a.example/p" and paths == ["params.url"]
    assert dirty["params"]["url"] == "https://u:pw@a.example/p?x=1"  # the client's copy is untouched


def test_redactor_blanks_only_the_answer_to_that_form() -> None:
    red = Redactor()
    ask = {
        "dir": "in",
        "kind": "message",
        "message": create(5, sessionId="s", mode="form", message="m", requestedSchema=FORM),
    }
    other = {
        "dir": "out",
        "kind": "message",
        "message": {"jsonrpc": "2.0", "id": 6, "result": {"content": {"apiKey": "k"}}},
    }
    mine = {
        "dir": "out",
        "kind": "message",
        "message": {
            "jsonrpc": "2.0",
            "id": 5,
            "result": {"action": "accept", "content": {"apiKey": "k", "replicas": 2}},
        },
    }
    original = mine["message"]
    for entry in (ask, other, mine):
        red.entry(entry)
    assert other["message"]["result"]["content"] == {"apiKey": "k"} and "redacted" not in other
    assert mine["message"]["result"]["content"] == {"apiKey": "<redacted>", "replicas": 2}
    assert original["result"]["content"]["apiKey"] == "k"  # a copy: what the client sent is untouched
    again = Redactor()
    for entry in (ask, mine):
        again.entry(entry)  # a trace read back (``replay``) is redacted again: nothing more to do
    assert mine["redacted"] == ["result.content.apiKey"]


def test_scrub_removes_the_url_and_its_parts_anywhere() -> None:
    value = {"a": f"open {URL}", "b": [SECRET, "frag-9f3"], "c": 3, "d": ("x",)}
    out = scrub(value, [URL])
    assert out == {"a": f"open {SHOWN}", "b": ["<redacted>", "<redacted>"], "c": 3, "d": ["x"]}
    assert scrub(value, []) is value and scrub(value, [SHOWN]) is value


# -- snapshots and exports -------------------------------------------------------------------------
async def test_a_saved_snapshot_keeps_no_query_and_no_secret(recorded: Any) -> None:
    """The saved snapshot (a notebook's widget state, an HTML export) quotes the URL only as
    ``scheme://host/path`` — its field, its ``url_view``, the message quoting it — and no value of a
    secret-looking field (the card's values, their text, the outcome)."""
    _, _, session, _ = recorded
    snap, _ = snapshot_of(session.state)
    cards = {e["key"]: e for e in snap["entries"].values() if e.get("kind") == "elicitation"}
    link = next(e for e in cards.values() if e.get("mode") == "url")
    assert link["url"] == SHOWN and link["url_view"]["registrable_domain"] == "example.com"
    assert link["message"] == f"Sign in at {SHOWN} please"
    text = json.dumps(snap)
    assert SECRET not in text and "frag-9f3" not in text and "sk-typed-by-user" not in text
    form = cards["elic_1"]
    assert form["values"]["apiKey"] == "<redacted>" and form["values"]["replicas"] == 3
    assert form["outcome"]["content"]["apiKey"] == "<redacted>"
    assert session.state.elicitations["elic_1"].values["apiKey"] == "sk-typed-by-user"  # untouched
    assert session.state.elicitations[link["key"]].url == URL


async def test_an_exported_page_keeps_no_query_and_no_secret(recorded: Any, tmp_path: Path) -> None:
    path, _, session, _ = recorded
    written = [acp_notebook.export_html(session, tmp_path / "s.html")]
    rep = acp_notebook.replay(path)
    try:
        written.append(acp_notebook.export_html(rep, tmp_path / "r.html"))
    finally:
        rep.close()
    for file in written:
        text = file.read_text()
        assert SECRET not in text and "frag-9f3" not in text and "sk-typed-by-user" not in text
        assert SHOWN in text


async def test_exports_keep_no_query_and_no_secret(recorded: Any, tmp_path: Path) -> None:
    path, _, session, _ = recorded
    written = [acp_notebook.export_json(session, tmp_path / "s.json")]
    rep = acp_notebook.replay(path)
    try:
        written.append(acp_notebook.export_json(rep, tmp_path / "r.json"))
        xray = XRaySource.of_replay(rep)
        rows = xray.rows(0, 500)["rows"]
        texts = [json.dumps(xray.detail(r["i"])) for r in rows]
        xray.close()
    finally:
        rep.close()
    for text in [*(f.read_text() for f in written), *texts]:
        assert SECRET not in text and "frag-9f3" not in text and "sk-typed-by-user" not in text
    doc = json.loads(written[0].read_text())
    exported = doc["state"]["elicitations"]
    assert [e["status"] for e in exported] == ["accepted", "completed", "cancelled", "declined"]
    assert exported[1]["url"] == SHOWN and exported[1]["message"] == f"Sign in at {SHOWN} please"
    assert exported[0]["values"]["apiKey"] == "<redacted>" and exported[0]["values"]["replicas"] == 3
    assert exported[0]["tool_call_id"] == "c1" and exported[0]["decided_by"] == "user"
    assert json.loads(written[1].read_text())["state"]["elicitations"] == exported  # replay = live


# -- the X-ray ------------------------------------------------------------------------------------------
async def test_xray_links_request_answer_and_completion(recorded: Any) -> None:
    path, *_ = recorded
    _, entries = trace.parse(path.read_text().splitlines())
    links = Links()
    for i, entry in enumerate(entries):
        links.add(i, entry)
    at = {_key(e): i for i, e in enumerate(entries)}
    url_ask, url_answer = at[("in", 92, "elicitation/create")], at[("out", 92, None)]
    done = at[("in", None, "elicitation/complete", "el-1")]
    assert links.get(url_ask) == url_answer and links.get(url_answer) == url_ask
    assert links.get(done) == url_ask  # the completion points at the request it completes
    assert links.related(url_ask) == [url_answer, done]
    withdrawn, withdrawal = at[("in", 93, "elicitation/create")], at[("in", None, "$/cancel_request")]
    assert links.get(withdrawal) == withdrawn and withdrawal in links.related(withdrawn)
    unknown = at[("in", None, "elicitation/complete", "el-unknown")]
    assert links.get(unknown) is None


async def test_xray_built_by_an_elicitation_and_its_tool_call_card(recorded: Any) -> None:
    path, *_ = recorded
    rep = acp_notebook.replay(path)
    xray = XRaySource.of_replay(rep)
    try:
        _, entries = trace.parse(path.read_text().splitlines())
        at = {_key(e): i for i, e in enumerate(entries)}
        built = xray.built_by("elicitation:elic_2", rep.state)
        expected = [
            at[("in", 92, "elicitation/create")],
            at[("out", 92, None)],
            at[("in", None, "elicitation/complete", "el-1")],
        ]
        assert built == expected
        card = xray.built_by("tool_call:c1", rep.state)
        assert at[("in", 91, "elicitation/create")] in card and at[("out", 91, None)] in card
        row = xray.rows(0, 500)["rows"]
        done = next(r for r in row if r["i"] == at[("in", None, "elicitation/complete", "el-1")])
        assert done["link"] == at[("in", 92, "elicitation/create")]
    finally:
        xray.close()
        rep.close()


def _key(entry: dict[str, Any]) -> tuple[Any, ...]:
    m = entry.get("message") if isinstance(entry.get("message"), dict) else {}
    params = m.get("params") if isinstance(m.get("params"), dict) else {}
    extra = (params["elicitationId"],) if m.get("method") == "elicitation/complete" else ()
    return (entry.get("dir"), m.get("id"), m.get("method"), *extra)


# -- the doctor -----------------------------------------------------------------------------------------
async def test_the_doctor_reads_the_recorded_elicitations(recorded: Any) -> None:
    path, _, session, _ = recorded
    found = acp_notebook.doctor(path)
    assert [f.code for f in found] == ["elicitation-secret-in-form", "elicitation-complete-unknown"]
    assert "'apiKey'" in found[0].message and "'el-unknown'" in found[1].message
    assert [f.code for f in acp_notebook.doctor(session)] == [f.code for f in found]  # the live ring


# -- the replay agent ---------------------------------------------------------------------------------
def test_the_replay_agent_names_the_live_request_in_a_request_scope() -> None:
    player = Player([], None, None, None, 1.0)  # type: ignore[arg-type]
    player.ids[3] = 17  # the recorded id 3 was the live client's 17
    scoped = player._remap(create(9, requestId=3, mode="form", message="m", requestedSchema=ASK_NAME))
    assert scoped["params"]["requestId"] == 17 and scoped["id"] == 9  # the agent's own id stays
    session_scoped = create(9, sessionId="s1", mode="form", message="m", requestedSchema=ASK_NAME)
    assert player._remap(session_scoped) == session_scoped


async def test_the_replay_agent_plays_the_elicitations_to_a_live_client(recorded: Any) -> None:
    path, _, live, _ = recorded
    recorded_values = {"replicas": 3, "apiKey": "<redacted>", "tags": ["a", "c"]}  # as the trace has it

    def fill(e: Any) -> Any:
        return {"Deploy where?": recorded_values, "Declined": "decline"}.get(
            e.message, "accept" if e.mode == "url" else None
        )  # "Withdrawn" is left pending: the agent withdraws it

    command = [sys.executable, "-m", "acp_notebook.replay_agent", str(path), "--timeout", "5"]
    env = {"PYTHONPATH": str(Path(__file__).parents[1])}
    agent = await acp_notebook.start_agent(
        command, "/tmp", env, elicitation_handler=lambda e: {"workspace": "demo"}
    )
    session = await agent.new_session("/tmp")
    session.elicitation_handler = fill
    await asyncio.wait_for(session.prompt("go"), 30)
    await until_async(lambda: not session.pending_elicitations, 5)
    code = await agent.close()
    assert code == 0 and not [line for line in agent.stderr_tail(50) if "divergence" in line]
    assert [e.status for e in session.state.elicitations.values()] == [
        e.status for e in live.state.elicitations.values()
    ]
    assert [e.scope_request["method"] for e in agent.elicitation_state.elicitations.values()] == [
        "session/new"
    ]


def test_a_later_message_quoting_the_url_is_scrubbed_in_the_trace() -> None:
    red = Redactor()
    ask = create(5, sessionId="s", mode="url", elicitationId="e", url=URL, message="m")
    said = update(
        {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": f"Open {URL}"}}
    )
    entries = [{"dir": "in", "kind": "message", "message": m} for m in (ask, said)]
    before = {"dir": "in", "kind": "message", "message": said}
    Redactor().entry(before)  # no URL asked yet on that connection: kept
    assert before["message"] is said and "redacted" not in before
    for entry in entries:
        red.entry(entry)
    assert entries[1]["message"]["params"]["update"]["content"]["text"] == f"Open {SHOWN}"
    assert (
        entries[1]["redacted"] == ["params"] and said["params"]["update"]["content"]["text"] == f"Open {URL}"
    )


# -- the demo agent's scenario, recorded and replayed ----------------------------------------------------
@pytest.mark.parametrize("version", [2, 1])
async def test_the_demo_scenario_replays_as_it_ran(tmp_path: Path, version: int) -> None:
    """A real agent process (the demo's ``--scenario elicitation``: a request-scoped form at
    ``session/new``, a form on a tool call, a URL completed, a withdrawn question and, v2, a
    subagent's): recorded with no query of its URL, replayed to the same elicitations, doctor-clean."""
    from tests.test_demo_elicitation_client import DEMO, answer

    path = tmp_path / "demo.jsonl"
    agent = await acp_notebook.start_agent(
        DEMO, protocol_version=version, elicitation_handler=lambda q: "decline", record=path
    )
    try:
        session = await agent.new_session(str(tmp_path))
        session.elicitation_handler = answer
        assert await session.prompt("fill in a form") == "end_turn"
        url = next(e for e in session.state.elicitations.values() if e.mode == "url")
        await until_async(lambda: url.status == "completed", 30, message="elicitation/complete")
    finally:
        await agent.close()
    assert url.url is not None and "?" in url.url and url.url.split("?")[1] not in path.read_text()
    rep = acp_notebook.replay(path)
    try:
        live = [summary(e) for e in session.state.elicitations.values()]
        assert [summary(e) for e in rep.state.elicitations.values()] == live
        assert {e.session_id for e in rep.state.elicitations.values()} == {e["session_id"] for e in live}
        scoped = [summary(e) for e in agent.elicitation_state.elicitations.values()]
        assert [summary(e) for e in rep.agent.elicitation_state.elicitations.values()] == scoped
    finally:
        rep.close()
    assert len(live) == (4 if version == 2 else 3) and len(scoped) == 1
    assert list(acp_notebook.doctor(path)) == []


async def test_a_trace_written_without_redaction_is_redacted_when_replayed(tmp_path: Path) -> None:
    """A trace another client wrote (the URL whole) replays, and exports, as records keep it."""
    ask = create(5, requestId=0, mode="url", elicitationId="e", url=URL, message=f"Open {URL}")
    messages = [
        ("out", {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": OFFER}),
        ("in", ask),  # while our initialize waits
        ("in", {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": 2}}),
    ]
    lines = [trace.header("0", ["agent"])] + [
        {"dir": d, "t": 0, "kind": "message", "message": m} for d, m in messages
    ]
    raw = tmp_path / "raw.jsonl"
    raw.write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert SECRET in raw.read_text()
    rep = acp_notebook.replay(raw)
    try:
        out = acp_notebook.export_json(rep, tmp_path / "raw.json")
        [asked] = rep.agent.elicitation_state.elicitations.values()
        assert asked.url == SHOWN and asked.message == f"Open {SHOWN}"
    finally:
        rep.close()
    assert SECRET not in out.read_text() and "frag-9f3" not in out.read_text()


async def test_a_trace_from_a_client_that_offered_no_elicitation_replays_as_it_ran(tmp_path: Path) -> None:
    """The replaying client offers what the recorded one did: an elicitation the recorded client
    refused (it offered none) is refused again, not taken as a question."""
    ask = create(5, sessionId="s1", mode="form", message="?", requestedSchema=ASK_NAME)
    refused = {"jsonrpc": "2.0", "id": 5, "error": {"code": -32601, "message": "Method not found"}}
    init = {"protocolVersion": 2, "clientCapabilities": {"fs": {}}, "capabilities": {}}
    messages = [
        ("out", {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init}),
        ("in", {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": 2}}),
        (
            "out",
            {"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": "/", "mcpServers": []}},
        ),
        ("in", {"jsonrpc": "2.0", "id": 1, "result": {"sessionId": "s1"}}),
        ("in", ask),
        ("out", refused),
    ]
    lines = [trace.header("0", ["agent"])] + [
        {"dir": d, "t": 0, "kind": "message", "message": m} for d, m in messages
    ]
    old = tmp_path / "old.jsonl"
    old.write_text("".join(json.dumps(line) + "\n" for line in lines))
    rep = acp_notebook.replay(old)
    try:
        assert rep.state.elicitations == {} and rep.agent.offer.elicitation is False
    finally:
        rep.close()
    assert [f.code for f in acp_notebook.doctor(old)] == ["elicitation-mode-not-advertised"]


async def test_the_elicitations_table_of_a_replay_is_the_live_one(recorded: Any) -> None:
    path, _, session, _ = recorded
    rep = acp_notebook.replay(path)
    try:
        replayed = rep.session.records("elicitations")
    finally:
        rep.close()
    timeless = lambda rows: [{k: v for k, v in r.items() if not k.endswith("_at")} for r in rows]  # noqa: E731
    live = timeless(session.records("elicitations"))
    live[0]["values"] = {**live[0]["values"], "apiKey": "<redacted>"}  # as the trace keeps it
    assert timeless(replayed) == live
    assert [r["status"] for r in live] == ["accepted", "completed", "cancelled", "declined"]
    assert live[1]["url"] == SHOWN and live[1]["message"] == f"Sign in at {SHOWN} please"
    assert live[0]["tool_call_id"] == "c1"


async def test_a_paged_saved_snapshot_keeps_no_query_and_no_secret(recorded: Any, recording: Any) -> None:
    """A big view saves in pages (``snapshot_pages``): its groups and header are kept the same way."""
    _, _, session, _ = recorded
    tree = ViewTree(session.state)
    items, terminals = timeline_items(tree)
    saved = SavedSnapshot()
    saved.paged = True  # as once the snapshot outgrew one message
    traits = saved.build(tree, {"seq": 1, "header": {"note": f"waiting: {URL}"}}, items, terminals, None)
    pages = b"".join(base64.b64decode(p.data) for p in traits["pages"]).decode()
    text = pages + json.dumps(traits["snapshot"])
    assert SECRET not in text and "frag-9f3" not in text and "sk-typed-by-user" not in text
    assert SHOWN in pages and traits["snapshot"]["header"]["note"] == f"waiting: {SHOWN}"
    saved.close()
