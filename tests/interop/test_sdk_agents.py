"""Interop: acp_notebook against agents written on the official TypeScript SDK, 2.4.0.

``agent_v2.mjs`` (the SDK's ``experimental/v2`` API) and ``agent_v1.mjs`` (its stable v1 API,
connected directly, not through the v1/v2 router) run under node through ``start_agent``. Each
test checks the resulting state field by field, what the agent reports it received, and that the
referee found nothing wrong with what we sent: no error from the SDK's own validators (the agents
run them on every message from us, see ``recorder.mjs``), no error response from the SDK, nothing
it logged, and every message valid against the JSON Schema shipped in the SDK package.

Needs ``npm ci`` in ``tests/interop`` (CI runs it; on a fresh checkout the fixture runs it once).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import functools
import json
import os
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from acp_notebook import AcpError, RpcError, __version__, start_agent

from ..support import until_async

HERE = Path(__file__).resolve().parent
SDK = HERE / "node_modules" / "@agentclientprotocol" / "sdk"
SDK_VERSION = "2.4.0"
TIMEOUT = 15
CLIENT_INFO = {"name": "acp-notebook", "title": "ACP Notebook", "version": __version__}
V2_OPTIONS = [
    {"optionId": "allow-once", "name": "Allow", "kind": "allow_once"},
    {"optionId": "reject-once", "name": "Reject", "kind": "reject_once"},
]
V1_OPTIONS = [
    {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
    {"optionId": "reject", "name": "Reject", "kind": "reject_once"},
]
# Methods whose `null` result the SDK reads as `{}` (its `emptyObjectResponse`); the v1 docs'
# own example answers `fs/write_text_file` with `"result": null`.
NULL_IS_EMPTY = {"fs/write_text_file", "terminal/kill", "terminal/release"}


@pytest.fixture(scope="module", autouse=True)
def sdk_installed():
    if shutil.which("node") is None:
        pytest.fail("the interop tests need node (>= 18) on PATH")
    if not (SDK / "package.json").is_file():  # a fresh checkout: install the pinned SDK once
        subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=HERE, check=False, capture_output=True)
    if not (SDK / "package.json").is_file():
        pytest.fail(
            f"@agentclientprotocol/sdk is not installed in {HERE}: run `npm ci` there first "
            "(package-lock.json pins the SDK to 2.4.0)"
        )
    assert json.loads((SDK / "package.json").read_text())["version"] == SDK_VERSION


@pytest.fixture
def project(tmp_path):
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "notes.txt").write_text("line one\nline two\nline three\n")
    (tmp_path / "outside.txt").write_text("secret\n")
    (tmp_path / "extra").mkdir()
    return proj


class Run:
    """One SDK agent under ``start_agent``, and the report it writes."""

    def __init__(self, agent, version: int, report_path: Path) -> None:
        self.agent, self.version, self.report_path = agent, version, report_path

    def report(self) -> dict:
        return json.loads(self.report_path.read_text())

    async def finish(self) -> dict:
        """Close the agent; return its final report after checking the SDK found nothing wrong."""
        await self.agent.close()
        report = self.report()
        assert_referee_satisfied(report, self.version)
        return report


@pytest.fixture
async def sdk_agent(tmp_path):
    runs: list[Run] = []

    async def start(version: int, caps: str = "all", extra_env: dict | None = None, **kwargs) -> Run:
        report = tmp_path / f"report-v{version}-{len(runs)}.json"
        env = {"ACP_INTEROP_REPORT": str(report), "INTEROP_CAPS": caps, **(extra_env or {})}
        agent = await start_agent(["node", str(HERE / f"agent_v{version}.mjs")], env=env, **kwargs)
        runs.append(Run(agent, version, report))
        return runs[-1]

    yield start
    for run in runs:
        await run.agent.close()


# -- the referee ----------------------------------------------------------------------------------
@functools.cache
def sdk_schema(version: int) -> tuple[dict, dict]:
    schema = json.loads((SDK / "schema" / f"v{version}" / "schema.json").read_text())
    names = {}
    for name, definition in schema["$defs"].items():
        if "x-method" in definition:
            kind = next(k for k in ("Request", "Response", "Notification") if name.endswith(k))
            names[definition["x-method"], kind] = name
    return schema, names


@functools.cache
def validator(version: int, name: str) -> Draft202012Validator:
    schema, _ = sdk_schema(version)
    return Draft202012Validator({"$ref": f"#/$defs/{name}", "$defs": schema["$defs"]})


def schema_problems(version: int, received: list[dict]) -> list[str]:
    """What the SDK's JSON Schema says about every message the client sent."""
    _, names = sdk_schema(version)
    problems = []
    for item in received:
        message, method = item["message"], item["method"]
        if message.get("jsonrpc") != "2.0":
            problems.append(f"{method}: not JSON-RPC 2.0: {message}")
        if "error" in message:
            name, value = "Error", message["error"]
        elif "result" in message:
            name, value = names.get((method, "Response")), message["result"]
            value = {} if value is None and method in NULL_IS_EMPTY else value
        elif "id" in message:
            name, value = names.get((method, "Request")), message.get("params")
            if not isinstance(message["id"], int | str) or isinstance(message["id"], bool):
                problems.append(f"{method}: request id {message['id']!r}")
        else:
            name, value = names.get((method, "Notification")), message.get("params")
        if name is None:
            problems.append(f"{method}: no schema for {message}")
            continue
        problems += [
            f"{method} ({name}): {e.message} at {list(e.absolute_path)}"
            for e in validator(version, name).iter_errors(value)
        ]
    return problems


