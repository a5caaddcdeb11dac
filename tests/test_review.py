"""Writes held for review: hunks and merging (pure), the view's entry and messages, and the real
demo agent in v1 writing through a client with ``FilePolicy(review=True)``."""

from __future__ import annotations

import asyncio
import sys

import pytest

from acp_notebook import start_agent
from acp_notebook.client.host import REVIEW_CONFLICT, REVIEW_REJECTED, FilePolicy
from acp_notebook.protocol.review import (
    ACCEPTED,
    REJECTED,
    Review,
    ReviewClosed,
    compute_hunks,
    merge,
    split_lines,
)
from acp_notebook.protocol.state import SessionState
from acp_notebook.widgets import browser_inbox, viewmodel

from .support import until_async

DEMO = [sys.executable, "-m", "acp_notebook.demo_agent", "--speed", "0", "--scenario", "write"]
TIMEOUT = 30
NOTES = "TODO one\nkeep a\nkeep b\nkeep c\nkeep d\nTODO two\n"
FOOTER = "Reviewed by the demo agent.\n"


def decide(old: str, new: str, decisions: list[str]) -> str:
    hunks = compute_hunks(old, new)
    assert len(hunks) == len(decisions)
    for hunk, decision in zip(hunks, decisions, strict=True):
        hunk.decision = decision
    return merge(old, hunks)


# -- hunks and merging ------------------------------------------------------------------------
def test_split_lines_keeps_every_byte():
    for text in ("", "a", "a\n", "a\r\nb", "a\n\n\nb\r\n", "\n"):
        assert "".join(split_lines(text)) == text
    assert split_lines("a\r\nb") == ["a\r\n", "b"]


def test_hunks_of_a_modification_with_context():
    old = "a\nb\nc\nd\ne\nf\ng\nh\n"
    new = "A\nb\nc\nd\ne\nf\nG\nh\n"
    hunks = compute_hunks(old, new)
    assert [(h.old_start, h.old_lines, h.new_lines) for h in hunks] == [
        (0, ("a\n",), ("A\n",)),
        (6, ("g\n",), ("G\n",)),
    ]
    assert hunks[0].before == () and hunks[0].after == ("b\n", "c\n", "d\n")
    assert hunks[1].before == ("d\n", "e\n", "f\n") and hunks[1].after == ("h\n",)
    assert hunks[0].patch_lines() == ["@@ -1,4 +1,4 @@", "-a", "+A", " b", " c", " d"]
    assert hunks[1].header == "@@ -4,5 +4,5 @@"


@pytest.mark.parametrize(
    ("decisions", "expected"),
    [
        ([ACCEPTED, ACCEPTED], "A\nb\nc\nd\ne\nf\nG\nh\n"),
        ([ACCEPTED, REJECTED], "A\nb\nc\nd\ne\nf\ng\nh\n"),
        ([REJECTED, ACCEPTED], "a\nb\nc\nd\ne\nf\nG\nh\n"),
        ([REJECTED, REJECTED], "a\nb\nc\nd\ne\nf\ng\nh\n"),
    ],
)
def test_merge_takes_accepted_hunks_only(decisions, expected):
    assert decide("a\nb\nc\nd\ne\nf\ng\nh\n", "A\nb\nc\nd\ne\nf\nG\nh\n", decisions) == expected


def test_adds_and_deletes_at_both_edges():
    old, new = "b\nc\nd\ne\nf\ng\n", "top\nc\nd\ne\nf\ng\nend\n"  # line 1 replaced, line added at the end
    hunks = compute_hunks(old, new)
    assert [(h.old_lines, h.new_lines) for h in hunks] == [(("b\n",), ("top\n",)), ((), ("end\n",))]
    assert decide(old, new, [REJECTED, ACCEPTED]) == "b\nc\nd\ne\nf\ng\nend\n"
    old, new = "x\nb\nc\nd\ne\ny\n", "b\nc\nd\ne\n"  # first and last lines deleted
    assert [h.old_lines for h in compute_hunks(old, new)] == [("x\n",), ("y\n",)]
    assert decide(old, new, [ACCEPTED, REJECTED]) == "b\nc\nd\ne\ny\n"
    assert compute_hunks(old, new)[1].header == "@@ -3,4 +2,3 @@"


def test_no_trailing_newline_and_crlf_are_kept():
    old, new = "a\r\nb\r\nc\r\nd\r\ne\r\nf", "A\r\nb\r\nc\r\nd\r\ne\r\nf\r\ng"
    hunks = compute_hunks(old, new)
    assert [(h.old_lines, h.new_lines) for h in hunks] == [(("a\r\n",), ("A\r\n",)), (("f",), ("f\r\n", "g"))]
    assert decide(old, new, [ACCEPTED, REJECTED]) == "A\r\nb\r\nc\r\nd\r\ne\r\nf"
    assert decide(old, new, [REJECTED, ACCEPTED]) == "a\r\nb\r\nc\r\nd\r\ne\r\nf\r\ng"
    eof = "\\ No newline at end of file"
    assert hunks[1].patch_lines() == ["@@ -3,4 +3,5 @@", " c", " d", " e", "-f", eof, "+f", "+g", eof]


