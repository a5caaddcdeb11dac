"""A question the agent asks while our ``session/new`` waits, in JupyterLab (issue 20, item 4): the
demo agent (``--scenario elicitation``) asks for the session's profile with a ``requestId``
naming our pending request; the form is drawn in the cell that awaits ``demo.new_session()``, a
click answers it there, the session opens, and the agent's decision log says the user accepted."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from .conftest import CHROMIUM, unavailable, write_code_notebook

nbformat = pytest.importorskip("nbformat")
sync_api = pytest.importorskip("playwright.sync_api")
pytest.importorskip("jupyterlab")

from .test_lab_claude import cell, in_cell, output_text, wait_output  # noqa: E402
from .test_lab_demo import screenshot, wait_js  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
STATIC = ROOT / "acp_notebook" / "static"
if not (STATIC / "runtime.js").exists() or not (STATIC / "loader.js").exists():
    unavailable("JS bundle not built (cd js && npm install && npm run build)")
if not Path(CHROMIUM).exists():
    unavailable(f"Chromium not installed at {CHROMIUM}")

NOTEBOOK = "request_question.ipynb"
TIMEOUT = 60_000
OPEN_CELL, CLOSE_CELL = 0, 1
DEMO = [sys.executable, "-m", "acp_notebook.demo_agent", "--speed", "0", "--scenario", "elicitation"]


def test_a_question_at_session_new_is_answered_by_a_click_in_the_awaiting_cell(
    lab_log, lab_pages, tmp_path: Path
) -> None:
    server, rec = lab_log, lab_pages.recorder
    cells = [
        "import os\nfrom acp_notebook import start_agent\n\n"
        f"demo = await start_agent({DEMO!r})\n"
        "second = await demo.new_session(os.getcwd())\n"
        "print('opened', [(d.who, d.outcome, d.values) for d in demo.elicitation_log])",
        "print('exit code', await demo.close())",
    ]
    write_code_notebook(server.root / NOTEBOOK, cells)
    page = lab_pages("request-question")
    page.goto(server.lab_url(NOTEBOOK), wait_until="domcontentloaded", timeout=60_000)
    idle = "() => window.jupyterapp?.shell.currentWidget?.sessionContext?.session?.kernel?.status === 'idle'"
    wait_js(page, idle, "the notebook's kernel to be idle", timeout=60_000)
    page.evaluate("() => void window.jupyterapp.commands.execute('notebook:run-all-cells')")

    form = page.locator(in_cell(OPEN_CELL, '.acp-elicitation[data-state="open"]'))
    try:
        form.wait_for(state="visible", timeout=TIMEOUT)
    except sync_api.TimeoutError:
        pytest.fail(f"no open form in the awaiting cell: {output_text(page, OPEN_CELL)!r}")
    assert cell(page, OPEN_CELL).locator(".jp-InputPrompt").inner_text().strip() == "[*]:"
    assert "while session/new" in form.locator(".acp-el-asker").inner_text()
    form.locator('.acp-el-opt[data-value="quick"]').check()
    form.locator(".acp-el-accept").click()
    wait_output(page, OPEN_CELL, "opened", "the session to open after the click")
    printed = output_text(page, OPEN_CELL)
    assert "('user', 'accept', {'profile': 'quick', 'verbose': False})" in printed, printed
    answered = page.locator(in_cell(OPEN_CELL, '.acp-elicitation[data-state="accepted"]'))
    answered.wait_for(state="visible", timeout=TIMEOUT)
    shot = screenshot(page, in_cell(OPEN_CELL, ".acp-session"), "lab-request-question.png")
    wait_output(page, CLOSE_CELL, "exit code", "the agent to close")
    stderr = page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']")
    assert stderr.count() == 0, stderr.all_text_contents()
    assert rec.external_requests() == [], rec.external_requests()
    view_errors = [e for e in rec.errors + rec.console if "acp_notebook" in e or "acp-" in e]
    assert view_errors == [], f"the view logged errors: {view_errors}"
    print("screenshot:", shot)
