"""``notebooks/quickstart.ipynb`` in Notebook 7 (``/notebooks/``), as ``test_quickstart`` does in Lab:
a person clicks the permission buttons while the awaiting ``%%acp --wait`` cell runs, the turn
finishes and the xterm shows the terminal's text; saved with widget state and reloaded, the views
come back from the kernel; opened again without that kernel (shut down), the saved views still draw
their cards, statuses, terminal text and the start cell's turn lines.

Needs the JS bundle (``cd js && npm run build``) and Chromium at /usr/bin/chromium.
"""

from __future__ import annotations

import json
import shutil

import pytest

from ..support import until
from .conftest import wait_value
from .test_lab_demo import WIDGET_STATE, save, wait_js
from .test_lab_header_view import LINES_JS
from .test_notebook7 import KERNEL_IDLE, TERMINAL
from .test_quickstart import (
    QUICKSTART,
    answer_like_a_person,
    cell_index,
    demo_speed,  # noqa: F401 - autouse: the demo agent at full speed, no auto-answer
    wait_cell,
    wait_text,
)

pytest.importorskip("notebook")  # test_notebook7 skips the module when Notebook 7 is missing

NAME = "nb7_quickstart.ipynb"
STATUSES_JS = """(c) => Object.fromEntries([...c.querySelectorAll('.acp-card')]
  .map((e) => [e.dataset.key, e.dataset.status]))"""
NOTEBOOK7_OWN = "reading 'schema'"  # Notebook 7.6 throws it on every page, a plain `1 + 1` notebook too
LAST_LINE = "3 passed, 1 warning in 0.04s"
TURN_LINES = [
    ["1", "ended", "The average() test fails. Please fix it and run the tests."],
    ["2", "ended", "Now summarise what you changed."],
]


def open_page(lab_pages, server, label: str):
    page = lab_pages(label)
    page.goto(server.notebook7_url(NAME), wait_until="domcontentloaded", timeout=60_000)
    wait_js(page, KERNEL_IDLE, f"Notebook 7's kernel ({label})", timeout=60_000)
    return page


def check_views(page, wait: int, statuses: dict, where: str) -> None:
    """The turn cell's cards with these statuses, the terminal's last line, the start cell's lines."""
    wait_cell(page, wait, STATUSES_JS, statuses, f"the turn's cards and statuses ({where})")
    wait_value(page, TERMINAL, LAST_LINE, f"the terminal's last line in the xterm ({where})")
    wait_value(page, LINES_JS, TURN_LINES, f"the start cell's turn lines ({where})")


def saved_ended(path) -> bool:
    """Does the saved widget state hold both views' ended state (snapshots are refreshed lazily)?"""
    widgets = json.loads(path.read_text())["metadata"].get("widgets", {})
    views = widgets.get(WIDGET_STATE, {}).get("state", {})
    snaps = [m["state"]["snapshot"] for m in views.values() if "snapshot" in m.get("state", {})]
    lines = [s["turns"] for s in snaps if "turns" in s]
    return bool(lines) and [t["state"] for t in lines[0]] == ["ended", "ended"]


def test_the_quickstart_in_notebook7(lab_log, lab_pages):
    server = lab_log
    shutil.copy(QUICKSTART, server.root / NAME)
    page = open_page(lab_pages, server, "nb7-quickstart")
    page.evaluate("() => void window.jupyterapp.commands.execute('notebook:run-all-cells')")
    start, wait, stop = cell_index("%acp start"), cell_index("%%acp --wait"), cell_index("%acp stop")
    wait_text(page, start, "is acp", "the agent to start")

    answer_like_a_person(page, wait)
    wait_text(page, stop, "exit code 0", "the rest of the notebook")
    in_cell = f"(i) => ({STATUSES_JS})(document.querySelectorAll('.jp-Notebook .jp-Cell')[i])"
    statuses = page.evaluate(in_cell, wait)
    assert len(statuses) == 7 and statuses["tool_call:call_fetch"] == "failed", statuses
    check_views(page, wait, statuses, "live")

    def saved() -> bool:
        page.evaluate("() => window.jupyterapp.shell.currentWidget.context.model.dirty = true")
        save(page)
        return saved_ended(server.root / NAME)

    # saved first: a reload reads the outputs from the file; the views in them come from the kernel
    until(saved, 15, interval=0.5, message="the notebook saved with the ended turns' widget state")
    page.reload(wait_until="domcontentloaded", timeout=60_000)
    wait_js(page, KERNEL_IDLE, "the kernel after the reload", timeout=60_000)
    check_views(page, wait, statuses, "after a reload, from the kernel")
    page.context.close()
    assert server.shutdown_kernel_of(NAME), server.sessions()

    fresh = open_page(lab_pages, server, "nb7-quickstart-saved")
    check_views(fresh, wait, statuses, "from the saved widget state, in a new kernel")
    ours = [e for e in lab_pages.recorder.errors if NOTEBOOK7_OWN not in e]
    assert ours == [], lab_pages.recorder.errors
    assert lab_pages.recorder.external_requests() == []
