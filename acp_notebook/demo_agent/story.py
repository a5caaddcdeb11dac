"""The default scenario: one story, written once against the emitter interface."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from .data import (
    ALLOW_ALWAYS,
    ALLOW_OPTION_IDS,
    APP_NEW,
    APP_OLD,
    PYPROJECT_TEXT,
    SEARCH_HITS,
    UTIL_NEW,
    git_patch,
)
from .emitter import FileChange, diff_item, text_item

PLAN_STEPS = [
    ("Read the project configuration", "high"),
    ("Fix the average() bug in src/app.py", "high"),
    ("Run the test suite", "medium"),
    ("Summarise the results", "low"),
]
FETCH_URL = "https://docs.invalid/api"
THINK_TITLE = "Check <img src=x onerror=alert(1)> is shown as text"


class Plan:
    """The story's plan; every change re-sends all entries."""

    def __init__(self, em: Any) -> None:
        self.em, self.plan_id = em, em.sfx("plan_1")
        self.status = ["pending"] * len(PLAN_STEPS)

    def set(self, index: int, status: str) -> None:
        """Change one entry's status and send the whole plan."""
        self.status[index] = status
        entries = [(c, p, s) for (c, p), s in zip(PLAN_STEPS, self.status, strict=True)]
        self.em.plan(self.plan_id, entries)

    def advance(self, index: int) -> None:
        """Complete entry `index` and start the next one."""
        self.status[index] = "completed"
        self.set(index + 1, "in_progress")


async def play(em: Any) -> None:
    """Play the whole default story."""
    await em.stream(
        "agent_thought",
        [
            "The user wants the bug fixed. ",
            "Read the config first, ",
            "then patch `average()` and run the tests.",
        ],
        0.15,
    )
    await em.stream(
        "agent_message", ["I'll look at ", "the project, ", "**fix the ", "bug** and ", "run the tests."]
    )
    plan = Plan(em)
    plan.set(0, "in_progress")
    await read_config(em)
    plan.advance(0)
    edited = await edit_files(em)
    plan.advance(1)
    tests = await run_tests(em)
    plan.advance(2)
    await search_todos(em)
    await index_project(em)
    await fetch_docs(em)
    await check_title(em)
    em.usage(53_000, 200_000)
    em.info("Demo session")
    em.notice("info", "Offline demo", "This agent has no model and no network; it plays a script.")
    await em.stream("agent_message", summary(edited, tests))
    plan.set(3, "completed")


async def permit(em: Any, key: str, ask: Callable[[], Awaitable[str | None]]) -> str | None:
    """Ask unless the user chose "Always allow" for `key` earlier in this session."""
    if key in em.session.always:
        return ALLOW_ALWAYS
    option = await ask()
    if option == ALLOW_ALWAYS:
        em.session.always.add(key)
    return option


async def read_config(em: Any) -> None:
    """Step 3: read pyproject.toml (pending → in_progress → completed)."""
    call_id, path = em.sfx("call_read"), em.path("pyproject.toml")
    em.tool(
        call_id,
        title="Read pyproject.toml",
        kind="read",
        status="pending",
        locations=[{"path": path, "line": 1}],
        raw_input={"path": path},
    )
    await em.pause(0.3)
    em.tool(call_id, status="in_progress")
    await em.pause(0.4)
    raw = {"path": path, "lines": PYPROJECT_TEXT.count("\n"), "bytes": len(PYPROJECT_TEXT)}
    em.tool(call_id, status="completed", content=[text_item(PYPROJECT_TEXT)], raw_output=raw)


def changes(em: Any) -> list[FileChange]:
    """The four files the edit touches."""
    return [
        FileChange(
            "modify", em.path("src/app.py"), mime_type="text/x-python", old_text=APP_OLD, new_text=APP_NEW
        ),
        FileChange("add", em.path("src/util.py"), mime_type="text/x-python", new_text=UTIL_NEW),
        FileChange("modify", em.path("assets/logo.png"), file_type="binary", mime_type="image/png"),
        FileChange(
            "move", em.path("docs/new.md"), old_path=em.path("docs/old.md"), mime_type="text/markdown"
        ),
    ]


