"""Elicitations answered by clicks in a real JupyterLab (Chromium), end to end through a kernel and
the demo agent (the real Codex's form clicked in Lab: ``test_lab_codex_elicitation.py``).

- The demo agent (``fill in a form``): its release form shows in its tool call's card; a value that
  does not fit (a version of ``1.2``) is refused in the page next to its field and nothing is sent;
  fixed, with a strategy and a platform changed, **Accept** sends the values and the agent echoes them.
  Then its sign-in URL (``test_url_consent`` end to end): shown whole, nothing opens and no request
  reaches its host before the click; **Open** opens it in a new tab with no opener (the host is
  routed to a local page: nothing leaves the machine) and the card reads "Opened — waiting for the
  agent" until the demo's ``elicitation/complete``, then "Completed".
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest

from .conftest import CHROMIUM, unavailable, wait_value, write_code_notebook

nbformat = pytest.importorskip("nbformat")
sync_api = pytest.importorskip("playwright.sync_api")
pytest.importorskip("jupyterlab")

from .test_lab_claude import cell, in_cell, output_text, wait_output  # noqa: E402
from .test_lab_demo import wait_js  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
STATIC = ROOT / "acp_notebook" / "static"
if not (STATIC / "runtime.js").exists() or not (STATIC / "loader.js").exists():
    unavailable("JS bundle not built (cd js && npm install && npm run build)")
if not Path(CHROMIUM).exists():
    unavailable(f"Chromium not installed at {CHROMIUM}")

TIMEOUT = 60_000  # ms, for each wait on the page
HOST = "login.example.com"  # the demo's sign-in host, routed to a local page in the test's context
IDLE_JS = "() => window.jupyterapp?.shell.currentWidget?.sessionContext?.session?.kernel?.status === 'idle'"
FORM = '.acp-elicitation[data-mode="form"]'
URL_CARD = '.acp-elicitation[data-mode="url"]'


def field(card: str, name: str, inner: str) -> str:
    """A selector for ``inner`` in field ``name`` of the card ``card``."""
    return f'{card} .acp-el-field[data-field="{name}"] {inner}'


# -- the demo agent: a form and a URL -----------------------------------------------------------------
DEMO_CELLS = [
    "%load_ext acp_notebook",
    f"%acp start {shlex.quote(sys.executable)} -m acp_notebook.demo_agent --speed 0.5",
    # the subagent's yes/no question is answered from code; every other question waits for a click
    "acp.elicitation_handler = lambda q: {'tag': True} if q.message.startswith('Tag') else None",
    "%%acp --wait\nFill in a form for the release.",
    "for q in acp.state.elicitations.values():\n    print(q.key, q.mode, q.status, q.decided_by, q.values)",
    "%acp stop",
]
DEMO_WAIT, DEMO_PRINT = 3, 4


def test_demo_form_and_url_consent_by_clicks(lab_log, lab_pages) -> None:
    server = lab_log
    write_code_notebook(server.root / "elicit.ipynb", DEMO_CELLS)
    hits: list[str] = []
    page = lab_pages("elicit")
    page.context.route(
        f"https://{HOST}/**",
        lambda route: (
            hits.append(route.request.url) or route.fulfill(body="<p>signed in</p>", content_type="text/html")
        ),
    )
    page.goto(server.lab_url("elicit.ipynb"), wait_until="domcontentloaded", timeout=60_000)
    wait_js(page, IDLE_JS, "the notebook's kernel to be idle", timeout=60_000)
    page.evaluate("() => void window.jupyterapp.commands.execute('notebook:run-all-cells')")

    # the form, inside its tool call's card
    form = in_cell(DEMO_WAIT, f'.acp-card[data-key="tool_call:call_release"] {FORM}')
    page.locator(form).wait_for(state="visible", timeout=TIMEOUT)
    assert page.locator(form).get_attribute("data-state") == "open"
    version = page.locator(field(form, "version", "input.acp-el-input"))
    assert version.input_value() == "0.2.0"  # the default, filled in
    version.fill("1.2")
    page.locator(f"{form} .acp-el-accept").click()
    error = page.locator(field(form, "version", ".acp-el-error"))
    error.wait_for(state="visible", timeout=TIMEOUT)
    assert "pattern" in error.inner_text()
    assert page.locator(form).get_attribute("data-state") == "open"  # nothing was sent
    version.fill("2.0.0")
    page.locator(field(form, "strategy", 'input.acp-el-opt[data-value="aggressive"]')).check()
    page.locator(field(form, "platforms", 'input.acp-el-opt[data-value="windows"]')).check()
    page.locator(f"{form} .acp-el-accept").click()
    answered_js = f"() => document.querySelectorAll('{FORM}')[0]?.dataset.state ?? null"
    wait_value(page, answered_js, "accepted", "the form accepted")

    # the URL: text only; nothing opens, nothing reaches its host, until the click
    url_card = in_cell(DEMO_WAIT, URL_CARD)
    page.locator(url_card).wait_for(state="visible", timeout=TIMEOUT)
    shown = page.locator(f"{url_card} .acp-el-url").inner_text()
    assert shown.startswith(f"https://{HOST}/acp-demo/connect?elicitation=elic_")
    assert page.locator(f"{url_card} .acp-el-domain").inner_text() == "example.com"
    assert page.locator(f"{url_card} a, {url_card} iframe, {url_card} img").count() == 0
    page.evaluate("() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")
    assert hits == [] and len(page.context.pages) == 1
    assert not [u for u in lab_pages.recorder.requests if HOST in u]
    with page.context.expect_page() as opened:
        page.locator(f"{url_card} .acp-el-accept").click()
    tab = opened.value
    tab.wait_for_load_state()
    assert tab.url == shown and tab.evaluate("() => window.opener") is None
    assert hits[0] == shown
    state_js = f"() => document.querySelector('{URL_CARD}')?.dataset.state ?? null"
    wait_value(page, state_js, "waiting", "the URL card waiting for the agent")
    assert (
        page.locator(f"{url_card} .acp-el-outcome").inner_text().startswith("Opened — waiting for the agent")
    )
    wait_value(page, state_js, "completed", "the agent's elicitation/complete", timeout=TIMEOUT)
    tab.close()

    wait_output(page, DEMO_WAIT, "turn ended (end_turn)", "the turn to end")
    said = cell(page, DEMO_WAIT).locator(".acp-msg-agent").all_inner_texts()
    assert any("Release spring 2.0.0 with the aggressive strategy on linux, windows." in s for s in said), (
        said
    )
    wait_output(page, DEMO_PRINT, "elic_", "the elicitations printed")
    printed = output_text(page, DEMO_PRINT)
    assert "elic_1 form accepted user {" in printed and "'version': '2.0.0'" in printed, printed
    assert "elic_2 url completed user None" in printed, printed
    assert lab_pages.recorder.errors == []
