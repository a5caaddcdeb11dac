"""The real Claude agent (``claude-agent-acp``, pinned) through our client, offline.

The agent runs its native ``claude`` CLI, which talks to ``mock_anthropic`` on 127.0.0.1 instead of
the Anthropic API; the scripted model calls Claude Code's own tools (``Read``, ``Edit``, ``Bash``),
which the CLI runs for real in a temporary project. claude-agent-acp speaks ACP v1: tool calls
come as ``tool_call`` + ``tool_call_update``, an edit asks ``session/request_permission`` (a Bash
command Claude Code deems read-only, like ``printf``, is allowed without asking), and shell output
comes in the ``_meta.terminal_output`` extension when the client offers it.

Each test checks what the wire said against what our client made of it (every ``session/update``
and permission request the ``TeeStream`` kept, folded with v1 rules, against ``session.state``),
what the agent sent the model (the mock's log), the file on disk, the stop reasons, the
diagnostics, and that no process of the agent's survives ``agent.close()``.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from acp_notebook.client.errors import AcpError, AuthRequired
from tests.real_agents import harness
from tests.real_agents.mock_anthropic import MockAnthropic, Script, text, tool_use
from tests.support import running, until_async

TURN = 60  # seconds: a bound for one prompt turn (each takes 1-3 s here)
ORIGINAL = "greeting = 'hello world'\n"
EDITED = "greeting = 'hello café'\n"
EDIT_OPTIONS = [
    {"kind": "allow_always", "name": "Always Allow all Edit", "optionId": "allow_always"},
    {"kind": "allow_once", "name": "Allow", "optionId": "allow"},
    {"kind": "reject_once", "name": "Reject", "optionId": "reject"},
]
ABORTED = [  # the tool result and note the model gets for an edit whose permission was cancelled
    (
        "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a"
        " file edit, the new_string was NOT written to the file). STOP what you are doing and wait for"
        " the user to tell you how to proceed.",
        ["[Request interrupted by user for tool use]\n"],
    ),
    ("Tool permission request failed: Error: Tool use aborted", ["[Request interrupted by user]\n"]),
]
CLAUDE_LOGIN = {  # the one login claude-agent-acp offers a terminal-auth client under NO_BROWSER
    "description": "Run `claude /login` in the terminal",
    "name": "Log in with Claude",
    "id": "claude-login",
    "type": "terminal",
    "args": ["--cli"],
}
TOOL_CALL_KINDS = ("tool_call", "tool_call_update")
REFLECTED_KINDS = {"agent_message_chunk", "usage_update", "available_commands_update", *TOOL_CALL_KINDS}


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

    async def close(self) -> None:
        """Close the agent; every process it started must be gone (checked by the caller)."""
        if self.exit_code is None:
            self.processes = {p: harness.cmdline(p) for p in harness.descendants(self.agent.process.pid)}
            self.exit_code = await self.agent.close()

    async def close_and_check(self) -> None:
        """Close the agent and wait (bounded) until none of its processes is left."""
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


@pytest.fixture
async def claude(tmp_path: Path) -> AsyncIterator[Run]:
    """The real Claude agent against a fresh mock, in a project with ``app.py``."""
    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    (project / "app.py").write_text(ORIGINAL)
    with MockAnthropic(Script()) as mock:
        agent, tee = await harness.open_agent("claude", claude_env(home, mock.url), project)
        run = Run(agent, tee, mock, project, home)
        try:
            yield run
        finally:
            await run.close()


# -- what the wire said, folded independently of the client ----------------------------------------
def fold_tool_calls(messages: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Each tool call as the wire left it (v1: ``tool_call`` replaces, ``tool_call_update`` and a
    permission request's ``toolCall`` patch their non-null fields; ``_meta`` patches by key)."""
    calls: dict[str, dict[str, Any]] = {}
    for message in messages:
        params = message.get("params") or {}
        if message.get("method") == "session/request_permission":
            _patch(calls.setdefault(params["toolCall"]["toolCallId"], {}), params["toolCall"])
        elif (
            message.get("method") == "session/update" and params["update"]["sessionUpdate"] in TOOL_CALL_KINDS
        ):
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


