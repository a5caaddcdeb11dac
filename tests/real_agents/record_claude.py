"""Record the shipped traces of the real claude-agent-acp, offline.

``python tests/real_agents/record_claude.py [OUT]`` records ``acp_notebook/traces/claude_v1.jsonl``:
the agent of ``test_claude.py`` against the mock model server in a neutral project
(``/tmp/acp-claude/project``, ``app.py``), over v1 (the client forces ``protocolVersion: 1``;
claude-agent-acp >= 0.95 would answer 2 to our default offer) in Manual mode (its default, ``auto``,
never asks): the model reads the file, edits it (the permission is allowed once), runs ``printf``
with Bash and answers with text.

``python tests/real_agents/record_claude.py --subagents [OUT]`` records
``acp_notebook/traces/claude_subagents_v2.jsonl``: the same agent over v2 (its default), Manual mode.
The model calls the ``Agent`` tool twice: a foreground subagent that runs ``touch child.txt`` (its
permission request comes under the child's ``sessionId``, allowed once), then a background one
(``run_in_background``) whose first model reply is held until the parent's turn has ended, so its
``touch notes.txt`` permission is asked after that turn; when it finishes, the agent starts a turn
of its own (a task notification) that the model answers with text.

The trace's header names the command ``claude-agent-acp`` (not this machine's path); this checkout's
path to the npm launcher (in ``authMethods``) is cut; the script fails if the mock's key or this
checkout's path appears in the trace.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import sys
import threading
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from acp_notebook.client.agent import Agent  # noqa: E402
from acp_notebook.client.transport import AgentProcess  # noqa: E402
from tests.real_agents import harness  # noqa: E402
from tests.real_agents.mock_anthropic import MockAnthropic, Script, text, tool_use  # noqa: E402
from tests.real_agents.test_claude import ORIGINAL, claude_env, read_then_edit  # noqa: E402

BASE = Path("/tmp/acp-claude")
OUT = ROOT / "acp_notebook" / "traces" / "claude_v1.jsonl"
SUBAGENTS_OUT = ROOT / "acp_notebook" / "traces" / "claude_subagents_v2.jsonl"
PROMPT = "Update the greeting, then print it."
SUBAGENTS_PROMPT = "Have a subagent create child.txt, and another write notes.txt in the background."
NOTIFICATION = "<task-notification>"  # in the text of the model request of the agent-started turn
NOTIFIED = "The background subagent wrote notes.txt."  # the model's answer to the notification
WAIT = 60.0  # seconds: a bound for each step of a recording


async def record(out: Path) -> None:
    """Run the turn with ``record=out``."""
    shutil.rmtree(BASE, ignore_errors=True)
    project, home = BASE / "project", BASE / "home"
    project.mkdir(parents=True)
    (project / "app.py").write_text(ORIGINAL)
    with MockAnthropic(Script()) as mock:
        _, edit_id = read_then_edit(mock.script, "[turn]", "a", project / "app.py")
        command = "printf 'caf\\xc3\\xa9\\n'"
        mock.script.after(
            edit_id, tool_use("toolu_a_bash", "Bash", {"command": command, "description": "Print"})
        )
        mock.script.after("toolu_a_bash", text("Done: the greeting is updated."))
        process = await AgentProcess.spawn(
            harness.COMMANDS["claude"], str(project), claude_env(home, mock.url)
        )
        process.argv = ["claude-agent-acp"]  # the header names the agent, not this machine's path
        agent = Agent(process, record=out)
        try:
            await agent.initialize(1)
            session = await asyncio.wait_for(agent.new_session(cwd=project), 60)
            await asyncio.wait_for(session.set_config_option("mode", "default"), 60)
            session.permission_handler = lambda request: next(
                o["optionId"] for o in request.options if o["kind"] == "allow_once"
            )
            await asyncio.wait_for(session.prompt(f"[turn] {PROMPT}"), 60)
        finally:
            await agent.close()
    scrub(out)


def subagent_script(script: Script, held: threading.Event) -> None:
    """The model's side of the subagent recording (the background child's first reply ``held``)."""
    foreground = {"description": "Create child.txt", "prompt": "[child] Create the file."}
    background = {"description": "Write notes.txt", "prompt": "[bgchild] Write the notes."}
    for agent_input, in_background in ((foreground, False), (background, True)):
        agent_input.update({"subagent_type": "general-purpose", "run_in_background": in_background})
    script.prompt("[sub]", text("I'll delegate both."), tool_use("toolu_sub_fg", "Agent", foreground))
    script.after("toolu_sub_fg", tool_use("toolu_sub_bg", "Agent", background))
    script.after("toolu_sub_bg", text("The notes are being written in the background."))
    touch = {"command": "touch child.txt", "description": "Create child.txt"}
    script.prompt("[child]", tool_use("toolu_child_bash", "Bash", touch))
    script.after("toolu_child_bash", text("Created child.txt."))
    notes = {"command": "touch notes.txt", "description": "Create notes.txt"}
    script.prompt("[bgchild]", tool_use("toolu_bg_bash", "Bash", notes), hold=held)
    script.after("toolu_bg_bash", text("Wrote notes.txt."))
    script.prompt(NOTIFICATION, text(NOTIFIED))


async def record_subagents(out: Path) -> None:
    """Run the subagent turn, the background child and the agent-started turn with ``record=out``."""
    shutil.rmtree(BASE, ignore_errors=True)
    project, home = BASE / "project", BASE / "home"
    project.mkdir(parents=True)
    held = threading.Event()
    with MockAnthropic(Script()) as mock:
        subagent_script(mock.script, held)
        process = await AgentProcess.spawn(
            harness.COMMANDS["claude"], str(project), claude_env(home, mock.url)
        )
        process.argv = ["claude-agent-acp"]
        agent = Agent(process, record=out)
        try:
            await agent.initialize(2)
            session = await asyncio.wait_for(agent.new_session(cwd=project), WAIT)
            await asyncio.wait_for(session.set_config_option("mode", "default"), WAIT)
            session.permission_handler = allow_once
            await asyncio.wait_for(session.prompt(f"[sub] {SUBAGENTS_PROMPT}"), WAIT)
            held.set()  # the parent's turn ended: the background child may go on (and ask)
            await bounded(lambda: said(session, NOTIFIED) and session.state.run_state == "idle", "its end")
            await bounded(lambda: (project / "notes.txt").exists(), "notes.txt")
        finally:
            held.set()
            await agent.close()
    scrub(out)


def said(session: Any, words: str) -> bool:
    """Whether the agent said ``words`` in one of the session's messages."""
    return any(words in m.text for m in session.state.messages.values() if m.role == "agent")


