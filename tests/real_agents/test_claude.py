"""The real Claude agent (``claude-agent-acp``, pinned) through our client, offline.

The agent runs its native ``claude`` CLI, which talks to ``mock_anthropic`` on 127.0.0.1 instead of
the Anthropic API; the scripted model calls Claude Code's own tools (``Read``, ``Edit``, ``Bash``),
which the CLI runs for real in a temporary project.

claude-agent-acp (>= 0.95) answers our ``protocolVersion: 2``: tool calls are ``tool_call_update``
upserts, shell commands are agent-owned terminals (``terminal_update`` snapshots in base64, and
``terminal_output_chunk``s for a background command), the prompt response is an acknowledgement
and the turn ends with ``state_update`` ``idle`` + ``stopReason``. Its default mode is ``auto``
(a classifier decides; no permission ever reaches the client), so every test sets the ``mode``
config option to ``default`` (Manual: it asks before an edit, or a command it cannot prove
read-only). A client that forces v1 (``protocol_version=1``) gets the old v1 conversation, with
shell output in the ``_meta.terminal_output`` extension.

Each test checks what the wire said against what our client made of it: every ``session/update``
and permission request the ``TeeStream`` kept, folded here with the protocol's rules (v2 or v1),
must equal ``session.state`` (tool calls, terminals to the byte, messages, run state); what the
agent sent the model (the mock's log); the file on disk; the stop reasons; that no request of the
agent's was answered with an error; and that no process of the agent's survives ``agent.close()``.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from acp_notebook.client.errors import AcpError, AuthRequired
from tests.real_agents import harness
from tests.real_agents.mock_anthropic import MockAnthropic, Script, text, tool_use
from tests.real_agents.referee import Folded, fold
from tests.support import running, until_async

TURN = 60  # seconds: a bound for one prompt turn (each takes 1-3 s here)
ORIGINAL = "greeting = 'hello world'\n"
EDITED = "greeting = 'hello café'\n"
PRINT_CAFE = "printf 'caf\\xc3\\xa9\\n'"  # Claude Code deems it read-only: never asks
CAFE = "café".encode()  # what the CLI keeps of its output: it trims the final newline
ALLOW = "allow-once"
EDIT_OPTIONS = [  # Claude's options for an edit in Manual mode (v2)
    {"optionId": "allow-once", "name": "Yes", "kind": "allow_once"},
    {
        "optionId": "allow-with-updates",
        "name": "Yes, allow all edits during this session",
        "kind": "allow_always",
    },
    {"optionId": "reject", "name": "No", "kind": "reject_once"},
]
COMMAND_OPTIONS = [  # ... and for a command it cannot prove read-only
    {"optionId": "allow-once", "name": "Yes", "kind": "allow_once"},
    {"optionId": "reject", "name": "No", "kind": "reject_once"},
]
CLAUDE_LOGIN = {  # the one login claude-agent-acp offers a terminal-auth client under NO_BROWSER
    "description": "Run `claude /login` in the terminal",
    "name": "Log in with Claude",
    "id": "claude-login",
    "type": "terminal",
    "args": ["--cli"],
}
# every update kind a test compares with the state; any other kind fails the comparison (a new pin
# sending something new must be read against the spec before it counts as understood)
V2_KINDS = {
    "user_message",
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
V1_KINDS = {
    "agent_message_chunk",
    "tool_call",
    "tool_call_update",
    "usage_update",
    "available_commands_update",
    "current_mode_update",
    "config_option_update",
    "session_info_update",
}


def claude_env(home: Path, base_url: str | None) -> dict[str, str]:
    """``base_env`` plus what Claude needs: the mock's URL, root allowed, its own quiet switches."""
    env = harness.base_env(home)
    env.update(
        {
            # any IS_SANDBOX makes claude-agent-acp pass --allow-dangerously-skip-permissions, which
            # the CLI refuses as root unless it is exactly "1" (this machine has IS_SANDBOX=yes)
            "IS_SANDBOX": "1",
            "CLAUDE_CONFIG_DIR": str(home / ".claude"),
            "ANTHROPIC_AUTH_TOKEN": "",
            "CLAUDE_CODE_OAUTH_TOKEN": "",
            "DISABLE_UPDATES": "1",
            "DISABLE_INSTALLATION_CHECKS": "1",
            "DISABLE_COST_WARNINGS": "1",
            "CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY": "1",
            "CLAUDE_CODE_DISABLE_AUTO_MEMORY": "1",
        }
    )
    if base_url is not None:
        env.update({"ANTHROPIC_BASE_URL": base_url, "ANTHROPIC_API_KEY": "test-key"})
    return env


@pytest.fixture(autouse=True, scope="module")
def _agents_installed() -> None:
    harness.installed()