async def assert_reflected(
    run: Run, session: Any, mark: int, client_marked: dict[str, str] | None = None
) -> list[str]:
    """Every update and permission request since ``mark`` shows in ``session.state``; returns the
    ids of the tool calls the wire spoke of.

    ``client_marked`` names tool calls whose status the client set itself (``cancelled`` on
    ``session.cancel()``: the agent never reports it).
    """
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
        assert (mine.meta or {}).get("claudeCode") == expected["_meta"]["claudeCode"], tc_id
    texts: dict[str, str] = {}
    for u in updates:
        if u["sessionUpdate"] == "agent_message_chunk":
            texts[u["messageId"]] = texts.get(u["messageId"], "") + u["content"]["text"]
    for message_id, wire_text in texts.items():
        assert state.messages[message_id].text == wire_text
        assert state.messages[message_id].role == "agent"
    usage = [u for u in updates if u["sessionUpdate"] == "usage_update"]
    if usage:
        assert {k: state.usage.get(k) for k in usage[-1] if k != "sessionUpdate"} == {
            k: v for k, v in usage[-1].items() if k != "sessionUpdate"
        }
    commands = [u for u in updates if u["sessionUpdate"] == "available_commands_update"]
    if commands:
        assert state.available_commands == commands[-1]["availableCommands"]
    return list(calls)


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
    """The shape of Claude's permission request for an ``Edit``."""
    tool_call = request["params"]["toolCall"]
    assert request["params"]["options"] == EDIT_OPTIONS
    assert tool_call["toolCallId"] == tool_use_id
    assert tool_call["title"] == f"Edit {path.name}"
    assert tool_call["kind"] == "edit"
    assert tool_call["content"] == [{"type": "diff", "path": str(path), "oldText": old, "newText": new}]
    assert tool_call["locations"] == [{"path": str(path)}]
    assert tool_call["rawInput"] == {
        "file_path": str(path),
        "old_string": old,
        "new_string": new,
        "replace_all": False,
    }


def read_then_edit(script: Script, marker: str, prefix: str, path: Path) -> tuple[str, str]:
    """Script a turn that reads ``path`` and then edits it (Claude Code edits only files it read)."""
    read_id, edit_id = f"toolu_{prefix}_read", f"toolu_{prefix}_edit"
    script.prompt(marker, text("Let me look."), tool_use(read_id, "Read", {"file_path": str(path)}))
    edit = {"file_path": str(path), "old_string": "hello world", "new_string": "hello café"}
    script.after(read_id, tool_use(edit_id, "Edit", edit))
    return read_id, edit_id


def assert_clean(session: Any) -> None:
    """No diagnostics: Claude's v1 traffic is well-formed and announces tool calls before asking."""
    assert [str(d) for d in session.state.diagnostics] == []