def assert_referee_satisfied(report: dict, version: int) -> None:
    assert report["sdkVersion"] == SDK_VERSION
    assert report["schemaErrors"] == [], "the SDK's validators rejected what we sent"
    assert report["errorsSent"] == [], "the SDK answered one of our requests with an error"
    assert report["consoleErrors"] == [], "the SDK logged a problem"
    assert report["violations"] == [], "we used something the agent did not advertise"
    assert schema_problems(version, report["received"]) == []
    assert report["events"][-1]["type"] == "closed", "the agent did not see a clean end of stream"


def events(report: dict, kind: str) -> list[dict]:
    return [e for e in report["events"] if e["type"] == kind]


def calls(report: dict) -> dict[str, dict]:
    """The v1 agent's client calls, by label: {"result": ...} or {"error": ...}."""
    return {e["label"]: {k: e[k] for k in ("result", "error") if k in e} for e in events(report, "call")}


def wire_order(report: dict, *methods: str) -> list[str]:
    """The order in which messages for ``methods`` (requests, notifications, responses) arrived."""
    return [item["method"] for item in report["received"] if item["method"] in methods]


def initialize_params(report: dict) -> dict:
    first = report["received"][0]["message"]
    assert first["method"] == "initialize"
    return first["params"]


async def answer_by_hand(session, task: asyncio.Task, tool_call_id: str, option: str):
    """Answer the request about ``tool_call_id`` through ``pending_permissions``, as a user would."""

    def asked():
        if task.done():
            raise AssertionError(f"no permission request about {tool_call_id} before the turn ended")
        return next((r for r in session.pending_permissions if r.tool_call_id == tool_call_id), None)

    request = await until_async(asked, TIMEOUT, interval=0.005, message=f"a request about {tool_call_id}")
    request.select(option)
    return request


def answer_once(session, option: str):
    """A handler that answers the first request, then leaves the next ones to the user."""

    def handler(request):
        session.permission_handler = None
        return option

    return handler


def diagnosed(state) -> list[tuple[str, str]]:
    return [(d.code, d.level) for d in state.diagnostics]


def text(value: str) -> dict:
    return {"type": "text", "text": value}


async def test_the_referee_sees_a_bad_message(sdk_agent):
    """The checks would catch a bad message of ours: here a malformed `session/new` and a
    permission response without its option."""
    run = await sdk_agent(2)
    with pytest.raises(RpcError) as info:
        await run.agent.connection.call("session/new", {"cwd": 42})
    assert info.value.code == -32602  # the SDK rejected it before any handler ran
    await run.agent.close()
    report = run.report()
    assert [(e["kind"], e["method"]) for e in report["schemaErrors"]] == [("request", "session/new")]
    assert [e["to"] for e in report["errorsSent"]] == ["session/new"]
    (problem,) = schema_problems(2, report["received"])
    assert problem.startswith("session/new (NewSessionRequest): 42 is not of type 'string'")
    bad_answer = {"jsonrpc": "2.0", "id": 0, "result": {"outcome": {"outcome": "selected"}}}
    assert schema_problems(1, [{"message": bad_answer, "method": "session/request_permission"}])


# -- v2 -------------------------------------------------------------------------------------------
def v2_diff_text(proj: Path) -> dict:
    return {
        "type": "diff",
        "changes": [
            {"operation": "modify", "path": f"{proj}/notes.txt", "fileType": "text", "mimeType": "text/plain"}
        ],
        "patch": {
            "format": "git_patch",
            "text": "diff --git a/notes.txt b/notes.txt\n--- a/notes.txt\n+++ b/notes.txt\n"
            "@@ -1,2 +1,2 @@\n line one\n-line two\n+line 2\n",
        },
    }


def v2_diff_binary(proj: Path) -> dict:
    return {
        "type": "diff",
        "changes": [
            {"operation": "add", "path": f"{proj}/logo.png", "fileType": "binary", "mimeType": "image/png"}
        ],
    }


TERM_1_BYTES = b"$ make test\r\n\x1b[32mPASS\x1b[0m caf\xc3\xa9 \xe2\x9c\x93\r\n"