@dataclass
class Run:
    """One agent process, its mock model, its project and what it left behind."""

    agent: Any
    tee: harness.TeeStream
    mock: MockAnthropic
    project: Path
    home: Path
    processes: dict[int, str] = field(default_factory=dict)  # pid -> command line, before close
    exit_code: int | None = None
    started: float = field(default_factory=time.monotonic)

    @property
    def script(self) -> Script:
        """The model's script (add steps before prompting)."""
        return self.mock.script

    def mark(self) -> int:
        """The position on the wire now (to look at one turn's messages)."""
        return len(self.tee.received)

    def since(self, mark: int) -> list[dict[str, Any]]:
        """Every message the agent sent since ``mark`` (batches flattened)."""
        return harness.flat_messages(self.tee.received[mark:])

    async def manual_session(self) -> Any:
        """A new session in Manual mode (``mode`` = ``default``): Claude asks before changes."""
        session = await asyncio.wait_for(self.agent.new_session(cwd=self.project), TURN)
        await asyncio.wait_for(session.set_config_option("mode", "default"), TURN)
        assert mode_of(session) == "default"
        return session

    async def close(self) -> None:
        """Close the agent; every process it started must be gone (checked by the caller)."""
        if self.exit_code is None:
            self.processes = {p: harness.cmdline(p) for p in harness.descendants(self.agent.process.pid)}
            self.exit_code = await self.agent.close()

    async def close_and_check(self) -> None:
        """Close the agent and wait (bounded) until none of its processes is left."""
        assert_requests_answered(self)
        await self.close()
        commands = list(self.processes.values())
        assert any("claude-agent-acp" in c for c in commands), commands  # node running the adapter
        assert any("claude-agent-sdk-linux" in c for c in commands), commands  # the native CLI
        await until_async(lambda: not self.leftovers(), 10, message=lambda: f"left: {self.leftovers()}")
        assert self.exit_code == 0  # on stdin EOF claude-agent-acp tears its sessions down and exits 0

    def leftovers(self) -> list[tuple[int, str]]:
        """Processes of this run still alive: recorded descendants, or any with this run's HOME."""
        alive = {p for p in self.processes if running(p)}
        alive |= set(harness.processes_with_env("HOME", str(self.home)))
        return [(p, harness.cmdline(p)) for p in sorted(alive)]

    def figures(self, session: Any) -> str:
        """Updates, tool calls, terminal bytes and seconds of this run (``-s`` shows them)."""
        updates = self.tee.updates()
        held = sum(t.held_bytes for t in session.state.terminals.values())
        line = (
            f"claude figures: {len(updates)} session/update, {len(session.state.tool_calls)} tool calls, "
            f"{held} terminal bytes, {time.monotonic() - self.started:.1f} s"
        )
        print(line)
        return line


def mode_of(session: Any) -> Any:
    """The current value of the session's ``mode`` (v2 config option, or v1 current mode)."""
    for option in session.state.config_options:
        if option.get("configId", option.get("id")) == "mode":
            return option.get("currentValue")
    return session.state.current_mode_id


async def start(tmp_path: Path, protocol_version: int = 2, **env: str) -> tuple[Run, MockAnthropic]:
    """Start the real Claude against a fresh mock (entered: the caller exits it)."""
    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    (project / "app.py").write_text(ORIGINAL)
    mock = MockAnthropic(Script()).__enter__()
    try:
        environment = {**claude_env(home, mock.url), **env}
        agent, tee = await harness.open_agent("claude", environment, project, protocol_version)
    except BaseException:
        mock.__exit__(None, None, None)
        raise
    return Run(agent, tee, mock, project, home), mock


@pytest.fixture
async def claude(tmp_path: Path) -> AsyncIterator[Run]:
    """The real Claude agent over v2 (its default) against a fresh mock, in a project with ``app.py``."""
    run, mock = await start(tmp_path)
    try:
        assert run.agent.protocol_version == 2
        yield run
    finally:
        try:
            await run.close()
        finally:
            mock.__exit__(None, None, None)


@pytest.fixture
async def claude_v1(tmp_path: Path) -> AsyncIterator[Run]:
    """The same agent with the client forcing v1 (``initialize`` offers ``protocolVersion: 1``)."""
    run, mock = await start(tmp_path, protocol_version=1)
    try:
        assert run.agent.protocol_version == 1
        yield run
    finally:
        try:
            await run.close()
        finally:
            mock.__exit__(None, None, None)


# -- what the wire said, folded with the protocol's rules, independently of the client -----------------
def assert_wire_equals_state(
    run: Run, session: Any, mark: int = 0, client_added: dict[str, dict[str, Any]] | None = None
) -> Folded:
    """Every update and permission request of ``session`` since ``mark``, folded, equals
    ``session.state`` (the whole of each tool call, terminal and message the wire spoke of).
    ``client_added`` names fields the client itself set on a tool call (by id)."""
    version = run.agent.protocol_version
    folded = fold(run.since(mark), session.session_id, version)
    known = V2_KINDS if version == 2 else V1_KINDS
    assert folded.kinds <= known, f"update kinds not compared: {folded.kinds - known}"
    state = session.state
    for tc_id, wire in folded.tool_calls.items():
        assert tc_id in state.tool_calls, (tc_id, list(state.tool_calls))
        expected = {**wire, **(client_added or {}).get(tc_id, {})}
        assert state.tool_calls[tc_id].to_dict() == expected, tc_id
    for terminal_id, wire in folded.terminals.items():
        assert terminal_id in state.terminals, (terminal_id, list(state.terminals))
        mine = state.terminals[terminal_id]
        assert mine.output == wire["output"], (terminal_id, len(mine.output), len(wire["output"]))
        got = {k: v for k, v in mine.to_dict().items() if k != "output"}
        want = {k: v for k, v in wire.items() if k != "output"}
        if version == 1:  # the extension carries exit status and command only
            got = {k: v for k, v in got.items() if k in want}
        assert got == want, terminal_id
    for message_id, wire in folded.messages.items():
        assert message_id in state.messages, message_id
        got = state.messages[message_id].to_dict()
        assert {k: got[k] for k in ("messageId", "role", "content")} == wire, message_id
    # the agent's messages in the state are exactly the wire's (no extra, none lost)
    agent_ids = [m for m, msg in state.messages.items() if msg.role == "agent"]
    wire_agent = [m for m, msg in folded.messages.items() if msg["role"] == "agent"]
    if mark == 0:
        assert agent_ids == wire_agent
    else:
        assert set(wire_agent) <= set(agent_ids)
    if folded.usage:
        assert {k: (state.usage or {}).get(k) for k in folded.usage} == folded.usage
    if folded.session_info:
        assert {k: state.session_info.get(k) for k in folded.session_info} == folded.session_info
    if "available_commands_update" in folded.lists:
        assert state.available_commands == folded.lists["available_commands_update"]
    if "config_option_update" in folded.lists:
        assert state.config_options == folded.lists["config_option_update"]
    if folded.mode is not None:
        assert state.current_mode_id == folded.mode
    if folded.states:  # v2: the last snapshot of foreground activity, and the last idle's reason
        last = folded.states[-1]
        assert state.run_state == last["state"]
        assert state.background == last["background"]
        idles = [s for s in folded.states if s["state"] == "idle" and "stopReason" in s]
        if last["state"] == "idle" and idles:
            assert state.stop_reason == idles[-1]["stopReason"]
    return folded