def test_review_decisions_and_completion():
    done = []
    review = Review("review_1", "/p/x.txt", "a\nb\nc\nd\ne\nf\ng\nh\n", "A\nb\nc\nd\ne\nf\nG\nh\n",
                    on_complete=done.append)  # fmt: skip
    assert review.pending and len(review.hunks) == 2
    with pytest.raises(ValueError, match="no hunk 5"):
        review.accept(5)
    with pytest.raises(ValueError, match="no hunk True"):
        review.accept(True)
    review.reject(review.hunks[1])
    assert done == [] and [h.decision for h in review.hunks] == [None, REJECTED]
    review.accept()  # the undecided rest
    assert done == [review] and review.merged() == "A\nb\nc\nd\ne\nf\ng\nh\n"
    review.finish("partial", "1 of 2")
    with pytest.raises(ReviewClosed, match="already partial"):
        review.accept(0)


def test_a_new_empty_file_is_one_hunk():
    review = Review("r", "/p/empty.txt", None, "")
    assert review.creates and len(review.hunks) == 1 and review.merged() == ""
    assert review.patch().startswith("--- /dev/null\n+++ b/p/empty.txt\n")


# -- the view ---------------------------------------------------------------------------------
def test_view_entry_and_browser_messages():
    state = SessionState()
    review = Review("review_1", "/p/x.txt", "a\nb\n", "A\nb\nc\n")
    index = state.record_review(review)
    review.on_change = lambda _r: state.file_write_changed(index)
    entry = viewmodel.build_entry(state, "file_write", index)
    assert entry["kind"] == "review" and entry["status"] == "pending" and entry["index"] == index
    assert [h["decision"] for h in entry["hunks"]] == [None, None]
    assert entry["hunks"][0]["patch"] == "--- a/p/x.txt\n+++ b/p/x.txt\n@@ -1,2 +1,2 @@\n-a\n+A\n b\n"

    class View:
        read_only = False

    view = View()
    view.state = state
    browser_inbox.dispatch(view, {"type": "review", "index": index, "decision": "reject", "hunk": 1})
    assert [h.decision for h in review.hunks] == [None, REJECTED]
    browser_inbox.dispatch(view, {"type": "review", "index": index, "decision": "maybe"})
    browser_inbox.dispatch(view, {"type": "review", "index": 7, "decision": "accept"})
    assert [d.code for d in state.diagnostics] == ["view-bad-message", "view-bad-message"]
    browser_inbox.dispatch(view, {"type": "review", "index": index, "decision": "accept", "hunk": None})
    assert [h.decision for h in review.hunks] == [ACCEPTED, REJECTED]
    entry = viewmodel.build_entry(state, "file_write", index)
    assert [h["decision"] for h in entry["hunks"]] == [ACCEPTED, REJECTED]


# -- the real demo agent, v1, writing through the client ----------------------------------------
async def demo(tmp_path, text: str | None = NOTES):
    if text is not None:
        (tmp_path / "notes.txt").write_bytes(text.encode())
    agent = await start_agent(DEMO, protocol_version=1)
    session = await agent.new_session(str(tmp_path), files=FilePolicy(review=True))
    return agent, session


async def held(session, task) -> Review:
    await until_async(lambda: session.pending_reviews or task.done(), TIMEOUT, message="a held write")
    assert not task.done(), "the turn ended without holding the write"
    return session.pending_reviews[0]


def said(session) -> str:
    return "".join(m.text for m in session.state.messages.values() if m.role == "agent")


async def test_accept_one_hunk_reject_another(tmp_path):
    agent, session = await demo(tmp_path)
    try:
        task = session.prompt_task("edit the notes")
        review = await held(session, task)
        assert [(h.old_lines, h.new_lines) for h in review.hunks] == [
            (("TODO one\n",), ("DONE one\n",)),
            (("TODO two\n",), ("DONE two\n", FOOTER)),
        ]
        assert (tmp_path / "notes.txt").read_bytes() == NOTES.encode()  # nothing written yet
        assert review.accept(0) == "pending" and not task.done()
        assert review.reject(1) == "partial"
        assert (tmp_path / "notes.txt").read_bytes() == NOTES.replace("TODO one", "DONE one").encode()
        assert await asyncio.wait_for(task, TIMEOUT) == "end_turn"
        assert said(session) == "Wrote notes.txt through the client."
        assert session.pending_reviews == [] and session.state.file_writes[0]["newText"] == (
            NOTES.replace("TODO one", "DONE one")
        )
    finally:
        await agent.close()


