"""``notebooks/quickstart.ipynb`` in a real JupyterLab (Chromium): a person clicks the permission
buttons while the awaiting ``%%acp --wait`` cell runs (the views rendered, so the quickstart's
``when_headless`` policy leaves the requests to the person), the turn finishes, the rest of the notebook
runs, and nothing leaves localhost. Uses the fixtures of ``conftest.py`` (lab server, pages).

Needs the JS bundle (``cd js && npm run build``) and Chromium at /usr/bin/chromium.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from .conftest import ARTIFACTS, unavailable, wait_value

nbformat = pytest.importorskip("nbformat")
sync_api = pytest.importorskip("playwright.sync_api")
pytest.importorskip("jupyterlab")

ROOT = Path(__file__).resolve().parents[2]
QUICKSTART = ROOT / "notebooks" / "quickstart.ipynb"
STATIC = ROOT / "acp_notebook" / "static"
if not (STATIC / "runtime.js").exists() or not (STATIC / "loader.js").exists():
    unavailable("JS bundle not built (cd js && npm install && npm run build)")

TIMEOUT = 30_000  # ms


@pytest.fixture(scope="module", autouse=True)
def demo_speed(lab_server):
    """The module's kernels (and so their agents) get the demo agent at full speed, no auto-answer."""
    lab_server.kernel_env({"ACP_DEMO_SPEED": "0", "ACP_AUTO_ANSWER": None})


def cell_index(start: str) -> int:
    """The index (among all cells) of the first cell whose source starts with ``start``."""
    nb = nbformat.read(QUICKSTART, as_version=4)
    return next(i for i, cell in enumerate(nb.cells) if cell.source.startswith(start))


def cell(page, index: int):
    return page.locator(".jp-Notebook .jp-Cell").nth(index)


def output_text(page, index: int) -> str:
    """The cell's output text (``textContent``: cells scrolled away are not rendered for innerText)."""
    return cell(page, index).locator(".jp-OutputArea").text_content() or ""


def prompt(page, index: int) -> str:
    return cell(page, index).locator(".jp-InputPrompt").inner_text().strip()


def wait_text(page, index: int, text: str, what: str, timeout: float = TIMEOUT) -> None:
    js = """([i, text]) => {
      const cell = document.querySelectorAll('.jp-Notebook .jp-Cell')[i];
      return !!cell && (cell.querySelector('.jp-OutputArea')?.textContent || '').includes(text);
    }"""
    try:
        page.wait_for_function(js, arg=[index, text], timeout=timeout, polling=100)
    except sync_api.TimeoutError:
        pytest.fail(f"timed out waiting for {what}; cell {index} shows: {output_text(page, index)!r}")


CARDS_JS = """(c) => ['tool_call:call_edit', 'tool_call:call_test']
  .map((key) => [key, c.querySelector(`.acp-card[data-key="${key}"]`)?.dataset.status ?? null])"""
PERMISSIONS_JS = """(c) => [...c.querySelectorAll('.acp-permission')].map((p) => [p.dataset.state,
  p.closest('.acp-card')?.dataset.key ?? null, p.querySelector('.acp-perm-outcome')?.textContent ?? null])"""


def wait_cell(page, index: int, fn: str, want: object, what: str) -> None:
    """Wait until the JS ``fn(cell element)`` returns ``want`` for cell ``index``; fail showing its value."""
    js = f"(i) => ((c) => c ? ({fn})(c) : null)(document.querySelectorAll('.jp-Notebook .jp-Cell')[i])"
    wait_value(page, js, want, what, arg=index, timeout=TIMEOUT)


def click_open_permission(page, index: int, kind: str) -> str:
    """Click the ``kind`` button of the first open permission request in cell ``index``; its title.

    Checks first that the cell is still executing: the click lands while the awaiting cell runs.
    """
    block = cell(page, index).locator(".acp-permission.acp-perm-open").first  # the class changes on click
    try:
        block.wait_for(state="visible", timeout=TIMEOUT)
    except sync_api.TimeoutError:
        pytest.fail(f"no open permission request in cell {index}: {output_text(page, index)!r}")
    assert prompt(page, index) == "[*]:", "the %%acp --wait cell should still be running"
    title = block.locator(".acp-perm-title").inner_text()
    block.locator(f'button.acp-opt[data-kind="{kind}"]').click()
    return title


def answer_like_a_person(page, wait: int) -> None:
    """Click "Always allow" on both of the demo's requests in the running ``--wait`` cell ``wait``
    (edit files, then run the tests); the turn ends, both cards complete, both show their answer."""
    titles = [click_open_permission(page, wait, "allow_always") for _ in range(2)]
    assert titles == ["Apply edits to 4 files?", "Run the test suite?"]
    # The cell's text comes with the cell's end; the view's last (coalesced) patch may come later:
    # wait on the cards and the permission blocks themselves.
    wait_text(page, wait, "turn ended (end_turn)", "the turn to finish after the clicks")
    cards = [["tool_call:call_edit", "completed"], ["tool_call:call_test", "completed"]]
    wait_cell(page, wait, CARDS_JS, cards, "the edit and test cards to complete")
    answered = [["answered", key, "Selected: Always allow"] for key, _ in cards]
    wait_cell(page, wait, PERMISSIONS_JS, answered, "both permissions answered, each inside its card")


def test_a_person_answers_the_quickstart_while_the_wait_cell_runs(lab_log, lab_pages):
    server = lab_log
    shutil.copy(QUICKSTART, server.root / "quickstart.ipynb")
    page = lab_pages("quickstart")
    page.goto(server.lab_url("quickstart.ipynb"), wait_until="domcontentloaded", timeout=60_000)
    page.wait_for_function(
        "() => window.jupyterapp?.shell.currentWidget?.sessionContext?.session?.kernel?.status === 'idle'",
        timeout=60_000,
    )
    page.evaluate("void window.jupyterapp.commands.execute('notebook:run-all-cells')")

    start, wait, stop = cell_index("%acp start"), cell_index("%%acp --wait"), cell_index("%acp stop")
    wait_text(page, start, "is acp", "the agent to start")
    wait_text(page, cell_index("from acp_notebook.policies"), "when_headless(", "the headless-only policy")

    answer_like_a_person(page, wait)
    # the happy path's diagnostics are info-level (permission-unanswered: a person answered): counted
    # quietly, no warning badge anywhere
    header = cell(page, start).locator(".acp-header-view .acp-header").first
    header.locator(".acp-diag-quiet").wait_for(state="attached", timeout=TIMEOUT)
    assert page.locator(".acp-has-diag").count() == 0
    header.screenshot(path=str(ARTIFACTS / "v21-quickstart-start-header.png"))

    wait_text(page, stop, "exit code 0", "the rest of the notebook (background turn, status, wait, stop)")
    wait_text(page, cell_index("%acp wait"), "idle (end_turn)", "`%acp wait` to report the idle session")
    assert page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']").count() == 0
    recorder = lab_pages.recorder
    assert recorder.errors == [], recorder.errors
    assert recorder.external_requests() == [], json.dumps(recorder.external_requests())
