"""The offline demo agent, driven as a subprocess by a tiny raw JSON-RPC client."""

from __future__ import annotations

import base64
import functools
import itertools
import json
import os
import queue
import re
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

ROOT = Path(__file__).resolve().parents[1]
SCHEMA_DIR = Path(__file__).resolve().parent / "schema"
if str(ROOT) not in sys.path:  # `pytest` alone does not put the project root on sys.path
    sys.path.insert(0, str(ROOT))

from acp_notebook.demo_agent import (  # noqa: E402
    APP_NEW,
    APP_OLD,
    TERMINAL_CHUNKS,
    TERMINAL_OUTPUT,
    UTIL_NEW,
    git_patch,
)

from . import support  # noqa: E402

CWD = "/home/user/project"
ALLOW = {"outcome": {"outcome": "selected", "optionId": "allow-once"}}
REJECT = {"outcome": {"outcome": "selected", "optionId": "reject-once"}}
CANCELLED = {"outcome": {"outcome": "cancelled"}}
OPTION_IDS = ["allow-once", "allow-always", "reject-once"]
CHECK = "✓".encode()


# -- schema validation ------------------------------------------------------------------


@functools.cache
def schema(version: int) -> dict:
    """The copied ACP schema of one protocol version."""
    return json.loads((SCHEMA_DIR / f"v{version}.schema.json").read_text())


@functools.cache
def validator(version: int, target: str) -> Draft202012Validator:
    """A validator for one `$defs` entry (or the agent-side envelope), resolved in the document."""
    doc = {k: v for k, v in schema(version).items() if k != "anyOf"}
    if target == "envelope":  # the "Agent" and "ProtocolLevel" branches of the root anyOf
        doc["anyOf"] = [schema(version)["anyOf"][0], schema(version)["anyOf"][2]]
    else:
        doc["$ref"] = f"#/$defs/{target}"
    return Draft202012Validator(doc)


def def_for(version: int, method: str, suffix: str) -> str:
    """The `$defs` name whose `x-method` is `method` and whose name ends in `suffix`."""
    defs = schema(version)["$defs"]
    names = [n for n, d in defs.items() if d.get("x-method") == method and n.endswith(suffix)]
    assert len(names) == 1, f"v{version}: no single {suffix} def for {method}: {names}"
    return names[0]


def assert_valid(version: int, message: dict, sent: dict) -> None:
    """Validate one agent message: envelope, then the method-specific payload."""
    validator(version, "envelope").validate(message)
    if "method" in message:
        suffix = "Request" if "id" in message else "Notification"
        validator(version, def_for(version, message["method"], suffix)).validate(message["params"])
    elif "result" in message:
        name = def_for(version, sent[message["id"]], "Response")
        validator(version, name).validate(message["result"])
    else:
        validator(version, "Error").validate(message["error"])


# -- a raw test client ---------------------------------------------------------------------