async def edit_files(em: Any) -> bool:
    """Step 4: an edit that needs permission; True if it was applied."""
    call_id = em.sfx("call_edit")
    app, util = em.path("src/app.py"), em.path("src/util.py")
    em.tool(
        call_id,
        title="Edit src/app.py, add src/util.py",
        kind="edit",
        status="pending",
        locations=[{"path": app, "line": 13}, {"path": util, "line": 1}],
        raw_input={"files": [c.path for c in changes(em)]},
    )
    description = (
        "Fix average() in src/app.py, add src/util.py, update assets/logo.png "
        "and rename docs/old.md to docs/new.md."
    )
    option = await permit(em, "edit", lambda: em.ask_tool(call_id, "Apply edits to 4 files?", description))
    if option not in ALLOW_OPTION_IDS:
        em.tool(call_id, status="failed", content=[text_item("Edit rejected by the user")])
        return False
    em.tool(call_id, status="in_progress")
    await em.pause(0.5)
    em.tool(call_id, status="completed", content=[diff_item(changes(em), git_patch(em.cwd))])
    return True


async def run_tests(em: Any) -> str:
    """Step 5: a command that needs permission: 'passed', 'failed', 'cancelled' or 'rejected'."""
    call_id, terminal_id, title = em.sfx("call_test"), em.sfx("term_001"), "Run pytest -q"
    description = f"The agent wants to run `pytest -q` in {em.cwd}."
    option = await permit(
        em, "command", lambda: em.ask_command(call_id, terminal_id, "Run the test suite?", description, title)
    )
    if option not in ALLOW_OPTION_IDS:
        note = text_item("Command rejected by the user; the tests were not run")
        em.tool(call_id, title=title, kind="execute", status="failed", content=[note])
        return "rejected"
    return await em.run_command(call_id, terminal_id, title)


async def search_todos(em: Any) -> None:
    """Step 6: content streamed with chunks, then replaced by one summary item."""
    call_id = em.sfx("call_search")
    em.tool(
        call_id,
        title="Search for TODO",
        kind="search",
        status="in_progress",
        raw_input={"pattern": "TODO", "path": em.cwd},
    )
    for number, hit in enumerate(SEARCH_HITS, start=1):
        await em.pause(0.3)
        meta = {"acpNotebookDemo": {"match": number}} if number == 2 else None
        em.tool_chunk(call_id, text_item(hit), meta)
    await em.pause(0.2)
    summary_item = text_item(f"Found {len(SEARCH_HITS)} TODOs in {len(SEARCH_HITS)} files.")
    em.tool(call_id, status="completed", content=[summary_item], raw_output={"matches": len(SEARCH_HITS)})


async def index_project(em: Any) -> None:
    """Step 7: a custom kind, a custom status and a custom content type."""
    call_id, chart = em.sfx("call_index"), {"type": "_chart", "series": [1, 2, 3]}
    em.tool(
        call_id,
        title="Index the project",
        kind="_index",
        status="_indexing",
        content=[text_item("Indexing 4 files…"), chart],
        raw_input={"path": em.cwd},
    )
    await em.pause(0.6)
    em.tool(call_id, status="completed", content=[text_item("Indexed 4 files."), chart])


async def fetch_docs(em: Any) -> None:
    """Step 8: a tool call that fails."""
    call_id = em.sfx("call_fetch")
    em.tool(call_id, title=f"Fetch {FETCH_URL}", kind="fetch", status="pending", raw_input={"url": FETCH_URL})
    await em.pause(0.2)
    em.tool(call_id, status="in_progress")
    await em.pause(0.3)
    em.tool(
        call_id,
        status="failed",
        content=[text_item("Network is disabled in the demo")],
        raw_output={"error": "network disabled: offline demo agent"},
    )


async def check_title(em: Any) -> None:
    """Step 9: a title a view must escape, not render."""
    call_id = em.sfx("call_think")
    em.tool(call_id, title=THINK_TITLE, kind="think", status="in_progress")
    await em.pause(0.3)
    note = text_item("Titles are data, not markup: <b>this</b> must stay literal.")
    em.tool(call_id, status="completed", content=[note])


def summary(edited: bool, tests: str) -> list[str]:
    """Step 11: the closing message, as chunks."""
    edit = (
        "I fixed `average()` in `src/app.py` and added `src/util.py`. "
        if edited
        else "You rejected the edit, so I left the files unchanged. "
    )
    test = {
        "passed": "The tests pass (**3 passed**). ",
        "failed": "The test run failed. ",
        "cancelled": "The test run was stopped before it finished. ",
    }.get(tests, "You declined the test run, so the tests were not run. ")
    return [
        "Done. ",
        edit,
        test,
        "I could not fetch the API docs: ",
        "network access is disabled in this demo.",
    ]