# -- turn A: read, edit (allowed), run a command ---------------------------------------------------
async def test_read_edit_and_run(claude: Run) -> None:
    path = claude.project / "app.py"
    read_id, edit_id = read_then_edit(claude.script, "[turn-a]", "a", path)
    bash_id = "toolu_a_bash"
    command = "printf 'caf\\xc3\\xa9\\n'"
    claude.script.after(edit_id, tool_use(bash_id, "Bash", {"command": command, "description": "Print café"}))
    claude.script.after(bash_id, text("Done: the greeting is updated."))

    session = await asyncio.wait_for(claude.agent.new_session(cwd=claude.project), TURN)
    asked: list[Any] = []
    session.permission_handler = lambda perm: asked.append(perm) or "allow"
    mark = claude.mark()
    stop = await asyncio.wait_for(session.prompt("[turn-a] Update the greeting, then print it."), TURN)

    assert stop == "end_turn"
    assert path.read_text() == EDITED
    assert claude.script.unused() == [] and claude.mock.unmatched == []
    # the one permission request: the edit (printf is read-only to Claude Code: not asked)
    (request,) = permission_requests(claude, mark)
    assert_edit_request(request, edit_id, path, "hello world", "hello café")
    assert [p.title for p in asked] == [f"Allow Edit {path.name}?"]
    assert [p.option_ids for p in asked] == [["allow_always", "allow", "reject"]]
    assert answer(claude, request) == {"outcome": {"outcome": "selected", "optionId": "allow"}}
    # what the agent sent the model: one streamed request per step, each tool's real result
    calls = {(r.method, r.path.split("?")[0]) for r in claude.mock.requests}
    assert calls <= {("HEAD", "/"), ("POST", "/v1/messages"), ("POST", "/v1/messages/count_tokens")}, calls
    main = claude.mock.main_requests()
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
    assert await assert_reflected(claude, session, mark) == [read_id, edit_id, bash_id]
    assert prompt_response(claude, mark)["result"]["stopReason"] == "end_turn"
    tool_calls = session.state.tool_calls
    assert [tool_calls[i].status for i in (read_id, edit_id, bash_id)] == ["completed"] * 3
    assert (tool_calls[read_id].kind, tool_calls[edit_id].kind, tool_calls[bash_id].kind) == (
        "read",
        "edit",
        "execute",
    )
    # after the edit, Claude replaces the requested diff by the whole changed lines (PostToolUse hook)
    assert tool_calls[edit_id].content == [
        {"type": "diff", "path": str(path), "oldText": ORIGINAL.rstrip("\n"), "newText": EDITED.rstrip("\n")}
    ]
    assert tool_calls[edit_id].locations == [{"path": str(path), "line": 1}]
    assert tool_calls[bash_id].title == command
    assert "Done: the greeting is updated." in [m.text for m in session.state.messages.values()]
    assert session.state.stop_reason == "end_turn" and session.state.run_state == "idle"
    assert_clean(session)
    await claude.close_and_check()


async def test_shell_output_reaches_a_terminal(claude: Run) -> None:
    """Claude's ``_meta.terminal_*`` extension (offered by the client) fills ``state.terminals``."""
    bash_id, command = "toolu_t_bash", "printf 'caf\\xc3\\xa9\\n'"
    claude.script.prompt("[turn-t]", tool_use(bash_id, "Bash", {"command": command}))
    claude.script.after(bash_id, text("Printed."))
    session = await asyncio.wait_for(claude.agent.new_session(cwd=claude.project), TURN)
    mark = claude.mark()
    stop = await asyncio.wait_for(session.prompt("[turn-t] Print café."), TURN)

    assert stop == "end_turn"
    offered = claude.tee.sent[0]["params"]["clientCapabilities"]
    assert offered.get("_meta", {}).get("terminal_output") is True, offered
    metas = [u.get("_meta") or {} for u in wire_updates(claude.since(mark)) if u.get("toolCallId") == bash_id]
    assert {"terminal_id": bash_id} in [m.get("terminal_info") for m in metas]
    # Claude sends the output once, when the command ends, as text; the CLI trims the final newline
    assert {"terminal_id": bash_id, "data": "café"} in [m.get("terminal_output") for m in metas]
    assert {"terminal_id": bash_id, "exit_code": 0, "signal": None} in [m.get("terminal_exit") for m in metas]
    assert session.state.tool_calls[bash_id].content == [{"type": "terminal", "terminalId": bash_id}]
    terminal = session.state.terminals.get(bash_id)
    assert terminal is not None, list(session.state.terminals)
    assert terminal.output == "café".encode()
    assert terminal.exit_status is not None and terminal.exit_status.get("exitCode") == 0
    assert terminal.exit_status.get("signal") is None
    assert await assert_reflected(claude, session, mark) == [bash_id]
    assert_clean(session)
    await claude.close_and_check()
    # Claude's first `tool_call` (with `terminal_info`) has `rawInput: {}`: the command only comes
    # in the next `tool_call_update`, which the terminal should take its `command` from too
    assert terminal.command == command


