"""Record ``acp_notebook/traces/claude_v1.jsonl``: one real claude-agent-acp turn, offline.

``python tests/real_agents/record_claude.py [OUT]`` runs the agent of ``test_claude.py`` against
the mock model server in a neutral project (``/tmp/acp-claude/project``, ``app.py``), over v1 (the
client forces ``protocolVersion: 1``; claude-agent-acp >= 0.95 would answer 2 to our default offer)
in Manual mode (its default, ``auto``, never asks): the model reads the file, edits it (the
permission is allowed once), runs ``printf`` with Bash and answers with text. The trace's header
names the command ``claude-agent-acp`` (not this machine's path); this checkout's path to the npm
launcher (in ``authMethods``) is cut; the script fails if the mock's key or this checkout's path
appears in the trace.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from acp_notebook.client.agent import Agent  # noqa: E402
from acp_notebook.client.transport import AgentProcess  # noqa: E402
from tests.real_agents import harness  # noqa: E402
from tests.real_agents.mock_anthropic import MockAnthropic, Script, text, tool_use  # noqa: E402
from tests.real_agents.test_claude import ORIGINAL, claude_env, read_then_edit  # noqa: E402

BASE = Path("/tmp/acp-claude")
OUT = ROOT / "acp_notebook" / "traces" / "claude_v1.jsonl"
PROMPT = "Update the greeting, then print it."


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
    asyncio.run(record(Path(sys.argv[1]) if len(sys.argv) > 1 else OUT))
