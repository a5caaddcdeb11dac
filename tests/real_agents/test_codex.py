"""The real Codex agent (``@agentclientprotocol/codex-acp``, pinned) through our client, offline.

codex-acp 2.6 is a Node adapter over Codex's app-server: ``node .bin/codex-acp`` starts
``codex app-server`` (``@openai/codex`` 0.166, a native binary), which talks to ``mock_openai`` —
the Responses API on 127.0.0.1 — through a custom ``model_provider`` in a temporary
``CODEX_HOME``. The scripted model calls codex's own tools, ``exec_command`` (a shell) and the
freeform ``apply_patch``, which codex runs for real in a temporary project.

codex-acp 2.6 answers our ``protocolVersion: 2``: tool calls are ``tool_call_update`` upserts, a
command is an agent-owned terminal (``terminal_update`` + base64 ``terminal_output_chunk``s), the
prompt response is an acknowledgement (``{messageId}``) and the turn ends with ``state_update``
``idle`` + ``stopReason``; a permission request names its ``subject`` (the tool call).

What codex 2.6 needs and does here (measured):
- ``approval_policy = "untrusted"`` (what the 0.16 tests used) now aborts the start
  (``test_untrusted_approval_policy_aborts_the_start``). How it asks is the session's ``mode``
  config option: ``agent`` (the default: approvals go to a model "Guardian" reviewer, never to
  the client), ``workspace-write`` and ``read-only`` (approval policy ``on-request``, reviewer the
  user: the client is asked when the model calls ``exec_command`` with ``sandbox_permissions:
  "require_escalated"`` and a ``justification``), ``agent-full-access`` (never asks). Each turn
  sends the mode's sandbox policy, which overrides ``sandbox_mode`` in ``config.toml``.
- The sandbox: codex 0.166 ships its own ``bwrap`` (``codex-resources/bwrap`` next to the binary),
  so ``workspace-write``/``read-only`` commands run sandboxed on a machine without one (the 0.16
  tests needed ``sandbox_mode = "danger-full-access"``; a ``workspace-write`` session ignores it).
  It needs unprivileged user namespaces; an escalated command the user approved runs outside it.
- ``model = "gpt-5.5"``: a model codex has metadata for (else it warns and offers no
  ``apply_patch``).

Known codex bug (``test_streamed_command_loses_its_first_output``): what a streamed command prints
in its first instants (measured: a ``printf`` after ``sleep`` 0, 0.05 or 0.1 s is lost, after 0.2 s
it arrives) is never on the wire — not as a chunk, not in a snapshot — though the model gets it.
A command that prints and exits at once gets one final ``terminal_update`` snapshot instead, whole.
The wire-equals-state checks hold against the wire; the test shows the bytes codex dropped.

Each test checks what the wire said against what our client made of it: every ``session/update``
and permission request the ``TeeStream`` kept, folded here with the v2 rules, must equal
``session.state`` (tool calls, terminals to the byte, messages, session info, run state); what codex
sent the model (the mock's log); the file on disk; the stop reasons; that no request of the agent's
was answered with an error; and that no process of the agent's survives ``agent.close()``.
"""

from __future__ import annotations

import asyncio
import re
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
from tests.real_agents.referee import Folded, fold, strict_b64
from tests.support import running, until_async

TURN = 60  # seconds: a bound for one prompt turn (each takes 0.3-3 s here)
CLOSE_BOUND = 5.0  # seconds for agent.close()
ORIGINAL = "hello\n"
PATCHED = "hello, world\n"
EDITED = "hello, café\n"
NATIVE = "/bin/codex app-server"  # @openai/codex-linux-x64/vendor/<triple>/bin/codex app-server
TITLE = "Greeting in notes"  # what the mock answers codex's title request
GATEWAY = {"kind": "gateway", "label": "Custom model gateway", "detail": "mock"}  # detail: provider id
NOT_LOGGED_IN = {"kind": "none", "label": "Not logged in"}
UNTRUSTED = 'approval_policy = "untrusted" is no longer supported; remove this setting'
COMMAND_OPTIONS = [  # what codex offers for an escalated command (the reject ends the whole turn)
    ("allow_once", "Yes, proceed", "allow_once"),
    ("accept_execpolicy_amendment", None, "allow_always"),  # name: "... start with `<prefix>`"
    ("cancel", "No, and tell Codex what to do differently", "reject_once"),
]
# every update kind a test compares with the state; any other kind fails the comparison (a new pin
# sending something new must be read against the spec before it counts as understood)
V2_KINDS = {
    "user_message_chunk",
    "agent_message_chunk",
    "tool_call_update",
    "terminal_update",
    "terminal_output_chunk",
    "state_update",
    "usage_update",
    "available_commands_update",
    "config_option_update",
    "session_info_update",
}
QUIET_CONFIG = """
check_for_update_on_startup = false

[analytics]
enabled = false

[feedback]
enabled = false

[otel]
exporter = "none"
"""


