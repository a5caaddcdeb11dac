"""Checkpoints per turn: snapshots of the working tree in a shadow git repository, changes, revert.

The working tree is a temporary project with no git of its own; every change a turn makes is
made by another process (``sh``), as an agent writing files itself would. End to end, the demo
agent's turn waits on a permission while a file is written behind the client's back, and a
scripted v1 agent writes through the client (``fs/write_text_file``).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from acp_notebook import start_agent
from acp_notebook.client.checkpoints.checkpointer import Checkpointer
from acp_notebook.client.checkpoints.shadow_git import CACHE_ENV
from acp_notebook.protocol.checkpoint import Limits, NoCheckpoint
from acp_notebook.protocol.state import SessionState
from acp_notebook.protocol.turn import Turn

from .support import record_comms, until_async

DEMO = [sys.executable, "-m", "acp_notebook.demo_agent", "--speed", "0"]
TIMEOUT = 30


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch) -> Path:
    root = tmp_path / "cache"
    monkeypatch.setenv(CACHE_ENV, str(root))
    return root


@pytest.fixture
def project(tmp_path) -> Path:
    root = tmp_path / "proj"
    files = {"a.txt": "one\ntwo\n", "b.txt": "bee\n", "src/s.py": "x = 1\n", ".gitignore": "*.log\nbuild/\n"}
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def tree(root: Path) -> dict[str, str]:
    """Every file under ``root`` (relative path → text)."""
    return {str(p.relative_to(root)): p.read_text() for p in sorted(root.rglob("*")) if p.is_file()}


def sh(root: Path, script: str) -> None:
    """Change files from another process, as an agent writing by itself would."""
    subprocess.run(["sh", "-c", script], cwd=root, check=True)


async def turn_over(root: Path, script: str, limits: Limits | None = None) -> tuple[Checkpointer, Turn]:
    keeper = Checkpointer(SessionState(), str(root), "s1", lambda: False, limits)
    turn = Turn(ends_on_response=True)
    await keeper.begin(turn, 1, 0)
    sh(root, script)
    await keeper.end(turn)
    return keeper, turn


async def objects(keeper: Checkpointer) -> str:
    return (await keeper.repo.git("count-objects", "-v")).decode()


EDIT = "printf 'one\\nTWO\\n' > a.txt; rm b.txt; mkdir -p new/deep; echo c > new/deep/c.txt; echo l > x.log"


async def test_changes_list_what_another_process_did(project):
    _, turn = await turn_over(project, EDIT)
    assert turn.changes() == [
        {"path": "a.txt", "change": "modified", "revertible": True, "reason": None},
        {"path": "b.txt", "change": "deleted", "revertible": True, "reason": None},
        {"path": "new/deep/c.txt", "change": "added", "revertible": True, "reason": None},
    ]  # x.log is ignored by the project's .gitignore


async def test_revert_restores_exactly_and_preview_writes_nothing(project):
    before = tree(project)
    _, turn = await turn_over(project, EDIT)
    after = tree(project)
    preview = await turn.revert(preview=True)
    assert tree(project) == after
    assert preview.preview and preview.paths == ["a.txt", "b.txt", "new/deep/c.txt"] and not preview.refused
    assert "-TWO\n+two\n" in preview.patch and "+bee\n" in preview.patch and "-c\n" in preview.patch
    assert [f["operation"] for f in preview.files()] == ["modify", "add", "delete"]
    result = await turn.revert()
    assert not result.preview and result.paths == preview.paths
    assert tree(project) == {**before, "x.log": "l\n"}  # the ignored file was never the turn's
    assert not (project / "new").exists()  # the directories the turn made went with its file
    again = await turn.revert()
    assert again.restored == [] and again.refused == [] and again.unchanged == preview.paths


async def test_a_file_changed_after_the_turn_is_refused_unless_forced(project):
    _, turn = await turn_over(project, EDIT)
    sh(project, "echo mine > a.txt")
    result = await turn.revert()
    assert result.paths == ["b.txt", "new/deep/c.txt"]
    [refused] = result.refused
    assert refused["path"] == "a.txt" and refused["forceable"]
    assert refused["reason"] == "modified since the turn ended (by a later turn, you or another program)"
    assert (project / "a.txt").read_text() == "mine\n" and (project / "b.txt").read_text() == "bee\n"
    forced = await turn.revert(force=True)
    assert forced.paths == ["a.txt"] and (project / "a.txt").read_text() == "one\ntwo\n"


async def test_size_and_count_caps_are_reported_and_not_reverted(project):
    (project / "big.bin").write_bytes(b"0" * 200)
    limits = Limits(max_file_bytes=100, max_files=5)
    script = "echo 1 >> big.bin; echo z > zz1.txt; echo z > zz2.txt; echo q > a.txt"
    _, turn = await turn_over(project, script, limits)
    rows = {r["path"]: r for r in turn.changes()}
    assert rows["a.txt"]["revertible"] and rows["zz1.txt"]["revertible"]
    assert rows["big.bin"] == {
        "path": "big.bin", "change": "modified", "revertible": False,
        "reason": "larger than 100 bytes: not checkpointed",
    }  # fmt: skip
    assert rows["zz2.txt"]["reason"] == "over the cap of 5 files: not checkpointed"
    result = await turn.revert()
    assert {r["path"] for r in result.refused} == {"big.bin", "zz2.txt"}
    assert not any(r["forceable"] for r in result.refused)
    assert (project / "big.bin").stat().st_size == 202 and not (project / "zz1.txt").exists()


async def test_nothing_changed_writes_no_object(project):
    keeper, turn = await turn_over(project, "true")
    assert turn.changes() == []
    counted = await objects(keeper)
    first = turn.checkpoint.before.tree
    for _ in range(3):
        assert (await keeper.repo.snapshot()).tree == first
    assert await objects(keeper) == counted


async def test_shadow_repository_lives_outside_and_skips_the_projects_git(project, cache):
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    keeper, turn = await turn_over(project, "echo n > .git/newfile; echo new > n.txt")
    assert [r["path"] for r in turn.changes()] == ["n.txt"]
    assert keeper.repo.git_dir.is_relative_to(cache) and not keeper.repo.git_dir.is_relative_to(project)
    assert sorted(p.name for p in project.iterdir()) == [
        ".git",
        ".gitignore",
        "a.txt",
        "b.txt",
        "n.txt",
        "src",
    ]


async def test_a_git_failure_is_a_diagnostic_and_the_turn_has_no_checkpoint(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path / "nowhere"))
    state = SessionState()
    keeper = Checkpointer(state, str(tmp_path), "s1", lambda: False)
    turn = Turn(ends_on_response=True)
    await keeper.begin(turn, 1, 0)
    await keeper.end(turn)
    assert [d.code for d in state.diagnostics] == ["checkpoint-failed"]
    assert "no checkpoint for turn 1: FileNotFoundError" in state.diagnostics[0].message
    with pytest.raises(NoCheckpoint, match="turn 1 has no checkpoint: FileNotFoundError"):
        turn.changes()
    with pytest.raises(NoCheckpoint):
        await turn.revert()
    await keeper.begin(Turn(ends_on_response=True), 2, 0)
    assert len(state.diagnostics) == 1  # the same reason is said once


async def test_a_hanging_git_is_stopped_at_the_timeout(project, tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "git").write_text("#!/bin/sh\nexec sleep 30\n")
    (bin_dir / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    state = SessionState()
    keeper = Checkpointer(state, str(project), "s1", lambda: False, Limits(timeout=0.3))
    turn = Turn(ends_on_response=True)
    await asyncio.wait_for(keeper.begin(turn, 1, 0), 10)
    assert turn.checkpoint.error == "git init took longer than 0.3 s (stopped)"
    assert [d.code for d in state.diagnostics] == ["checkpoint-failed"]


async def test_revert_waits_for_the_session_to_be_idle(project):
    keeper = Checkpointer(SessionState(), str(project), "s1", lambda: True)
    turn = Turn(ends_on_response=True)
    await keeper.begin(turn, 1, 0)
    await keeper.end(turn)
    with pytest.raises(RuntimeError, match="a turn is running"):
        await turn.revert()
    assert (await turn.revert(preview=True)).restored == []


async def test_a_turn_without_checkpoints():
    with pytest.raises(NoCheckpoint, match="checkpoints=False"):
        Turn(ends_on_response=False).changes()


# -- end to end ----------------------------------------------------------------------------------
async def test_demo_turn_with_a_file_written_behind_the_clients_back(project):
    agent = await start_agent([*DEMO, "--scenario", "permission"])
    try:
        session = await agent.new_session(str(project))
        task = session.prompt_task("go")
        await until_async(lambda: session.pending_permissions, TIMEOUT, message="the permission request")
        sh(project, "echo agent > written.txt; echo X >> a.txt")
        session.pending_permissions[0].select("allow-once")
        assert await asyncio.wait_for(session.wait_turn(task), TIMEOUT) == "end_turn"
        turn = session.turns[-1]
        assert [(r["path"], r["change"]) for r in turn.changes()] == [
            ("a.txt", "modified"),
            ("written.txt", "added"),
        ]
        result = await turn.revert()
        assert result.paths == ["a.txt", "written.txt"] and not (project / "written.txt").exists()
        assert (project / "a.txt").read_text() == "one\ntwo\n"
        session.permission_handler = lambda request: "allow-once"
        assert await asyncio.wait_for(session.prompt("again"), TIMEOUT) == "end_turn"
        assert session.turns[-1].changes() == [] and len(session.turns) == 2
    finally:
        await agent.close()


async def test_a_turn_goes_on_when_git_is_missing(project, tmp_path, monkeypatch):
    agent = await start_agent([*DEMO, "--scenario", "echo"])
    try:
        session = await agent.new_session(str(project))
        monkeypatch.setenv("PATH", str(tmp_path / "nowhere"))
        assert await asyncio.wait_for(session.prompt("hi"), TIMEOUT) == "end_turn"
        assert [d.code for d in session.state.diagnostics] == ["checkpoint-failed"]
        with pytest.raises(NoCheckpoint, match="FileNotFoundError"):
            session.turns[-1].changes()
    finally:
        await agent.close()


async def test_demo_session_opened_without_checkpoints(project, cache):
    agent = await start_agent([*DEMO, "--scenario", "echo"])
    try:
        session = await agent.new_session(str(project), checkpoints=False)
        assert await asyncio.wait_for(session.prompt("hi"), TIMEOUT) == "end_turn"
        assert session.checkpoints is None and session.turns[-1].checkpoint is None
        assert not cache.exists()
    finally:
        await agent.close()


async def test_v1_write_through_the_client_is_a_change(project, tmp_path):
    target = str(project / "src" / "s.py")
    write = {"jsonrpc": "2.0", "id": "w1", "method": "fs/write_text_file"}
    write["params"] = {"sessionId": "S", "path": target, "content": "x = 2\n"}
    steps = [
        {"expect": "initialize", "reply": {"protocolVersion": 1, "agentCapabilities": {}}},
        {"expect": "session/new", "reply": {"sessionId": "S"}},
        {"expect": "session/prompt"},
        write,
        {"await_response": True},
        {"send": {"jsonrpc": "2.0", "id": 3, "result": {"stopReason": "end_turn"}}},  # the prompt
        {"expect": "never"},
    ]
    script = tmp_path / "script.json"
    script.write_text(json.dumps(steps))
    peer = Path(__file__).parent / "agents" / "scripted.py"
    log = tmp_path / "log.jsonl"
    agent = await start_agent([sys.executable, str(peer), str(script), str(log)], protocol_version=1)
    try:
        session = await agent.new_session(str(project))
        reason = await asyncio.wait_for(session.prompt("edit"), TIMEOUT)
        assert reason == "end_turn", log.read_text()
        assert session.turns[-1].changes() == [
            {"path": "src/s.py", "change": "modified", "revertible": True, "reason": None}
        ]
        assert (await session.turns[-1].revert()).paths == ["src/s.py"]
        assert (project / "src" / "s.py").read_text() == "x = 1\n"
    finally:
        await agent.close()


# -- the view's bar, kernel side (a recording comm, no browser) -----------------------------------
@pytest.fixture
def recording(monkeypatch):
    return record_comms(monkeypatch)


def sent(log, view, kind: str) -> list[dict]:
    from .test_widgets import patches

    return [m for m, _ in patches(log, view) if m.get("type") == kind]


async def permission_turn(session, project: Path, script: str, on_start=None, on_end=None):
    task = session.prompt_task("go", on_start=on_start, on_end=on_end)
    await until_async(lambda: session.pending_permissions, TIMEOUT, message="the permission request")
    sh(project, script)
    session.pending_permissions[0].select("allow-once")
    assert await asyncio.wait_for(session.wait_turn(task), TIMEOUT) == "end_turn"


async def test_view_bar_offers_its_turn_previews_and_reverts(recording, project):
    from acp_notebook.widgets import SessionView

    agent = await start_agent([*DEMO, "--scenario", "permission"])
    try:
        session = await agent.new_session(str(project))
        whole = SessionView(session)
        whole._handle_browser_msg({"type": "checkpoint_status"})
        assert sent(recording, whole, "checkpoint")[-1] == {"type": "checkpoint", "turn": None, "busy": False}
        cells = []
        start = lambda: cells.append(SessionView(session, since=len(session.state.timeline)))  # noqa: E731
        end = lambda: cells[-1].stop_following()  # noqa: E731 - as a %%acp cell's view does
        await permission_turn(session, project, "echo one > one.txt", start, end)
        cell = cells[0]
        cell._handle_browser_msg({"type": "checkpoint_status"})
        status = sent(recording, cell, "checkpoint")[-1]
        assert (status["turn"], status["scope"], status["state"], status["count"]) == (1, "turn", "ready", 1)
        assert status["files"] == [{"path": "one.txt", "change": "added", "revertible": True, "reason": None}]
        await permission_turn(session, project, "echo two > two.txt", start, end)
        pushed = sent(recording, whole, "checkpoint")[-1]  # the session's view hears without asking
        assert (pushed["turn"], pushed["scope"], pushed["files"][0]["path"]) == (2, "last", "two.txt")
        assert sent(recording, cell, "checkpoint")[-1]["turn"] == 1  # the cell keeps its own turn
        cell._handle_browser_msg({"type": "checkpoint_preview", "turn": 1})
        preview = await until_async(lambda: sent(recording, cell, "checkpoint_preview"), TIMEOUT)
        assert preview[0]["restored"][0]["action"] == "delete" and "-one\n" in preview[0]["patch"]
        assert (project / "one.txt").exists()
        cell._handle_browser_msg({"type": "checkpoint_revert", "turn": 2})  # not this view's turn
        cell._handle_browser_msg({"type": "checkpoint_revert", "turn": 1, "force": False})
        replies = await until_async(lambda: sent(recording, cell, "checkpoint_reverted")[1:], TIMEOUT)
        assert sent(recording, cell, "checkpoint_reverted")[0]["error"] == "this view has no turn 2 to revert"
        assert [r["path"] for r in replies[0]["restored"]] == ["one.txt"] and not (
            project / "one.txt"
        ).exists()
        assert sent(recording, cell, "checkpoint")[-1]["reverted"] == {"restored": 1, "refused": 0}
        assert (project / "two.txt").exists()
    finally:
        await agent.close()