# -- turn B: cancel while the edit's permission request is pending ----------------------------------
async def test_cancel_while_permission_pending(claude: Run) -> None:
    path = claude.project / "app.py"
    read_id, edit_id = read_then_edit(claude.script, "[turn-b]", "b", path)
    claude.script.prompt("[turn-b2]", text("Understood, I left the file alone."))
    session = await asyncio.wait_for(claude.agent.new_session(cwd=claude.project), TURN)
    mark = claude.mark()
    turn = asyncio.ensure_future(session.prompt("[turn-b] Update the greeting."))
    (perm,) = await until_async(lambda: session.pending_permissions, TURN, message="the edit's permission")

    await session.cancel()
    stop = await asyncio.wait_for(turn, TURN)

    assert stop == "cancelled"
    assert path.read_text() == ORIGINAL
    (request,) = permission_requests(claude, mark)
    assert_edit_request(request, edit_id, path, "hello world", "hello café")
    assert perm.outcome == {"outcome": "cancelled"}
    assert answer(claude, request) == {"outcome": {"outcome": "cancelled"}}
    assert prompt_response(claude, mark)["result"] == {"stopReason": "cancelled"}
    # the agent never reports the aborted edit's status: the client marks it cancelled itself
    assert await assert_reflected(claude, session, mark, {edit_id: "cancelled"}) == [read_id, edit_id]
    assert fold_tool_calls(claude.since(mark))[edit_id]["status"] == "pending"  # as the wire left it
    assert session.state.tool_calls[read_id].status == "completed"
    assert session.state.stop_reason == "cancelled" and session.state.run_state == "idle"

    # the session goes on; the model learns the edit did not run and the request was interrupted.
    # Which words it gets depends on a race inside the agent between our two back-to-back messages
    # (`session/cancel`, then the `cancelled` answer): the CLI sees the interrupt first (ABORTED[0])
    # or the failed permission request first (ABORTED[1])
    mark = claude.mark()
    assert await asyncio.wait_for(session.prompt("[turn-b2] Never mind."), TURN) == "end_turn"
    last_user = [m for m in claude.mock.main_requests()[-1].messages if m["role"] == "user"][-1]["content"]
    rejected = next(b for b in last_user if b.get("type") == "tool_result")
    assert rejected["tool_use_id"] == edit_id and rejected["is_error"] is True
    notes = [b["text"] for b in last_user if b.get("text", "").startswith("[Request interrupted by user")]
    assert (rejected["content"], notes) in ABORTED, last_user
    assert claude.script.unused() == []
    # under load the CLI may still ask the model once for the interrupted turn before the abort
    # reaches it (measured: about 1 run in 6 with both cores busy); never after the next prompt
    answers = [r.answer for r in claude.mock.requests]
    last_step = max(i for i, a in enumerate(answers) if a.startswith("step"))
    assert all(i < last_step for i, a in enumerate(answers) if a == "unmatched"), answers
    assert await assert_reflected(claude, session, mark) == []
    assert path.read_text() == ORIGINAL
    assert_clean(session)
    await claude.close_and_check()