def codex_config(base_url: str | None, sandbox: str | None = None, approval: str | None = None) -> str:
    """``config.toml``: the mock as model provider (``base_url`` None: codex's own default, OpenAI);
    ``sandbox``/``approval``: ``sandbox_mode``/``approval_policy`` (None: codex's default)."""
    lines = []
    if approval is not None:
        lines.append(f'approval_policy = "{approval}"')
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
    exit_code: int | None = None
    started: float = field(default_factory=time.monotonic)

    def mark(self) -> int:
        """The position on the wire now (to look at one turn's messages)."""
        return len(self.tee.received)

    def since(self, mark: int) -> list[dict[str, Any]]:
        """Every message the agent sent since ``mark`` (batches flattened)."""
        return harness.flat_messages(self.tee.received[mark:])

    def auth_statuses(self) -> list[Any]:
        """The ``params`` of every ``_auth/status_update`` notification codex sent."""
        return [m.get("params") for m in self.since(0) if m.get("method") == "_auth/status_update"]

    async def workspace_session(self) -> Any:
        """A new session in ``workspace-write`` mode: codex asks the user before an escalation."""
        session = await asyncio.wait_for(self.agent.new_session(cwd=self.project), TURN)
        assert mode_of(session) == "agent"  # codex-acp's default: a model reviews, the user is not asked
        await asyncio.wait_for(session.set_config_option("mode", "workspace-write"), TURN)
        assert mode_of(session) == "workspace-write"
        return session

    async def close(self) -> None:
        """Close the agent (once), recording its processes first and how long closing took."""
        if self.close_seconds is None:
            tree = harness.descendants(self.agent.process.pid)
            self.processes = {p: harness.cmdline(p) for p in tree}
            start = time.monotonic()
            self.exit_code = await self.agent.close()
            self.close_seconds = time.monotonic() - start

    async def close_and_check(self) -> None:
        """Close the agent: quickly, and none of its processes may be left (bounded wait)."""
        assert_requests_answered(self)
        await self.close()
        commands = list(self.processes.values())
        assert any("node" in c and ".bin/codex-acp" in c for c in commands), commands  # the adapter
        assert any(c.endswith(NATIVE) for c in commands), commands  # the app-server it spawned
        assert self.close_seconds is not None and self.close_seconds < CLOSE_BOUND, self.close_seconds
        await until_async(lambda: not self.leftovers(), 5, message=lambda: f"left: {self.leftovers()}")
        print(f"codex closed in {self.close_seconds:.2f} s (exit code {self.exit_code})")

    def leftovers(self) -> list[tuple[int, str]]:
        """Processes of this run still alive: recorded ones, or any with this run's ``CODEX_HOME``."""
        alive = {p for p in self.processes if running(p)}
        alive |= set(harness.processes_with_env("CODEX_HOME", str(self.codex_home)))
        return [(p, harness.cmdline(p)) for p in sorted(alive)]

    def figures(self, session: Any, name: str) -> str:
        """Updates, tool calls, terminal bytes and seconds of this run (``-s`` shows them)."""
        held = sum(t.held_bytes for t in session.state.terminals.values())
        line = (
            f"codex figures ({name}): {len(self.tee.updates())} session/update,"
            f" {len(session.state.tool_calls)} tool calls, {held} terminal bytes,"
            f" {time.monotonic() - self.started:.1f} s"
        )
        print(line)
        return line


def mode_of(session: Any) -> Any:
    """The current value of the session's ``mode`` config option."""
    for option in session.state.config_options:
        if option.get("configId", option.get("id")) == "mode":
            return option.get("currentValue")
    return None


async def start(
    tmp_path: Path,
    *,
    provider: bool = True,
    sandbox: str | None = None,
    approval: str | None = None,
    key: str | None = "mock-key",
) -> Run:
    """The real codex and a fresh mock (its model provider unless ``provider`` is False), in a
    project holding ``notes.txt``."""
    project, codex_home = tmp_path / "project", tmp_path / "codex-home"
    project.mkdir()
    (project / "notes.txt").write_text(ORIGINAL)
    mock = MockOpenAI(title=TITLE)
    config = codex_config(mock.base_url if provider else None, sandbox, approval)
    env = codex_env(tmp_path / "home", codex_home, config, key)
    started = time.monotonic()
    try:
        agent, tee = await harness.open_agent("codex", env, project)
    except BaseException:
        mock.close()
        raise
    assert agent.protocol_version == 2
    return Run(agent, tee, mock, project, codex_home, started=started)


