"""Agents by name: the bundled table, the user's file, ``register_agent``, install hints."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from acp_notebook import AgentStartError, register_agent, start_agent
from acp_notebook.client import agents

REAL_AGENTS = Path(__file__).parent / "real_agents"
PINNED = json.loads((REAL_AGENTS / "package.json").read_text())["dependencies"]


def test_npm_agents_run_the_version_ci_tested():
    """``claude``/``codex`` run exactly the package versions the real-agent tests pin, lock included."""
    lock = json.loads((REAL_AGENTS / "package-lock.json").read_text())["packages"]
    npm = {n: a for n, a in agents.known_agents().items() if a.npm}
    assert {"claude", "codex"} <= set(npm)
    for name, entry in npm.items():
        assert PINNED.get(entry.npm) == entry.version, f"{name}: agents.json and package.json disagree"
        assert lock[f"node_modules/{entry.npm}"]["version"] == entry.version, f"{name}: lock is stale"
        assert "{package}" in entry.command


def test_name_at_version_runs_another_version_of_the_same_package(monkeypatch):
    monkeypatch.setattr(agents.shutil, "which", lambda program: f"/usr/bin/{program}")
    argv, entry = agents.resolve("claude@latest")
    assert argv == ["npx", "-y", "@agentclientprotocol/claude-agent-acp@latest"]
    assert entry is not None and entry.version == "latest" and entry.name == "claude"
    assert agents.resolve("codex@2.5.1")[0][-1] == "@agentclientprotocol/codex-acp@2.5.1"
    with pytest.raises(AgentStartError, match="gemini is not run from an npm package"):
        agents.resolve("gemini@latest")
    with pytest.raises(AgentStartError, match="a version is `latest`"):
        agents.resolve("claude@;rm")
    assert agents.resolve("nosuch@1")[0] == ["nosuch@1"], "an unknown name@x is a command"


def test_known_names_mean_their_table_entry(monkeypatch):
    monkeypatch.setattr(agents.shutil, "which", lambda program: f"/usr/bin/{program}")
    claude, codex = (PINNED[agents.known_agents()[n].npm] for n in ("claude", "codex"))
    assert agents.resolve("claude")[0] == ["npx", "-y", f"@agentclientprotocol/claude-agent-acp@{claude}"]
    assert agents.resolve(["codex"])[0] == ["npx", "-y", f"@agentclientprotocol/codex-acp@{codex}"]
    assert agents.resolve("gemini")[0] == ["gemini", "--acp"]
    assert agents.resolve("opencode")[0] == ["opencode", "acp"]
    assert agents.resolve("goose")[0] == ["goose", "acp"]
    assert agents.resolve("claude --help")[0] == ["claude", "--help"], "anything else is a command"


def test_a_missing_program_says_what_to_install(monkeypatch):
    monkeypatch.setenv("PATH", "")
    with pytest.raises(AgentStartError, match=r"`npx` was not found: Claude .* needs Node.js"):
        agents.resolve("claude")
    with pytest.raises(AgentStartError, match=r"`no-such-agent-xyz` was not found \(is it installed"):
        agents.resolve("no-such-agent-xyz --acp")


async def test_start_agent_reports_a_missing_program_in_one_line(monkeypatch):
    monkeypatch.setenv("PATH", "")
    with pytest.raises(AgentStartError) as err:
        await start_agent("gemini")
    assert str(err.value).splitlines() == [
        "could not start agent: `gemini` was not found: Gemini CLI needs the Gemini CLI: "
        "npm install -g @google/gemini-cli"
    ]


def test_users_add_their_own_names(monkeypatch, tmp_path):
    table = tmp_path / "agents.json"
    table.write_text(json.dumps({"mine": {"command": "/opt/mine/agent --acp", "title": "Mine"}}))
    monkeypatch.setenv("ACP_NOTEBOOK_AGENTS", str(table))
    assert agents.resolve("mine")[0] == ["/opt/mine/agent", "--acp"]
    monkeypatch.setattr(agents, "_registered", {})
    register_agent("demo2", ["/usr/bin/env", "python3", "-m", "acp_notebook.demo_agent"])
    assert agents.resolve("demo2")[0][:2] == ["/usr/bin/env", "python3"]
    assert {"claude", "mine", "demo2"} <= set(agents.known_agents())


def test_a_broken_user_table_is_a_clear_error(monkeypatch, tmp_path):
    table = tmp_path / "agents.json"
    table.write_text("{not json")
    monkeypatch.setenv("ACP_NOTEBOOK_AGENTS", str(table))
    with pytest.raises(AgentStartError, match="not readable JSON"):
        agents.resolve("claude")


async def test_a_known_stderr_line_gives_one_hint(tmp_path):
    from .support import INIT_V1, NEW, Peer, until_async

    panic = "thread 'main' panicked: bubblewrap is unavailable: no system bwrap was found on PATH"
    steps = [INIT_V1, NEW, {"stderr": panic}, {"stderr": panic}, {"stderr": "done"}]
    peer = Peer(tmp_path, steps)
    agent = await start_agent(peer.command)
    await agent.new_session(str(tmp_path))
    await until_async(lambda: "done" in agent.stderr_tail(), timeout=10)
    hints = [d for d in agent.diagnostics if d.code == "agent-hint"]  # (sessions opened after it miss it)
    assert len(hints) == 1 and 'sandbox_mode = "danger-full-access"' in hints[0].message
    await agent.close()