@pytest.mark.parametrize("answer", ["allow-once", "reject-once"])
async def test_v2_tour_state_and_what_the_sdk_received(sdk_agent, project, answer):
    run = await sdk_agent(2)
    agent = run.agent
    assert agent.protocol_version == 2
    assert agent.info == {
        "name": "sdk-interop-v2",
        "title": "SDK interop agent (v2)",
        "version": "2.4.0-interop",
    }
    extra = project.parent / "extra"
    session = await agent.new_session(project, additional_directories=[extra])
    assert session.session_id == "sess_1"

    state = session.state
    seen = []  # run states, tc_read's content length, term_1's text, as each update lands

    def watch(change):
        if change.kind == "run_state":
            seen.append(change.id)
        elif change.kind == "tool_call" and change.id == "tc_read":
            seen.append(len(state.tool_calls["tc_read"].content))
        elif change.kind == "terminal" and change.id == "term_1":
            seen.append(state.terminals["term_1"].text)

    state.subscribe(watch)
    session.permission_handler = answer_once(session, answer)  # the tool_call subject
    turn = asyncio.ensure_future(session.prompt("tour"))
    by_hand = await answer_by_hand(session, turn, "tc_run", answer)
    assert await asyncio.wait_for(turn, TIMEOUT) == "end_turn"
    allowed = answer == "allow-once"
    assert (state.run_state, state.stop_reason, state.stop_error) == ("idle", "end_turn", None)
    texts = (
        [
            "$ make test\r\n",  # terminal_update with an output snapshot
            "$ make test\r\n\x1b[32mPASS\x1b[0m caf",  # the first half of "é" is held back
            "$ make test\r\n\x1b[32mPASS\x1b[0m café ✓\r\n",
            "$ make test\r\n\x1b[32mPASS\x1b[0m café ✓\r\n",  # exitStatus
        ]
        if allowed
        else []
    )
    assert seen == ["running", 0, 1, 2, 1, "requires_action", "running", *texts, "idle"]

    # permissions: one answered by the handler, one by hand, both kept with their outcome
    edit_perm, run_perm = state.permissions.values()
    assert run_perm is by_hand and session.pending_permissions == []
    assert (edit_perm.title, edit_perm.description) == ("Apply the edit to notes.txt?", "Replaces line two.")
    assert edit_perm.subject == {
        "type": "tool_call",
        "toolCall": {"toolCallId": "tc_edit", "content": [v2_diff_text(project)]},
    }
    assert (run_perm.title, run_perm.description, run_perm.tool_call_id) == (
        "Run `make test`?",
        None,
        "tc_run",
    )
    assert run_perm.subject == {
        "type": "command",
        "command": "make test",
        "cwd": str(project),
        "toolCallId": "tc_run",
    }
    for perm in (edit_perm, run_perm):
        assert perm.options == V2_OPTIONS and perm.outcome == {"outcome": "selected", "optionId": answer}

    # tool calls, exactly
    assert list(state.tool_calls) == ["tc_read", "tc_edit", "tc_run", "tc_custom"]
    assert state.tool_calls["tc_read"].to_dict() == {
        "toolCallId": "tc_read",
        "name": "read_file",
        "title": "Read notes.txt",
        "kind": "read",
        "status": "completed",
        "content": [{"type": "content", "content": text("line one\nline two\n")}],  # chunks, then replaced
        "locations": [{"path": f"{project}/notes.txt", "line": 1}],
        "rawInput": {"path": f"{project}/notes.txt"},
        "rawOutput": {"lines": 2},
        "_meta": {"interop/elapsedMs": 3},
    }
    edit = {"toolCallId": "tc_edit", "title": "Edit notes.txt", "kind": "edit"}
    edit["locations"] = [{"path": f"{project}/notes.txt"}]
    if allowed:
        edit.update(status="completed", content=[v2_diff_text(project), v2_diff_binary(project)])
    else:  # the proposed diff from the permission subject stays; the agent reports the failure
        edit.update(status="failed", content=[v2_diff_text(project)], rawOutput={"error": "rejected"})
    assert state.tool_calls["tc_edit"].to_dict() == edit
    tc_run = {"toolCallId": "tc_run", "title": "make test", "kind": "execute", "locations": []}
    tc_run["rawInput"] = {"command": "make test"}
    if allowed:
        tc_run.update(
            status="completed",
            content=[{"type": "terminal", "terminalId": "term_1"}],
            rawOutput={"exitCode": 0},
        )
    else:
        tc_run.update(status="failed", content=[])
    assert state.tool_calls["tc_run"].to_dict() == tc_run
    custom = state.tool_calls["tc_custom"]
    assert custom.to_dict() == {
        "toolCallId": "tc_custom",
        "title": "Custom tool",
        "kind": "_x",
        "status": "_custom",
        "content": [
            {"type": "hologram", "frames": 3},
            {"type": "_acme_widget", "widget": "gauge", "value": 0.5},
        ],
        "locations": [],
    }
    assert (custom.phase, custom.display_kind, custom.finished) == ("in_progress", "other", False)
    assert all(state.tool_calls[k].finished for k in ("tc_read", "tc_edit", "tc_run"))

    # the terminal: snapshot, then two chunks splitting "é", then the exit status
    if allowed:
        (term,) = state.terminals.values()
        assert term.output == TERM_1_BYTES
        assert term.text == "$ make test\r\n\x1b[32mPASS\x1b[0m café ✓\r\n"
        assert term.plain_text == "$ make test\r\nPASS café ✓\r\n"
        assert term.exit_status == {"exitCode": 0, "signal": None}
        assert term.to_dict() == {
            "terminalId": "term_1",
            "command": "make test",
            "cwd": str(project),
            "size": {"cols": 80, "rows": 24},
            "exitStatus": {"exitCode": 0, "signal": None},
            "output": {"data": base64.b64encode(TERM_1_BYTES).decode()},
        }
    else:
        assert state.terminals == {}

    # messages, plan, session-wide values, unknown kinds, diagnostics
    assert [m.to_dict() for m in state.messages.values()] == [
        {"messageId": "user_1", "role": "user", "content": [text("tour")]},
        {
            "messageId": "msg_1",
            "role": "agent",
            "content": [text("Reading the notes, "), text("then editing.")],
        },
        {"messageId": "msg_2", "role": "agent", "content": [text("Done.")]},
    ]
    (plan,) = state.plans.values()
    assert plan.to_dict() == {
        "type": "items",
        "planId": "plan_1",
        "entries": [
            {"content": "Read notes", "priority": "high", "status": "completed"},
            {
                "content": "Edit notes",
                "priority": "medium",
                "status": "completed" if allowed else "cancelled",
            },
        ],
    }
    assert state.session_info == {"title": "Interop tour"}
    assert state.other_updates == [
        {"sessionUpdate": "_acme_progress", "percent": 50},
        {"sessionUpdate": "future_update", "detail": "from a newer ACP"},
    ]
    assert diagnosed(state) == [("unknown-update", "info")]  # only the unknown, non-`_` update kind
    assert state.diagnostics[0].detail == {"sessionUpdate": "future_update", "detail": "from a newer ACP"}
    assert state.notices == [] and state.file_writes == [] and agent.diagnostics == []
    assert [kind for kind, _ in state.timeline] == [
        "message",
        "message",
        "plan",
        "tool_call",
        "tool_call",
        "permission",
        "tool_call",
        "permission",
        "tool_call",
        "other",
        "other",
        "message",
    ]

    report = await run.finish()
    # our initialize: both shapes; the SDK's v2 view keeps exactly the v2 fields we sent
    params = initialize_params(report)
    assert params["protocolVersion"] == 2
    assert params["info"] == params["clientInfo"] == CLIENT_INFO
    assert params["clientCapabilities"] == {
        "fs": {"readTextFile": True, "writeTextFile": True},
        "terminal": True,
        "auth": {"terminal": True},
        "elicitation": {"form": {}, "url": {}},
        "_meta": {"terminal_output": True, "terminal-auth": True},
    }
    (init,) = events(report, "initialize")
    assert init["parsed"] == {k: params[k] for k in ("protocolVersion", "info", "capabilities")}
    assert events(report, "initialized")[0]["request"] == init["parsed"]  # the SDK's validated exchange
    (new,) = events(report, "session_new")
    assert new["parsed"] == {"cwd": str(project), "mcpServers": [], "additionalDirectories": [str(extra)]}
    (prompt,) = events(report, "prompt")
    assert prompt["parsed"] == {"sessionId": "sess_1", "prompt": [text("tour")]}
    assert [(e["subject"], e["outcome"]) for e in events(report, "permission")] == [
        ("tool_call", {"outcome": "selected", "optionId": answer}),
        ("command", {"outcome": "selected", "optionId": answer}),
    ]
    # v1 client methods are not served on a v2 connection, nor unknown extension requests
    assert [(e["method"], e.get("code")) for e in events(report, "v1_method_on_v2")] == [
        ("fs/read_text_file", -32601),
        ("terminal/create", -32601),
    ]
    assert [(e["method"], e.get("code")) for e in events(report, "extension")] == [("_acme/ping", -32601)]
    assert events(report, "turn_end") == [{"type": "turn_end", "script": "tour", "stopReason": "end_turn"}]