@pytest.fixture
async def codex(tmp_path: Path) -> AsyncIterator[Run]:
    """The real codex with the mock as its model provider (codex's default sandbox)."""
    run = await start(tmp_path)
    try:
        yield run
    finally:
        await run.close()
        run.mock.close()


# -- what the wire said, folded with the v2 rules, independently of the client -----------------------
def assert_wire_equals_state(run: Run, session: Any) -> Folded:
    """Every update and permission request of ``session`` on the wire, folded, equals
    ``session.state``: tool calls and terminals whole (terminal bytes exactly), every message,
    usage, session info, the lists, the run state and the last stop reason."""
    folded = fold(run.since(0), session.session_id)
    assert folded.kinds <= V2_KINDS, f"update kinds not compared: {folded.kinds - V2_KINDS}"
    state = session.state
    assert list(state.tool_calls) == list(folded.tool_calls)
    for tc_id, wire in folded.tool_calls.items():
        assert state.tool_calls[tc_id].to_dict() == wire, tc_id
    assert list(state.terminals) == list(folded.terminals)
    for terminal_id, wire in folded.terminals.items():
        mine = state.terminals[terminal_id]
        assert mine.output == wire["output"], (terminal_id, mine.output, wire["output"])
        got = {k: v for k, v in mine.to_dict().items() if k != "output"}
        assert got == {k: v for k, v in wire.items() if k != "output"}, terminal_id
    assert list(state.messages) == list(folded.messages)
    for message_id, wire in folded.messages.items():
        got = state.messages[message_id].to_dict()
        assert {k: got[k] for k in ("messageId", "role", "content")} == wire, message_id
    if folded.usage:
        assert {k: (state.usage or {}).get(k) for k in folded.usage} == folded.usage
    assert state.session_info == folded.session_info
    if "available_commands_update" in folded.lists:
        assert state.available_commands == folded.lists["available_commands_update"]
    if "config_option_update" in folded.lists:
        assert state.config_options == folded.lists["config_option_update"]
    if folded.states:
        last = folded.states[-1]
        assert state.run_state == last["state"]
        assert state.background == last.get("background")  # codex never reports it: None
        idles = [s for s in folded.states if s["state"] == "idle"]
        if idles:
            assert state.stop_reason == idles[-1].get("stopReason")
    return folded


# -- the agent's requests and our answers --------------------------------------------------------------
def assert_requests_answered(run: Run) -> None:
    """Every request codex sent got exactly one answer from the client, none of them an error."""
    for request in [m for m in run.since(0) if "method" in m and "id" in m]:
        answers = run.tee.answers_to(request["id"])
        assert len(answers) == 1, (request["method"], answers)
        assert "error" not in answers[0], (request["method"], answers[0])


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
    ids = {m["id"] for m in harness.flat_messages(run.tee.sent) if m.get("method") == "session/prompt"}
    (response,) = [m for m in run.since(mark) if "method" not in m and m.get("id") in ids]
    return response


def turn_states(run: Run, mark: int) -> list[tuple[str, str | None]]:
    """The ``state_update``s since ``mark``, as ``(state, stopReason)``."""
    updates = [m["params"]["update"] for m in run.since(mark) if m.get("method") == "session/update"]
    return [(u["state"], u.get("stopReason")) for u in updates if u["sessionUpdate"] == "state_update"]


def wire_output(run: Run, mark: int, terminal_id: str) -> tuple[list[bytes], list[bytes]]:
    """A terminal's output on the wire since ``mark``: its chunks' bytes and its snapshots' bytes."""
    updates = [m["params"]["update"] for m in run.since(mark) if m.get("method") == "session/update"]
    mine = [u for u in updates if u.get("terminalId") == terminal_id]
    chunks = [strict_b64(u["data"]) for u in mine if u["sessionUpdate"] == "terminal_output_chunk"]
    snapshots = [
        strict_b64(u["output"]["data"])
        for u in mine
        if u["sessionUpdate"] == "terminal_update" and u.get("output")
    ]
    return chunks, snapshots