def allow_once(request: Any) -> str:
    """The request's ``allow_once`` option."""
    return next(o["optionId"] for o in request.options if o["kind"] == "allow_once")


async def bounded(done: Any, what: str) -> None:
    """Wait (at most ``WAIT`` s) until ``done()``."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + WAIT
    while not done():
        if loop.time() > deadline:
            raise SystemExit(f"gave up waiting for {what}")
        await asyncio.sleep(0.05)


def scrub(out: Path) -> None:
    """Cut the launcher's local path from the trace, then check it."""
    local = json.dumps(str(harness.BIN) + "/")[1:-1]  # the launcher's path, as JSON writes it
    out.write_text(out.read_text(encoding="utf-8").replace(local, ""), encoding="utf-8")
    check(out)


def check(out: Path) -> None:
    """No secret and no local path in the trace."""
    data = out.read_text(encoding="utf-8")
    for needle in ("test-key", str(ROOT)):
        if needle in data:
            raise SystemExit(f"{out}: {needle!r} appears in the trace")
    print(f"{out}: {len(data.splitlines()) - 1} entries, {len(data)} bytes; methods:")
    methods = [json.loads(line).get("message", {}).get("method") for line in data.splitlines()[1:]]
    print(sorted({m for m in methods if isinstance(m, str)}))


if __name__ == "__main__":
    args = sys.argv[1:]
    subagents = "--subagents" in args
    paths = [a for a in args if a != "--subagents"]
    out = Path(paths[0]) if paths else (SUBAGENTS_OUT if subagents else OUT)
    asyncio.run(record_subagents(out) if subagents else record(out))