async def test_v2_cancel_mid_turn(sdk_agent, project):
    run = await sdk_agent(2)
    session = await run.agent.new_session(project)
    turn = asyncio.ensure_future(session.prompt("cancel"))
    state = session.state
    await until_async(lambda: session.pending_permissions, TIMEOUT, message="the permission request")
    await until_async(
        lambda: state.terminals["term_slow"].output.count(b"tick") >= 3,
        TIMEOUT,
        interval=0.005,
        message="three ticks of terminal output",
    )
    (request,) = session.pending_permissions
    assert request.subject == {
        "type": "command",
        "command": "make deploy",
        "cwd": str(project),
        "toolCallId": "tc_slow",
        "terminalId": "term_slow",
    }
    await session.cancel()
    assert await asyncio.wait_for(turn, TIMEOUT) == "cancelled"
    assert request.outcome == {"outcome": "cancelled"} and session.pending_permissions == []
    assert (state.run_state, state.stop_reason) == ("idle", "cancelled")
    assert state.tool_calls["tc_slow"].to_dict() == {
        "toolCallId": "tc_slow",
        "title": "make build",
        "kind": "execute",
        "status": "cancelled",
        "content": [{"type": "terminal", "terminalId": "term_slow"}],
        "locations": [],
    }
    term = state.terminals["term_slow"]
    ticks = term.output.decode().splitlines()
    assert ticks == [f"tick {n}" for n in range(1, len(ticks) + 1)] and len(ticks) < 400
    assert (term.command, term.cwd, term.exit_status) == (
        "make build",
        str(project),
        {"exitCode": None, "signal": "SIGINT"},
    )
    assert diagnosed(state) == []

    report = await run.finish()
    (cancel,) = events(report, "session_cancel")
    assert cancel["parsed"] == {"sessionId": "sess_1"} and cancel["hadTurn"]
    assert [e["outcome"] for e in events(report, "permission")] == [{"outcome": "cancelled"}]
    (end,) = events(report, "turn_end")
    assert (end["stopReason"], end["outcome"]) == ("cancelled", {"outcome": "cancelled"})


