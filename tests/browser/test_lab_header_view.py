"""The ``%acp start`` cell's header view in a real JupyterLab (Chromium): one line per turn, and a
click on a line brings the turn's cell into view even when Lab's windowing (``windowingMode:
full``) has taken that cell out of the page (JupyterLab 4.6 keeps it in the DOM with ``display:
none``; older ones removed it); a line whose cell is gone says so.

Needs the JS bundle (``cd js && npm run build``) and Chromium at /usr/bin/chromium.
"""

from __future__ import annotations

import json
import sys

import pytest

from .conftest import unavailable, wait_value, write_code_notebook
from .test_lab_demo import STATIC, wait_js
from .test_notebook7 import KERNEL_IDLE

nbformat = pytest.importorskip("nbformat")
pytest.importorskip("playwright.sync_api")
if not (STATIC / "runtime.js").exists():
    unavailable("JS bundle not built (cd js && npm install && npm run build)")

NAME = "header_view.ipynb"
FILLERS = 25  # cells of 40 output lines between two turns: the later turns are far off-screen
PROMPTS = ["turn one", "turn two", "turn three"]
LINES_JS = """() => [...document.querySelectorAll('.acp-header-view .acp-turn-line')].map((l) => [
  l.dataset.turn, l.dataset.state, l.querySelector('.acp-turn-prompt')?.textContent ?? null])"""
ANCHOR_JS = "(n) => document.querySelector(`.acp-turn-line[data-turn='${n}']`)?.dataset.anchor ?? null"
IN_VIEW_JS = """(anchor) => {
  const el = document.querySelector(`[data-acp-anchor="${CSS.escape(anchor)}"]`);
  if (!el || !el.getBoundingClientRect().height) return 'not drawn';
  const r = el.getBoundingClientRect();
  const visible = r.bottom > 0 && r.top < window.innerHeight && r.height > 0;
  if (!visible) return 'off-screen';
  // the turn's top (its cell: the source, then the view's prompt and first cards) at the notebook's
  // top, unless the notebook cannot scroll further
  const box = el.closest('.jp-WindowedPanel-outer') || document.scrollingElement;
  const top = (el.closest('.jp-Cell') || el).getBoundingClientRect().top - box.getBoundingClientRect().top;
  const atEnd = box.scrollTop + box.clientHeight >= box.scrollHeight - 2;
  const prompt = el.querySelector('.acp-msg-user .acp-msg-body')?.textContent.trim() ?? 'no prompt';
  return (top >= -2 && top < 40) || (atEnd && top >= -2) ? prompt : `top at ${Math.round(top)}`;
}"""
NOTE_JS = "(n) => document.querySelector(`.acp-turn-line[data-turn='${n}'] .acp-turn-note`)?.textContent"
NOTEBOOK = "window.jupyterapp.shell.currentWidget.content"


def write_notebook(root) -> list[int]:
    """``%acp start`` then the turn cells, fillers between them; returns the turn cells' indices."""
    demo = f"{sys.executable} -m acp_notebook.demo_agent --scenario echo"
    sources = [f"%load_ext acp_notebook\n%acp start --env ACP_DEMO_SPEED=0 {demo}"]
    turns = []
    for prompt in PROMPTS:
        sources += ["print('\\n'.join(f'filler {i}' for i in range(40)))"] * FILLERS
        turns.append(len(sources))
        sources.append(f"%%acp --wait\n{prompt}")
    sources.append("print('the end')")  # the last cell ends active: Lab keeps the active cell drawn
    write_code_notebook(root / NAME, sources)
    return turns


def to_top(page) -> None:
    """Make the first cell active (Lab keeps the active cell drawn) and scroll to it."""
    page.evaluate(f"() => {{ {NOTEBOOK}.activeCellIndex = 0; {NOTEBOOK}.scrollToItem(0, 'start'); }}")


def go(page, number: int):
    """The button of turn line ``number`` in the start cell's view."""
    return page.locator(f".acp-turn-line[data-turn='{number}'] button.acp-turn-go")


def test_a_turn_line_scrolls_to_its_windowed_out_cell(lab_log, lab_pages):
    server = lab_log
    raw = json.dumps({"windowingMode": "full"})
    server.api("PUT", "/lab/api/settings/@jupyterlab/notebook-extension:tracker", {"raw": raw})
    turns = write_notebook(server.root)
    page = lab_pages("header-view", height=900)
    page.goto(server.lab_url(NAME), wait_until="domcontentloaded", timeout=60_000)
    wait_js(page, KERNEL_IDLE, "the kernel", timeout=60_000)
    page.evaluate("void window.jupyterapp.commands.execute('notebook:run-all-cells')")
    to_top(page)
    want = [[str(n), "ended", prompt] for n, prompt in enumerate(PROMPTS, 1)]
    wait_value(page, LINES_JS, want, "three ended turn lines in the start cell", timeout=90_000)

    to_top(page)
    anchors = [page.evaluate(ANCHOR_JS, n) for n in (1, 2, 3)]
    assert [a.rsplit("#", 1)[1] for a in anchors] == ["1", "2", "3"], anchors
    wait_value(page, IN_VIEW_JS, "not drawn", "Lab's windowing to drop the far cell", arg=anchors[2])
    go(page, 3).click()
    wait_value(page, IN_VIEW_JS, "turn three", "the third turn's cell at the notebook's top", arg=anchors[2])
    assert page.evaluate(NOTE_JS, 3) == ""

    to_top(page)  # by keyboard: focus the first line's button and press Enter
    go(page, 1).focus()
    page.keyboard.press("Enter")
    wait_value(page, IN_VIEW_JS, "turn one", "the first turn's cell at the top, by keyboard", arg=anchors[0])

    # a turn whose cell was deleted: the line says so (after a bounded search both ways)
    page.evaluate(f"() => {NOTEBOOK}.model.sharedModel.deleteCell({turns[1]})")
    to_top(page)
    go(page, 2).click()
    wait_value(page, NOTE_JS, "cell not on this page", "the line to say the cell is gone", arg=2)
    assert lab_pages.recorder.errors == [], lab_pages.recorder.errors
    assert lab_pages.recorder.external_requests() == []