def shell(call_id: str, command: str, justification: str | None = None) -> dict[str, Any]:
    """The model runs ``command`` with codex's ``exec_command`` tool; with a ``justification`` it
    asks to run it outside the sandbox (``require_escalated``), which codex asks the user about."""
    arguments: dict[str, Any] = {"cmd": command}
    if justification is not None:
        arguments.update({"sandbox_permissions": "require_escalated", "justification": justification})
    return function_call(call_id, "exec_command", arguments)


def apply_patch(call_id: str, old: str, new: str) -> dict[str, Any]:
    """The model edits line ``old`` of ``notes.txt`` into ``new`` (codex's freeform ``apply_patch``)."""
    text = f"*** Begin Patch\n*** Update File: notes.txt\n-{old}\n+{new}\n*** End Patch\n"
    return custom_tool_call(call_id, "apply_patch", text)


def assert_escalation_request(
    request: dict[str, Any], call_id: str, command: str, why: str, cwd: Path
) -> None:
    """The shape of codex's permission request for an escalated ``exec_command``."""
    params = request["params"]
    assert (params["title"], params["description"]) == ("Run command?", why)
    assert params["subject"] == {
        "type": "tool_call",
        "toolCall": {
            "toolCallId": call_id,
            "title": command,
            "rawInput": {"command": command, "cwd": str(cwd)},
            "kind": "execute",
            "status": "pending",
        },
    }
    options = params["options"]
    assert [(o["optionId"], o["kind"]) for o in options] == [(i, k) for i, _, k in COMMAND_OPTIONS]
    for option, (_, name, _) in zip(options, COMMAND_OPTIONS, strict=True):
        if name is not None:
            assert option["name"] == name
    assert options[1]["name"].startswith("Yes, and don't ask again for commands that start with `")


