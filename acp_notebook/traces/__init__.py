"""Recorded traces shipped with the package (README "Record and replay").

``demo_v2.jsonl`` and ``demo_v1.jsonl``: the demo agent's default scenario in each protocol
version, with its permission allowed once; ``claude_v1.jsonl``: one turn of claude-agent-acp
against the real-agent tests' mock model server (read, edit with permission, a Bash ``printf``,
text). Regenerate the demo ones with ``python -m acp_notebook.traces.make``, the Claude one with
``python tests/real_agents/record_claude.py`` (needs node and the test's npm packages).
"""

from __future__ import annotations

from pathlib import Path

FOLDER = Path(__file__).parent
NAMES = ("demo_v2.jsonl", "demo_v1.jsonl", "claude_v1.jsonl")


def path(name: str) -> Path:
    """The path of a shipped trace, by file name."""
    return FOLDER / name
