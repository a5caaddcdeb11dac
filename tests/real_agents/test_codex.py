"""The real Codex agent (``codex-acp``, pinned) through our client, offline.

codex-acp's npm launcher starts its native binary (codex core 0.137.0), which talks to
``mock_openai`` — the Responses API on 127.0.0.1 — through a custom ``model_provider`` in a
temporary ``CODEX_HOME``. The scripted model calls codex's own tools, ``exec_command`` (a shell)
and the freeform ``apply_patch``, which codex runs for real in a temporary project. codex-acp
speaks ACP v1: tool calls come as ``tool_call`` + ``tool_call_update``; shell output comes in the
``_meta.terminal_*`` extension the client offers.

What codex needs here (measured): ``model = "gpt-5.5"`` (a model it has metadata for: an unknown
one adds a "Model metadata ... not found" agent message and offers no ``apply_patch``);
``approval_policy = "untrusted"`` (it asks ACP permission for every edit and for any command not
on its safe list — ``cat`` is on it, ``printf``/``sleep`` are not); ``sandbox_mode =
"danger-full-access"`` (the default sandbox needs ``bwrap``: ``test_default_sandbox_without_bwrap``).

Two codex races shape the scripts. A command's output written before codex's streaming task
listens is never streamed (only ``rawOutput`` has it), so the command that must show in a terminal
sleeps first. And codex reports a longer command's end from a background task ~0.1 s after it
exits, dropping it if the turn is over by then: with an instant mock it mostly is, so the mock
(``Step.hold``) answers only once the end is on the wire, as a real model's latency would.

Each test checks what the wire said against what our client made of it (every ``session/update``
and permission request the ``TeeStream`` kept, folded with v1 rules, against ``session.state``),
what codex sent the model (the mock's log), the file on disk, the stop reasons, the diagnostics,
and that ``agent.close()`` is quick and leaves no process behind.
"""

from __future__ import annotations

import asyncio
import os
import re
import shlex
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from acp_notebook.client.errors import AuthRequired, RpcError
from tests.real_agents import harness
from tests.real_agents.mock_openai import (
    MockOpenAI,
    Step,
    answered,
    custom_tool_call,
    function_call,
    message,
    user_said,
)
from tests.support import running, until_async

TURN = 60  # seconds: a bound for one prompt turn (each takes 0.5-3 s here)
CLOSE_BOUND = 5.0  # seconds for agent.close(): codex-acp ignores stdin EOF, so 2 s grace, then TERM
ORIGINAL = "hello\n"
EDITED = "hello, café\n"
NATIVE = "codex-acp-linux-x64/bin/codex-acp"
PANIC_TAIL = "note: Some details are omitted, run with `RUST_BACKTRACE=full` for a verbose backtrace."
PATCH_OPTIONS = [
    {"optionId": "approved", "name": "Yes", "kind": "allow_once"},
    {"optionId": "abort", "name": "No, provide feedback", "kind": "reject_once"},
]
TOOL_CALL_KINDS = ("tool_call", "tool_call_update")
REFLECTED_KINDS = {"agent_message_chunk", "usage_update", "available_commands_update", *TOOL_CALL_KINDS}
QUIET_CONFIG = """
check_for_update_on_startup = false

[analytics]
enabled = false

[feedback]
enabled = false

[otel]
exporter = "none"
"""


def codex_config(base_url: str | None, sandbox: str | None = "danger-full-access") -> str:
    """``config.toml``: the mock as model provider (``base_url`` None: codex's own default, OpenAI)."""
    lines = ['approval_policy = "untrusted"']
    if sandbox is not None:
        lines.append(f'sandbox_mode = "{sandbox}"')
    if base_url is not None:
        lines += [
            'model = "gpt-5.5"',
            'model_provider = "mock"',
            QUIET_CONFIG,
            "[model_providers.mock]",
            'name = "mock OpenAI"',
            f'base_url = "{base_url}"',
            'env_key = "MOCK_OPENAI_API_KEY"',
            'wire_api = "responses"',
            "request_max_retries = 0",
            "stream_max_retries = 0",
        ]
    else:
        lines.append(QUIET_CONFIG)
    return "\n".join(lines) + "\n"


