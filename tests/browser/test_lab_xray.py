"""The protocol X-ray and the replay scrubber in a real JupyterLab, in Chromium, clicked like a user.

A live demo session's ``SessionView(session, xray=True)``: the panel lists the session's
messages, the filter narrows them, picking a card marks the messages that built it, picking a
message shows its JSON and pins the tree to the state right after it (re-enacted in the kernel),
"Back to live" returns. A shipped trace's ``replay(...).view(xray=True)``: the scrubber's step and
play buttons move the replay (and the panel's position), and a message picked in the panel seeks.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ..support import until
from .conftest import ARTIFACTS, unavailable, write_code_notebook
from .test_lab_demo import CHROMIUM, STATIC, TIMEOUT, save, saved_is_final, view_state

nbformat = pytest.importorskip("nbformat")
sync_api = pytest.importorskip("playwright.sync_api")
pytest.importorskip("jupyterlab")

if not (STATIC / "runtime.js").exists() or not Path(CHROMIUM).exists():
    unavailable("JS bundle not built or Chromium missing")

LIVE = "xray_live.ipynb"
REPLAY = "xray_replay.ipynb"


def write(root: Path, name: str, cells: list[str]) -> None:
    write_code_notebook(root / name, cells)


def run_notebook(page, server, name: str) -> None:
    page.goto(server.lab_url(name), wait_until="domcontentloaded", timeout=60_000)
    idle = "() => window.jupyterapp?.shell.currentWidget?.sessionContext?.session?.kernel?.status === 'idle'"
    wait_js(page, idle, "the kernel to be idle", timeout=60_000)
    page.evaluate("() => void window.jupyterapp.commands.execute('notebook:run-all-cells')")


def wait_js(page, js: str, what: str, arg=None, timeout: float = TIMEOUT) -> None:
    try:
        page.wait_for_function(js, arg=arg, timeout=timeout, polling=100)
    except sync_api.TimeoutError:
        outputs = page.evaluate(
            "() => [...document.querySelectorAll('.jp-OutputArea')].map((o) => o.innerText.slice(0, 2000))"
        )
        pytest.fail(
            f"timed out waiting for {what}; view: {json.dumps(view_state(page))[:3000]}; outputs: {outputs}"
        )


ROWS_JS = (
    "() => [...document.querySelectorAll('.acp-xray-row[data-index]')]"
    ".map((r) => r.innerText.replace(/\\s+/g, ' '))"
)


def test_live_xray_filters_marks_and_pins(lab_log, lab_pages):
    server = lab_log
    write(server.root, LIVE, [
        "import sys\nimport acp_notebook\nfrom acp_notebook import SessionView\n"
        "from acp_notebook.policies import allow",
        "demo = [sys.executable, '-m', 'acp_notebook.demo_agent', '--speed', '0']\n"
        f"agent = await acp_notebook.start_agent(demo, {str(server.root)!r})\n"
        f"session = await agent.new_session({str(server.root)!r})\n"
        "session.permission_handler = allow()\n"
        "await session.prompt('Fix the failing test, please.')\n"
        "SessionView(session, xray=True, title='Live X-ray')",
    ])  # fmt: skip
    page = lab_pages("xray-live", width=1500)
    run_notebook(page, server, LIVE)
    wait_js(page, "() => document.querySelectorAll('.acp-xray-row[data-index]').length > 5", "the X-ray rows")
    count = page.locator(".acp-xray-count").inner_text()
    total = int(count.split()[0])
    assert total > 40, count
    assert page.locator(".acp-xray-row[data-index]").count() < 40  # virtualised: only what is in view

    # the filter narrows the list (kernel-side), and clearing it brings every row back
    page.fill(".acp-xray-filter", "session/request_permission")
    wait_js(
        page,
        "() => [...document.querySelectorAll('.acp-xray-row[data-index]')].length === 2",
        "two permission rows",
    )
    rows = page.evaluate(ROWS_JS)
    assert all("session/request_permission" in r for r in rows), rows
    asked = int(rows[0].split()[0].lstrip("#"))
    page.fill(".acp-xray-filter", "")
    wait_js(page, "() => document.querySelectorAll('.acp-xray-row[data-index]').length > 5", "all rows again")

    # picking a card marks the messages that built it
    page.locator('.acp-card[data-key="tool_call:call_edit"] .acp-card-title').click()
    wait_js(
        page,
        "() => /built by \\d+ messages/.test(document.querySelector('.acp-xray-cardbar')?.innerText || '')",
        "the card bar",
    )
    marked = "() => document.querySelectorAll('.acp-xray-row.acp-xray-marked').length > 0"
    wait_js(page, marked, "the card's first message marked and scrolled into view")
    assert page.locator('.acp-card[data-key="tool_call:call_edit"].acp-xray-picked').count() == 1

    # picking the permission request shows its JSON and the state right after it: the question open
    page.fill(".acp-xray-filter", "session/request_permission")
    wait_js(page, "() => document.querySelectorAll('.acp-xray-row[data-index]').length === 2", "two rows")
    page.locator(f'.acp-xray-row[data-index="{asked}"]').click()
    wait_js(page, "() => !document.querySelector('.acp-pinbar')?.hidden", "the pinned bar")
    assert f"message #{asked}" in page.locator(".acp-pinbar").inner_text()
    detail = page.locator(".acp-xray-json").inner_text()
    assert json.loads(detail)["method"] == "session/request_permission"
    wait_js(
        page,
        "() => document.querySelector('.acp-permission[data-state=\"open\"]') !== null",
        "the question open in the past state",
    )
    assert page.locator('.acp-card[data-key="tool_call:call_test"]').count() == 0  # not announced yet then
    assert page.locator(".acp-session.acp-readonly").count() == 1

    page.locator(".acp-pinbar button").click()
    wait_js(
        page,
        "() => document.querySelector('.acp-pinbar')?.hidden"
        " && !document.querySelector('.acp-permission[data-state=\"open\"]')",
        "back to live",
    )
    assert page.locator('.acp-card[data-key="tool_call:call_test"]').count() == 1
    assert page.locator(".acp-session.acp-readonly").count() == 0
    assert lab_pages.recorder.external_requests() == []

    # saved, then reopened in a new kernel (the session gone): the count and a clear note, no rows
    until(lambda: saved_is_final(server.root / LIVE) or _save(page), 15, interval=0.5, message="the save")
    page.context.close()
    assert server.shutdown_kernel_of(LIVE), server.sessions()
    fresh = lab_pages("xray-saved", width=1500)
    fresh.goto(server.lab_url(LIVE), wait_until="domcontentloaded", timeout=60_000)
    wait_js(fresh, "() => !!document.querySelector('.acp-xray-count')", "the saved X-ray view")
    assert fresh.locator(".acp-xray-count").inner_text() == count
    wait_js(
        fresh, "() => !!document.querySelector('.acp-xray-unreachable')", "the no-kernel note", timeout=20_000
    )
    assert "export_html keeps the messages" in fresh.locator(".acp-xray-unreachable").inner_text()


def _save(page) -> bool:
    page.evaluate("() => window.jupyterapp.shell.currentWidget.context.model.dirty = true")
    save(page)
    return False


def test_replay_scrubber_and_xray_seek(lab_log, lab_pages):
    server = lab_log
    write(server.root, REPLAY, [
        "import acp_notebook\nrep = acp_notebook.replay('demo_v2.jsonl', position=0)\n"
        "rep.view(xray=True, title='Replay X-ray')",
    ])  # fmt: skip
    page = lab_pages("xray-replay", width=1500)
    run_notebook(page, server, REPLAY)
    label = "() => document.querySelector('.acp-replay-bar .acp-rb-where')?.textContent || ''"
    wait_js(page, f"() => ({label})().startsWith('0/75')", "the scrubber at 0/75")
    forward = page.locator(".acp-replay-bar .acp-rb-forward")
    for _ in range(3):
        forward.click()
    wait_js(page, f"() => ({label})().startsWith('3/75')", "three steps on")
    wait_js(
        page,
        "() => document.querySelector('.acp-xray-row[data-index=\"2\"]')"
        "?.classList.contains('acp-xray-current')",
        "the panel's position mark",
    )
    assert page.locator('.acp-xray-row[data-index="5"].acp-xray-ahead').count() == 1

    page.locator(".acp-replay-bar").screenshot(path=str(ARTIFACTS / "v21-replay-bar-lab.png"))
    page.locator(".acp-replay-bar .acp-rb-speed").select_option("instant")
    page.locator(".acp-replay-bar .acp-rb-play").click()
    wait_js(page, f"() => ({label})().startsWith('75/75')", "play to the end")
    wait_js(page, "() => document.querySelectorAll('.acp-card').length === 7", "the seven cards at the end")

    page.locator(".acp-xray-list").evaluate("(el) => { el.scrollTop = 30 * 22 - 40; }")
    wait_js(page, "() => document.querySelector('.acp-xray-row[data-index=\"30\"]') !== null", "row 30 drawn")
    page.locator('.acp-xray-row[data-index="30"]').click()
    wait_js(page, f"() => ({label})().startsWith('31/75')", "the scrubber following the pick")
    wait_js(page, "() => document.querySelectorAll('.acp-card').length < 7", "the tree at 31")
    assert lab_pages.recorder.external_requests() == []
