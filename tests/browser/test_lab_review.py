"""Writes held for review in a real JupyterLab, in Chromium, decided like a user.

``%acp start --review`` on the v1 demo agent's ``write`` scenario: its ``fs/write_text_file`` is
held and drawn as hunks with Accept / Reject buttons. The first turn's two hunks are decided from
the keyboard (Enter accepts the first; focus moves to the second; Tab, Space rejects it): the
file on disk holds exactly the accepted hunk and the agent says it wrote. The second turn's
change is rejected with "Reject all": the file is unchanged, the agent got the error, and every
button of both reviews is disabled.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest

from ..support import until
from .conftest import unavailable, wait_value, write_code_notebook
from .test_lab_demo import CHROMIUM, STATIC

nbformat = pytest.importorskip("nbformat")
pytest.importorskip("playwright.sync_api")
pytest.importorskip("jupyterlab")

if not (STATIC / "runtime.js").exists() or not Path(CHROMIUM).exists():
    unavailable("JS bundle not built or Chromium missing")

NAME = "review.ipynb"
NOTES = "TODO one\nkeep a\nkeep b\nkeep c\nkeep d\nTODO two\n"
FOOTER = "Reviewed by the demo agent.\n"
ONE_ACCEPTED = NOTES.replace("TODO one", "DONE one")

REVIEWS_JS = """() => [...document.querySelectorAll('.acp-review')].map((r) => ({
  status: r.dataset.status,
  hunks: [...r.querySelectorAll('.acp-review-hunk')].map((x) => x.dataset.decision),
  enabled: [...r.querySelectorAll('button')].filter((b) => !b.disabled).length,
}))"""
FOCUS_JS = """() => {
  const a = document.activeElement;
  return a ? [a.closest('.acp-review-hunk')?.dataset.hunk ?? null, a.className] : null;
}"""


def write_notebook(root: Path, project: Path) -> None:
    demo = f"{shlex.quote(sys.executable)} -m acp_notebook.demo_agent --speed 0 --scenario write"
    cells = [
        "%load_ext acp_notebook",
        f"%acp start --no-view --protocol 1 --review --cwd {shlex.quote(str(project))} {demo}",
        "%%acp\nEdit the notes, please.",
        "%%acp\nEdit them again.",
    ]
    write_code_notebook(root / NAME, cells)


def test_per_hunk_buttons_write_what_was_accepted(lab_log, lab_pages):
    server = lab_log
    project = server.root / "review_project"
    project.mkdir(exist_ok=True)
    notes = project / "notes.txt"
    notes.write_bytes(NOTES.encode())
    write_notebook(server.root, project)
    page = lab_pages("review")
    page.goto(server.lab_url(NAME), wait_until="domcontentloaded", timeout=60_000)
    idle = "() => window.jupyterapp?.shell.currentWidget?.sessionContext?.session?.kernel?.status === 'idle'"
    page.wait_for_function(idle, timeout=60_000, polling=100)
    page.evaluate("() => void window.jupyterapp.commands.execute('notebook:run-all-cells')")

    wait_value(page, REVIEWS_JS, [{"status": "pending", "hunks": ["undecided", "undecided"], "enabled": 6}],
               "the first write held as two undecided hunks")  # fmt: skip
    assert notes.read_bytes() == NOTES.encode()  # nothing written while the review waits

    # keyboard only: Enter on the first hunk's Accept, focus moves on, Tab to Reject, Space
    first = page.locator(".acp-review").nth(0)
    first.locator('.acp-review-hunk[data-hunk="0"] .acp-review-accept').focus()
    page.keyboard.press("Enter")
    wait_value(page, FOCUS_JS, ["1", "acp-btn acp-btn-small acp-review-accept"], "focus on the next hunk")
    page.keyboard.press("Tab")
    wait_value(page, FOCUS_JS, ["1", "acp-btn acp-btn-small acp-review-reject"], "focus on its Reject")
    page.keyboard.press("Space")
    until(lambda: notes.read_bytes() == ONE_ACCEPTED.encode(), 30, message=lambda: repr(notes.read_bytes()))

    # the second turn proposes one hunk (the rest is already DONE): Reject all
    second = {"status": "pending", "hunks": ["undecided"], "enabled": 4}
    done = {"status": "partial", "hunks": ["accepted", "rejected"], "enabled": 0}
    wait_value(page, REVIEWS_JS, [done, second], "the second turn's held write")
    page.locator(".acp-review").nth(1).get_by_role("button", name="Reject all").click()
    rejected = {"status": "rejected", "hunks": ["rejected"], "enabled": 0}
    wait_value(page, REVIEWS_JS, [done, rejected], "the second review rejected, every button disabled")
    assert notes.read_bytes() == ONE_ACCEPTED.encode()

    said = (
        "() => [...document.querySelectorAll('.acp-entry')].map((e) => e.innerText)"
        ".filter((t) => /Wrote notes.txt|refused the write/.test(t)).map((t) => t.trim())"
    )
    message = f"the user rejected the change to {notes}; the file was not written (code -32003)."
    wait_value(
        page,
        said,
        ["Wrote notes.txt through the client.", f"The client refused the write to notes.txt: {message}"],
        "the agent's answers to both reviews",
    )
    text = page.locator(".acp-review").nth(0).inner_text()
    assert "Partly accepted and written" in text and "1 of 2 hunks accepted" in text