async def test_v2_cancel_one_tool_call_and_one_terminal(sdk_agent, project):
    run = await sdk_agent(2)
    session = await run.agent.new_session(project)
    turn = asyncio.ensure_future(session.prompt("items"))
    state = session.state
    await until_async(
        lambda: b"started" in getattr(state.terminals.get("term_job"), "output", b""),
        TIMEOUT,
        message="the terminal",
    )
    assert state.tool_calls["tc_job"].cancellable
    assert await session.cancel_terminal("term_job") == {}
    assert await session.cancel_tool_call("tc_job") == {}
    assert await asyncio.wait_for(turn, TIMEOUT) == "end_turn"
    job = state.tool_calls["tc_job"]
    assert (job.status, job.capabilities, job.cancellable) == ("cancelled", None, False)
    term = state.terminals["term_job"]
    assert term.to_dict() == {
        "terminalId": "term_job",
        "command": "tail -f app.log",
        "cwd": str(project),
        "exitStatus": {"exitCode": None, "signal": "SIGTERM"},
        "output": {"data": base64.b64encode(b"started\r\n").decode()},
    }
    with pytest.raises(ValueError):
        await session.cancel_terminal("term_job")  # no longer advertised: nothing is sent
    assert diagnosed(state) == []

    report = await run.finish()
    assert [e["parsed"] for e in events(report, "terminal_cancel")] == [
        {"sessionId": "sess_1", "terminalId": "term_job"}
    ]
    assert [e["parsed"] for e in events(report, "tool_call_cancel")] == [
        {"sessionId": "sess_1", "toolCallId": "tc_job"}
    ]


async def test_v2_permission_withdrawn_by_the_agent(sdk_agent, project):
    run = await sdk_agent(2)
    session = await run.agent.new_session(project)
    assert await asyncio.wait_for(session.prompt("withdraw"), TIMEOUT) == "end_turn"
    (request,) = session.state.permissions.values()  # no handler: it waited until `$/cancel_request`
    assert (request.title, request.tool_call_id, request.outcome) == (
        "Proceed?",
        "tc_ask",
        {"outcome": "cancelled"},
    )
    assert session.pending_permissions == [] and session.state.tool_calls["tc_ask"].status == "cancelled"
    report = await run.finish()
    assert events(report, "turn_end")[0]["outcome"] == {"outcome": "cancelled"}


async def test_v2_close_mid_turn_ends_the_turn(sdk_agent, project):
    """A closed session gets no more updates (no idle): closing must end the turn we wait for."""
    run = await sdk_agent(2)
    session = await run.agent.new_session(project)
    turn = asyncio.ensure_future(session.prompt("cancel"))
    await until_async(lambda: session.pending_permissions, TIMEOUT, message="the permission request")
    await session.close()
    assert session.pending_permissions == []  # withdrawn by the agent with `$/cancel_request`
    try:
        done, _ = await asyncio.wait({turn}, timeout=2)
        assert done, "session.prompt() still waits after session.close()"
        assert turn.exception() is None or isinstance(turn.exception(), AcpError)
    finally:
        turn.cancel()
    report = await run.finish()
    assert [e["parsed"] for e in events(report, "session_close")] == [{"sessionId": "sess_1"}]


async def test_v2_permission_for_an_unknown_session(sdk_agent, project):
    """The v2 schema: a session-scoped request naming an unknown session gets -32002 with
    `data.sessionId` (the SDK's `RequestError.sessionNotFound`)."""
    run = await sdk_agent(2)
    session = await run.agent.new_session(project)
    assert await asyncio.wait_for(session.prompt("stray"), TIMEOUT) == "end_turn"
    assert ("unknown-session", "warning") in diagnosed(session.state)
    report = await run.finish()
    (stray,) = events(report, "unknown_session")
    assert (stray.get("code"), stray.get("data")) == (-32002, {"sessionId": "sess_unknown"})


def snapshot(state) -> dict:
    """What a replay must reproduce: every item, in wire shape."""
    return {
        "tool_calls": {k: tc.to_dict() for k, tc in state.tool_calls.items()},
        "terminals": {k: t.to_dict() for k, t in state.terminals.items()},
        "messages": [m.to_dict() for m in state.messages.values()],
        "plans": [p.to_dict() for p in state.plans.values()],
        "other_updates": state.other_updates,
        "session_info": state.session_info,
        "run": (state.run_state, state.stop_reason),
        "diagnostics": diagnosed(state),
    }


async def test_v2_list_resume_with_replay_and_close(sdk_agent, project):
    run = await sdk_agent(2)
    agent = run.agent
    first = await agent.new_session(project)
    first.permission_handler = lambda request: "allow-once"
    assert await asyncio.wait_for(first.prompt("tour"), TIMEOUT) == "end_turn"
    second = await agent.new_session(project)

    listed = await agent.list_sessions()  # one session per page: the client follows nextCursor
    assert listed == [
        {"sessionId": "sess_1", "cwd": str(project), "title": "Interop tour"},
        {"sessionId": "sess_2", "cwd": str(project)},
    ]
    resumed = await agent.resume_session("sess_1", project)
    assert resumed is not first and agent.sessions["sess_1"] is resumed
    assert snapshot(resumed.state) == snapshot(first.state)
    assert resumed.state.permissions == {}  # permission requests are not session updates

    await resumed.close()
    assert [s["sessionId"] for s in await agent.list_sessions()] == ["sess_2"]
    assert "sess_1" not in agent.sessions and agent.sessions["sess_2"] is second

    report = await run.finish()
    assert [e["parsed"] for e in events(report, "session_list")] == [{}, {"cursor": "1"}, {}]
    (resume,) = events(report, "session_resume")
    assert resume["parsed"] == {
        "sessionId": "sess_1",
        "cwd": str(project),
        "mcpServers": [],
        "replayFrom": {"type": "start"},
    }
    assert resume["replayed"] > 20
    assert [(e["parsed"], e["known"]) for e in events(report, "session_close")] == [
        ({"sessionId": "sess_1"}, True)
    ]


