"""The interrupt button in a real JupyterLab (Chromium) ends a quiet ``%%acp --wait`` at once.

The agent (``tests/agents/quiet_permission.py``) asks one permission and then sends nothing, so
nothing but the interrupt can wake the kernel's loop (``client.wake``). The person waits for the
permission buttons, presses the toolbar's interrupt button (Lab: ``POST /api/kernels/ID/interrupt``,
SIGINT to the kernel): the cell ends at once (``LANDS``) with ``TurnInterrupted``, the request shows as
cancelled, the agent got ``session/cancel``, and the next cell runs a new turn on the same agent.

Needs the JS bundle (``cd js && npm run build``) and Chromium at /usr/bin/chromium.
"""

from __future__ import annotations

import json
import shlex
import sys
import time
from pathlib import Path

import pytest

from .conftest import unavailable, wait_value, write_code_notebook
from .test_lab_demo import STATIC
from .test_notebook7 import KERNEL_IDLE

nbformat = pytest.importorskip("nbformat")
sync_api = pytest.importorskip("playwright.sync_api")
if not (STATIC / "runtime.js").exists():
    unavailable("JS bundle not built (cd js && npm install && npm run build)")

NAME = "interrupt.ipynb"
QUIET = Path(__file__).resolve().parents[1] / "agents" / "quiet_permission.py"
NOTEBOOK = "window.jupyterapp.shell.currentWidget.content"
WAIT, AGAIN = 1, 2  # the cells' indices
LANDS = 2.0  # s from the click to the cell's number (measured 0.1-0.6 s; REST, kernel, iopub, render)
READING = 3_000  # ms a person takes to read the request: the kernel's timers (view refresh, notices) are done
PROMPT_JS = "(i) => document.querySelectorAll('.jp-Notebook .jp-Cell')[i]?.querySelector('.jp-InputPrompt')"
PERMISSIONS_JS = """(i) => [...document.querySelectorAll('.jp-Notebook .jp-Cell')[i]
  .querySelectorAll('.acp-permission')]
  .map((p) => [p.dataset.state, !!p.querySelector('.acp-perm-cancelled')])"""


def write_notebook(root: Path, log: Path) -> None:
    """Start the quiet agent; a waiting prompt; a second prompt that a policy answers."""
    command = shlex.join([sys.executable, str(QUIET), str(log)])
    sources = [
        f"%load_ext acp_notebook\n%acp start --name acp {command}",
        "%%acp --wait\nDelete the build directory",
        "%%acp --wait --permissions allow-once\nAnd now?",
    ]
    write_code_notebook(root / NAME, sources)


def run_cell(page, index: int) -> None:
    """Make cell ``index`` active and run it (Lab's "Run Selected Cell")."""
    page.evaluate(f"(i) => {{ {NOTEBOOK}.activeCellIndex = i; }}", index)
    page.evaluate("void window.jupyterapp.commands.execute('notebook:run-cell')")


def executed(page, index: int, timeout: float) -> str:
    """Wait until cell ``index``'s prompt shows an execution count; returns the prompt."""
    js = f"(i) => /^\\[\\d+\\]:$/.test(({PROMPT_JS})(i)?.textContent.trim() ?? '')"
    try:
        page.wait_for_function(js, arg=index, timeout=timeout, polling=20)
    except sync_api.TimeoutError:
        text = page.evaluate(f"(i) => ({PROMPT_JS})(i)?.textContent", index)
        pytest.fail(f"cell {index} still shows {text!r} after {timeout / 1000:g} s")
    return page.evaluate(f"(i) => ({PROMPT_JS})(i).textContent.trim()", index)


def output_text(page, index: int) -> str:
    return page.locator(".jp-Notebook .jp-Cell").nth(index).locator(".jp-OutputArea").text_content() or ""


def test_the_interrupt_button_ends_a_quiet_wait_cell_at_once(lab_log, lab_pages):
    server = lab_log
    log = server.tmp / "quiet.jsonl"
    write_notebook(server.root, log)
    page = lab_pages("interrupt")
    page.goto(server.lab_url(NAME), wait_until="domcontentloaded", timeout=60_000)
    page.wait_for_function(KERNEL_IDLE, timeout=60_000)
    run_cell(page, 0)
    executed(page, 0, 30_000)
    assert "is acp" in output_text(page, 0), output_text(page, 0)

    run_cell(page, WAIT)
    buttons = page.locator(".jp-Notebook .jp-Cell").nth(WAIT).locator(".acp-permission.acp-perm-open button")
    buttons.first.wait_for(state="visible", timeout=30_000)
    wait_value(page, PERMISSIONS_JS, [["open", False]], "one open permission request", arg=WAIT)
    assert page.evaluate(f"(i) => ({PROMPT_JS})(i).textContent.trim()", WAIT) == "[*]:"
    page.wait_for_timeout(READING)  # then nothing at all reaches the kernel: only the interrupt can wake it

    clicked = time.monotonic()
    page.locator("[data-jp-item-name='interrupt']").locator("button, jp-button").first.click()
    executed(page, WAIT, 5_000)
    latency = time.monotonic() - clicked
    print(f"interrupt button to cell end: {latency * 1000:.0f} ms")
    assert latency < LANDS, f"the interrupt took {latency:.2f} s to end the cell"
    assert "TurnInterrupted" in output_text(page, WAIT), output_text(page, WAIT)
    wait_value(page, PERMISSIONS_JS, [["answered", True]], "the request shown as cancelled", arg=WAIT)
    received = [json.loads(line) for line in log.read_text().splitlines()]
    assert [m["method"] for m in received if m.get("method") == "session/cancel"] == ["session/cancel"]

    run_cell(page, AGAIN)
    executed(page, AGAIN, 30_000)
    assert "turn ended (end_turn)" in output_text(page, AGAIN), "the kernel and the agent are still usable"