# -- turns A, B, C (and D) in one session ------------------------------------------------------------
async def test_read_edit_run_then_cancel_and_reject(codex: Run) -> None:
    """``workspace-write``: a read, an edit by patch (not asked: the workspace is writable), an edit
    by an escalated command (asked, allowed), a command printing UTF-8, text; then cancel while a
    permission is pending; then reject; the session goes on. Wire equals state throughout."""
    path = codex.project / "notes.txt"
    # a sleep first: codex loses what a command prints in its first instants (see the bug's test)
    command = "sleep 1; printf 'caf\\xc3\\xa9\\n'; sleep 0.3; printf 'ok\\n'"
    sed = "sed -i 's/hello, world/hello, café/' notes.txt"
    codex.mock.add(
        Step(user_said("[turn-a]"), [shell("a_read", "cat notes.txt")], "A read"),
        Step(answered("a_read"), [apply_patch("a_patch", "hello", "hello, world")], "A patch"),
        Step(answered("a_patch"), [shell("a_edit", sed, "Edit notes.txt")], "A edit"),
        Step(answered("a_edit"), [shell("a_sh", command)], "A shell"),
        Step(answered("a_sh"), [message("Done: notes.txt now says hello, café.")], "A reply"),
    )
    session = await codex.workspace_session()
    asked: list[Any] = []
    session.permission_handler = lambda perm: asked.append(perm) or "allow_once"

    # -- turn A ------------------------------------------------------------------------------------
    mark = codex.mark()
    assert await prompt(codex, session, "[turn-a] Greet in notes.txt, then print café.") == "end_turn"

    assert path.read_text() == EDITED
    assert codex.mock.failures == [] and codex.mock.pending == []
    (request,) = permission_requests(codex, mark)  # the patch and the sandboxed commands: not asked
    assert_escalation_request(request, "a_edit", sed, "Edit notes.txt", codex.project)
    assert [(p.tool_call_id, p.title) for p in asked] == [("a_edit", "Run command?")]
    assert answer(codex, request) == {"outcome": {"outcome": "selected", "optionId": "allow_once"}}
    assert prompt_response(codex, mark)["result"].keys() == {"messageId"}  # v2: an acknowledgement
    assert turn_states(codex, mark) == [
        ("running", None),
        ("requires_action", None),  # while the permission is pending
        ("running", None),
        ("idle", "end_turn"),
    ]
    # what codex sent the model: one streamed request per step, each carrying the tool's real result
    assert {(r.method, r.path) for r in codex.mock.requests} == {("POST", "/v1/responses")}
    main = codex.mock.model_requests()
    assert len(main) == 5
    for r in main:
        assert r.body["model"] == "gpt-5.5" and r.body["stream"] is True
        assert r.headers["authorization"] == "<redacted>" and r.headers["accept"] == "text/event-stream"
        assert {"exec_command", "apply_patch"} <= set(r.tool_names())
    (read_output,) = main[1].outputs("a_read")
    assert "Process exited with code 0" in read_output and read_output.endswith("Output:\nhello\n")
    (patch_output,) = main[2].outputs("a_patch")
    assert "Success. Updated the following files:\nM notes.txt" in patch_output
    (edit_output,) = main[3].outputs("a_edit")
    assert "Process exited with code 0" in edit_output
    (shell_output,) = main[4].outputs("a_sh")
    assert "Process exited with code 0" in shell_output and shell_output.endswith("Output:\ncafé\nok\n")
    # the session's title on the wire is the first prompt; codex also asks the model for a title
    # (after the turn) and never shows the answer
    assert session.state.session_info["title"] == "[turn-a] Greet in notes.txt, then print café."
    await until_async(lambda: codex.mock.title_requests(), 10, message="codex's title request")
    assert len(codex.mock.title_requests()) == 1
    # the state: the wire folded equals it; then what that means, spelled out
    assert_wire_equals_state(codex, session)
    calls = session.state.tool_calls
    assert [(i, calls[i].kind, calls[i].status) for i in calls] == [
        ("a_read", "read", "completed"),
        ("a_patch", "edit", "completed"),
        ("a_edit", "execute", "completed"),
        ("a_sh", "execute", "completed"),
    ]
    read = calls["a_read"].to_dict()  # a read is shown as text, not a terminal
    assert read["title"] == f"Read file '{path}'" and read["locations"] == [{"path": str(path)}]
    assert read["content"] == [{"type": "content", "content": {"type": "text", "text": ORIGINAL}}]
    (diff,) = calls["a_patch"].content  # the v2 diff: changes + a git patch with absolute paths
    assert diff["type"] == "diff" and diff["changes"] == [{"operation": "modify", "path": str(path)}]
    assert diff["patch"]["format"] == "git_patch"
    assert diff["patch"]["text"].endswith("@@ -1 +1 @@\n-hello\n+hello, world\n")
    assert calls["a_sh"].content == [{"type": "terminal", "terminalId": "a_sh"}]
    terminals = session.state.terminals
    assert list(terminals) == ["a_edit", "a_sh"]
    assert terminals["a_edit"].output == b"" and terminals["a_edit"].exit_status == {
        "exitCode": 0,
        "signal": None,
    }
    shell_terminal = terminals["a_sh"]
    assert shell_terminal.output == "café\nok\n".encode()  # streamed in two chunks, every byte
    assert wire_output(codex, mark, "a_sh") == ([b"caf\xc3\xa9\n", b"ok\n"], [])
    assert shell_terminal.command == command and shell_terminal.cwd == str(codex.project)
    assert shell_terminal.exit_status == {"exitCode": 0, "signal": None}
    assert [m.text for m in session.state.messages.values()] == [
        "[turn-a] Greet in notes.txt, then print café.",
        "Done: notes.txt now says hello, café.",
    ]
    assert session.state.stop_reason == "end_turn" and session.state.run_state == "idle"
    assert session.state.diagnostics == []

    # -- turn B: cancel while the command's permission request is pending -------------------------
    overwrite = "printf 'cancelled\\n' > notes.txt"
    codex.mock.add(Step(user_said("[turn-b]"), [shell("b_sh", overwrite, "Overwrite notes.txt")], "B"))
    session.permission_handler = None
    mark = codex.mark()
    turn = asyncio.ensure_future(session.prompt("[turn-b] Overwrite notes.txt."))
    (perm,) = await until_async(lambda: session.pending_permissions, TURN, message="the command's permission")
    assert session.state.run_state == "requires_action"

    await session.cancel()
    assert await asyncio.wait_for(turn, TURN) == "cancelled"

    assert path.read_text() == EDITED
    (request,) = permission_requests(codex, mark)
    assert_escalation_request(request, "b_sh", overwrite, "Overwrite notes.txt", codex.project)
    assert perm.outcome == {"outcome": "cancelled"}
    assert answer(codex, request) == {"outcome": {"outcome": "cancelled"}}
    assert turn_states(codex, mark)[-1] == ("idle", "cancelled")
    assert_wire_equals_state(codex, session)
    # codex reports the aborted command itself: failed, its terminal with no exit code
    assert session.state.tool_calls["b_sh"].status == "failed"
    assert session.state.terminals["b_sh"].exit_status == {"exitCode": None, "signal": None}
    assert session.state.stop_reason == "cancelled" and session.state.run_state == "idle"
    assert codex.mock.failures == [] and codex.mock.pending == []

    # -- turn C: reject ("No, and tell Codex what to do differently": codex ends the turn) --------
    codex.mock.add(Step(user_said("[turn-c]"), [shell("c_sh", overwrite, "Overwrite notes.txt")], "C"))
    session.permission_handler = lambda perm: "cancel"
    mark = codex.mark()
    stop = await prompt(codex, session, "[turn-c] Overwrite notes.txt after all.")

    assert stop == "cancelled"  # codex's answer to a rejection, though the client cancelled nothing
    assert path.read_text() == EDITED
    (request,) = permission_requests(codex, mark)
    assert answer(codex, request) == {"outcome": {"outcome": "selected", "optionId": "cancel"}}
    assert turn_states(codex, mark)[-1] == ("idle", "cancelled")
    assert_wire_equals_state(codex, session)
    assert session.state.tool_calls["c_sh"].status == "failed"
    (answered_perm,) = [p for p in session.state.permissions.values() if p.tool_call_id == "c_sh"]
    assert answered_perm.selected_option == "cancel"
    assert codex.mock.failures == [] and codex.mock.pending == []

    # -- turn D: the session goes on; what the model learns of the cancelled and rejected calls ---
    codex.mock.add(Step(user_said("[turn-d]"), [message("Understood.")], "D"))
    mark = codex.mark()
    assert await prompt(codex, session, "[turn-d] Never mind.") == "end_turn"
    last = codex.mock.model_requests()[-1]
    for call_id in ("b_sh", "c_sh"):  # the rejection reads to the model exactly as the cancel does
        (output,) = last.outputs(call_id)
        assert re.fullmatch(r"Wall time: \d+(\.\d+)? seconds\naborted by user", output), (call_id, output)
    aborted = [t for t in last.user_texts() if t.startswith("<turn_aborted>")]
    assert len(aborted) == 2 and "The user interrupted the previous turn on purpose." in aborted[0]
    assert_wire_equals_state(codex, session)
    assert codex.mock.failures == [] and codex.mock.pending == []
    assert path.read_text() == EDITED
    assert session.state.diagnostics == [] and codex.agent.diagnostics == []
    # the one auth status codex pushes for a custom provider (right after `initialize`)
    assert codex.auth_statuses() == [{"authStatus": GATEWAY}]
    codex.figures(session, "turns A-D")
    await codex.close_and_check()


