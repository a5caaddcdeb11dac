""" "Revert this turn" in a real JupyterLab, in Chromium, clicked like a user.

A demo session's turn changes two files behind the client's back (its permission handler writes
them, as an agent writing by itself would); the turn's view offers "Revert this turn": the preview
lists the files and shows the diff against the checkpoint; confirming restores them on disk. A
file changed again after the preview is refused with the reason, and "Revert anyway" overwrites it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ..support import until
from .conftest import unavailable
from .test_lab_demo import CHROMIUM, STATIC
from .test_lab_xray import run_notebook, wait_js, write

pytest.importorskip("nbformat")
pytest.importorskip("playwright.sync_api")
pytest.importorskip("jupyterlab")

if not (STATIC / "runtime.js").exists() or not Path(CHROMIUM).exists():
    unavailable("JS bundle not built or Chromium missing")

NAME = "revert.ipynb"
BAR = ".acp-revert"


def test_revert_this_turn_previews_confirms_and_refuses(lab_log, lab_pages, tmp_path):
    server = lab_log
    proj = server.root / "revert_proj"
    proj.mkdir()
    (proj / "a.txt").write_text("original\n")
    write(server.root, NAME, [
        "import os, sys\nfrom pathlib import Path\n"
        "import acp_notebook\nfrom acp_notebook import SessionView\n"
        f"os.environ['ACP_NOTEBOOK_CHECKPOINTS'] = {str(tmp_path / 'cache')!r}\n"
        f"proj = Path({str(proj)!r})",
        "demo = [sys.executable, '-m', 'acp_notebook.demo_agent', '--speed', '0',\n"
        "        '--scenario', 'permission']\n"
        "agent = await acp_notebook.start_agent(demo)\n"
        "session = await agent.new_session(str(proj))\n"
        "def behind_the_clients_back(request):\n"
        "    (proj / 'a.txt').write_text('changed by the agent\\n')\n"
        "    (proj / 'sub').mkdir()\n"
        "    (proj / 'sub' / 'new.txt').write_text('<b>new</b>\\n')\n"
        "    return 'allow-once'\n"
        "session.permission_handler = behind_the_clients_back\n"
        "since = len(session.state.timeline)\n"
        "await session.prompt('go')",
        "SessionView(session, since=since, title='The turn')",
    ])  # fmt: skip
    page = lab_pages("revert", width=1300)
    run_notebook(page, server, NAME)
    ready = f"() => !!document.querySelector('{BAR}:not([hidden]) .acp-revert-btn:not([disabled])')"
    wait_js(page, ready, "the Revert this turn button")
    head = page.locator(f"{BAR} .acp-revert-head").inner_text()
    assert "2 files changed in this turn" in head and "Revert this turn" in head, head

    page.locator(f"{BAR} .acp-revert-btn").click()
    wait_js(page, f"() => !!document.querySelector('{BAR} .acp-revert-preview .acp-diff')", "the preview")
    plan = page.locator(f"{BAR} .acp-revert-plan").inner_text()
    assert "a.txt will be restored (modified by the turn)" in plan, plan
    assert "sub/new.txt will be deleted (the turn added it)" in plan, plan
    diff = page.locator(f"{BAR} .acp-diff").inner_text()
    assert "original" in diff and "changed by the agent" in diff and "<b>new</b>" in diff, diff
    assert page.locator(f"{BAR} .acp-diff b").count() == 0  # the file's text stays text
    assert (proj / "a.txt").read_text() == "changed by the agent\n"  # a preview writes nothing

    (proj / "a.txt").write_text("edited by hand after the turn\n")  # between the preview and the click
    page.locator(f"{BAR} .acp-revert-confirm").click()
    wait_js(page, f"() => !!document.querySelector('{BAR} .acp-revert-ok')", "the outcome")
    outcome = page.locator(f"{BAR} .acp-revert-outcome").inner_text()
    assert "Reverted 1 file." in outcome and "a.txt" in outcome, outcome
    assert "left alone: modified since the turn ended" in outcome, outcome
    until(lambda: not (proj / "sub").exists(), 10, message="sub/new.txt and sub/ deleted")
    assert (proj / "a.txt").read_text() == "edited by hand after the turn\n"

    page.locator(f"{BAR} .acp-revert-outcome button", has_text="Preview again").click()
    wait_js(page, f"() => !!document.querySelector('{BAR} .acp-revert-force')", "Revert anyway")
    assert page.locator(f"{BAR} .acp-revert-confirm").count() == 0  # nothing else left to revert
    page.locator(f"{BAR} .acp-revert-force").click()
    wait_js(
        page,
        f"() => /Reverted 1 file/.test(document.querySelector('{BAR} .acp-revert-ok')?.innerText)",
        "forced",
    )
    until(lambda: (proj / "a.txt").read_text() == "original\n", 10, message="a.txt restored")
    assert sorted(p.name for p in proj.iterdir()) == ["a.txt"]
    wait_js(
        page, f"() => /reverted \\(1 restored\\)/.test(document.querySelector('{BAR}').innerText)", "the tag"
    )
    assert lab_pages.recorder.external_requests() == []
