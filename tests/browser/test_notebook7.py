"""Notebook 7 (``/notebooks/``, the same server as the Lab tests) in Chromium: a demo turn's view
draws, and a notebook saved with its widget state draws the same tree again in a new kernel
(the agent gone): cards, statuses and the terminal's text from the saved bytes.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ..support import until
from .conftest import unavailable, wait_value, write_code_notebook
from .test_lab_demo import CHROMIUM, FINAL_STATUS, STATIC, WIDGET_STATE, save, wait_js

nbformat = pytest.importorskip("nbformat")
pytest.importorskip("playwright.sync_api")
try:
    import notebook  # noqa: F401  (Notebook 7: its server extension serves /notebooks/)
except ImportError:
    unavailable("Notebook 7 is not installed (pip install -e '.[test]')")

if not (STATIC / "runtime.js").exists() or not Path(CHROMIUM).exists():
    unavailable("JS bundle not built or Chromium missing")

NAME = "nb7.ipynb"
CARDS = (
    "() => Object.fromEntries([...document.querySelectorAll('.acp-card')]"
    ".map((c) => [c.dataset.key, c.dataset.status]))"
)
TERMINAL = """async () => {
  const t = document.querySelector('.acp-card[data-key="tool_call:call_test"] .acp-terminal');
  if (!t) return null;
  t.scrollIntoView();
  const api = (await globalThis.__acpNotebook).debug;
  return api.isInstantiated(t) ? (await api.terminalLines(t)).filter((l) => l).slice(-1)[0] : null;
}"""
KERNEL_IDLE = (
    "() => window.jupyterapp?.shell?.currentWidget?.sessionContext?.session?.kernel?.status === 'idle'"
)


def test_notebook7_draws_the_view_and_the_saved_state(lab_log, lab_pages):
    server = lab_log
    root = str(server.root)
    cells = [
        "import sys\nimport acp_notebook\nfrom acp_notebook import SessionView\n"
        "from acp_notebook.policies import allow",
        "demo = [sys.executable, '-m', 'acp_notebook.demo_agent', '--speed', '0']\n"
        f"agent = await acp_notebook.start_agent(demo, {root!r})\n"
        f"session = await agent.new_session({root!r})\n"
        "session.permission_handler = allow()\n"
        "await session.prompt('Fix the failing test, please.')\n"
        "SessionView(session)",
    ]
    write_code_notebook(server.root / NAME, cells)

    page = lab_pages("notebook7")
    page.goto(server.notebook7_url(NAME), wait_until="domcontentloaded", timeout=60_000)
    wait_js(page, KERNEL_IDLE, "Notebook 7's kernel", timeout=60_000)
    page.evaluate("() => void window.jupyterapp.commands.execute('notebook:run-all-cells')")
    wait_value(page, CARDS, FINAL_STATUS, "the cards, final, in Notebook 7")
    wait_value(page, TERMINAL, "3 passed, 1 warning in 0.04s", "the terminal's last line")

    def saved() -> bool:
        page.evaluate("() => window.jupyterapp.shell.currentWidget.context.model.dirty = true")
        save(page)
        views = json.loads((server.root / NAME).read_text())["metadata"].get("widgets", {})
        state = views.get(WIDGET_STATE, {}).get("state", {})
        snaps = [m["state"]["snapshot"] for m in state.values() if "snapshot" in m.get("state", {})]
        return any(s["header"].get("stop_reason") == "end_turn" for s in snaps)

    until(saved, 15, interval=0.5, message="the notebook saved with the ended turn's widget state")
    page.context.close()
    assert server.shutdown_kernel_of(NAME), server.sessions()

    fresh = lab_pages("notebook7-saved")
    fresh.goto(server.notebook7_url(NAME), wait_until="domcontentloaded", timeout=60_000)
    wait_js(fresh, KERNEL_IDLE, "the new kernel", timeout=60_000)
    wait_value(fresh, CARDS, FINAL_STATUS, "the cards from the saved widget state")
    wait_value(fresh, TERMINAL, "3 passed, 1 warning in 0.04s", "the terminal from the saved bytes")
    assert lab_pages.recorder.external_requests() == []


def test_acp_cell_adds_the_code_block_below_in_notebook7(lab_log, lab_pages):
    """``%acp cell`` (IPython's ``set_next_input``) in Notebook 7, as in Lab."""
    server = lab_log
    cells = [
        "%load_ext acp_notebook\n%acp start --no-view --env ACP_DEMO_SPEED=0",
        "%%acp --wait\necho this:\n```python\nprint(6 * 7)\n```",
        "%acp cell",
    ]
    write_code_notebook(server.root / "nb7_cell.ipynb", cells)
    page = lab_pages("notebook7-cell")
    page.goto(server.notebook7_url("nb7_cell.ipynb"), wait_until="domcontentloaded", timeout=60_000)
    wait_js(page, KERNEL_IDLE, "Notebook 7's kernel", timeout=60_000)
    page.evaluate("() => void window.jupyterapp.commands.execute('notebook:run-all-cells')")
    sources = (
        "() => { const cells = window.jupyterapp.shell.currentWidget.content.model.cells;"
        " return Array.from({length: cells.length}, (_, i) => cells.get(i).sharedModel.getSource()); }"
    )
    wait_value(page, f"() => ({sources})().length", 4, "a fourth cell")
    assert page.evaluate(sources)[2:] == ["%acp cell", "print(6 * 7)"]