# -- v1 -------------------------------------------------------------------------------------------
V1_NEW_TEXT = "line one\nline 2\nline three\n"
GREEN = 'printf \'\\033[1;32mgreen\\033[0m caf\\303\\251 %s %s\\n\' "$ACP_INTEROP" "$PAGER"; exit 3'
GREEN_BYTES = b"\x1b[1;32mgreen\x1b[0m caf\xc3\xa9 yes cat\r\n"  # through a PTY: \n -> \r\n


@pytest.mark.parametrize("answer", ["allow", "reject"])
async def test_v1_tour_files_terminals_and_state(sdk_agent, project, answer):
    run = await sdk_agent(1)
    agent = run.agent
    assert agent.protocol_version == 1
    assert agent.info == {
        "name": "sdk-interop-v1",
        "title": "SDK interop agent (v1)",
        "version": "2.4.0-interop",
    }
    assert agent.capabilities == {
        "loadSession": True,
        "sessionCapabilities": {"list": {}, "close": {}, "additionalDirectories": {}},
    }
    extra = project.parent / "extra"
    session = await agent.new_session(project, additional_directories=[extra])
    assert session.session_id == "v1_sess_1" and session.state.current_mode_id == "code"

    session.permission_handler = answer_once(session, answer)  # the edit
    turn = asyncio.ensure_future(session.prompt("tour"))
    by_hand = await answer_by_hand(session, turn, "tc_term", answer)
    assert await asyncio.wait_for(turn, TIMEOUT) == "end_turn"
    allowed = answer == "allow"
    state = session.state
    notes = project / "notes.txt"
    old_text = "line one\nline two\nline three\n"

    edit_perm, run_perm = state.permissions.values()
    assert run_perm is by_hand and session.pending_permissions == []
    assert (edit_perm.title, edit_perm.tool_call_id, run_perm.title) == (
        "Allow Edit notes.txt?",
        "tc_edit",
        "Allow Run checks?",
    )
    assert edit_perm.subject == {
        "type": "tool_call",
        "toolCall": {"toolCallId": "tc_edit", "title": "Edit notes.txt", "kind": "edit"},
    }
    for perm in (edit_perm, run_perm):
        assert perm.options == V1_OPTIONS and perm.outcome == {"outcome": "selected", "optionId": answer}

    # files: written inside the roots only, recorded as diffs; nothing outside, no raw notebook write
    assert notes.read_text() == (V1_NEW_TEXT if allowed else old_text)
    assert (project.parent / "outside.txt").read_text() == "secret\n"
    assert not (project / "analysis.ipynb").exists()
    new_file, extra_file = project / "sub" / "new.txt", extra / "extra.txt"
    if allowed:
        assert (new_file.read_text(), extra_file.read_text()) == ("fresh\n", "in an additional root\n")
        assert state.file_writes == [
            {"path": str(notes), "oldText": old_text, "newText": V1_NEW_TEXT},
            {"path": str(new_file), "oldText": None, "newText": "fresh\n"},
            {"path": str(extra_file), "oldText": None, "newText": "in an additional root\n"},
        ]
    else:
        assert state.file_writes == [] and not new_file.exists() and not extra_file.exists()

    assert list(state.tool_calls) == ["tc_read", "tc_edit", "tc_term"]
    assert state.tool_calls["tc_read"].to_dict() == {
        "toolCallId": "tc_read",
        "title": "Read notes.txt",
        "kind": "read",
        "status": "completed",
        "content": [{"type": "content", "content": text("line two\nline three\n")}],
        "locations": [{"path": str(notes), "line": 2}],
        "rawInput": {"path": str(notes), "line": 2, "limit": 2},
    }
    assert state.tool_calls["tc_edit"].to_dict() == {
        "toolCallId": "tc_edit",
        "title": "Edit notes.txt",
        "kind": "edit",
        "status": "completed" if allowed else "failed",
        "content": [{"type": "diff", "path": str(notes), "oldText": old_text, "newText": V1_NEW_TEXT}],
        "locations": [{"path": str(notes)}],
    }
    term_call = {"toolCallId": "tc_term", "title": "Run checks", "kind": "execute", "locations": []}
    term_call["rawInput"] = {"command": GREEN}
    if allowed:
        term_call.update(
            status="completed",
            content=[{"type": "terminal", "terminalId": "term_1"}],
            rawOutput={"exitCode": 3},
        )
    else:
        term_call.update(status="failed", content=[])
    assert state.tool_calls["tc_term"].to_dict() == term_call

    # client-run terminals: exact bytes in state (kept after release), exit statuses
    if allowed:
        green, limited, killed = (state.terminals[f"term_{n}"] for n in (1, 2, 3))
        assert green.output == GREEN_BYTES and green.plain_text == "green café yes cat\r\n"
        assert green.to_dict() == {
            "terminalId": "term_1",
            "command": shlex.join(["/bin/sh", "-c", GREEN]),
            "cwd": str(project),
            "exitStatus": {"exitCode": 3, "signal": None},
            "output": {"data": base64.b64encode(GREEN_BYTES).decode()},
        }
        assert (limited.output, limited.exit_status) == ("aéb€c".encode(), {"exitCode": 0, "signal": None})
        assert (killed.command, killed.output, killed.exit_status) == (
            "sleep 30",
            b"",
            {"exitCode": None, "signal": "SIGTERM"},
        )
        assert {t.cwd for t in (green, limited, killed)} == {str(project)}
    else:
        assert state.terminals == {}

    assert [(m.role, m.text) for m in state.messages.values()] == [
        ("user", "tour"),
        ("thought", "Plan first."),
        ("agent", "Reading the notes."),
        ("agent", "Done."),
    ]
    final = "completed" if allowed else "cancelled"
    assert state.plans["plan"].entries == [
        {"content": "Read notes", "priority": "high", "status": "completed"},
        {"content": "Edit notes", "priority": "medium", "status": final},
        {"content": "Run checks", "priority": "low", "status": final},
    ]
    assert (state.run_state, state.stop_reason) == ("idle", "end_turn")
    assert diagnosed(state) == [] and agent.diagnostics == []

    report = await run.finish()
    # our initialize: offered v2 in both shapes; the v1 SDK reads the v1 fields
    params = initialize_params(report)
    assert params["protocolVersion"] == 2 and params["clientInfo"] == params["info"] == CLIENT_INFO
    assert params["clientCapabilities"] == {
        "fs": {"readTextFile": True, "writeTextFile": True},
        "terminal": True,
        "auth": {"terminal": True},
        "elicitation": {"form": {}, "url": {}},
        "_meta": {"terminal_output": True, "terminal-auth": True},
    }
    (init,) = events(report, "initialize")
    parsed = init["parsed"]
    assert parsed["clientInfo"] == CLIENT_INFO and parsed["protocolVersion"] == 2
    assert (parsed["clientCapabilities"]["fs"], parsed["clientCapabilities"]["terminal"]) == (
        {"readTextFile": True, "writeTextFile": True},
        True,
    )
    (new,) = events(report, "session_new")
    assert new["parsed"] == {"cwd": str(project), "mcpServers": [], "additionalDirectories": [str(extra)]}

    done = calls(report)
    permission = {"outcome": {"outcome": "selected", "optionId": answer}}
    assert done["permission_edit"] == done["permission_run"] == {"result": permission}
    assert done["read"] == {"result": {"content": "line two\nline three\n"}}
    assert done["read_whole"] == {"result": {"content": old_text}}
    assert done["read_outside"]["error"]["code"] == -32001
    assert "outside the session's roots" in done["read_outside"]["error"]["message"]
    assert done["read_missing"]["error"]["code"] == -32002
    if not allowed:
        assert "write" not in done and "create" not in done
        return
    assert done["write"] == {"result": {}}
    assert done["write_outside"]["error"]["code"] == -32001
    assert (
        done["write_notebook"]["error"]["code"] == -32001
        and "notebook" in done["write_notebook"]["error"]["message"]
    )
    assert done["write_new"] == done["write_extra"] == {"result": {}}
    assert done["create"] == {"result": {"terminalId": "term_1"}}
    assert done["wait"] == {"result": {"exitCode": 3, "signal": None}}
    assert done["output"] == {
        "result": {
            "output": GREEN_BYTES.decode(),
            "truncated": False,
            "exitStatus": {"exitCode": 3, "signal": None},
        }
    }
    assert done["release"] == {"result": {}}
    assert done["output_after_release"]["error"]["code"] == -32002
    assert done["output_limited"] == {  # the newest 3 bytes, cut forward to a character boundary
        "result": {"output": "c", "truncated": True, "exitStatus": {"exitCode": 0, "signal": None}}
    }
    assert done["kill"] == {"result": {}}
    assert done["wait_killed"] == {"result": {"exitCode": None, "signal": "SIGTERM"}}
    assert done["release_killed"] == {"result": {}}