async def test_all_rejected_answers_an_error(tmp_path):
    agent, session = await demo(tmp_path)
    try:
        task = session.prompt_task("edit the notes")
        review = await held(session, task)
        assert review.reject() == "rejected"
        assert await asyncio.wait_for(task, TIMEOUT) == "end_turn"
        message = f"the user rejected the change to {tmp_path / 'notes.txt'}; the file was not written"
        assert (
            said(session) == f"The client refused the write to notes.txt: {message} (code {REVIEW_REJECTED})."
        )
        assert f"demo agent: fs/write_text_file error {REVIEW_REJECTED}: {message}" in agent.stderr_tail()
        assert (tmp_path / "notes.txt").read_bytes() == NOTES.encode()
    finally:
        await agent.close()


async def test_new_file_accepted_is_created(tmp_path):
    agent, session = await demo(tmp_path, text=None)
    try:
        task = session.prompt_task("write the notes")
        review = await held(session, task)
        assert review.creates and len(review.hunks) == 1
        assert review.accept() == "written"
        assert await asyncio.wait_for(task, TIMEOUT) == "end_turn"
        assert (tmp_path / "notes.txt").read_bytes() == FOOTER.encode()
    finally:
        await agent.close()


async def test_file_changed_on_disk_is_not_overwritten(tmp_path):
    agent, session = await demo(tmp_path)
    try:
        task = session.prompt_task("edit the notes")
        review = await held(session, task)
        (tmp_path / "notes.txt").write_text("someone else\n")
        assert review.accept() == "conflict"
        assert "changed on disk while the write waited for review" in review.message
        assert await asyncio.wait_for(task, TIMEOUT) == "end_turn"
        assert (tmp_path / "notes.txt").read_text() == "someone else\n"
        assert f"(code {REVIEW_CONFLICT})" in said(session)
        assert [d.code for d in session.state.diagnostics if d.code.startswith("review")] == [
            "review-conflict"
        ]
    finally:
        await agent.close()


async def test_cancel_answers_pending_reviews_rejected(tmp_path):
    agent, session = await demo(tmp_path)
    try:
        task = session.prompt_task("edit the notes")
        review = await held(session, task)
        await session.cancel()
        assert review.status == "cancelled" and session.pending_reviews == []
        assert await asyncio.wait_for(task, TIMEOUT) == "cancelled"
        with pytest.raises(ReviewClosed):
            review.accept()
        assert (tmp_path / "notes.txt").read_bytes() == NOTES.encode()
        entry = viewmodel.build_entry(session.state, "file_write", 0)
        assert entry["status"] == "cancelled" and entry["actionable"] is False
        asked = next(
            t["message"]["id"] for t in session.traffic if t["message"].get("method") == "fs/write_text_file"
        )
        answers = [
            t["message"] for t in session.traffic if t["dir"] == "out" and t["message"].get("id") == asked
        ]
        path = tmp_path / "notes.txt"
        text = f"the user rejected the change to {path} (the turn was cancelled); the file was not written"
        assert answers == [
            {"jsonrpc": "2.0", "id": asked, "error": {"code": REVIEW_REJECTED, "message": text}}
        ]
    finally:
        await agent.close()


async def test_without_review_the_write_goes_through(tmp_path):
    (tmp_path / "notes.txt").write_text(NOTES)
    agent = await start_agent(DEMO, protocol_version=1)
    try:
        session = await agent.new_session(str(tmp_path))
        assert await asyncio.wait_for(session.prompt("edit"), TIMEOUT) == "end_turn"
        assert (tmp_path / "notes.txt").read_text() == NOTES.replace("TODO", "DONE") + FOOTER
        assert session.pending_reviews == []
    finally:
        await agent.close()


def test_percent_acp_start_review_sets_the_policy():
    from acp_notebook.magic.commands import _files
    from acp_notebook.magic.parser import parse_line

    _, args = parse_line("start --review --protocol 1 python -m acp_notebook.demo_agent")
    assert args.review is True and args.command == ["python", "-m", "acp_notebook.demo_agent"]
    assert _files(args) == FilePolicy(review=True)
    _, args = parse_line("start")
    assert args.review is False and _files(args) is None


async def test_decide_from_code_with_a_list_and_review_listing(tmp_path):
    agent, session = await demo(tmp_path)
    try:
        task = session.prompt_task("edit the notes")
        review = await held(session, task)
        assert repr(review) == f"<Review review_1 {tmp_path / 'notes.txt'} pending 0/2 hunks decided>"
        assert review.accept(hunks=[0, 1]) == "written"
        assert await asyncio.wait_for(task, TIMEOUT) == "end_turn"
        assert (tmp_path / "notes.txt").read_text() == NOTES.replace("TODO", "DONE") + FOOTER
        assert review.message == f"accepted: {tmp_path / 'notes.txt'} written"
    finally:
        await agent.close()