async def test_streamed_command_loses_its_first_output(codex: Run) -> None:
    """codex's bug: what a streamed command prints in its first instants never reaches the wire.

    A command that prints and exits at once is not streamed: one ``terminal_update`` snapshot at
    the end carries all of it. A command that goes on is streamed as ``terminal_output_chunk``s,
    and what it printed before codex's streaming attached (~0.1-0.2 s after the start) is lost: the
    model gets it, the wire never carries it, so neither can the client. It is a race (measured:
    lost in most runs, on a loaded machine the start sometimes arrives), so three such commands
    run and at least one must show it; every one's wire bytes must be the tail of what it printed."""
    quick = "printf 'caf\\xc3\\xa9\\n'"
    streamed = {
        f"s{i}_sh": f"printf 'first {i} caf\\xc3\\xa9\\n'; sleep 0.6; printf 'second {i}\\n'"
        for i in range(3)
    }
    steps, previous = [Step(user_said("[bug]"), [shell("q_sh", quick)], "quick")], "q_sh"
    for call_id, command in streamed.items():
        steps.append(Step(answered(previous), [shell(call_id, command)], call_id))
        previous = call_id
    codex.mock.add(*steps, Step(answered(previous), [message("Printed.")], "reply"))
    session = await codex.workspace_session()
    mark = codex.mark()
    assert await prompt(codex, session, "[bug] Print café, and more.") == "end_turn"

    assert codex.mock.failures == [] and codex.mock.pending == [] and permission_requests(codex, mark) == []
    requests = codex.mock.model_requests()
    assert requests[1].outputs("q_sh")[0].endswith("Output:\ncafé\n")
    # the quick one: whole, in its final snapshot, never streamed
    assert wire_output(codex, mark, "q_sh") == ([], ["café\n".encode()])
    assert session.state.terminals["q_sh"].output == "café\n".encode()
    lost = {}
    for index, call_id in enumerate(streamed):
        printed = f"first {index} café\nsecond {index}\n".encode()
        assert requests[index + 2].outputs(call_id)[0].endswith(f"Output:\n{printed.decode()}")  # the model's
        chunks, snapshots = wire_output(codex, mark, call_id)
        on_wire = b"".join(chunks)
        assert snapshots == [] and chunks[-1] == f"second {index}\n".encode(), (call_id, chunks)
        assert printed.endswith(on_wire), (call_id, on_wire)
        assert session.state.terminals[call_id].output == on_wire
        lost[call_id] = printed[: len(printed) - len(on_wire)]
    print(f"codex lost the first output of the streamed commands: {lost}")
    assert any(part == b"first %d caf\xc3\xa9\n" % i for i, part in enumerate(lost.values())), lost
    assert_wire_equals_state(codex, session)
    assert [t.exit_status for t in session.state.terminals.values()] == [{"exitCode": 0, "signal": None}] * 4
    codex.figures(session, "lost first output")
    await codex.close_and_check()