async def test_v1_cancel_mid_turn(sdk_agent, project):
    run = await sdk_agent(1)
    session = await run.agent.new_session(project)
    turn = asyncio.ensure_future(session.prompt("cancel"))
    await until_async(lambda: session.pending_permissions, TIMEOUT, message="the permission request")
    (request,) = session.pending_permissions
    assert request.tool_call_id == "tc_wait"
    term = session.state.terminals["term_1"]
    assert term.command == "sleep 30" and term.exit_status is None
    await session.cancel()
    assert await asyncio.wait_for(turn, TIMEOUT) == "cancelled"
    assert request.outcome == {"outcome": "cancelled"}
    state = session.state
    assert (state.run_state, state.stop_reason) == ("idle", "cancelled")
    assert state.tool_calls["tc_wait"].to_dict() == {
        "toolCallId": "tc_wait",
        "title": "Long job",
        "kind": "execute",
        "status": "cancelled",
        "content": [{"type": "terminal", "terminalId": "term_1"}],
        "locations": [],
    }
    assert term.exit_status == {"exitCode": None, "signal": "SIGTERM"}
    assert diagnosed(state) == []

    report = await run.finish()
    (cancel,) = events(report, "session_cancel")
    assert cancel["parsed"] == {"sessionId": "v1_sess_1"} and cancel["hadTurn"]
    assert events(report, "cancel_answer") == [{"type": "cancel_answer", "answer": "cancelled"}]
    assert wire_order(report, "session/cancel", "session/request_permission") == [
        "session/cancel",
        "session/request_permission",
    ]
    done = calls(report)
    assert done["permission_deploy"] == {"result": {"outcome": {"outcome": "cancelled"}}}
    assert done["wait"] == {"result": {"exitCode": None, "signal": "SIGTERM"}}
    assert events(report, "turn_end")[0]["stopReason"] == "cancelled"


