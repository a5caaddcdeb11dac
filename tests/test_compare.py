"""Several agents on one prompt: the copies (``workspace``), ``acp_notebook.compare`` with
demo agents and the real Claude agent against its scripted mock, the table, and ``%%acp --agents``."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest

import acp_notebook
from acp_notebook.comparison.entrants import ROWS, Entrant, entrants
from acp_notebook.comparison.workspace import changes, diff_text, make_copy, remove_copy
from tests import test_magic
from tests.real_agents import harness
from tests.real_agents.mock_anthropic import MockAnthropic, Script, text, tool_use
from tests.real_agents.test_claude import claude_env
from tests.support import until_async

DEMO = [sys.executable, "-m", "acp_notebook.demo_agent", "--speed", "0"]
TURN = 90  # s: a bound for a comparison's start and prompt (Claude takes a few seconds)
NOTES_COMMAND = "printf 'claude was here\\n' > NOTES.md"


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


def project(root: Path, repo: bool) -> Path:
    """A small tree: app.py, src/util.py, an ignored build/ and .gitignore (committed when ``repo``)."""
    root.mkdir(parents=True)
    (root / "app.py").write_text("a = 1\nb = 2\n")
    (root / "src").mkdir()
    (root / "src" / "util.py").write_text("def f():\n    return 1\n")
    (root / ".gitignore").write_text("build/\n*.log\n")
    (root / "build").mkdir()
    (root / "build" / "out.bin").write_bytes(b"\0" * 10)
    (root / "run.log").write_text("noise\n")
    if repo:
        git(root, "init", "-q")
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", "init")
    return root


# -- the copies ------------------------------------------------------------------------------------
def test_a_plain_tree_is_copied_without_what_gitignore_names(tmp_path):
    source = project(tmp_path / "src", repo=False)
    one, two = make_copy(source, tmp_path / "one"), make_copy(source, tmp_path / "two")
    assert (one.kind, one.path, one.commit) == ("copy", tmp_path / "one", None)
    assert sorted(p.relative_to(one.path).as_posix() for p in one.path.rglob("*") if p.is_file()) == [
        ".gitignore",
        "app.py",
        "src/util.py",
    ]
    (one.path / "app.py").write_text("a = 10\nb = 2\nc = 3\n")
    (one.path / "new.txt").write_text("x\ny\n")
    (one.path / "src" / "util.py").unlink()
    assert (source / "app.py").read_text() == "a = 1\nb = 2\n" and (
        two.path / "app.py"
    ).read_text() == "a = 1\nb = 2\n"
    assert not (two.path / "new.txt").exists() and (two.path / "src" / "util.py").exists()
    found = changes(one)
    assert (found.added, found.modified, found.deleted) == (("new.txt",), ("app.py",), ("src/util.py",))
    assert (found.lines_added, found.lines_removed) == (2 + 2, 1 + 2)
    assert found.files == ["app.py", "new.txt", "src/util.py"]
    assert changes(two).files == []
    assert "-a = 1\n+a = 10\n" in diff_text(one) and "+++ b/new.txt" in diff_text(one)
    remove_copy(one)
    assert not one.path.exists() and source.exists()


def test_worktrees_made_and_removed_at_once_do_not_race(tmp_path):
    """Each compared agent's copy is made on its own thread: git's worktree bookkeeping must not race
    (``fatal: failed to read .git/worktrees/…/commondir`` failed one run in five)."""
    from concurrent.futures import ThreadPoolExecutor

    source = project(tmp_path / "repo", repo=True)
    with ThreadPoolExecutor(8) as pool:
        for round_ in range(6):
            places = [tmp_path / f"wt{round_}-{i}" for i in range(8)]
            copies = list(pool.map(lambda place: make_copy(source, place), places))
            assert [c.kind for c in copies] == ["worktree"] * 8
            list(pool.map(remove_copy, copies))
    assert git(source, "worktree", "list").count("\n") == 1, "every worktree unregistered"


def test_a_repository_gets_a_worktree_with_its_uncommitted_changes(tmp_path):
    source = project(tmp_path / "repo", repo=True)
    (source / "app.py").write_text("a = 1\nb = 3\n")  # modified, not committed
    (source / "notes.md").write_text("todo\n")  # untracked
    copy = make_copy(source / "src", tmp_path / "wt")  # a subdirectory: the agent works there
    head = git(source, "rev-parse", "HEAD").strip()
    assert (copy.kind, copy.commit, copy.root, copy.path) == (
        "worktree",
        head,
        tmp_path / "wt",
        tmp_path / "wt" / "src",
    )
    assert (copy.root / "app.py").read_text() == "a = 1\nb = 3\n"
    assert (copy.root / "notes.md").read_text() == "todo\n"
    assert not (copy.root / "build").exists() and not (copy.root / "run.log").exists()
    assert changes(copy).files == [], "the copy starts equal to the original, uncommitted changes included"
    (copy.path / "util.py").write_text("def f():\n    return 2\n")
    assert (source / "src" / "util.py").read_text() == "def f():\n    return 1\n"
    found = changes(copy)
    assert (found.modified, found.lines_added, found.lines_removed) == (("src/util.py",), 1, 1)
    assert str(copy.root) in git(source, "worktree", "list")
    remove_copy(copy)
    assert str(copy.root) not in git(source, "worktree", "list") and not copy.root.exists()
    assert git(source, "status", "--porcelain") == " M app.py\n?? notes.md\n", "the original is untouched"


def test_a_repository_without_a_commit_is_copied(tmp_path):
    source = tmp_path / "fresh"
    source.mkdir()
    git(source, "init", "-q")
    (source / "a.txt").write_text("a\n")
    copy = make_copy(source, tmp_path / "c")
    assert copy.kind == "copy" and (copy.path / "a.txt").exists() and not (copy.path / ".git").exists()


def test_entrants_from_names_commands_dicts_and_mappings():
    assert entrants("demo, claude") == [Entrant("demo", "demo"), Entrant("claude", "claude")]
    made = entrants(["demo", DEMO, {"label": "mine", "command": "demo", "env": {"A": "1"}, "protocol": 1}])
    assert [(e.label, e.protocol, dict(e.env)) for e in made] == [
        ("demo", 2, {}),
        ("demo-2", 2, {}),
        ("mine", 1, {"A": "1"}),
    ]
    assert [e.label for e in entrants({"x": "demo", "y": DEMO})] == ["x", "y"]
    with pytest.raises(ValueError, match="at least one agent"):
        entrants([])
    with pytest.raises(ValueError, match="command, label, env, protocol"):
        entrants([{"label": "no command"}])
    with pytest.raises(TypeError, match="an agent is a name, a command or a dict"):
        entrants([42])


# -- compare: demo agents and the real Claude agent -------------------------------------------------
@pytest.fixture
def claude_mock():
    harness.installed()
    script = Script()
    script.prompt(
        "[cmp]", text("Writing the notes."), tool_use("toolu_cmp_bash", "Bash", {"command": NOTES_COMMAND})
    )
    script.after("toolu_cmp_bash", text("Wrote NOTES.md."))
    with MockAnthropic(script) as mock:
        yield mock


async def test_two_demo_agents_and_claude_side_by_side(tmp_path, claude_mock, monkeypatch):
    monkeypatch.setenv("ACP_DEMO_SPEED", "0")
    source = project(tmp_path / "repo", repo=True)
    home = tmp_path / "home"
    claude = {
        "label": "claude",
        "command": harness.COMMANDS["claude"],
        "env": claude_env(home, claude_mock.url),
    }
    prompt = "[cmp] echo: write the notes\n```sh\nprintf 'notes'\n```"
    comparison = await asyncio.wait_for(
        acp_notebook.compare(["demo", DEMO, claude], prompt, cwd=source, permissions="allow-once"), TURN
    )
    try:
        assert comparison.labels == ["demo", "demo-2", "claude"]
        copies = comparison.copies
        assert len({*copies.values()}) == 3 and all(
            p.is_dir() and source not in p.parents for p in copies.values()
        )
        assert all(comparison[label].copy.kind == "worktree" for label in comparison.labels)
        # claude's write landed in its copy only
        assert (copies["claude"] / "NOTES.md").read_text() == "claude was here\n"
        assert not (source / "NOTES.md").exists() and not (copies["demo"] / "NOTES.md").exists()
        assert claude_mock.script.unused() == [] and claude_mock.unmatched == []
        rows = {r["agent"]: r for r in comparison.records()}
        assert list(rows["claude"]) == list(ROWS)
        for label in ("demo", "demo-2"):
            row = rows[label]
            assert (row["stop_reason"], row["tool_calls"], row["files_touched"], row["error"]) == (
                "end_turn",
                0,
                0,
                None,
            )
            assert (row["files"], row["lines_added"], row["lines_removed"]) == ([], 0, 0)
            assert row["copy"] == str(copies[label]) and row["duration"] > 0
            assert comparison.sessions[label].code_blocks()[-1].code == "printf 'notes'"
        row = rows["claude"]
        assert (row["stop_reason"], row["error"], row["tool_calls"]) == ("end_turn", None, 1)
        assert (row["files_touched"], row["files"], row["lines_added"], row["lines_removed"]) == (
            1,
            ["NOTES.md"],
            1,
            0,
        )
        usage = comparison.sessions["claude"].state.usage or {}
        assert (row["tokens_used"], row["context_size"]) == (usage.get("used"), usage.get("size"))
        (call,) = comparison.sessions["claude"].state.tool_calls.values()
        assert call.status == "completed" and call.kind == "execute"
        assert "+claude was here" in comparison.diff("claude") and comparison.diff("demo") == ""
        frame = comparison.frame()
        assert list(frame.index) == ["demo", "demo-2", "claude"] and list(frame.columns) == list(ROWS[1:])
        assert str(frame["tool_calls"].dtype) == "Int64" and str(frame["duration"].dtype) == "float64"
        assert frame.loc["claude", "lines_added"] == 1 and frame.loc["demo", "files_touched"] == 0
    finally:
        await comparison.close()
    assert all(not p.exists() for p in copies.values()) and not comparison.home.exists()
    assert str(copies["claude"]) not in git(source, "worktree", "list")
    assert all(e.agent.closed for e in comparison.entries)
    await until_async(
        lambda: not harness.processes_with_env("HOME", str(home)), 15, message="claude's processes"
    )


async def test_an_agent_that_cannot_start_gets_an_error_row_and_the_rest_run(tmp_path, monkeypatch):
    monkeypatch.setenv("ACP_DEMO_SPEED", "0")
    source = project(tmp_path / "plain", repo=False)
    comparison = await asyncio.wait_for(
        acp_notebook.compare(["no-such-agent-here", "demo"], "echo hi", cwd=source, keep=True), TURN
    )
    try:
        broken, demo = comparison.records()
        assert (
            broken["error"]
            == "could not start agent: `no-such-agent-here` was not found (is it installed and on PATH?)"
        )
        assert (broken["stop_reason"], broken["tool_calls"], broken["duration"]) == (None, None, None)
        assert (demo["error"], demo["stop_reason"]) == (None, "end_turn")
        assert list(comparison.sessions) == ["demo"]
        assert comparison.sessions["demo"].state.messages and comparison["demo"].copy.kind == "copy"
    finally:
        await comparison.close()
    assert comparison["demo"].path.exists(), "keep=True keeps the copies"
    remove_copy(comparison["demo"].copy)


async def test_a_turn_over_its_timeout_is_cancelled(tmp_path, monkeypatch):
    monkeypatch.setenv("ACP_DEMO_SPEED", "0")
    source = project(tmp_path / "plain", repo=False)
    comparison = await acp_notebook.compare(["demo"], cwd=source)
    try:
        reasons = await asyncio.wait_for(comparison.prompt("run a slow command", timeout=0.5), TURN)
        assert reasons == {"demo": "cancelled"}
        (row,) = comparison.records()
        assert row["error"] == "timed out after 0.5 s (turn cancelled)" and row["duration"] >= 0.5
        assert comparison.sessions["demo"].state.run_state == "idle"
        with pytest.raises(ValueError, match="non-empty prompt"):
            await comparison.prompt("  ")
    finally:
        await comparison.close()
    with pytest.raises(RuntimeError, match="closed"):
        await comparison.prompt("again")


async def test_compare_checks_its_arguments(tmp_path):
    with pytest.raises(NotADirectoryError, match="is not a directory"):
        await acp_notebook.compare(["demo"], "hi", cwd=tmp_path / "missing")
    with pytest.raises(TypeError, match="permission policy"):
        await acp_notebook.compare(["demo"], "hi", cwd=tmp_path, permissions=42)


# -- %%acp --agents ---------------------------------------------------------------------------------
ip = test_magic.ip  # the IPython shell with the extension loaded (one per module)


def test_the_agents_option_compares_in_a_grid(ip, capsys, tmp_path, monkeypatch):
    from acp_notebook.magic import comparing

    shown: list = []
    monkeypatch.setattr(comparing, "display", shown.append)
    source = project(tmp_path / "p", repo=False)
    capsys.readouterr()
    result = ip.run_cell(f"%%acp --agents demo,demo --cwd {source} --wait --name race\necho hello")
    out = capsys.readouterr().out
    assert result.success, result.error_in_exec
    comparison = ip.user_ns["race"]
    assert isinstance(comparison, acp_notebook.Comparison) and comparison.labels == ["demo", "demo-2"]
    assert f"Comparing demo, demo-2 in copies of {source}; this is race" in out
    assert "turns ended: demo (end_turn), demo-2 (end_turn)" in out
    (grid,) = shown
    assert type(grid).__name__ == "CompareView" and list(grid.views) == ["demo", "demo-2"]
    assert [v.session for v in grid.views.values()] == list(comparison.sessions.values())
    headers = [h.value for h in grid.headers.values()]
    assert all("data-state='finished'" in h and "end_turn" in h for h in headers), headers
    result = ip.run_cell(f"%%acp --agents demo --cwd {source} --name race\necho again")
    assert result.success and comparison.closed, "running the cell again closes the comparison the name held"
    assert "Closed the previous comparison race." in capsys.readouterr().out
    ip.run_cell("await race.close()")
    result = ip.run_cell("%%acp --agents , \necho x")
    assert not result.success


def test_the_agents_option_with_an_empty_prompt_fails_clearly(ip, capsys):
    result = ip.run_cell("%%acp --agents demo\n   \n")
    out, err = capsys.readouterr()
    assert not result.success and "the cell has no prompt" in out + err


async def test_copies_nobody_closed_are_removed_at_exit(tmp_path, monkeypatch):
    from acp_notebook.comparison import core as comparison_module

    monkeypatch.setenv("ACP_DEMO_SPEED", "0")
    source = project(tmp_path / "repo", repo=True)
    comparison = await acp_notebook.compare(["demo"], cwd=source)
    copy = comparison["demo"].copy
    assert copy.root.is_dir() and str(copy.root) in git(source, "worktree", "list")
    comparison_module._remove_left_copies()
    assert not copy.root.exists() and not comparison.home.exists()
    assert str(copy.root) not in git(source, "worktree", "list")
    await comparison.close()