# -- turn C: reject the edit ------------------------------------------------------------------------
async def test_rejected_edit(claude: Run) -> None:
    path = claude.project / "app.py"
    read_id, edit_id = read_then_edit(claude.script, "[turn-c]", "c", path)
    claude.script.after(edit_id, text("Fine, I will leave it as it is."))
    session = await asyncio.wait_for(claude.agent.new_session(cwd=claude.project), TURN)
    session.permission_handler = lambda perm: "reject"
    mark = claude.mark()
    stop = await asyncio.wait_for(session.prompt("[turn-c] Update the greeting."), TURN)

    assert stop == "end_turn"  # a rejection is a failed tool call: the model goes on and ends the turn
    assert path.read_text() == ORIGINAL
    (request,) = permission_requests(claude, mark)
    assert_edit_request(request, edit_id, path, "hello world", "hello café")
    assert answer(claude, request) == {"outcome": {"outcome": "selected", "optionId": "reject"}}
    refused = claude.mock.main_requests()[-1].tool_results()[edit_id]
    assert refused["is_error"] is True and "User refused permission to run tool" in str(refused["content"])
    assert claude.script.unused() == [] and claude.mock.unmatched == []
    assert await assert_reflected(claude, session, mark) == [read_id, edit_id]
    edit = session.state.tool_calls[edit_id]
    assert edit.status == "failed"
    assert "User refused permission to run tool" in str(edit.content)
    assert "Fine, I will leave it as it is." in [m.text for m in session.state.messages.values()]
    assert_clean(session)
    await claude.close_and_check()


# -- no key, no login -------------------------------------------------------------------------------
async def test_without_a_key(tmp_path: Path) -> None:
    """No ``ANTHROPIC_API_KEY`` and a fresh HOME: the session opens, the prompt fails with
    ``AuthRequired`` naming the agent's one login method, and the model is never called.

    claude-agent-acp lists logins only to a client advertising terminal auth (``auth.terminal``
    or ``_meta["terminal-auth"]``); with ``NO_BROWSER`` (the harness sets it) it counts as remote
    and offers just ``claude-login``: the interactive CLI (``--cli``), where the user types /login.
    """
    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    with MockAnthropic(Script().prompt("[x]", text("must not be asked"))) as mock:
        env = claude_env(home, None)
        env["ANTHROPIC_BASE_URL"] = mock.url  # were it to call a model, the mock would log it
        assert env["ANTHROPIC_API_KEY"] == ""  # base_env blanks it over any inherited key
        agent, tee = await harness.open_agent("claude", env, project)
        run = Run(agent, tee, mock, project, home)
        try:
            offered = tee.sent[0]["params"]["clientCapabilities"]
            meta_auth = offered.get("_meta", {}).get("terminal-auth") is True
            terminal_auth = offered.get("auth", {}).get("terminal") is True or meta_auth
            assert [plain(m) for m in agent.auth_methods] == ([CLAUDE_LOGIN] if terminal_auth else [])
            if meta_auth:  # the full command, for clients that run it as given
                launch = agent.auth_methods[0]["_meta"]["terminal-auth"]
                assert Path(launch["command"]).name.startswith("node"), launch
                adapter = str(harness.BIN / "claude-agent-acp")
                assert launch["args"] == [adapter, "--cli"] and launch["label"] == "Claude Login"
            session = await asyncio.wait_for(agent.new_session(cwd=project), TURN)
            with pytest.raises(AuthRequired) as raised:
                await asyncio.wait_for(session.prompt("[x] Hello?"), TURN)
            error = raised.value
            assert (error.code, error.message, error.data) == (-32000, "Authentication required", None)
            assert error.methods == agent.auth_methods
            assert str(error).startswith("authentication required: Authentication required")
            assert mock.messages_requests() == []
            assert session.state.run_state == "idle" and not session.running
            assert_clean(session)
            if terminal_auth:
                # the hint names the login; a `terminal` method is run by the client, never passed
                # to `authenticate` (ACP v1 authentication: "Clients MUST NOT pass a terminal method")
                assert "claude-login" in str(error)
                assert "authenticate(" not in str(error), str(error)
                with pytest.raises(AcpError):  # refused by the client: nothing goes out
                    await asyncio.wait_for(agent.authenticate("claude-login"), TURN)
                assert [m for m in harness.flat_messages(tee.sent) if m.get("method") == "authenticate"] == []
        finally:
            await run.close()
        await run.close_and_check()


def plain(method: Any) -> Any:
    """An auth method without its ``_meta``."""
    return {k: v for k, v in method.items() if k != "_meta"} if isinstance(method, dict) else method