async def test_v1_load_with_replay_list_and_close(sdk_agent, project):
    run = await sdk_agent(1)
    agent = run.agent
    first = await agent.new_session(project)
    first.permission_handler = lambda request: "allow"
    assert await asyncio.wait_for(first.prompt("tour"), TIMEOUT) == "end_turn"
    assert await agent.list_sessions() == [
        {"sessionId": "v1_sess_1", "cwd": str(project), "title": "Session v1_sess_1"}
    ]

    loaded = await agent.resume_session("v1_sess_1", project)  # v1: session/load
    assert loaded is not first and loaded.state.current_mode_id == "code"
    before, after = snapshot(first.state), snapshot(loaded.state)
    # client-run terminals are the client's own: a v1 replay can only name one in a tool call
    assert list(before.pop("terminals")) == ["term_1", "term_2", "term_3"]
    assert list(after.pop("terminals")) == ["term_1"] and loaded.state.terminals["term_1"].output == b""
    # and v1 has no stop reason outside the prompt response
    assert (before.pop("run"), after.pop("run")) == (("idle", "end_turn"), ("idle", None))
    assert after == before

    await loaded.close()
    report = await run.finish()
    (load,) = events(report, "session_load")
    assert load["parsed"] == {"sessionId": "v1_sess_1", "cwd": str(project), "mcpServers": []}
    assert [(e["parsed"], e["known"]) for e in events(report, "session_close")] == [
        ({"sessionId": "v1_sess_1"}, True)
    ]


async def test_v1_terminals_left_running_die_with_the_agent(sdk_agent, project):
    run = await sdk_agent(1)
    session = await run.agent.new_session(project)
    assert await asyncio.wait_for(session.prompt("leak"), TIMEOUT) == "end_turn"
    term = session.state.terminals["term_1"]
    pid = int(term.plain_text.split("pid=")[1].split()[0])
    os.kill(pid, 0)  # still running: the agent never released it
    await run.finish()
    await until_async(lambda: not alive(pid), TIMEOUT, message=f"process {pid} to end")
    assert term.exit_status == {"exitCode": None, "signal": "SIGTERM"}  # kept in state after release


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


async def test_v1_forced_without_client_capabilities(sdk_agent, project):
    run = await sdk_agent(1, protocol_version=1, files=False, terminals=False)
    session = await run.agent.new_session(project)
    assert await asyncio.wait_for(session.prompt("probe"), TIMEOUT) == "end_turn"
    assert session.state.terminals == {} and session.state.file_writes == []

    report = await run.finish()
    params = initialize_params(report)
    assert params == {
        "protocolVersion": 1,
        "clientInfo": CLIENT_INFO,
        "clientCapabilities": {
            "fs": {"readTextFile": False, "writeTextFile": False},
            "terminal": False,
            "auth": {"terminal": True},
            "elicitation": {"form": {}, "url": {}},
            "_meta": {"terminal_output": True, "terminal-auth": True},
        },
    }
    done = calls(report)
    assert done["probe_read"]["error"]["code"] == done["probe_terminal"]["error"]["code"] == -32601


# -- what the agent did not advertise -------------------------------------------------------------
@pytest.mark.parametrize("version", [1, 2])
async def test_additional_directories_only_when_advertised(sdk_agent, project, version):
    """v2 session-setup: "Clients MUST only send `additionalDirectories` when the Agent advertises
    `session.additionalDirectories`" (v1: `sessionCapabilities.additionalDirectories`)."""
    run = await sdk_agent(version, caps="minimal")
    with contextlib.suppress(AcpError, ValueError):  # refusing is fine; sending them is not
        await run.agent.new_session(project, additional_directories=[project.parent / "extra"])
    report = await run.finish()
    assert all("additionalDirectories" not in e["parsed"] for e in events(report, "session_new"))


async def test_v1_session_list_only_when_advertised(sdk_agent, project):
    """v1 session-list: without `sessionCapabilities.list`, "Clients MUST NOT attempt to call
    `session/list`"; likewise `session/load` and `session/close`."""
    run = await sdk_agent(1, caps="minimal")
    agent = run.agent
    assert agent.capabilities == {}
    session = await agent.new_session(project)
    listed = await outcome(agent.list_sessions())
    loaded = await outcome(agent.resume_session(session.session_id, project))
    await session.close()
    report = await run.finish()  # the agent records any of these methods as a violation
    received = {item["method"] for item in report["received"]}
    assert received.isdisjoint({"session/list", "session/load", "session/close"})
    assert isinstance(listed, AcpError) and isinstance(loaded, AcpError)  # refused without sending


async def outcome(awaitable):
    """The result, or the ``AcpError`` raised."""
    try:
        return await awaitable
    except AcpError as exc:
        return exc
