"""Views that never contradict themselves, in a real JupyterLab (Chromium) — issue 21, items 1, 2, 10.

A notebook starts the demo agent and runs three turns of its slow command ("run a slow command":
a terminal ticking until cancelled), one cell each. The person stops the first turn with its own
Stop; while the second runs, the first turn's cell says "cancelled" and offers no Stop (before,
each turn's view repeated the session header: a spinning "running" badge and a live Stop that
would cancel the *other* turn). The second turn's own Stop cancels it; its compact session line
scrolls to the start cell's header. The third cell is a ``%%acp --wait``: while it waits its
output says so ("waiting for the turn to end", JupyterLab showing the kernel Idle meanwhile), and
the line gives way to the result when the wait ends. After ``%acp stop`` the start cell's header
says "agent stopped" at once (before, it kept "idle · …"). Screenshots go to ``test-artifacts/``.

Needs the JS bundle (``cd js && npm run build``) and Chromium at /usr/bin/chromium.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import ARTIFACTS, unavailable, wait_value, write_code_notebook
from .test_lab_demo import STATIC
from .test_lab_interrupt import executed, output_text, run_cell
from .test_notebook7 import KERNEL_IDLE

nbformat = pytest.importorskip("nbformat")
pytest.importorskip("playwright.sync_api")
if not (STATIC / "runtime.js").exists():
    unavailable("JS bundle not built (cd js && npm install && npm run build)")

NAME = "turn_views.ipynb"
START, FIRST, SECOND, WAIT, STOP = range(5)  # the cells' indices
CELL = "document.querySelectorAll('.jp-Notebook .jp-Cell')[i]"
TURN_JS = f"""(i) => {{
  const hdr = {CELL}?.querySelector('.acp-session .acp-header');
  if (!hdr) return null;
  return {{
    scope: hdr.dataset.scope ?? 'session',
    state: hdr.dataset.turnState ?? hdr.dataset.runState ?? null,
    badge: hdr.querySelector('.acp-badge')?.textContent ?? null,
    stop: !!hdr.querySelector('.acp-btn-stop'),
    session: hdr.querySelector('.acp-turn-session')?.textContent ?? null,
  }};
}}"""
STATE_JS = f"(i) => {CELL}?.querySelector('.acp-session .acp-header')?.dataset.turnState ?? null"
BADGE_JS = f"(i) => {CELL}?.querySelector('.acp-session .acp-header .acp-badge')?.textContent ?? null"
START_BADGE_JS = "() => document.querySelector('.acp-header-view .acp-header .acp-badge')?.textContent"
START_IN_VIEW_JS = """() => {
  const r = document.querySelector('.acp-header-view')?.getBoundingClientRect();
  return !!r && r.height > 0 && r.top >= 0 && r.top < window.innerHeight;
}"""
WAITING = "waiting for the turn to end"
WAIT_LINE_JS = f"(i) => !!{CELL}?.querySelector('.jp-OutputArea')?.innerText.includes('{WAITING}')"


def write_notebook(root: Path) -> None:
    sources = [
        "%load_ext acp_notebook\n%acp start --env ACP_DEMO_SPEED=0",
        "%%acp\nrun a slow command",
        "%%acp\nrun a slow command",
        "%%acp --wait\nrun a slow command",
        "%acp stop",
    ]
    write_code_notebook(root / NAME, sources)


def stop_of(page, index: int):
    """The Stop button in cell ``index``'s turn view."""
    return page.locator(".jp-Notebook .jp-Cell").nth(index).locator(".acp-session .acp-header .acp-btn-stop")


def running(page, index: int, what: str) -> None:
    wait_value(page, STATE_JS, "running", what, arg=index)


def stop_turn(page, index: int) -> None:
    """Click the turn's own Stop; the cell then says its turn was cancelled."""
    stop_of(page, index).click()
    wait_value(page, BADGE_JS, "cancelled", f"cell {index}'s turn to read cancelled", arg=index)


def test_each_turn_view_tells_its_own_turn_and_the_start_header_the_stopped_agent(lab_log, lab_pages):
    server = lab_log
    write_notebook(server.root)
    page = lab_pages("turn-views", height=1100)
    page.goto(server.lab_url(NAME), wait_until="domcontentloaded", timeout=60_000)
    page.wait_for_function(KERNEL_IDLE, timeout=60_000)
    run_cell(page, START)
    executed(page, START, 30_000)

    run_cell(page, FIRST)
    running(page, FIRST, "the first turn to run")
    stop_turn(page, FIRST)
    run_cell(page, SECOND)
    running(page, SECOND, "the second turn to run")
    first = page.evaluate(TURN_JS, FIRST)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "turn-views-earlier-cancelled.png"), full_page=True)
    assert first["scope"] == "turn" and first["state"] == "ended", first
    assert first["badge"] == "cancelled" and not first["stop"], f"a finished turn offers no Stop: {first}"
    assert "turn #1" in first["session"] and "session header" in first["session"], first
    assert page.evaluate(TURN_JS, SECOND)["stop"], "the running turn has its Stop"

    page.locator(".jp-Notebook .jp-Cell").nth(SECOND).locator(".acp-turn-to-session").click()
    wait_value(page, START_IN_VIEW_JS, True, "the start cell's header scrolled into view")
    stop_turn(page, SECOND)
    assert page.evaluate(BADGE_JS, FIRST) == "cancelled"

    run_cell(page, WAIT)
    running(page, WAIT, "the waiting cell's turn to run")
    wait_value(page, WAIT_LINE_JS, True, "the waiting line in the --wait cell", arg=WAIT)
    line = output_text(page, WAIT)
    assert "Idle" in line and "this cell still runs" in line, line
    outputs = page.locator(".jp-Notebook .jp-Cell").nth(WAIT).locator(".jp-OutputArea-child")
    outputs.last.scroll_into_view_if_needed()
    page.screenshot(path=str(ARTIFACTS / "turn-views-wait-line.png"), full_page=True)
    stop_turn(page, WAIT)
    executed(page, WAIT, 30_000)
    wait_value(page, WAIT_LINE_JS, False, "the waiting line gone when the wait ended", arg=WAIT)
    assert "turn ended (cancelled)" in output_text(page, WAIT), output_text(page, WAIT)

    run_cell(page, STOP)
    executed(page, STOP, 30_000)
    wait_value(page, START_BADGE_JS, "agent stopped", "the start header to say the agent stopped")
    wait_value(page, f"() => ({TURN_JS})({FIRST})?.session?.includes('agent stopped')", True,
               "the turn view's session line to say so too")  # fmt: skip
    page.locator(".jp-Notebook .jp-Cell").nth(WAIT).locator(".acp-turn-to-session").click()
    wait_value(page, START_IN_VIEW_JS, True, "the start cell's header in view again")
    page.screenshot(path=str(ARTIFACTS / "turn-views-agent-stopped.png"), full_page=True)
    assert lab_pages.recorder.errors == [], lab_pages.recorder.errors
    assert lab_pages.recorder.external_requests() == []