def codex_env(home: Path, codex_home: Path, config: str, key: str | None = "mock-key") -> dict[str, str]:
    """``base_env`` plus a fresh ``CODEX_HOME`` holding ``config``; ``key`` for the mock provider."""
    env = harness.base_env(home)
    codex_home.mkdir(parents=True, exist_ok=True)
    (codex_home / "config.toml").write_text(config)
    env.update({"CODEX_HOME": str(codex_home), "CODEX_API_KEY": "", "MOCK_OPENAI_API_KEY": key or ""})
    if key is None:
        env.pop("MOCK_OPENAI_API_KEY")
    return env


@pytest.fixture(autouse=True, scope="module")
def _agents_installed() -> None:
    harness.installed()


@dataclass
class Run:
    """One codex process, its mock model, its project and what it left behind."""

    agent: Any
    tee: harness.TeeStream
    mock: MockOpenAI
    project: Path
    codex_home: Path
    processes: dict[int, str] = field(default_factory=dict)  # pid -> command line, before close
    close_seconds: float | None = None

    def mark(self) -> int:
        """The position on the wire now (to look at one turn's messages)."""
        return len(self.tee.received)

    def since(self, mark: int) -> list[dict[str, Any]]:
        """Every message the agent sent since ``mark`` (batches flattened)."""
        return harness._messages(self.tee.received[mark:])

    def status_on_wire(self, tool_call_id: str) -> str | None:
        """The status the wire last gave ``tool_call_id`` (safe from the mock's thread)."""
        return fold_tool_calls(self.since(0)).get(tool_call_id, {}).get("status")

    async def close(self) -> None:
        """Close the agent (once), recording its processes first and how long closing took."""
        if self.close_seconds is None:
            tree = harness.descendants(self.agent.process.pid)
            self.processes = {p: harness.cmdline(p) for p in tree}
            start = time.monotonic()
            await self.agent.close()
            self.close_seconds = time.monotonic() - start

    async def close_and_check(self) -> None:
        """Close the agent: quickly, and none of its processes may be left (bounded wait)."""
        await self.close()
        commands = list(self.processes.values())
        assert any("node" in c and ".bin/codex-acp" in c for c in commands), commands  # the launcher
        assert any(NATIVE in c for c in commands), commands  # the native binary it spawned
        assert self.close_seconds is not None and self.close_seconds < CLOSE_BOUND, self.close_seconds
        await until_async(lambda: not self.leftovers(), 5, message=lambda: f"left: {self.leftovers()}")

    def leftovers(self) -> list[tuple[int, str]]:
        """Processes of this run still alive: recorded ones, or any with this run's ``CODEX_HOME``."""
        alive = {p for p in self.processes if running(p)}
        alive |= set(harness.processes_with_env("CODEX_HOME", str(self.codex_home)))
        return [(p, harness.cmdline(p)) for p in sorted(alive)]


async def start(
    tmp_path: Path,
    *,
    provider: bool = True,
    sandbox: str | None = "danger-full-access",
    key: str | None = "mock-key",
) -> Run:
    """The real codex and a fresh mock (its model provider unless ``provider`` is False), in a
    project holding ``notes.txt``; ``sandbox`` None leaves codex's default."""
    project, codex_home = tmp_path / "project", tmp_path / "codex-home"
    project.mkdir()
    (project / "notes.txt").write_text(ORIGINAL)
    mock = MockOpenAI()
    config = codex_config(mock.base_url if provider else None, sandbox)
    env = codex_env(tmp_path / "home", codex_home, config, key)
    try:
        agent, tee = await harness.open_agent("codex", env, project)
    except BaseException:
        mock.close()
        raise
    return Run(agent, tee, mock, project, codex_home)


@pytest.fixture
async def codex(tmp_path: Path) -> AsyncIterator[Run]:
    """The real codex with the mock as its model provider and the full-access sandbox."""
    run = await start(tmp_path)
    try:
        yield run
    finally:
        await run.close()
        run.mock.close()


