"""A comparison's grid and a code block's Copy button in a real JupyterLab, in Chromium.

Two demo agents answer one prompt (each in its own copy of a small tree); the cell shows the
``Comparison``: two session views side by side under headers naming the agents, both finished.
The Copy button of a code block in the first view puts the block's text on the clipboard (read
back through the Clipboard API, with the permissions granted) and says "Copied".
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import unavailable, wait_value
from .test_lab_demo import CHROMIUM, STATIC
from .test_lab_xray import run_notebook, wait_js, write

pytest.importorskip("nbformat")
pytest.importorskip("playwright.sync_api")
pytest.importorskip("jupyterlab")

if not (STATIC / "runtime.js").exists() or not Path(CHROMIUM).exists():
    unavailable("JS bundle not built or Chromium missing")

NOTEBOOK = "compare_grid.ipynb"
CELLS_JS = "() => [...document.querySelectorAll('.acp-compare-cell')]"
BOXES_JS = (
    CELLS_JS + ".map((c) => { const r = c.querySelector('.acp-session').getBoundingClientRect();"
    " return [Math.round(r.left), Math.round(r.top), Math.round(r.width)]; })"
)


def test_grid_of_two_finished_views_and_the_copy_button(lab_log, lab_pages, tmp_path):
    server = lab_log
    tree = server.root / "tree"
    tree.mkdir(exist_ok=True)
    (tree / "app.py").write_text("x = 1\n")
    prompt = "echo this:\n```python\nprint('copied!')\n```"
    write(server.root, NOTEBOOK, [
        "import sys\nimport acp_notebook\n"
        "demo = [sys.executable, '-m', 'acp_notebook.demo_agent', '--speed', '0']",
        f"comparison = await acp_notebook.compare([demo, demo], {prompt!r}, cwd={str(tree)!r})\n"
        "comparison",
    ])  # fmt: skip
    page = lab_pages("compare-grid", width=1500)
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=server.url)
    run_notebook(page, server, NOTEBOOK)
    states = CELLS_JS + ".map((c) => c.querySelector('[data-state]')?.dataset.state)"
    wait_js(
        page,
        f"() => JSON.stringify(({states})()) === JSON.stringify(['finished', 'finished'])",
        "two finished",
    )
    agents = page.evaluate(CELLS_JS + ".map((c) => c.querySelector('[data-agent]').dataset.agent)")
    assert agents == ["demo", "demo-2"]
    headers = page.evaluate(CELLS_JS + ".map((c) => c.querySelector('.acp-compare-header').innerText)")
    assert all("end_turn" in h and "0 files, +0 −0" in h for h in headers), headers
    wait_js(
        page, f"() => ({CELLS_JS})().every((c) => c.querySelector('.acp-session .acp-codebox'))", "the code"
    )
    (left, top_a, width_a), (right, top_b, width_b) = page.evaluate(BOXES_JS)
    assert top_a == top_b and width_a > 300 and width_b > 300, "side by side, each wide enough to read"
    assert left + width_a <= right, "the second view starts where the first ends"

    button = page.locator(".acp-compare-cell").first.locator(".acp-codebox .acp-copy").first
    assert button.inner_text() == "Copy"
    button.click()
    wait_value(
        page, "() => document.querySelector('.acp-compare-cell .acp-copy').textContent", "Copied", "Copied"
    )
    wait_value(page, "() => navigator.clipboard.readText()", "print('copied!')", "the clipboard")
    code = page.locator(".acp-compare-cell").first.locator(".acp-codebox pre").first.inner_text()
    assert code.strip() == "print('copied!')", "the button is beside the code, not part of it"
    wait_value(
        page, "() => document.querySelector('.acp-compare-cell .acp-copy').textContent", "Copy", "reset"
    )

    # where the Clipboard API refuses, the fallback (a hidden textarea and execCommand) copies
    page.evaluate(
        "async () => { await navigator.clipboard.writeText('');"
        " navigator.clipboard.writeText = () => Promise.reject(new Error('denied')); }"
    )
    second = page.locator(".acp-compare-cell").nth(1).locator(".acp-codebox .acp-copy").first
    second.click()
    probe = "() => document.querySelectorAll('.acp-compare-cell')[1].querySelector('.acp-copy').textContent"
    wait_value(page, probe, "Copied", "Copied by the fallback")
    wait_value(
        page, "() => navigator.clipboard.readText()", "print('copied!')", "the clipboard, by the fallback"
    )
    assert page.evaluate("() => document.querySelectorAll('.acp-copy-area').length") == 0, (
        "its textarea is gone"
    )


def test_acp_cell_puts_the_block_in_a_new_cell_below(lab_log, lab_pages):
    server = lab_log
    write(server.root, "acp_cell.ipynb", [
        "%load_ext acp_notebook\n%acp start --no-view --env ACP_DEMO_SPEED=0",
        "%%acp --wait\necho this:\n```python\nprint(6 * 7)\n```",
        "%acp cell",
    ])  # fmt: skip
    page = lab_pages("acp-cell")
    run_notebook(page, server, "acp_cell.ipynb")
    sources = (
        "() => { const cells = window.jupyterapp.shell.currentWidget.content.model.cells;"
        " return Array.from({length: cells.length}, (_, i) => cells.get(i).sharedModel.getSource()); }"
    )
    wait_value(page, f"() => ({sources})().length", 4, "a fourth cell")
    assert page.evaluate(sources)[2:] == ["%acp cell", "print(6 * 7)"]