def assert_requests_answered(run: Run, errors: Callable[[dict[str, Any]], bool] = lambda m: False) -> None:
    """Every request the agent sent got exactly one answer, and no error unless ``errors(request)``
    (a test names the one the spec calls for)."""
    for request in harness.flat_messages(run.tee.received):
        if "method" not in request or "id" not in request:
            continue
        answers = run.tee.answers_to(request["id"])
        assert len(answers) == 1, (request, answers)
        if "error" in answers[0]:
            assert errors(request), (request, answers[0])


def wire_updates(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The ``update`` objects of the ``session/update`` notifications among ``messages``."""
    return [m["params"]["update"] for m in messages if m.get("method") == "session/update"]


def permission_requests(run: Run, mark: int) -> list[dict[str, Any]]:
    """The agent's ``session/request_permission`` requests since ``mark``."""
    return [m for m in run.since(mark) if m.get("method") == "session/request_permission" and "id" in m]


def prompt_response(run: Run, mark: int) -> dict[str, Any]:
    """The agent's response to the one ``session/prompt`` sent since ``mark``."""
    sent = [m for m in harness.flat_messages(run.tee.sent) if m.get("method") == "session/prompt"]
    ids = {m["id"] for m in sent}
    (response,) = [m for m in run.since(mark) if "method" not in m and m.get("id") in ids]
    return response


def answer(run: Run, request: dict[str, Any]) -> dict[str, Any]:
    """The one response our client sent to ``request``."""
    answers = run.tee.answers_to(request["id"])
    assert len(answers) == 1, answers
    return answers[0]["result"]


def assert_edit_request(request: dict[str, Any], tool_use_id: str, path: Path, old: str, new: str) -> None:
    """The shape of Claude's v2 permission request for an ``Edit``: a ``tool_call`` subject with
    the whole proposed call (a git patch for the diff)."""
    params = request["params"]
    assert params["options"] == EDIT_OPTIONS
    assert params["title"] == f"Edit {path.name}"
    assert params["subject"]["type"] == "tool_call"
    tool_call = params["subject"]["toolCall"]
    assert tool_call["toolCallId"] == tool_use_id
    assert (tool_call["name"], tool_call["title"], tool_call["kind"]) == ("Edit", f"Edit {path.name}", "edit")
    assert tool_call["rawInput"] == {
        "file_path": str(path),
        "old_string": old,
        "new_string": new,
        "replace_all": False,
    }
    (diff,) = tool_call["content"]
    assert diff["type"] == "diff"
    assert diff["changes"] == [{"operation": "modify", "path": str(path), "fileType": "text"}]
    assert diff["patch"]["format"] == "git_patch"
    assert "\n-" + ORIGINAL.rstrip("\n") + "\n" in diff["patch"]["text"]
    assert "\n+" + ORIGINAL.replace(old, new).rstrip("\n") + "\n" in diff["patch"]["text"]


def read_then_edit(script: Script, marker: str, prefix: str, path: Path) -> tuple[str, str]:
    """Script a turn that reads ``path`` and then edits it (Claude Code edits only files it read)."""
    read_id, edit_id = f"toolu_{prefix}_read", f"toolu_{prefix}_edit"
    script.prompt(marker, text("Let me look."), tool_use(read_id, "Read", {"file_path": str(path)}))
    edit = {"file_path": str(path), "old_string": "hello world", "new_string": "hello café"}
    script.after(read_id, tool_use(edit_id, "Edit", edit))
    return read_id, edit_id


def assert_clean(session: Any) -> None:
    """No diagnostics: Claude's traffic is well-formed and names only this session."""
    assert [str(d) for d in session.state.diagnostics] == []


def assert_model_saw(run: Run, read_id: str, edit_id: str, bash_id: str) -> None:
    """What the agent sent the model: streamed requests, each tool's real result."""
    calls = {(r.method, r.path.split("?")[0]) for r in run.mock.requests}
    assert calls <= {("HEAD", "/"), ("POST", "/v1/messages"), ("POST", "/v1/messages/count_tokens")}, calls
    main = run.mock.main_requests()
    assert [r.answer for r in main] == ["step 0", "step 1", "step 2", "step 3"]
    assert {"Read", "Edit", "Write", "Bash"} <= set(main[0].tool_names)
    for r in main:
        assert r.headers["anthropic-version"] == "2023-06-01" and r.headers["x-api-key"] == "<redacted>"
        assert r.headers["user-agent"].startswith("claude-cli/") and r.body["stream"] is True
        assert r.body["model"].startswith("claude-")
    results = main[-1].tool_results()
    assert "hello world" in results[read_id]["content"]
    assert "has been updated successfully" in results[edit_id]["content"]
    assert results[bash_id]["content"] == "café" and results[bash_id]["is_error"] is False


def script_turn(run: Run, marker: str, prefix: str) -> tuple[Path, str, str, str]:
    """Read ``app.py``, edit it, print café with ``Bash``, say done."""
    path = run.project / "app.py"
    read_id, edit_id = read_then_edit(run.script, marker, prefix, path)
    bash_id = f"toolu_{prefix}_bash"
    run.script.after(edit_id, tool_use(bash_id, "Bash", {"command": PRINT_CAFE, "description": "Print café"}))
    run.script.after(bash_id, text("Done: the greeting is updated."))
    return path, read_id, edit_id, bash_id


# -- v2, Manual mode: read, edit (allowed), run a command, text -----------------------------------------
async def test_read_edit_and_run(claude: Run) -> None:
    path, read_id, edit_id, bash_id = script_turn(claude, "[turn-a]", "a")
    session = await claude.manual_session()
    asked: list[Any] = []
    session.permission_handler = lambda perm: asked.append(perm) or ALLOW
    mark = claude.mark()
    stop = await asyncio.wait_for(session.prompt("[turn-a] Update the greeting, then print it."), TURN)

    assert stop == "end_turn"
    assert path.read_text() == EDITED
    assert claude.script.unused() == [] and claude.mock.unmatched == []
    # the one permission request: the edit (printf is read-only to Claude Code: not asked)
    (request,) = permission_requests(claude, mark)
    assert_edit_request(request, edit_id, path, "hello world", "hello café")
    assert [p.title for p in asked] == [f"Edit {path.name}"]
    assert [p.option_ids for p in asked] == [[o["optionId"] for o in EDIT_OPTIONS]]
    assert answer(claude, request) == {"outcome": {"outcome": "selected", "optionId": ALLOW}}
    assert_model_saw(claude, read_id, edit_id, bash_id)
    # v2: the prompt response is an acknowledgement; the turn ends with an idle carrying the reason
    assert "stopReason" not in prompt_response(claude, mark)["result"]
    folded = assert_wire_equals_state(claude, session)
    assert [s["state"] for s in folded.states] == ["running", "requires_action", "running", "idle"]
    assert folded.states[-1]["stopReason"] == "end_turn"
    assert list(folded.tool_calls) == [read_id, edit_id, bash_id]
    tool_calls = session.state.tool_calls
    assert [tool_calls[i].status for i in (read_id, edit_id, bash_id)] == ["completed"] * 3
    assert [tool_calls[i].kind for i in (read_id, edit_id, bash_id)] == ["read", "edit", "execute"]
    assert [tool_calls[i].name for i in (read_id, edit_id, bash_id)] == ["Read", "Edit", "Bash"]
    assert tool_calls[edit_id].locations == [{"path": str(path), "line": 1}]
    assert tool_calls[bash_id].title == PRINT_CAFE
    assert tool_calls[bash_id].content == [{"type": "terminal", "terminalId": bash_id}]
    # the shell output is an agent-owned terminal: one snapshot when the command ends
    terminal = session.state.terminals[bash_id]
    assert (terminal.output, terminal.command, terminal.exit_status) == (CAFE, PRINT_CAFE, {"exitCode": 0})
    texts = [m.text for m in session.state.messages.values()]
    assert texts[0] == "[turn-a] Update the greeting, then print it."  # the agent's echo of the prompt
    assert "Done: the greeting is updated." in texts
    assert session.state.stop_reason == "end_turn" and session.state.run_state == "idle"
    assert session.state.background == []
    assert_clean(session)
    claude.figures(session)
    await claude.close_and_check()


# -- v2: cancel while the edit's permission request is pending -----------------------------------------
async def test_cancel_while_permission_pending(claude: Run) -> None:
    path = claude.project / "app.py"
    read_id, edit_id = read_then_edit(claude.script, "[turn-b]", "b", path)
    claude.script.prompt("[turn-b2]", text("Understood, I left the file alone."))
    session = await claude.manual_session()
    mark = claude.mark()
    turn = asyncio.ensure_future(session.prompt("[turn-b] Update the greeting."))
    (perm,) = await until_async(lambda: session.pending_permissions, TURN, message="the edit's permission")
    assert session.state.run_state == "requires_action"

    await session.cancel()
    stop = await asyncio.wait_for(turn, TURN)

    assert stop == "cancelled"
    assert path.read_text() == ORIGINAL
    (request,) = permission_requests(claude, mark)
    assert_edit_request(request, edit_id, path, "hello world", "hello café")
    assert perm.outcome == {"outcome": "cancelled"}
    assert answer(claude, request) == {"outcome": {"outcome": "cancelled"}}
    cancels = [m for m in harness.flat_messages(claude.tee.sent) if m.get("method") == "session/cancel"]
    assert [c["params"] for c in cancels] == [{"sessionId": session.session_id}]
    folded = assert_wire_equals_state(claude, session)
    # over v2 the agent reports the aborted edit `cancelled` itself (v1 left it pending)
    assert folded.tool_calls[edit_id]["status"] == "cancelled"
    assert folded.states[-1]["state"] == "idle" and folded.states[-1]["stopReason"] == "cancelled"
    assert session.state.tool_calls[read_id].status == "completed"
    assert session.state.stop_reason == "cancelled" and session.state.run_state == "idle"

    # the session goes on; the model learns the edit did not run
    mark = claude.mark()
    assert await asyncio.wait_for(session.prompt("[turn-b2] Never mind."), TURN) == "end_turn"
    last_user = [m for m in claude.mock.main_requests()[-1].messages if m["role"] == "user"][-1]["content"]
    assert any("[turn-b2]" in b.get("text", "") for b in last_user), last_user
    results = claude.mock.main_requests()[-1].tool_results()
    assert results[edit_id]["is_error"] is True, results
    assert claude.script.unused() == []
    # under load the CLI may still ask the model once for the interrupted turn before the abort
    # reaches it; never after the next prompt
    answers = [r.answer for r in claude.mock.requests]
    last_step = max(i for i, a in enumerate(answers) if a.startswith("step"))
    assert all(i < last_step for i, a in enumerate(answers) if a == "unmatched"), answers
    assert_wire_equals_state(claude, session)
    assert session.state.stop_reason == "end_turn"
    assert path.read_text() == ORIGINAL
    assert_clean(session)
    claude.figures(session)
    await claude.close_and_check()


# -- v2: reject the edit ---------------------------------------------------------------------------------
async def test_rejected_edit(claude: Run) -> None:
    path = claude.project / "app.py"
    read_id, edit_id = read_then_edit(claude.script, "[turn-c]", "c", path)
    claude.script.after(edit_id, text("Fine, I will leave it as it is."))
    session = await claude.manual_session()
    session.permission_handler = lambda perm: "reject"
    mark = claude.mark()
    stop = await asyncio.wait_for(session.prompt("[turn-c] Update the greeting."), TURN)

    assert stop == "end_turn"  # a rejection is a failed tool call: the model goes on and ends the turn
    assert path.read_text() == ORIGINAL
    (request,) = permission_requests(claude, mark)
    assert_edit_request(request, edit_id, path, "hello world", "hello café")
    assert answer(claude, request) == {"outcome": {"outcome": "selected", "optionId": "reject"}}
    refused = claude.mock.main_requests()[-1].tool_results()[edit_id]
    assert refused["is_error"] is True
    assert claude.script.unused() == [] and claude.mock.unmatched == []
    folded = assert_wire_equals_state(claude, session)
    assert list(folded.tool_calls) == [read_id, edit_id]
    assert folded.states[-1] == {**folded.states[-1], "state": "idle", "stopReason": "end_turn"}
    assert session.state.tool_calls[edit_id].status == "failed"
    assert "Fine, I will leave it as it is." in [m.text for m in session.state.messages.values()]
    assert_clean(session)
    claude.figures(session)
    await claude.close_and_check()


# -- no key, no login -------------------------------------------------------------------------------
@pytest.mark.parametrize("version", [2, 1])
async def test_without_a_key(tmp_path: Path, version: int) -> None:
    """No ``ANTHROPIC_API_KEY`` and a fresh HOME: the session opens, the turn fails naming the
    agent's one login method (the prompt raises ``AuthRequired``: v1's prompt request fails, v2's turn
    ends idle with stopReason ``error`` and the -32000 error), and the model is never called.

    claude-agent-acp lists logins only to a client advertising terminal auth (``auth.terminal``
    or ``_meta["terminal-auth"]``); with ``NO_BROWSER`` (the harness sets it) it counts as remote
    and offers just ``claude-login``: the interactive CLI (``--cli``), where the user types /login.
    v2 names a method by ``methodId``, v1 by ``id``.
    """
    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    with MockAnthropic(Script().prompt("[x]", text("must not be asked"))) as mock:
        env = claude_env(home, None)
        env["ANTHROPIC_BASE_URL"] = mock.url  # were it to call a model, the mock would log it
        assert env["ANTHROPIC_API_KEY"] == ""  # base_env blanks it over any inherited key
        agent, tee = await harness.open_agent("claude", env, project, version)
        run = Run(agent, tee, mock, project, home)
        try:
            assert agent.protocol_version == version
            login = dict(CLAUDE_LOGIN)
            if version == 2:
                login["methodId"] = login.pop("id")
            assert [plain(m) for m in agent.auth_methods] == [login]
            launch = agent.auth_methods[0]["_meta"]["terminal-auth"]  # the full command, to run as given
            assert Path(launch["command"]).name.startswith("node"), launch
            adapter = str(harness.BIN / "claude-agent-acp")
            assert launch["args"] == [adapter, "--cli"] and launch["label"] == "Claude Login"
            session = await asyncio.wait_for(agent.new_session(cwd=project), TURN)
            # v1: the prompt request fails; v2: the prompt is acknowledged and the turn ends idle
            # with stopReason `error` and the -32000 error: either way the prompt raises AuthRequired
            with pytest.raises(AuthRequired) as raised:
                await asyncio.wait_for(session.prompt("[x] Hello?"), TURN)
            error = raised.value
            assert (error.code, error.message, error.data) == (-32000, "Authentication required", None)
            assert error.methods == agent.auth_methods
            assert str(error).startswith("authentication required: Authentication required")
            # the hint names the login, not a call the client would refuse
            assert "claude-login" in str(error) and "authenticate(" not in str(error), str(error)
            if version == 2:
                failure = {"code": -32000, "message": "Authentication required"}
                assert (session.state.stop_reason, session.state.stop_error) == ("error", failure)
                assert session.last_error == failure
                folded = assert_wire_equals_state(run, session)
                assert folded.states[-1] == {
                    "sessionUpdate": "state_update",
                    "state": "idle",
                    "stopReason": "error",
                    "error": failure,
                    "background": [],
                }
            assert mock.messages_requests() == []
            assert not session.running
            assert_clean(session)
            # a `terminal` method is run by the client, never sent to the agent (v1 `authenticate`,
            # v2 `auth/login`: "Clients MUST NOT pass a terminal method")
            with pytest.raises(AcpError):  # refused by the client: nothing goes out
                await asyncio.wait_for(agent.authenticate("claude-login"), TURN)
            sent = {m.get("method") for m in harness.flat_messages(tee.sent)}
            assert not sent & {"authenticate", "auth/login"}, sent
        finally:
            await run.close()
        await run.close_and_check()


def plain(method: Any) -> Any:
    """An auth method without its ``_meta``."""
    return {k: v for k, v in method.items() if k != "_meta"} if isinstance(method, dict) else method


# -- v2: a background command streams while the turn is over ---------------------------------------------
BACKGROUND_LINES = 6000
BACKGROUND_LINE = "{:05d} café ✓ ünïcödé\n"
BACKGROUND = (  # waits for `go`, then prints 168,000 bytes of UTF-8 (the tail streams it in chunks)
    "printf 'start caf\\xc3\\xa9\\n'; while [ ! -e go ]; do sleep 0.1; done; "
    f"i=0; while [ $i -lt {BACKGROUND_LINES} ]; do printf '%05d café ✓ ünïcödé\\n' $i; i=$((i+1)); done"
)
EXIT_NOTE = b"\n[exited with code 0]\n"
BACKGROUND_OUTPUT = "start café\n".encode() + "".join(
    BACKGROUND_LINE.format(i) for i in range(BACKGROUND_LINES)
).encode("utf-8")


def observe(session: Any) -> list[tuple[str, str | None, Any]]:
    """(run state, stop reason, background) after every change of the session's run state."""
    seen: list[tuple[str, str | None, Any]] = []
    state = session.state
    state.subscribe(
        lambda change: (
            change.kind == "run_state" and seen.append((state.run_state, state.stop_reason, state.background))
        )
    )
    return seen


async def test_background_command_streams_after_the_turn(claude: Run) -> None:
    """``run_in_background``: the tool call is ``completed`` while the command still runs; the
    ``state_update`` ``background`` list names its terminal; the output streams (a snapshot, then
    ``terminal_output_chunk``s) to the exact byte; when it ends, the agent starts a turn itself."""
    bg_id = "toolu_bg"
    claude.script.prompt(
        "[bg]",
        tool_use(bg_id, "Bash", {"command": BACKGROUND, "description": "Count", "run_in_background": True}),
    )
    claude.script.after(bg_id, text("Started it."))
    claude.script.prompt("<task-notification>", text("The count is done."))
    session = await claude.manual_session()
    asked: list[Any] = []
    session.permission_handler = lambda perm: asked.append(perm) or ALLOW
    assert session.state.background is None  # no state_update yet: not reported (not `[]`)
    seen = observe(session)
    stop = await asyncio.wait_for(session.prompt("[bg] Count in the background."), TURN)

    assert stop == "end_turn"
    # it asks (a loop with variables cannot be proven read-only), then runs it in the background
    assert [(p.title, p.option_ids) for p in asked] == [
        (BACKGROUND, [o["optionId"] for o in COMMAND_OPTIONS])
    ]
    state = session.state
    terminal = state.terminals[bg_id]
    assert state.tool_calls[bg_id].status == "completed"
    assert state.tool_calls[bg_id].content == [{"type": "terminal", "terminalId": bg_id}]
    await until_async(
        lambda: terminal.output == b"start caf\xc3\xa9\n", TURN, message=lambda: terminal.output
    )
    # still running: no exit status, listed in `background`, cancellable (`capabilities.cancel`)
    assert terminal.exit_status is None and terminal.command == BACKGROUND
    assert state.background == [{"type": "terminal", "terminalId": bg_id}]
    assert (state.run_state, state.stop_reason) == ("idle", "end_turn")
    assert terminal.capabilities == {"cancel": {}}
    assert_wire_equals_state(claude, session)

    (claude.project / "go").touch()
    await until_async(lambda: terminal.exit_status is not None, TURN, message="the command's end")
    done = "The count is done."
    await until_async(
        lambda: state.run_state == "idle" and done in [m.text for m in state.messages.values()],
        TURN,
        message="the agent's own turn after the task notification",
    )
    # every byte, in order; the CLI may append its exit note to the output file before the tail stops
    assert terminal.output[: len(BACKGROUND_OUTPUT)] == BACKGROUND_OUTPUT
    assert terminal.output[len(BACKGROUND_OUTPUT) :] in (b"", EXIT_NOTE), terminal.output[-60:]
    assert terminal.exit_status == {}  # the agent knows no exit code for a background command
    assert state.background == []
    folded = assert_wire_equals_state(claude, session)
    chunks = [u for u in wire_updates(claude.since(0)) if u["sessionUpdate"] == "terminal_output_chunk"]
    assert len(chunks) >= 1  # streamed, not one snapshot
    # the turn's idle, a bare repeated idle when the command ended (only `background` changed),
    # then the agent's own turn (running ... idle)
    idles = [(s.get("stopReason"), s["background"]) for s in folded.states if s["state"] == "idle"]
    assert idles == [("end_turn", [{"type": "terminal", "terminalId": bg_id}]), (None, []), ("end_turn", [])]
    # a bare idle is not a turn end: the stop reason stays the last turn's throughout
    first_end = next(i for i, s in enumerate(seen) if s[1] == "end_turn")
    assert all(s[1] == "end_turn" for s in seen[first_end:] if s[0] == "idle"), seen
    # ... and the agent's own turn is a turn (issue 19): where it came from, as the agent says
    assert [(t.origin, t.origin_kind, t.stop_reason) for t in session.turns] == [
        ("user", "human", "end_turn"), ("agent", "task-notification", "end_turn"),
    ]  # fmt: skip
    # the agent's own turn: its request carried the task notification
    notified = [r for r in claude.mock.main_requests() if r.answer == f"step {len(claude.script.steps) - 1}"]
    assert len(notified) == 1
    assert claude.script.unused() == [] and claude.mock.unmatched == []
    assert_clean(session)
    claude.figures(session)
    await claude.close_and_check()


# -- v2: a long foreground command is cut by the agent -----------------------------------------------
CUT_COMMAND = "seq -f '%05g café' 1 4000"  # 4,000 lines of 12 bytes: 48,000 bytes
CUT_OUTPUT = "".join(f"{i:05d} café\n" for i in range(1, 4001)).encode()


async def test_foreground_output_is_cut_at_30000_bytes(claude: Run) -> None:
    """A foreground ``Bash`` gets one snapshot when it ends: the first 30,000 bytes of its output
    (cut in bytes: 2,500 lines of 12 bytes here, not 30,000 characters), then the CLI's note; the
    rest is only in a file in the agent's HOME. The agent's cut, not ours."""
    bash_id = "toolu_cut"
    claude.script.prompt("[cut]", tool_use(bash_id, "Bash", {"command": CUT_COMMAND, "description": "Count"}))
    claude.script.after(bash_id, text("Counted."))
    session = await claude.manual_session()
    session.permission_handler = lambda perm: ALLOW
    assert await asyncio.wait_for(session.prompt("[cut] Count to 4000."), TURN) == "end_turn"

    assert len(CUT_OUTPUT) == 48_000
    terminal = session.state.terminals[bash_id]
    assert terminal.output[:30_000] == CUT_OUTPUT[:30_000]
    note = terminal.output[30_000:].decode()
    assert note.startswith("[Output truncated (48000 bytes total): full output saved to "), note
    assert note.endswith("]") and str(claude.home) in note, note
    folded = assert_wire_equals_state(claude, session)
    snapshots = [
        u for u in wire_updates(claude.since(0)) if u["sessionUpdate"] == "terminal_update" and "output" in u
    ]
    assert len(snapshots) == 1 and folded.terminals[bash_id]["output"] == terminal.output
    assert claude.script.unused() == [] and claude.mock.unmatched == []
    assert_clean(session)
    claude.figures(session)
    await claude.close_and_check()


# -- v1, forced by the client: the old conversation ------------------------------------------------------
async def test_v1_read_edit_and_run(claude_v1: Run) -> None:
    """``protocol_version=1``: ``tool_call`` + ``tool_call_update``, the prompt response carries the
    stop reason, and shell output comes in the ``_meta.terminal_output`` extension we offer."""
    claude = claude_v1
    path, read_id, edit_id, bash_id = script_turn(claude, "[turn-v1]", "v1")
    offered = claude.tee.sent[0]["params"]
    assert offered["protocolVersion"] == 1 and "capabilities" not in offered
    assert offered["clientCapabilities"]["_meta"] == {"terminal_output": True, "terminal-auth": True}
    session = await claude.manual_session()
    asked: list[Any] = []
    session.permission_handler = lambda perm: (
        asked.append(perm) or next(o for o in perm.options if o["kind"] == "allow_once")["optionId"]
    )
    mark = claude.mark()
    stop = await asyncio.wait_for(session.prompt("[turn-v1] Update the greeting, then print it."), TURN)

    assert stop == "end_turn"
    assert path.read_text() == EDITED
    assert claude.script.unused() == [] and claude.mock.unmatched == []
    (request,) = permission_requests(claude, mark)
    tool_call = request["params"]["toolCall"]
    assert (tool_call["toolCallId"], tool_call["kind"]) == (edit_id, "edit")
    assert {
        "type": "diff",
        "path": str(path),
        "oldText": "hello world",
        "newText": "hello café",
    } in tool_call["content"]
    assert [o["kind"] for o in request["params"]["options"]] == ["allow_once", "allow_always", "reject_once"]
    assert len(asked) == 1
    assert_model_saw(claude, read_id, edit_id, bash_id)
    assert prompt_response(claude, mark)["result"]["stopReason"] == "end_turn"
    folded = assert_wire_equals_state(claude, session)
    assert "tool_call" in folded.kinds and "state_update" not in folded.kinds
    assert list(folded.tool_calls) == [read_id, edit_id, bash_id]
    tool_calls = session.state.tool_calls
    assert [tool_calls[i].status for i in (read_id, edit_id, bash_id)] == ["completed"] * 3
    assert tool_calls[bash_id].content == [{"type": "terminal", "terminalId": bash_id}]
    terminal = session.state.terminals[bash_id]
    assert (terminal.output, terminal.command) == (CAFE, PRINT_CAFE)
    assert terminal.exit_status == {"exitCode": 0, "signal": None}
    assert folded.terminals[bash_id]["output"] == CAFE
    assert session.state.stop_reason == "end_turn" and session.state.run_state == "idle"
    assert_clean(session)
    claude.figures(session)
    await claude.close_and_check()


async def test_env_v1_shell_output_reaches_a_terminal(tmp_path: Path) -> None:
    """``CLAUDE_AGENT_ACP_PROTOCOL=v1`` with our v2 offer: the agent's SDK router negotiates down to
    v1 and rebuilds ``clientCapabilities`` from our v2 ``capabilities`` — only its ``_meta``
    survives, so the ``terminal_output`` offer must be there too, or the output is a text block."""
    run, mock = await start(tmp_path, CLAUDE_AGENT_ACP_PROTOCOL="v1")
    try:
        offered = run.tee.sent[0]["params"]
        assert offered["protocolVersion"] == 2
        assert offered["capabilities"]["_meta"] == {"terminal_output": True, "terminal-auth": True}
        assert run.agent.protocol_version == 1  # it answered 1
        bash_id = "toolu_t_bash"
        run.script.prompt("[turn-t]", tool_use(bash_id, "Bash", {"command": PRINT_CAFE}))
        run.script.after(bash_id, text("Printed."))
        session = await run.manual_session()
        stop = await asyncio.wait_for(session.prompt("[turn-t] Print café."), TURN)

        assert stop == "end_turn"
        assert run.script.unused() == [] and run.mock.unmatched == []
        metas = [u.get("_meta") or {} for u in wire_updates(run.since(0)) if u.get("toolCallId") == bash_id]
        assert {"terminal_id": bash_id, "data": "café"} in [m.get("terminal_output") for m in metas]
        call = session.state.tool_calls[bash_id]
        assert call.content == [{"type": "terminal", "terminalId": bash_id}]  # not a markdown block
        terminal = session.state.terminals[bash_id]
        assert (terminal.output, terminal.command) == (CAFE, PRINT_CAFE)
        assert terminal.exit_status == {"exitCode": 0, "signal": None}
        assert_wire_equals_state(run, session)
        assert_clean(session)
        run.figures(session)
        await run.close_and_check()
    finally:
        try:
            await run.close()
        finally:
            mock.__exit__(None, None, None)


def _line(out: str, words: str) -> str | None:
    """The first printed line holding ``words``."""
    return next((line for line in out.splitlines() if words in line), None)


# -- subagents (issue 19) --------------------------------------------------------------------------------
async def test_subagent_permission_reaches_the_user(claude: Run, capsys: pytest.CaptureFixture[str]) -> None:
    """The ``Agent`` tool runs a child session (``subagent_update``); the child asks before a
    command under its own ``sessionId``. The request must reach the user (the root session's
    ``pending_permissions``, ``request.session_id`` = the child's; headless, a line naming the
    subagent), and the answer must run it."""
    child_marker = "[child] Create the file."
    agent_input = {
        "description": "Make a file",
        "prompt": child_marker,
        "subagent_type": "general-purpose",
        "run_in_background": False,
    }
    claude.script.prompt("[sub]", tool_use("toolu_agent", "Agent", agent_input))
    claude.script.after("toolu_agent", text("The subagent is done."))
    claude.script.prompt("[child]", tool_use("toolu_child", "Bash", {"command": "touch child.txt"}))
    claude.script.after("toolu_child", text("Child done."))
    session = await claude.manual_session()
    turn = asyncio.ensure_future(session.prompt("[sub] Have a subagent make a file."))
    try:
        await until_async(lambda: session.pending_permissions or turn.done(), TURN)
        children = [u["sessionId"] for u in claude.tee.updates() if u["sessionUpdate"] == "subagent_update"]
        assert children, "no subagent_update on the wire"
        pending = session.pending_permissions
        assert [p.session_id for p in pending] == [children[0]]
        child = session.subagents[children[0]]
        assert child.parent_id == session.session_id and list(session.subagents) == children[:1]
        assert child.state.tool_calls and not set(child.state.tool_calls) & set(session.state.tool_calls)
        printed = await until_async(lambda: _line(capsys.readouterr().out, "waiting for permission"), TURN)
        assert f"(subagent {child.title!r})" in printed and child.title, printed
        pending[0].select(ALLOW)
        assert await asyncio.wait_for(turn, TURN) == "end_turn"
    finally:
        turn.cancel()
    assert (claude.project / "child.txt").exists()
    await claude.close_and_check()


async def test_background_subagent_permission_after_turn_end(claude: Run) -> None:
    """``run_in_background`` (the ``Agent`` tool's default): the parent's turn ends ``end_turn``
    while the child works (``background`` names it); the child's permission request after that
    reaches the user, answering it lets the child finish (the file appears), and the task
    notification the agent then starts is a turn of its own (``origin == "agent"``).
    ``wait_idle(background=True)`` returns when all is done. Each session keeps its own view of
    the task message (``session_message``), linked by ids."""
    child_marker = "[child] Create the file."
    agent_input = {"description": "Make a file", "prompt": child_marker, "subagent_type": "general-purpose"}
    after_turn = threading.Event()  # the child's model answers once the parent's turn is over
    claude.script.prompt("<task-notification>", text("The subagent finished."))
    claude.script.prompt("[bgsub]", tool_use("toolu_agent", "Agent", agent_input))
    claude.script.after("toolu_agent", text("Started it."))
    claude.script.prompt(
        "[child]", tool_use("toolu_child", "Bash", {"command": "touch child.txt"}), hold=after_turn
    )
    claude.script.after("toolu_child", text("Child done."))
    session = await claude.manual_session()
    try:
        stop = await asyncio.wait_for(session.prompt("[bgsub] Have a subagent make a file."), TURN)
        assert stop == "end_turn" and session.turns[0].ended and not session.busy
        (child_id,) = session.subagents
        child = session.subagents[child_id]
        assert session.state.background == [{"type": "subagent", "sessionId": child_id}]
        assert child.run_state == "running" and session.pending_permissions == []
    finally:
        after_turn.set()
    await until_async(lambda: session.pending_permissions, TURN, message="the child's request")
    (request,) = session.pending_permissions
    assert request.session_id == child_id and session.turns[0].ended and len(session.turns) == 1
    assert list(child.state.tool_calls) == ["toolu_child"] and "toolu_child" not in session.state.tool_calls
    request.select(ALLOW)
    assert await session.wait_idle(TURN, background=True)

    assert (claude.project / "child.txt").exists()
    assert [t.origin for t in session.turns] == ["user", "agent"]
    notified = session.turns[1]
    assert (notified.origin_kind, notified.origin_label) == ("task-notification", "task notification")
    assert (notified.ended, notified.stop_reason) == (True, "end_turn")
    assert session.state.background == [] and child.run_state == "idle" and not session.busy
    assert "The subagent finished." in [m.text for m in session.state.messages.values()]
    assert "Child done." in [m.text for m in child.state.messages.values()]
    # checkpoints: the child's late write is the first turn's, said to be its background subagent's
    first, second = session.turns[0].checkpoint, session.turns[1].checkpoint
    await until_async(lambda: first.ready and not first.open and second.ready, TURN)
    assert [r["path"] for r in first.changes()] == ["child.txt"] and first.background == ["child.txt"]
    assert "after the turn ended" in first.note() and "(Make a file)" in first.note()
    assert second.changes() == []
    # item 5: each session's own view of the task, as the wire stated it, linked by ids
    for holder in (session, child):
        wire = [
            u for u in wire_updates(harness.flat_messages(claude.tee.received))
            if u["sessionUpdate"] == "session_message" and u in holder_updates(claude, holder.session_id)
        ]  # fmt: skip
        assert wire and [holder.state.session_messages[u["messageId"]].to_dict() for u in wire] == wire
    task = session.state.session_messages["toolu_agent"]
    incoming = child.state.session_messages[task.recipient_message_id]
    assert (incoming.sender_message_id, incoming.text) == ("toolu_agent", child_marker)
    assert claude.script.unused() == [] and claude.mock.unmatched == []
    claude.figures(session)
    await claude.close_and_check()


def holder_updates(run: Run, session_id: str) -> list[dict[str, Any]]:
    """The ``update`` objects the agent sent under ``session_id``."""
    return [
        m["params"]["update"]
        for m in harness.flat_messages(run.tee.received)
        if m.get("method") == "session/update" and m["params"].get("sessionId") == session_id
    ]
