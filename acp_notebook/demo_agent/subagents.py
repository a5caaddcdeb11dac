"""The subagent scenario: the parent hands work to child sessions (ACP v2 only; see `children`).

One turn of the parent session, then the background child's own life after it:

1. The parent announces **the reviewer** (foreground, cancellable) and gives it its task. The
   reviewer reads `src/app.py`, asks permission (under its own `sessionId`; the parent reports
   `requires_action` meanwhile) and edits it with a diff, then runs **the linter**, a child of its
   own (no `capabilities`: the client may not cancel it; its `cwd` is `src/`), which runs
   `ruff check .` in a terminal and reports back. The reviewer reports to the parent.
2. The parent announces **the changelog writer** (background, cancellable): the parent's turn ends
   `idle end_turn` with the writer in `background`. The writer reads `CHANGELOG.md`, waits for that
   turn to end, then asks permission to edit it — a request that arrives with no turn running.
3. When the writer ends, the agent starts a turn of its own in the parent (`running` ... `idle`, no
   prompt), like Claude's task notification: the writer's report, then a message.

Cancelling the parent's turn stops the reviewer and its linter, never the writer; cancelling a child
(`session/cancel` with its id) stops that child only, and the parent goes on.
"""

from __future__ import annotations

from typing import Any

from .children import ChildEmitter, give_task, in_background, open_child, report, wait_for
from .data import ALLOW_OPTION_IDS, APP_NEW, APP_OLD, CHANGELOG_NEW, CHANGELOG_OLD, LINT_CHUNKS, LINT_COMMAND
from .emitter import FileChange, diff_item, text_item

V1_NOTE = [
    "Subagents are an ACP v2 feature (the unstable `subagent_update`): ",
    "this connection speaks v1, so I have no child sessions to show. ",
    "Start me over v2 (the default) to see them.",
]


async def play(em: Any) -> None:
    """The parent's turn (or, over v1, a note saying subagents need v2)."""
    if em.version < 2:
        await em.stream("agent_message", V1_NOTE)
        return
    await em.stream(
        "agent_message",
        [
            "I'll hand this to subagents: ",
            "a reviewer fixes `average()` ",
            "and a writer updates the changelog.",
        ],
    )
    reviewer = open_child(
        em, "reviewer", "Fix average()", "Reads src/app.py, fixes average() and has src/ linted", cancel=True
    )
    give_task(em, reviewer, "Fix the off-by-one in average() in src/app.py, then have src/ linted.")
    stop, said = await reviewer.run(review)
    em.check()
    await report(reviewer, em, said if stop == "end_turn" else ["I was cancelled before I finished."])
    writer = open_child(
        em, "writer", "Update CHANGELOG.md", "Adds the changelog entry, in the background", cancel=True,
        foreground=False,
    )  # fmt: skip
    give_task(em, writer, "Add an entry for the average() fix to CHANGELOG.md.")
    in_background(em, writer, write_changelog, notify)
    await em.stream(
        "agent_message",
        [
            "The reviewer is done. ",
            "The writer goes on in the background and will ask before it edits CHANGELOG.md; ",
            "I'll tell you when it has finished.",
        ],
    )


async def review(child: ChildEmitter) -> list[str]:
    """The reviewer: read, edit with permission (a diff), a linter of its own; its report."""
    await child.stream("agent_message", ["Reading `src/app.py`."])
    app = child.path("src/app.py")
    read_id, edit_id = child.sfx("call_review_read"), child.sfx("call_review_edit")
    child.tool(read_id, title="Read src/app.py", kind="read", status="in_progress", locations=[{"path": app}])
    await child.pause(0.2)
    child.tool(read_id, status="completed", content=[text_item(APP_OLD)])
    child.tool(edit_id, title="Edit src/app.py", kind="edit", status="pending", locations=[{"path": app}])
    option = await child.ask_tool(
        edit_id, "Let the reviewer edit src/app.py?", "Fix average() (drop the + 1)."
    )
    if option not in ALLOW_OPTION_IDS:
        child.tool(edit_id, status="failed", content=[text_item("Edit rejected by the user")])
        return ["You rejected the edit, ", "so `average()` is unchanged."]
    change = FileChange("modify", app, mime_type="text/x-python", old_text=APP_OLD, new_text=APP_NEW)
    child.tool(edit_id, status="completed", content=[diff_item([change], None)])
    linter = open_child(
        child,
        "lint",
        "Lint src/",
        "Runs ruff on src/ (it cannot be cancelled)",
        cancel=False,
        cwd=child.path("src"),
    )
    give_task(child, linter, "Run ruff on src/ and tell me what it finds.")
    stop, said = await linter.run(lint)
    child.check()
    await report(linter, child, said if stop == "end_turn" else ["The linter was stopped."])
    await child.stream("agent_message", ["Fixed `average()`; ", "the linter found nothing."])
    return ["Fixed `average()` in `src/app.py` ", "(you allowed the edit); ", "ruff: all checks passed."]


async def lint(child: ChildEmitter) -> list[str]:
    """The linter (a child of the reviewer): `ruff check .` in a terminal."""
    call_id, terminal_id = child.sfx("call_lint"), child.sfx("term_lint")
    child.start_terminal(call_id, terminal_id, "Run ruff check .", LINT_COMMAND)
    for chunk in LINT_CHUNKS:
        await child.pause(0.2)
        child.output(call_id, terminal_id, chunk)
    child.end_terminal(call_id, terminal_id, 0, None, "completed")
    await child.stream("agent_message", ["All checks passed."])
    return ["ruff check .: ", "all checks passed."]


async def write_changelog(child: ChildEmitter) -> list[str]:
    """The writer (background): read, wait for the parent's turn to end, then edit with permission."""
    path = child.path("CHANGELOG.md")
    read_id, edit_id = child.sfx("call_changelog_read"), child.sfx("call_changelog_edit")
    child.tool(
        read_id,
        title="Read CHANGELOG.md",
        kind="read",
        status="completed",
        content=[text_item(CHANGELOG_OLD)],
    )
    await wait_for(child, child.parent.ended)
    child.tool(edit_id, title="Edit CHANGELOG.md", kind="edit", status="pending", locations=[{"path": path}])
    option = await child.ask_tool(edit_id, "Let the writer edit CHANGELOG.md?", "Add the average() fix.")
    if option not in ALLOW_OPTION_IDS:
        child.tool(edit_id, status="failed", content=[text_item("Edit rejected by the user")])
        return ["You rejected the changelog edit."]
    change = FileChange(
        "modify", path, mime_type="text/markdown", old_text=CHANGELOG_OLD, new_text=CHANGELOG_NEW
    )
    child.tool(edit_id, status="completed", content=[diff_item([change], None)])
    await child.stream("agent_message", ["Added the entry under Unreleased."])
    return ["Added the `average()` fix ", "to CHANGELOG.md."]


def notify(writer: ChildEmitter, stop: str, said: list[str]) -> Any:
    """The turn the agent starts once the writer has ended: its report, then a message."""

    async def play_notification(em: Any) -> None:
        await report(writer, em, said if stop == "end_turn" else ["I was cancelled before I finished."])
        ending = "finished" if stop == "end_turn" else "was cancelled"
        await em.stream(
            "agent_message", [f"The changelog writer {ending}: ", "".join(said) or "nothing to add."]
        )

    return play_notification