class Driver:
    """Runs the agent as a subprocess and speaks raw JSON-RPC lines to it."""

    def __init__(self, *args: str, env: dict | None = None) -> None:
        full_env = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
        command = [sys.executable, "-m", "acp_notebook.demo_agent", "--speed", "0", *args]
        self.proc = subprocess.Popen(
            command,
            cwd=ROOT,
            env=full_env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self.lines: queue.Queue = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()
        self.messages: list[dict] = []
        self.junk: list[str] = []
        self.sent: dict[int, str] = {}
        self.ids = itertools.count(1)
        self.version = 2
        self.permission: Callable[[dict], dict | None] = lambda params: ALLOW
        self.held: list[dict] = []
        self.terminal_runs: list[bytes] = []
        self._terminals: dict[str, subprocess.CompletedProcess] = {}

    def _pump(self) -> None:
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def send(self, message: dict) -> None:
        self.send_line(json.dumps({"jsonrpc": "2.0", **message}))

    def send_line(self, line: str) -> None:
        self.proc.stdin.write((line + "\n").encode())
        self.proc.stdin.flush()

    def request(self, method: str, params: dict) -> int:
        req_id = next(self.ids)
        self.sent[req_id] = method
        self.send({"id": req_id, "method": method, "params": params})
        return req_id

    def notify(self, method: str, params: dict) -> None:
        self.send({"method": method, "params": params})

    def respond(self, req_id, result: dict) -> None:
        self.send({"id": req_id, "result": result})

    def next_message(self, timeout: float = 10.0) -> dict:
        """Read (and auto-answer) the next JSON-RPC message; junk lines are recorded."""
        return self.until(lambda message: True, timeout, "a message")

    def until(self, predicate: Callable[[dict], bool], timeout: float = 10.0, what: str = "") -> dict:
        """Read messages until one matches; AssertionError after ``timeout`` s."""

        def matching() -> dict | None:
            message = self._read(0.05)
            return message if message is not None and predicate(message) else None

        what = what or "a matching message"
        return support.until(matching, timeout, interval=0, message=f"{what} from the agent")

    def _read(self, wait: float) -> dict | None:
        """The next line within ``wait`` s if it is a JSON-RPC message (answered); junk is recorded."""
        try:
            line = self.lines.get(timeout=wait)
        except queue.Empty:
            return None
        assert line is not None, f"agent exited: {self.stderr()}"
        try:
            message = json.loads(line)
        except ValueError:
            message = None
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            self.junk.append(line.decode("utf-8", "replace").rstrip("\n"))
            return None
        self.messages.append(message)
        self._answer(message)
        return message

    def call(self, method: str, params: dict, timeout: float = 10.0) -> dict:
        """Send a request and return its response message."""
        req_id = self.request(method, params)
        return self.until(lambda m: m.get("id") == req_id and "method" not in m, timeout)

    def _answer(self, message: dict) -> None:
        """Answer the agent's requests like a client would."""
        if "method" not in message or "id" not in message:
            return
        method, params = message["method"], message["params"]
        if method == "session/request_permission":
            answer = self.permission(params)
            if answer is None:
                self.held.append(message)
            else:
                self.respond(message["id"], answer)
        elif method.startswith("terminal/"):
            self.respond(message["id"], self._terminal(method, params))

    def _terminal(self, method: str, params: dict) -> dict:
        """A v1 client terminal that really runs the command."""
        if method == "terminal/create":
            run = subprocess.run(
                [params["command"], *params.get("args", [])], capture_output=True, timeout=10, check=False
            )
            terminal_id = f"client_term_{len(self._terminals) + 1}"
            self._terminals[terminal_id] = run
            self.terminal_runs.append(run.stdout)
            return {"terminalId": terminal_id}
        run = self._terminals[params["terminalId"]]
        exit_status = {"exitCode": run.returncode, "signal": None}
        if method == "terminal/output":
            output = run.stdout.decode("utf-8", "replace")
            return {"output": output, "truncated": False, "exitStatus": exit_status}
        return exit_status if method == "terminal/wait_for_exit" else {}

    # -- conveniences ------------------------------------------------------------------------

    def initialize(self, version: int = 2, terminal: bool = False, **extra) -> dict:
        """Send both v1 and v2 shapes of `initialize`, as the real client does."""
        params = {
            "protocolVersion": version,
            "info": {"name": "raw-test-client", "version": "0"},
            "capabilities": {},
            "clientInfo": {"name": "raw-test-client", "version": "0"},
            "clientCapabilities": {"terminal": terminal, **extra},
        }
        result = self.call("initialize", params)["result"]
        self.version = result["protocolVersion"]
        return result

    def new_session(self) -> str:
        return self.call("session/new", {"cwd": CWD, "mcpServers": []})["result"]["sessionId"]

    def prompt(self, session_id: str, text: str = "Fix the bug") -> int:
        return self.request(
            "session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]}
        )

    def finish_turn(self, req_id: int, timeout: float = 10.0) -> str:
        """Wait for the end of a turn; return its stop reason."""
        if self.version == 1:
            response = self.until(lambda m: m.get("id") == req_id and "method" not in m, timeout)
            return response["result"]["stopReason"]
        idle = self.until(lambda m: _update(m).get("state") == "idle" and _acked(self, req_id), timeout)
        return _update(idle)["stopReason"]

    def updates(self) -> list[dict]:
        return [_update(m) for m in self.messages if m.get("method") == "session/update"]

    def assert_all_valid(self) -> None:
        for message in self.messages:
            assert_valid(self.version, message, self.sent)

    def stderr(self) -> str:
        try:  # stdout closing can win the race against the exit: give the process a moment
            self.proc.wait(2)
        except subprocess.TimeoutExpired:
            return "(running)"
        return self.proc.stderr.read().decode("utf-8", "replace")

    def close(self) -> int:
        if not self.proc.stdin.closed:
            self.proc.stdin.close()
        try:
            return self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait(5)


def _update(message: dict) -> dict:
    return message.get("params", {}).get("update", {}) if isinstance(message, dict) else {}


def _acked(driver: Driver, req_id: int) -> bool:
    return any(m.get("id") == req_id and "result" in m for m in driver.messages)


def tool_calls(updates: list[dict]) -> dict[str, list[dict]]:
    """Every tool call's updates (and chunks) in order, keyed by id."""
    calls: dict[str, list[dict]] = {}
    for update in updates:
        if update.get("sessionUpdate") in ("tool_call", "tool_call_update", "tool_call_content_chunk"):
            calls.setdefault(update["toolCallId"], []).append(update)
    return calls


def statuses(history: list[dict]) -> list[str]:
    return [u["status"] for u in history if "status" in u]


def texts(items: list[dict]) -> list[str]:
    return [i["content"]["text"] for i in items if i.get("type") == "content"]


def of_kind(updates: list[dict], kind: str) -> list[dict]:
    return [u for u in updates if u.get("sessionUpdate") == kind]


def requests(driver: Driver, method: str) -> list[dict]:
    return [m for m in driver.messages if m.get("method") == method and "id" in m]


@pytest.fixture
def spawn():
    """Start drivers; close them all at the end of the test."""
    drivers: list[Driver] = []

    def start(*args: str, env: dict | None = None) -> Driver:
        drivers.append(Driver(*args, env=env))
        return drivers[-1]

    yield start
    for driver in drivers:
        driver.close()


def play(spawn, *args: str, version: int = 2, text: str = "Fix the bug", **init) -> Driver:
    """Initialize, open a session and play one whole turn."""
    driver = spawn(*args)
    driver.initialize(version, **init)
    driver.stop_reason = driver.finish_turn(driver.prompt(driver.new_session(), text))
    return driver


# -- fixed data -------------------------------------------------------------------------


def test_terminal_chunks_cover_the_tricky_cases():
    assert CHECK in TERMINAL_OUTPUT
    assert b"\xe2\x9c" in [c[-2:] for c in TERMINAL_CHUNKS]
    assert any(c.endswith(b"\x1b[3") for c in TERMINAL_CHUNKS)
    assert all(tag in TERMINAL_OUTPUT for tag in (b"\x1b[32m", b"\x1b[31m", b"\x1b[1m"))
    assert b"\r[#####     ] 50%" in TERMINAL_OUTPUT and b"100%\r\n" in TERMINAL_OUTPUT
    assert TERMINAL_OUTPUT.endswith(b"\r\n")
    TERMINAL_OUTPUT.decode("utf-8")  # whole once joined


def apply_patch(text: str, files: dict[str, str]) -> dict[str, str]:
    """A minimal applier for the story's git patch (unified hunks, added files)."""
    result, current, lines, cursor = dict(files), None, [], 0
    for line in text.splitlines():
        if line.startswith("diff --git "):
            if current:
                result[current] = "".join(lines)
            current = line.split(" ")[-1]
            lines = result.get(current, "").splitlines(keepends=True)
            cursor = 0
        elif line.startswith(("--- ", "+++ ", "new file mode")):
            continue
        elif line.startswith("@@"):
            start = int(re.match(r"@@ -(\d+)", line).group(1))
            cursor = max(start - 1, 0)
        elif line[:1] == " ":
            assert lines[cursor] == line[1:] + "\n"
            cursor += 1
        elif line[:1] == "-":
            assert lines.pop(cursor) == line[1:] + "\n"
        elif line[:1] == "+":
            lines.insert(cursor, line[1:] + "\n")
            cursor += 1
    if current:
        result[current] = "".join(lines)
    return result


def test_git_patch_is_consistent_with_the_file_texts():
    patch = git_patch(CWD)
    app, util = f"{CWD}/src/app.py", f"{CWD}/src/util.py"
    assert patch.count("diff --git ") == 2
    assert f"diff --git {app} {app}\n--- {app}\n+++ {app}\n@@ " in patch
    assert f"new file mode 100644\n--- /dev/null\n+++ {util}\n@@ -0,0 +1," in patch
    assert "logo.png" not in patch and "old.md" not in patch
    assert apply_patch(patch, {app: APP_OLD}) == {app: APP_NEW, util: UTIL_NEW}


# -- negotiation and small scenarios ------------------------------------------------------


@pytest.mark.parametrize(
    ("flags", "asked", "answered"),
    [((), 1, 1), ((), 2, 2), ((), 3, 2), (("--protocol", "1"), 2, 1), (("--protocol", "2"), 1, 2)],
)
def test_version_negotiation(spawn, flags, asked, answered):
    driver = spawn(*flags, "--scenario", "echo")
    result = driver.initialize(asked)
    assert result["protocolVersion"] == answered
    if answered == 2:
        assert result["info"]["name"] == "acp-notebook-demo"
        assert result["authMethods"] == []
    else:
        assert result["agentCapabilities"]["loadSession"] is False
        assert result["agentInfo"]["title"] == "ACP Notebook demo agent"
    driver.assert_all_valid()


def test_version3_scenario_answers_3(spawn):
    assert spawn("--scenario", "version3").initialize(2)["protocolVersion"] == 3


def test_hang_never_answers_initialize(spawn):
    driver = spawn("--scenario", "hang")
    driver.request("initialize", {"protocolVersion": 2, "info": {"name": "t", "version": "0"}})
    driver.send_line("not json")  # answered even by `hang`: proves it read past initialize
    parse_error = driver.next_message()
    assert parse_error["error"]["code"] == -32700 and driver.proc.poll() is None
    assert driver.close() == 0
    with pytest.raises(AssertionError, match="agent exited"):
        driver.next_message()  # all it wrote before it exited has been read
    assert driver.messages == [parse_error], "initialize was never answered"


def test_crash_exits_with_code_3_mid_turn(spawn):
    driver = spawn("--scenario", "crash")
    driver.initialize(2)
    driver.prompt(driver.new_session())
    with pytest.raises(AssertionError, match="simulated crash"):
        driver.until(lambda message: False, what="the exit")  # read until the agent exits
    assert driver.proc.wait(5) == 3
    assert [u.get("state") for u in of_kind(driver.updates(), "state_update")] == ["running"]
    assert "call_crash" in tool_calls(driver.updates())


@pytest.mark.parametrize("version", [1, 2])
def test_echo(spawn, version):
    driver = play(spawn, "--scenario", "echo", version=version, text="hello")
    assert driver.stop_reason == "end_turn"
    chunks = of_kind(driver.updates(), "agent_message_chunk")
    assert [c["content"]["text"] for c in chunks] == ["You said: hello"]
    assert ("messageId" in chunks[0]) == (version == 2)
    assert driver.junk == []
    driver.assert_all_valid()


def test_v2_prompt_lifecycle_order(spawn):
    driver = play(spawn, "--scenario", "echo", text="hello")
    start = next(i for i, m in enumerate(driver.messages) if m.get("id") == 3)  # the prompt
    ack = driver.messages[start]["result"]
    kinds = [(u["sessionUpdate"], u.get("state")) for u in map(_update, driver.messages[start + 1 :])]
    assert kinds == [
        ("user_message", None),
        ("state_update", "running"),
        ("agent_message_chunk", None),
        ("state_update", "idle"),
    ]
    user = _update(driver.messages[start + 1])
    assert user["messageId"] == ack["messageId"]
    assert user["content"] == [{"type": "text", "text": "hello"}]


def test_idle_first_sends_a_stale_idle_before_the_ack(spawn):
    driver = play(spawn, "--scenario", "idle_first")
    start = next(i for i, m in enumerate(driver.messages) if m.get("id") == 3)
    assert _update(driver.messages[start - 1]) == {
        "sessionUpdate": "state_update",
        "state": "idle",
        "stopReason": "end_turn",
    }
    assert driver.stop_reason == "end_turn"
    assert [u.get("state") for u in of_kind(driver.updates(), "state_update")] == ["idle", "running", "idle"]
    driver.assert_all_valid()


def test_noise_precedes_messages_but_echo_still_works(spawn):
    driver = play(spawn, "--scenario", "noise", text="hi")
    assert driver.stop_reason == "end_turn"
    assert "log: starting" in driver.junk and '{"hello": 1}' in driver.junk
    bad = [u for u in driver.updates() if u.get("toolCallId") == "call_noise"]
    assert {"title": 5} in [{k: v for k, v in u.items() if k == "title"} for u in bad]
    assert any(u.get("status") == "weird" for u in bad)
    assert of_kind(driver.updates(), "_custom_kind")
    noise_chunk = of_kind(driver.updates(), "terminal_output_chunk")[0]["data"]
    with pytest.raises(ValueError):
        base64.b64decode(noise_chunk, validate=True)
    chunks = of_kind(driver.updates(), "agent_message_chunk")
    assert [c["content"]["text"] for c in chunks] == ["You said: hi"]


def test_unknown_requests_and_notifications(spawn):
    driver = spawn("--scenario", "echo")
    driver.initialize(2)
    driver.notify("_whatever/ping", {})
    assert driver.call("_whatever/method", {})["error"]["code"] == -32601
    assert driver.call("session/prompt", {"sessionId": "nope", "prompt": []})["error"]["code"] in (
        -32002,
        -32602,
    )
    assert driver.call("session/new", {"cwd": "relative/path"})["error"]["code"] == -32602
    driver.assert_all_valid()


@pytest.mark.parametrize(
    ("answer", "chosen"), [(ALLOW, "allow-once"), (REJECT, "reject-once"), (CANCELLED, "cancelled")]
)
def test_permission_scenario(spawn, answer, chosen):
    driver = spawn("--scenario", "permission")
    driver.permission = lambda params: answer
    driver.initialize(2)
    assert driver.finish_turn(driver.prompt(driver.new_session())) == "end_turn"
    (request,) = requests(driver, "session/request_permission")
    assert request["params"]["subject"]["toolCall"]["toolCallId"] == "call_perm"
    assert [o["optionId"] for o in request["params"]["options"]] == OPTION_IDS
    chunks = of_kind(driver.updates(), "agent_message_chunk")
    assert chunks[-1]["content"]["text"] == f"Chosen: {chosen}"
    final = statuses(tool_calls(driver.updates())["call_perm"])[-1]
    assert final == ("completed" if chosen == "allow-once" else "failed")
    driver.assert_all_valid()


# -- the default story, v2 ------------------------------------------------------------------


def test_v2_default_story_allowed(spawn):
    driver = play(spawn)
    assert driver.stop_reason == "end_turn"
    assert driver.junk == []
    driver.assert_all_valid()
    updates = driver.updates()
    kinds = {u["sessionUpdate"] for u in updates}
    assert {
        "agent_thought_chunk",
        "agent_message_chunk",
        "plan_update",
        "tool_call_update",
        "tool_call_content_chunk",
        "terminal_update",
        "terminal_output_chunk",
        "usage_update",
        "session_info_update",
        "notice",
        "available_commands_update",
    } <= kinds
    assert "tool_call" not in kinds and "plan" not in kinds

    thoughts = of_kind(updates, "agent_thought_chunk")
    assert len(thoughts) > 1 and len({t["messageId"] for t in thoughts}) == 1
    first = [
        m
        for m in of_kind(updates, "agent_message_chunk")
        if m["messageId"] == of_kind(updates, "agent_message_chunk")[0]["messageId"]
    ]
    assert len(first) > 2 and "**fix the bug**" in "".join(m["content"]["text"] for m in first)

    plans = of_kind(updates, "plan_update")
    assert len(plans) > 2 and {p["plan"]["planId"] for p in plans} == {"plan_1"}
    assert all(p["plan"]["type"] == "items" and len(p["plan"]["entries"]) == 4 for p in plans)
    assert {e["status"] for e in plans[-1]["plan"]["entries"]} == {"completed"}

    calls = tool_calls(updates)
    assert list(calls) == [
        "call_read",
        "call_edit",
        "call_test",
        "call_search",
        "call_index",
        "call_fetch",
        "call_think",
    ]
    read = calls["call_read"]
    assert statuses(read) == ["pending", "in_progress", "completed"]
    assert read[0]["kind"] == "read" and read[0]["title"] == "Read pyproject.toml"
    assert read[0]["locations"] == [{"path": f"{CWD}/pyproject.toml", "line": 1}]
    assert read[0]["rawInput"] == {"path": f"{CWD}/pyproject.toml"}
    assert texts(read[-1]["content"]) and "rawOutput" in read[-1]

    check_v2_edit(driver, calls["call_edit"])
    check_v2_terminal(driver, calls["call_test"], updates)

    search = calls["call_search"]
    chunks = [u for u in search if u["sessionUpdate"] == "tool_call_content_chunk"]
    assert len(chunks) == 3 and sum("_meta" in c for c in chunks) == 1
    assert search[-1]["status"] == "completed" and len(search[-1]["content"]) == 1

    index = calls["call_index"]
    assert index[0]["kind"] == "_index" and index[0]["status"] == "_indexing"
    assert {"type": "_chart", "series": [1, 2, 3]} in index[0]["content"]
    assert statuses(index)[-1] == "completed"

    fetch = calls["call_fetch"]
    assert fetch[0]["kind"] == "fetch" and fetch[0]["title"] == "Fetch https://docs.invalid/api"
    assert fetch[-1]["status"] == "failed" and "error" in fetch[-1]["rawOutput"]
    assert texts(fetch[-1]["content"]) == ["Network is disabled in the demo"]

    think = calls["call_think"]
    assert think[0]["title"] == "Check <img src=x onerror=alert(1)> is shown as text"
    assert think[0]["kind"] == "think" and statuses(think)[-1] == "completed"

    assert of_kind(updates, "usage_update")[0]["size"] > 0
    assert of_kind(updates, "session_info_update")[0]["title"] == "Demo session"
    assert of_kind(updates, "notice")[0]["severity"] == "info"
    last = "".join(c["content"]["text"] for c in of_kind(updates, "agent_message_chunk")[-5:])
    assert "fixed `average()`" in last and "3 passed" in last
    assert updates[-1] == {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"}


def check_v2_edit(driver: Driver, edit: list[dict]) -> None:
    """call_edit: pending, permission with a tool_call subject, then one structured diff."""
    assert edit[0]["kind"] == "edit" and edit[0]["status"] == "pending"
    assert edit[0]["title"] == "Edit src/app.py, add src/util.py"
    ask = requests(driver, "session/request_permission")[0]["params"]
    assert ask["title"] == "Apply edits to 4 files?" and ask["description"]
    assert ask["subject"]["type"] == "tool_call"
    assert ask["subject"]["toolCall"]["toolCallId"] == "call_edit"
    assert [o["optionId"] for o in ask["options"]] == OPTION_IDS
    assert [o["kind"] for o in ask["options"]] == ["allow_once", "allow_always", "reject_once"]
    assert statuses(edit) == ["pending", "in_progress", "completed"]
    (diff,) = edit[-1]["content"]
    assert diff["type"] == "diff"
    changes = {(c["operation"], c["path"]): c for c in diff["changes"]}
    assert changes[("modify", f"{CWD}/src/app.py")]["mimeType"] == "text/x-python"
    assert changes[("add", f"{CWD}/src/util.py")]["fileType"] == "text"
    logo = changes[("modify", f"{CWD}/assets/logo.png")]
    assert (logo["fileType"], logo["mimeType"]) == ("binary", "image/png")
    assert changes[("move", f"{CWD}/docs/new.md")]["oldPath"] == f"{CWD}/docs/old.md"
    assert diff["patch"] == {"format": "git_patch", "text": git_patch(CWD)}
    states = [u.get("state") for u in of_kind(driver.updates(), "state_update")]
    assert states[:4] == ["running", "requires_action", "running", "requires_action"]


def check_v2_terminal(driver: Driver, test: list[dict], updates: list[dict]) -> None:
    """call_test: command permission, terminal content, exact chunk bytes, exit status."""
    ask = requests(driver, "session/request_permission")[1]["params"]
    assert ask["title"] == "Run the test suite?"
    assert ask["subject"] == {
        "type": "command",
        "command": "pytest -q",
        "cwd": CWD,
        "toolCallId": "call_test",
        "terminalId": "term_001",
    }
    assert test[0]["kind"] == "execute" and test[0]["title"] == "Run pytest -q"
    assert test[0]["status"] == "in_progress"
    assert test[0]["content"] == [{"type": "terminal", "terminalId": "term_001"}]
    assert test[0]["capabilities"] == {"cancel": {}}
    assert statuses(test)[-1] == "completed" and test[-1]["capabilities"] is None
    terminal = [u for u in updates if u.get("terminalId") == "term_001"]
    assert terminal[0] == {
        "sessionUpdate": "terminal_update",
        "terminalId": "term_001",
        "command": "pytest -q",
        "cwd": CWD,
        "size": {"cols": 80, "rows": 24},
    }
    assert terminal[-1]["exitStatus"] == {"exitCode": 0, "signal": None}
    data = [
        base64.b64decode(u["data"], validate=True)
        for u in terminal
        if u["sessionUpdate"] == "terminal_output_chunk"
    ]
    assert data == TERMINAL_CHUNKS
    assert CHECK in b"".join(data)
    order = [id(u) for u in updates]
    assert order.index(id(terminal[-1])) < order.index(id(test[-1]))


def test_v2_default_story_rejected(spawn):
    driver = spawn()
    driver.permission = lambda params: REJECT
    driver.initialize(2)
    assert driver.finish_turn(driver.prompt(driver.new_session())) == "end_turn"
    driver.assert_all_valid()
    updates = driver.updates()
    calls = tool_calls(updates)
    edit = calls["call_edit"]
    assert statuses(edit) == ["pending", "failed"]
    assert texts(edit[-1]["content"]) == ["Edit rejected by the user"]
    assert not any(i.get("type") == "diff" for u in edit for i in u.get("content", []))
    assert statuses(calls["call_test"]) == ["failed"]
    assert not of_kind(updates, "terminal_update") and not of_kind(updates, "terminal_output_chunk")
    assert "call_search" in calls and "call_think" in calls  # the story went on
    last = "".join(c["content"]["text"] for c in of_kind(updates, "agent_message_chunk")[-5:])
    assert "rejected the edit" in last and "tests were not run" in last


def test_v2_cancel_while_permission_is_pending(spawn):
    driver = spawn()
    driver.permission = lambda params: None  # hold it
    driver.initialize(2)
    session = driver.new_session()
    prompt = driver.prompt(session)
    driver.until(lambda m: m.get("method") == "session/request_permission")
    driver.notify("session/cancel", {"sessionId": session})
    driver.respond(driver.held[0]["id"], CANCELLED)
    assert driver.finish_turn(prompt, timeout=5) == "cancelled"
    calls = tool_calls(driver.updates())
    assert statuses(calls["call_edit"])[-1] == "cancelled"
    assert statuses(calls["call_read"])[-1] == "completed"
    assert "call_test" not in calls
    last_plan = of_kind(driver.updates(), "plan_update")[-1]["plan"]["entries"]
    assert [e["status"] for e in last_plan] == ["completed", "cancelled", "cancelled", "cancelled"]
    driver.assert_all_valid()

    driver.permission = lambda params: ALLOW  # the session is usable again, with fresh ids
    assert driver.finish_turn(driver.prompt(session)) == "end_turn"
    second = tool_calls(driver.updates())
    assert {"call_edit_2", "call_test_2", "call_think_2"} <= set(second)
    assert any(u.get("terminalId") == "term_001_2" for u in driver.updates())
    driver.assert_all_valid()


def test_v2_cancel_slow_command(spawn):
    driver = spawn("--scenario", "slow")
    driver.initialize(2)
    session = driver.new_session()
    prompt = driver.prompt(session)
    for _ in range(3):
        driver.until(lambda m: _update(m).get("sessionUpdate") == "terminal_output_chunk")
    started = time.monotonic()
    driver.notify("session/cancel", {"sessionId": session})
    assert driver.finish_turn(prompt, timeout=5) == "cancelled"
    assert time.monotonic() - started < 1.0
    updates = driver.updates()
    assert statuses(tool_calls(updates)["call_slow"])[-1] == "cancelled"
    exits = [u for u in of_kind(updates, "terminal_update") if "exitStatus" in u]
    assert exits[-1]["exitStatus"]["signal"] == "SIGINT"
    driver.assert_all_valid()


def test_v2_tool_call_cancel(spawn):
    driver = spawn("--scenario", "slow")
    driver.initialize(2)
    session = driver.new_session()
    prompt = driver.prompt(session)
    driver.until(lambda m: _update(m).get("sessionUpdate") == "terminal_output_chunk")
    bad = driver.call("tool_call/cancel", {"sessionId": session, "toolCallId": "call_nope"})
    assert bad["error"]["code"] == -32602
    ok = driver.call("tool_call/cancel", {"sessionId": session, "toolCallId": "call_slow"})
    assert ok["result"] == {}
    assert driver.finish_turn(prompt, timeout=5) == "end_turn"
    assert statuses(tool_calls(driver.updates())["call_slow"])[-1] == "cancelled"
    driver.assert_all_valid()


# -- the default story, v1 ------------------------------------------------------------------


def test_v1_default_story_with_client_terminal(spawn):
    driver = play(spawn, version=1, terminal=True)
    assert driver.stop_reason == "end_turn"
    assert driver.junk == []
    driver.assert_all_valid()
    updates = driver.updates()
    kinds = {u["sessionUpdate"] for u in updates}
    assert {"tool_call", "tool_call_update", "plan", "agent_message_chunk"} <= kinds
    assert not kinds & {"plan_update", "state_update", "terminal_output_chunk", "notice"}
    assert not any("messageId" in u for u in of_kind(updates, "agent_message_chunk"))

    calls = tool_calls(updates)
    assert all(history[0]["sessionUpdate"] == "tool_call" for history in calls.values())
    edit = calls["call_edit"]
    diffs = [i for i in edit[-1]["content"] if i["type"] == "diff"]
    assert diffs == [
        {"type": "diff", "path": f"{CWD}/src/app.py", "oldText": APP_OLD, "newText": APP_NEW},
        {"type": "diff", "path": f"{CWD}/src/util.py", "oldText": None, "newText": UTIL_NEW},
    ]
    notes = " ".join(texts(edit[-1]["content"]))
    assert "logo.png" in notes and "docs/old.md" in notes

    asks = [r["params"] for r in requests(driver, "session/request_permission")]
    assert asks[0]["toolCall"]["toolCallId"] == "call_edit"
    assert asks[1]["toolCall"]["kind"] == "execute"
    assert asks[1]["toolCall"]["title"] == "Run pytest -q"
    assert asks[1]["toolCall"]["rawInput"] == {"command": "pytest -q", "cwd": CWD}
    assert [o["optionId"] for o in asks[1]["options"]] == OPTION_IDS

    (create,) = requests(driver, "terminal/create")
    assert create["params"]["command"] == "sh" and create["params"]["cwd"] == CWD
    assert driver.terminal_runs == [TERMINAL_OUTPUT]
    assert [m["method"] for m in driver.messages if m.get("method", "").startswith("terminal/")] == [
        "terminal/create",
        "terminal/wait_for_exit",
        "terminal/output",
        "terminal/release",
    ]
    test = calls["call_test"]
    assert {"type": "terminal", "terminalId": "client_term_1"} in [
        i for u in test for i in u.get("content", [])
    ]
    assert statuses(test)[-1] == "completed"

    index = calls["call_index"]
    assert index[0]["kind"] == "other" and index[0]["status"] == "in_progress"
    assert index[0]["_meta"]["acpNotebookDemo"]["status"] == "_indexing"
    assert {"type": "_chart", "series": [1, 2, 3]} in index[0]["_meta"]["acpNotebookDemo"]["content"]


def test_v1_default_story_without_client_terminal(spawn):
    driver = play(spawn, version=1, terminal=False)
    assert driver.stop_reason == "end_turn"
    driver.assert_all_valid()
    assert not requests(driver, "terminal/create")
    test = tool_calls(driver.updates())["call_test"]
    output = "\n".join(texts(test[-1]["content"]))
    assert "3 passed" in output and "✓" in output and "\x1b" not in output


def test_v1_notice_only_with_the_capability(spawn):
    driver = play(spawn, version=1, session={"notices": {}})
    assert of_kind(driver.updates(), "notice")
    driver.assert_all_valid()


def test_v1_default_story_rejected(spawn):
    driver = spawn()
    driver.permission = lambda params: REJECT
    driver.initialize(1, terminal=True)
    assert driver.finish_turn(driver.prompt(driver.new_session())) == "end_turn"
    driver.assert_all_valid()
    calls = tool_calls(driver.updates())
    assert statuses(calls["call_edit"])[-1] == "failed"
    assert statuses(calls["call_test"]) == ["pending", "failed"]
    assert not requests(driver, "terminal/create")


def test_v1_cancel(spawn):
    driver = spawn("--scenario", "slow")
    driver.initialize(1)
    session = driver.new_session()
    prompt = driver.prompt(session)
    for _ in range(3):
        driver.until(lambda m: _update(m).get("toolCallId") == "call_slow")
    driver.notify("session/cancel", {"sessionId": session})
    assert driver.finish_turn(prompt, timeout=5) == "cancelled"
    assert not any(u.get("status") == "cancelled" for u in driver.updates())
    driver.assert_all_valid()


@pytest.mark.parametrize("version", [1, 2])
def test_a_cancel_right_behind_its_prompt_cancels_the_turn(spawn, version):
    driver = spawn("--scenario", "slow")
    driver.initialize(version)
    session = driver.new_session()
    req_id = next(driver.ids)
    prompt = {
        "id": req_id,
        "method": "session/prompt",
        "params": {"sessionId": session, "prompt": [{"type": "text", "text": "go"}]},
    }
    cancel = {"method": "session/cancel", "params": {"sessionId": session}}
    driver.sent[req_id] = "session/prompt"
    driver.send_line(
        json.dumps({"jsonrpc": "2.0", **prompt}) + "\n" + json.dumps({"jsonrpc": "2.0", **cancel})
    )
    assert driver.finish_turn(req_id, timeout=10) == "cancelled"


# -- CLI -------------------------------------------------------------------------------------


def test_cli_logs_to_stderr_only(spawn):
    driver = spawn("--scenario", "echo", "--protocol", "2")
    driver.initialize(2)
    driver.close()
    assert "demo agent: protocol v2, scenario echo" in driver.stderr()
    assert driver.junk == []


def test_speed_from_env_and_flag(monkeypatch):
    from acp_notebook.demo_agent.__main__ import parse_args

    monkeypatch.setenv("ACP_DEMO_SPEED", "0.5")
    assert parse_args([]).speed == 0.5
    assert parse_args(["--speed", "0"]).speed == 0.0
    monkeypatch.delenv("ACP_DEMO_SPEED")
    assert parse_args([]).speed == 1.0


# -- routed prompts (the default scenario) ----------------------------------------------------------


@pytest.mark.parametrize(("version", "terminal"), [(1, False), (1, True), (2, False)])
def test_routed_replies_are_schema_valid_text_only_turns(spawn, version, terminal):
    driver = spawn()
    driver.initialize(version, terminal=terminal)
    session = driver.new_session()
    replies = {}
    for text in ("help", "Fix the bug", "Now summarise what you changed.", "Why did the fetch fail?"):
        start = len(driver.messages)
        assert driver.finish_turn(driver.prompt(session, text)) == "end_turn"
        replies[text] = [_update(m) for m in driver.messages[start:] if m.get("method") == "session/update"]
    for text in ("help", "Now summarise what you changed.", "Why did the fetch fail?"):
        kinds = {u["sessionUpdate"] for u in replies[text]}
        allowed = {"agent_message_chunk", "user_message", "state_update", "available_commands_update"}
        assert kinds <= allowed, (text, kinds)
        assert "agent_message_chunk" in kinds
    recap = "".join(
        u["content"]["text"]
        for u in of_kind(replies["Now summarise what you changed."], "agent_message_chunk")
    )
    assert "command `pytest -q`, exit code 0; permission allowed once" in recap
    assert sorted(tool_calls(replies["Fix the bug"])) == sorted(
        ["call_read", "call_edit", "call_test", "call_search", "call_index", "call_fetch", "call_think"]
    )
    assert driver.junk == []
    driver.assert_all_valid()