async def test_read_only_sandbox_refusal(codex: Run) -> None:
    """``read-only`` mode: codex's own bwrap refuses a write; the model is told; the user, mostly not.

    The sandbox works without a system ``bwrap`` (codex 0.166 brings one); the command runs
    without asking and fails with "Read-only file system". What the wire shows of it is a codex
    race: mostly nothing at all (3 runs in 4, measured), else a failed tool call with its terminal."""
    write = "printf 'sandboxed\\n' > notes.txt"
    refused = b"/bin/bash: line 1: notes.txt: Read-only file system\n"
    codex.mock.add(
        Step(user_said("[ro]"), [shell("r_sh", write)], "write"),
        Step(answered("r_sh"), [message("The sandbox refused.")], "reply"),
    )
    session = await asyncio.wait_for(codex.agent.new_session(cwd=codex.project), TURN)
    await asyncio.wait_for(session.set_config_option("mode", "read-only"), TURN)
    assert mode_of(session) == "read-only"
    mark = codex.mark()
    assert await prompt(codex, session, "[ro] Overwrite notes.txt.") == "end_turn"

    assert (codex.project / "notes.txt").read_text() == ORIGINAL
    assert codex.mock.failures == [] and codex.mock.pending == [] and permission_requests(codex, mark) == []
    (output,) = codex.mock.model_requests()[1].outputs("r_sh")
    assert "Process exited with code 1" in output and output.endswith(refused.decode())
    folded = assert_wire_equals_state(codex, session)
    print(f"codex showed the refused command: {bool(folded.tool_calls)}")
    if folded.tool_calls:  # the rarer outcome of the race: shown, failed, with what bash said
        assert [(i, c["status"]) for i, c in folded.tool_calls.items()] == [("r_sh", "failed")]
        assert session.state.terminals["r_sh"].output == refused
        assert session.state.terminals["r_sh"].exit_status == {"exitCode": 1, "signal": None}
    else:
        assert folded.terminals == {} and session.state.tool_calls == {}
    assert [m.text for m in session.state.messages.values()] == [
        "[ro] Overwrite notes.txt.",
        "The sandbox refused.",
    ]
    assert session.state.diagnostics == []
    codex.figures(session, "read-only refusal")
    await codex.close_and_check()


# -- what the user sees with a setting codex 2.6 refuses, and without a key ---------------------------
async def test_untrusted_approval_policy_aborts_the_start(tmp_path: Path) -> None:
    """The 0.16 tests' ``approval_policy = "untrusted"``: the app-server exits, ``initialize``
    fails, and our error says why in codex's words (and that the process exited)."""
    with pytest.raises(RpcError) as caught:
        await start(tmp_path, approval="untrusted")
    error = caught.value
    assert error.method == "initialize"
    text = str(error)
    assert UNTRUSTED in text, text
    assert text.startswith("agent error to initialize: Codex process has exited with code 1:"), text
    assert (tmp_path / "project" / "notes.txt").exists()  # started, refused, and nothing left running
    await until_async(
        lambda: not harness.processes_with_env("CODEX_HOME", str(tmp_path / "codex-home")),
        5,
        message="leftovers",
    )


DEVICE_CODE = {  # offered because the client advertises URL elicitation (its one-time-code page)
    "methodId": "chat-gpt-device-code",
    "type": "agent",
    "name": "ChatGPT (device code)",
    "description": "Sign in to ChatGPT by opening a verification page and entering a one-time code",
}


