"""Recorded traces shipped with the package (README "Record and replay").

``demo_v2.jsonl`` and ``demo_v1.jsonl``: the demo agent's default scenario in each protocol
version, with its permission allowed once; ``demo_cancel_v2.jsonl``: a v2 turn cancelled while
its slow command runs; ``claude_v1.jsonl``: one turn of claude-agent-acp
against the real-agent tests' mock model server (read, edit with permission, a Bash ``printf``,
text); ``claude_subagents_v2.jsonl``: claude-agent-acp over v2 running two ``Agent`` tool calls as
subagent sessions — a foreground child whose Bash asks permission under its own ``sessionId``, and a
background child that asks after the parent's turn ended, then the agent's own task-notification
turn. Regenerate the demo ones with ``python tests/record_demo.py``, the Claude ones with
``python tests/real_agents/record_claude.py [--subagents]`` (needs node and the test's npm packages).
"""

from __future__ import annotations

import os
from pathlib import Path

FOLDER = Path(__file__).parent
NAMES = (
    "demo_v2.jsonl",
    "demo_v1.jsonl",
    "demo_cancel_v2.jsonl",
    "claude_v1.jsonl",
    "claude_subagents_v2.jsonl",
)


def path(name: str) -> Path:
    """The path of a shipped trace, by file name."""
    return FOLDER / name


def resolve(given: str | os.PathLike) -> Path:
    """``given`` if it exists, else the shipped trace of that bare file name (else ``given``)."""
    file = Path(given)
    if not file.exists() and file.parent == Path(".") and (FOLDER / file.name).exists():
        return FOLDER / file.name
    return file