# -- what the wire said, folded independently of the client ----------------------------------------
def fold_tool_calls(messages: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Each tool call as the wire left it (v1: ``tool_call`` replaces, ``tool_call_update`` and a
    permission request's ``toolCall`` patch their non-null fields; ``_meta`` patches by key)."""
    calls: dict[str, dict[str, Any]] = {}
    for m in messages:
        params = m.get("params") or {}
        if m.get("method") == "session/request_permission":
            _patch(calls.setdefault(params["toolCall"]["toolCallId"], {}), params["toolCall"])
        elif m.get("method") == "session/update" and params["update"]["sessionUpdate"] in TOOL_CALL_KINDS:
            update = params["update"]
            if update["sessionUpdate"] == "tool_call":
                calls[update["toolCallId"]] = {}
            _patch(calls.setdefault(update["toolCallId"], {}), update)
    return calls


def _patch(target: dict[str, Any], update: dict[str, Any]) -> None:
    for key, value in update.items():
        if key == "_meta" and isinstance(value, dict):
            target["_meta"] = {**target.get("_meta", {}), **value}
        elif key != "sessionUpdate" and value is not None:
            target[key] = value


def wire_updates(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The ``update`` objects of the ``session/update`` notifications among ``messages``."""
    return [m["params"]["update"] for m in messages if m.get("method") == "session/update"]


def terminal_meta(messages: list[dict[str, Any]], key: str) -> list[dict[str, Any]]:
    """Every ``_meta[key]`` (``terminal_info``/``terminal_output``/``terminal_exit``) on the wire."""
    return [u["_meta"][key] for u in wire_updates(messages) if key in (u.get("_meta") or {})]


async def assert_reflected(
    run: Run, session: Any, mark: int, client_marked: dict[str, str] | None = None
) -> list[str]:
    """Every update and permission request since ``mark`` shows in ``session.state``; returns the
    ids of the tool calls the wire spoke of. ``client_marked``: statuses the client set itself."""
    client_marked = client_marked or {}
    messages = run.since(mark)
    updates = wire_updates(messages)
    kinds = {u["sessionUpdate"] for u in updates}
    assert kinds <= REFLECTED_KINDS, f"unchecked update kinds: {kinds - REFLECTED_KINDS}"
    state = session.state
    calls = fold_tool_calls(messages)
    for tc_id, wire in calls.items():
        expected = {**wire, **({"status": client_marked[tc_id]} if tc_id in client_marked else {})}
        mine = await until_async(lambda i=tc_id: state.tool_calls.get(i), 5, message=f"tool call {tc_id}")
        got = mine.to_dict()
        for key in ("title", "kind", "status", "content", "locations", "rawInput", "rawOutput"):
            if key in expected:
                assert got.get(key) == expected[key], (tc_id, key, got.get(key), expected[key])
        assert mine.meta == expected.get("_meta"), tc_id
    # v1 message chunks carry no id: compare the agent's whole text, session-wide
    wire_text = "".join(
        u["content"]["text"]
        for u in wire_updates(run.since(0))
        if u["sessionUpdate"] == "agent_message_chunk"
    )
    assert "".join(m.text for m in state.messages.values() if m.role == "agent") == wire_text
    usage = [u for u in updates if u["sessionUpdate"] == "usage_update"]
    if usage:
        assert {k: state.usage.get(k) for k in ("used", "size")} == {
            k: usage[-1][k] for k in ("used", "size")
        }
    commands = [u for u in updates if u["sessionUpdate"] == "available_commands_update"]
    if commands:
        assert state.available_commands == commands[-1]["availableCommands"]
    return list(calls)


async def prompt(run: Run, session: Any, text: str) -> str | None:
    """``session.prompt(text)`` within ``TURN`` s; on a timeout, say what codex and the mock did last."""
    try:
        return await asyncio.wait_for(session.prompt(text), TURN)
    except TimeoutError:
        pending = [step.label for step in run.mock.pending]
        raise AssertionError(
            f"no end of turn within {TURN}s: mock failures {run.mock.failures}, pending steps {pending},"
            f" {len(run.mock.model_requests())} model requests, last from the agent"
            f" {run.tee.received[-3:]}, stderr {run.agent.stderr_tail(10)}"
        ) from None


def permission_requests(run: Run, mark: int) -> list[dict[str, Any]]:
    """The agent's ``session/request_permission`` requests since ``mark``."""
    return [m for m in run.since(mark) if m.get("method") == "session/request_permission" and "id" in m]


def answer(run: Run, request: dict[str, Any]) -> dict[str, Any]:
    """The one response our client sent to ``request``."""
    answers = run.tee.answers_to(request["id"])
    assert len(answers) == 1, answers
    return answers[0]["result"]


def prompt_response(run: Run, mark: int) -> dict[str, Any]:
    """The agent's response to the one ``session/prompt`` sent since ``mark``."""
    ids = {m["id"] for m in harness._messages(run.tee.sent) if m.get("method") == "session/prompt"}
    (response,) = [m for m in run.since(mark) if "method" not in m and m.get("id") in ids]
    return response


def diagnostics(session: Any) -> list[tuple[str, str, str]]:
    """The session's diagnostics as ``(code, level, message)``."""
    return [(d.code, d.level, d.message) for d in session.state.diagnostics]


def unannounced(key: str, tool_call_id: str) -> tuple[str, str, str]:
    """The (expected) note that codex asked permission for a tool call before announcing it."""
    return ("permission-unknown-tool-call", "info", f"{key} concerns unknown {tool_call_id!r}")


def shell(call_id: str, command: str) -> dict[str, Any]:
    """The model runs ``command`` with codex's ``exec_command`` tool."""
    return function_call(call_id, "exec_command", {"cmd": command})


def apply_patch(call_id: str, old: str, new: str) -> dict[str, Any]:
    """The model edits line ``old`` of ``notes.txt`` into ``new`` (codex's freeform ``apply_patch``)."""
    text = f"*** Begin Patch\n*** Update File: notes.txt\n-{old}\n+{new}\n*** End Patch\n"
    return custom_tool_call(call_id, "apply_patch", text)


def assert_patch_request(request: dict[str, Any], call_id: str, path: Path, new_text: str) -> None:
    """The shape of codex's permission request for an ``apply_patch`` of ``path``."""
    params = request["params"]
    assert params["options"] == PATCH_OPTIONS
    tool_call = params["toolCall"]
    assert tool_call["toolCallId"] == call_id
    assert (tool_call["kind"], tool_call["status"]) == ("edit", "pending")
    assert tool_call["title"] == f"Edit {path}"
    assert tool_call["content"] == [
        {"type": "diff", "path": str(path), "oldText": ORIGINAL, "newText": new_text}
    ]
    assert tool_call["locations"] == [{"path": str(path)}]
    assert list(tool_call["rawInput"]["changes"]) == [str(path)]


def assert_exec_request(request: dict[str, Any], call_id: str, command: str) -> None:
    """The shape of codex's permission request for an ``exec_command`` (asked before announced)."""
    params = request["params"]
    tool_call = params["toolCall"]
    assert tool_call["toolCallId"] == call_id
    assert (tool_call["kind"], tool_call["status"], tool_call["title"]) == ("execute", "pending", command)
    assert tool_call["rawInput"]["command"][-2:] == ["-lc", command]
    (note,) = tool_call["content"]
    assert note["type"] == "content" and "Available Decisions: Approved" in note["content"]["text"]
    options = params["options"]
    assert [(o["optionId"], o["kind"]) for o in options] == [
        ("approved", "allow_once"),
        ("approved-execpolicy-amendment", "allow_always"),
        ("abort", "reject_once"),
    ]
    assert options[0]["name"] == "Yes, proceed"
    assert options[1]["name"].startswith("Yes, and don't ask again for commands that start with `")
    assert options[2]["name"] == "No, and tell Codex what to do differently"


# -- turns A, B, C (and D) in one session ------------------------------------------------------------
async def test_read_edit_run_then_cancel_and_reject(codex: Run) -> None:
    path = codex.project / "notes.txt"
    # codex streams a command's output only once its streaming task listens: output written in
    # the first instants is only in `rawOutput` (measured: a bare `printf` gives no
    # `terminal_output` at all), hence the leading sleep; the second chunk shows streaming
    command = "sleep 0.5; printf 'caf\\xc3\\xa9\\n'; sleep 0.3; printf 'ok\\n'"
    codex.mock.add(
        Step(user_said("[turn-a]"), [shell("a_read", "cat notes.txt")], "A"),
        Step(answered("a_read"), [apply_patch("a_edit", "hello", "hello, café")], "A edit"),
        Step(answered("a_edit"), [shell("a_sh", command)], "A shell"),
        # codex reports the command's end from a background task, ~0.1 s after it exits, and drops
        # it if the model's next answer ends the turn first: the "model" waits for it on the wire
        Step(
            answered("a_sh"),
            [message("Done: notes.txt now says hello, café.")],
            "A reply",
            hold=lambda: codex.status_on_wire("a_sh") == "completed",
        ),
    )
    session = await asyncio.wait_for(codex.agent.new_session(cwd=codex.project), TURN)
    asked: list[Any] = []
    session.permission_handler = lambda perm: asked.append(perm) or "approved"

    # -- turn A: read (not asked), edit (allowed), run a command (allowed), reply ----------------
    mark = codex.mark()
    stop = await prompt(codex, session, "[turn-a] Greet in notes.txt, then print café.")

    assert stop == "end_turn"
    assert path.read_text() == EDITED
    assert codex.mock.failures == [] and codex.mock.pending == []
    edit_request, shell_request = permission_requests(codex, mark)
    assert_patch_request(edit_request, "a_edit", path, EDITED)
    assert_exec_request(shell_request, "a_sh", command)
    assert [p.title for p in asked] == [f"Allow Edit {path}?", f"Allow {command}?"]
    assert [p.tool_call_id for p in asked] == ["a_edit", "a_sh"]
    for request in (edit_request, shell_request):
        assert answer(codex, request) == {"outcome": {"outcome": "selected", "optionId": "approved"}}
    # what codex sent the model: one streamed request per step, each carrying the tool's real result
    assert {(r.method, r.path) for r in codex.mock.requests} == {("POST", "/v1/responses")}
    main = codex.mock.model_requests()
    assert len(main) == 4
    for r in main:
        assert r.body["model"] == "gpt-5.5" and r.body["stream"] is True
        assert r.headers["authorization"] == "<redacted>" and r.headers["accept"] == "text/event-stream"
        assert r.headers["originator"] == "codex_cli_rs"
        assert {"exec_command", "apply_patch"} <= set(r.tool_names())
    (read_output,) = main[1].outputs("a_read")
    assert "Process exited with code 0" in read_output and read_output.endswith("Output:\nhello\n")
    (edit_output,) = main[2].outputs("a_edit")
    assert "Success. Updated the following files:\nM notes.txt" in edit_output
    (shell_output,) = main[3].outputs("a_sh")
    assert "Process exited with code 0" in shell_output and shell_output.endswith("Output:\ncafé\nok\n")
    # the state: every update reflected; statuses, kinds, the diff, the terminal
    assert await assert_reflected(codex, session, mark) == ["a_read", "a_edit", "a_sh"]
    assert prompt_response(codex, mark)["result"] == {"stopReason": "end_turn"}
    calls = session.state.tool_calls
    assert [(calls[i].kind, calls[i].status) for i in ("a_read", "a_edit", "a_sh")] == [
        ("read", "completed"),
        ("edit", "completed"),
        ("execute", "completed"),
    ]
    assert calls["a_read"].title == "Read notes.txt" and calls["a_read"].locations == [{"path": str(path)}]
    assert calls["a_edit"].content == [
        {"type": "diff", "path": str(path), "oldText": ORIGINAL, "newText": EDITED}
    ]
    assert calls["a_sh"].title == command
    assert calls["a_sh"].content == [{"type": "terminal", "terminalId": "a_sh"}]
    turn_a = codex.since(mark)
    assert terminal_meta(turn_a, "terminal_info") == [{"terminal_id": "a_sh", "cwd": str(codex.project)}]
    chunks = terminal_meta(turn_a, "terminal_output")
    assert {c["terminal_id"] for c in chunks} == {"a_sh"}
    assert "".join(c["data"] for c in chunks) == "café\nok\n"
    assert terminal_meta(turn_a, "terminal_exit") == [{"terminal_id": "a_sh", "exit_code": 0, "signal": None}]
    terminal = session.state.terminals.get("a_sh")
    assert terminal is not None, list(session.state.terminals)
    assert b"caf\xc3\xa9\n" in terminal.output and terminal.output == "café\nok\n".encode()
    assert terminal.exit_status is not None and terminal.exit_status.get("exitCode") == 0
    assert terminal.cwd == str(codex.project)
    assert "Done: notes.txt now says hello, café." in [m.text for m in session.state.messages.values()]
    assert session.state.stop_reason == "end_turn" and session.state.run_state == "idle"
    # codex asks for a command before it announces it (not so for an edit): the one note, expected
    assert diagnostics(session) == [unannounced("perm_2", "a_sh")]

    # -- turn B: cancel while the command's permission request is pending -------------------------
    overwrite = "printf 'cancelled\\n' > notes.txt"
    codex.mock.add(Step(user_said("[turn-b]"), [shell("b_sh", overwrite)], "B"))
    session.permission_handler = None
    mark = codex.mark()
    turn = asyncio.ensure_future(session.prompt("[turn-b] Overwrite notes.txt."))
    (perm,) = await until_async(lambda: session.pending_permissions, TURN, message="the command's permission")

    await session.cancel()
    stop = await asyncio.wait_for(turn, TURN)

    assert stop == "cancelled"
    assert path.read_text() == EDITED
    (request,) = permission_requests(codex, mark)
    assert request["params"]["toolCall"]["title"] == overwrite
    assert perm.title == f"Allow {overwrite}?" and perm.outcome == {"outcome": "cancelled"}
    assert answer(codex, request) == {"outcome": {"outcome": "cancelled"}}
    assert prompt_response(codex, mark)["result"] == {"stopReason": "cancelled"}
    # codex never reports the aborted command: the client marks it cancelled itself
    assert await assert_reflected(codex, session, mark, {"b_sh": "cancelled"}) == ["b_sh"]
    assert codex.status_on_wire("b_sh") == "pending"
    assert session.state.tool_calls["b_sh"].status == "cancelled"
    assert session.state.stop_reason == "cancelled" and session.state.run_state == "idle"
    assert codex.mock.failures == [] and codex.mock.pending == []
    assert diagnostics(session)[1:] == [unannounced("perm_3", "b_sh")]

    # -- turn C: reject the edit ("abort": codex then ends the turn, reporting `cancelled`) --------
    codex.mock.add(
        Step(user_said("[turn-c]"), [apply_patch("c_edit", "hello, café", "rejected")], "C"),
    )
    session.permission_handler = lambda perm: "abort"
    mark = codex.mark()
    stop = await prompt(codex, session, "[turn-c] Change the greeting.")

    assert stop == "cancelled"  # codex's answer to a rejected patch, though the client cancelled nothing
    assert path.read_text() == EDITED
    (request,) = permission_requests(codex, mark)
    assert request["params"]["options"] == PATCH_OPTIONS
    assert request["params"]["toolCall"]["content"][0]["newText"] == "rejected\n"
    assert answer(codex, request) == {"outcome": {"outcome": "selected", "optionId": "abort"}}
    assert await assert_reflected(codex, session, mark) == ["c_edit"]
    # the wire leaves the rejected edit `pending` (its permission's status): the state says the same
    assert session.state.tool_calls["c_edit"].status == "pending"
    assert session.state.permissions["perm_4"].selected_option == "abort"
    assert codex.mock.failures == [] and codex.mock.pending == []
    assert diagnostics(session)[2:] == []

    # -- turn D: the session goes on; what the model learns of the cancelled and rejected calls ---
    codex.mock.add(Step(user_said("[turn-d]"), [message("Understood.")], "D"))
    mark = codex.mark()
    assert await prompt(codex, session, "[turn-d] Never mind.") == "end_turn"
    last = codex.mock.model_requests()[-1]
    for call_id in ("b_sh", "c_edit"):
        (output,) = last.outputs(call_id)
        assert re.fullmatch(r"aborted by user after \d+(\.\d+)?s", output), (call_id, output)
    assert await assert_reflected(codex, session, mark) == []
    assert codex.mock.failures == [] and codex.mock.pending == []
    assert path.read_text() == EDITED
    assert diagnostics(session)[2:] == []
    assert codex.agent.diagnostics == []
    await codex.close_and_check()


async def test_quick_command_terminal(codex: Run) -> None:
    """A command that prints at once: its terminal gets the exit status but no output (codex's)."""
    command = "printf 'caf\\xc3\\xa9\\n'"
    codex.mock.add(
        Step(user_said("[quick]"), [shell("q_sh", command)], "quick"),
        Step(
            answered("q_sh"),
            [message("Printed.")],
            "reply",
            hold=lambda: codex.status_on_wire("q_sh") == "completed",
        ),
    )
    session = await asyncio.wait_for(codex.agent.new_session(cwd=codex.project), TURN)
    session.permission_handler = lambda perm: "approved"
    mark = codex.mark()
    assert await prompt(codex, session, "[quick] Print café.") == "end_turn"

    assert codex.mock.failures == [] and codex.mock.pending == []
    (output,) = codex.mock.model_requests()[-1].outputs("q_sh")
    assert output.endswith("Output:\ncafé\n")
    assert await assert_reflected(codex, session, mark) == ["q_sh"]
    wire = codex.since(mark)
    assert terminal_meta(wire, "terminal_info") == [{"terminal_id": "q_sh", "cwd": str(codex.project)}]
    assert terminal_meta(wire, "terminal_output") == []  # printed before codex's streaming listened
    assert terminal_meta(wire, "terminal_exit") == [{"terminal_id": "q_sh", "exit_code": 0, "signal": None}]
    tool_call = session.state.tool_calls["q_sh"]
    assert tool_call.status == "completed" and tool_call.raw_output["aggregated_output"] == "café\n"
    terminal = session.state.terminals["q_sh"]
    assert terminal.output == b"" and terminal.exit_status == {"exitCode": 0, "signal": None}
    assert diagnostics(session) == [unannounced("perm_1", "q_sh")]
    await codex.close_and_check()
    # the terminal's `command` is taken from `rawInput.command`, an argv; joined with bare spaces
    # it reads as another shell line (`bash -lc printf` and `'caf…'` as $0): quote it, or show the
    # script the model wrote
    argv = tool_call.raw_input["command"]
    assert argv[-2:] == ["-lc", command]
    assert terminal.command in (shlex.join(argv), command), terminal.command


# -- what the user sees without a key, and with codex's default sandbox ------------------------------
async def test_no_key_asks_to_log_in(tmp_path: Path) -> None:
    """Codex's own default provider (OpenAI) without a key: ``session/new`` says auth required."""
    run = await start(tmp_path, provider=False, key=None)
    try:
        # codex-acp drops its "chatgpt" method when NO_BROWSER is set at all (harness sets it)
        assert [m["id"] for m in run.agent.auth_methods] == ["codex-api-key", "openai-api-key"]
        assert [m["type"] for m in run.agent.auth_methods] == ["env_var", "env_var"]
        with pytest.raises(AuthRequired) as caught:
            await asyncio.wait_for(run.agent.new_session(cwd=run.project), TURN)
        error = caught.value
        assert (error.code, error.message, error.method) == (-32000, "Authentication required", "session/new")
        text = str(error)  # the hint's wording is the client's own (and still changing)
        assert text.startswith("authentication required: Authentication required")
        assert "'codex-api-key' (Use CODEX_API_KEY), 'openai-api-key' (Use OPENAI_API_KEY)" in text
        assert run.since(0)[-1]["error"] == {"code": -32000, "message": "Authentication required"}
        assert run.agent.sessions == {} and run.agent.diagnostics == []
        await run.close_and_check()
    finally:
        await run.close()
        run.mock.close()


async def test_no_key_lists_chatgpt_login_without_no_browser(tmp_path: Path) -> None:
    """A user's environment has no NO_BROWSER: codex-acp offers all three login methods."""
    if "NO_BROWSER" in os.environ:
        pytest.skip("NO_BROWSER is set in this environment: codex-acp hides its chatgpt method")
    project = tmp_path / "project"
    project.mkdir()
    env = codex_env(tmp_path / "home", tmp_path / "codex-home", codex_config(None), key=None)
    del env["NO_BROWSER"]
    agent, _ = await harness.open_agent("codex", env, project)
    try:
        assert [(m["id"], m.get("type")) for m in agent.auth_methods] == [
            ("chatgpt", None),  # an "agent" method: the agent runs the login
            ("codex-api-key", "env_var"),
            ("openai-api-key", "env_var"),
        ]
        assert agent.auth_methods[0]["name"] == "Login with ChatGPT"
        with pytest.raises(AuthRequired) as caught:
            await asyncio.wait_for(agent.new_session(cwd=project), TURN)
        assert "'chatgpt' (Login with ChatGPT)" in str(caught.value)
    finally:
        await agent.close()


async def test_no_key_for_a_custom_provider_fails_the_prompt(tmp_path: Path) -> None:
    """The mock provider without its ``env_key`` set: the session opens, the prompt fails."""
    run = await start(tmp_path, key=None)
    try:
        session = await asyncio.wait_for(run.agent.new_session(cwd=run.project), TURN)
        with pytest.raises(RpcError) as caught:
            await prompt(run, session, "hello")
        error = caught.value
        assert (error.code, error.message) == (-32603, "Internal error")
        assert error.data == {
            "message": "Missing environment variable: `MOCK_OPENAI_API_KEY`.",
            "codex_error_info": "other",
        }
        assert "Missing environment variable: `MOCK_OPENAI_API_KEY`." in str(error)
        assert run.mock.requests == []
        assert session.state.run_state == "idle" and not session.running
        await run.close_and_check()
    finally:
        await run.close()
        run.mock.close()


async def test_default_sandbox_without_bwrap(tmp_path: Path) -> None:
    """``sandbox_mode`` left at codex's default: every command and patch fails for want of bwrap."""
    run = await start(tmp_path, sandbox=None)
    path = run.project / "notes.txt"
    bwrap = (
        "bubblewrap is unavailable: no system bwrap was found on PATH and no bundled"
        " codex-resources/bwrap binary was found next to the Codex executable"
    )
    run.mock.add(
        Step(user_said("[sandbox]"), [shell("s_read", "cat notes.txt")], "read"),
        Step(
            answered("s_read"),
            [apply_patch("s_edit", "hello", "sandboxed")],
            "edit",
            hold=lambda: run.status_on_wire("s_read") == "failed",  # as in turn A: its end comes late
        ),
        Step(answered("s_edit"), [message("Neither worked.")], "reply"),
    )
    try:
        session = await asyncio.wait_for(run.agent.new_session(cwd=run.project), TURN)
        mark = run.mark()
        stop = await prompt(run, session, "[sandbox] Read and edit notes.txt.")

        assert stop == "end_turn"
        assert path.read_text() == ORIGINAL
        assert run.mock.failures == [] and run.mock.pending == []
        assert permission_requests(run, mark) == []  # the read is not asked; the patch fails first
        requests = run.mock.model_requests()
        (read_output,) = requests[1].outputs("s_read")
        assert "Process exited with code 101" in read_output and bwrap in read_output
        (edit_output,) = requests[2].outputs("s_edit")
        assert edit_output.startswith("apply_patch verification failed: Failed to read file to update")
        assert bwrap in edit_output
        # what the user sees: the read fails (exit 101); the patch shows nowhere on the wire (no
        # tool call at all), only in codex's stderr log
        assert await assert_reflected(run, session, mark) == ["s_read"]
        read = session.state.tool_calls["s_read"]
        assert read.status == "failed" and read.raw_output["exit_code"] == 101
        # the content is codex's transcript of the panic, which (like the shell output streamed in
        # turn A) misses what the command wrote in its first instants: measured, the whole panic,
        # only its last line, or nothing — mostly without the bwrap sentence; the model gets it
        # whole (above), and codex's stderr has it (from the patch)
        transcript = read.raw_output["aggregated_output"]
        assert PANIC_TAIL.startswith(transcript) or transcript.endswith(f"{PANIC_TAIL}\n"), transcript
        if transcript:
            assert read.content == [
                {"type": "content", "content": {"type": "text", "text": f"```txt\n{transcript}```\n"}}
            ]
        assert any("apply_patch verification failed" in line for line in run.agent.stderr_tail(50))
        assert any(bwrap in line for line in run.agent.stderr_tail(50))
        assert diagnostics(session) == []
        await run.close_and_check()
    finally:
        await run.close()
        run.mock.close()