async def test_no_key_asks_to_log_in(tmp_path: Path) -> None:
    """Codex's own default provider (OpenAI) without a key: ``session/new`` says auth required."""
    run = await start(tmp_path, provider=False, key=None)
    try:
        # codex-acp 2.6 offers "agent" methods: it drops "chat-gpt" when NO_BROWSER is set, and
        # offers its device-code login only to a client that advertises URL elicitation (we do)
        assert run.agent.auth_methods == [
            {
                "methodId": "api-key",
                "type": "agent",
                "name": "API Key",
                "description": "Use an API key to authenticate",
                "_meta": {"api-key": {"provider": "openai"}},
            },
            DEVICE_CODE,
        ]
        with pytest.raises(AuthRequired) as caught:
            await asyncio.wait_for(run.agent.new_session(cwd=run.project), TURN)
        error = caught.value
        assert (error.code, error.message, error.method) == (-32000, "Authentication required", "session/new")
        text = str(error)  # the hint's wording is the client's own (and still changing)
        assert text.startswith("authentication required: Authentication required")
        assert "'api-key' (API Key)" in text
        assert run.agent.sessions == {} and run.agent.diagnostics == []
        # codex tells the client it is not logged in (pushed once `initialize` is answered)
        await until_async(lambda: run.auth_statuses(), 10, message="an auth status")
        assert run.auth_statuses() == [{"authStatus": NOT_LOGGED_IN}]
        assert run.mock.requests == []
        await run.close_and_check()
    finally:
        await run.close()
        run.mock.close()


async def test_no_key_lists_chatgpt_login_without_no_browser(tmp_path: Path) -> None:
    """A user's environment has no NO_BROWSER: codex-acp offers its ChatGPT login too."""
    project = tmp_path / "project"
    project.mkdir()
    env = codex_env(tmp_path / "home", tmp_path / "codex-home", codex_config(None), key=None)
    del env["NO_BROWSER"]  # set by the harness; a test process may have it too: the agent's env decides
    agent, _ = await harness.open_agent("codex", env, project)
    try:
        assert [(m["methodId"], m["type"], m["name"]) for m in agent.auth_methods] == [
            ("api-key", "agent", "API Key"),
            ("chat-gpt", "agent", "ChatGPT"),
            ("chat-gpt-device-code", "agent", "ChatGPT (device code)"),
        ]
        with pytest.raises(AuthRequired) as caught:
            await asyncio.wait_for(agent.new_session(cwd=project), TURN)
        assert "'chat-gpt' (ChatGPT)" in str(caught.value)
    finally:
        await agent.close()


async def test_no_key_for_a_custom_provider_fails_the_prompt(tmp_path: Path) -> None:
    """The mock provider without its ``env_key`` set: the session opens, the turn ends ``error``."""
    run = await start(tmp_path, key=None)
    try:
        session = await asyncio.wait_for(run.agent.new_session(cwd=run.project), TURN)
        missing = "Missing environment variable: `MOCK_OPENAI_API_KEY`."
        assert await prompt(run, session, "hello") == "error"
        assert session.state.stop_reason == "error"
        assert session.state.stop_error == {"code": -32603, "message": missing}
        assert [m.text for m in session.state.messages.values()] == ["hello", f"{missing}\n\n"]
        assert_wire_equals_state(run, session)
        assert run.mock.requests == []
        assert run.auth_statuses() == [{"authStatus": GATEWAY}]  # a custom provider: no login to show
        assert session.state.run_state == "idle" and not session.running
        await run.close_and_check()
    finally:
        await run.close()
        run.mock.close()


async def test_key_in_env_needs_the_api_key_login(tmp_path: Path) -> None:
    """``OPENAI_API_KEY`` set for codex's own provider: ``session/new`` still says auth required
    until the client calls ``authenticate`` with ``api-key`` (codex reads the key from its env)."""
    project = tmp_path / "project"
    project.mkdir()
    env = codex_env(tmp_path / "home", tmp_path / "codex-home", codex_config(None), key=None)
    env["OPENAI_API_KEY"] = "sk-test-not-a-real-key"
    agent, tee = await harness.open_agent("codex", env, project)
    try:
        with pytest.raises(AuthRequired):
            await asyncio.wait_for(agent.new_session(cwd=project), TURN)
        await asyncio.wait_for(agent.authenticate("api-key"), TURN)
        session = await asyncio.wait_for(agent.new_session(cwd=project), TURN)
        assert session.session_id in agent.sessions
        statuses = lambda: [  # noqa: E731
            m["params"]
            for m in harness.flat_messages(tee.received)
            if m.get("method") == "_auth/status_update"
        ]
        logged_in = {"authStatus": {"kind": "api_key", "label": "OpenAI API key"}}
        await until_async(
            lambda: statuses()[-1:] == [logged_in], 10, message=lambda: f"auth statuses {statuses()}"
        )
        # codex's first status is an account read it starts after answering `initialize`: on a busy
        # machine our login can land before that read ends, and then it reports the key only
        assert statuses() in ([{"authStatus": NOT_LOGGED_IN}, logged_in], [logged_in]), statuses()
        assert agent.diagnostics == []
    finally:
        await agent.close()
