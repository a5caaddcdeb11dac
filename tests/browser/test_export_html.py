"""An exported session page (``export_html``) in Chromium, offline: file:// only, no kernel.

A real demo-agent turn (permissions answered by a handler) is exported; the page is opened from
disk with every non-file request blocked (and recorded), and must draw the cards, a diff and a
terminal's text from the embedded bytes, with no dialog and no page error.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
from pathlib import Path

import pytest

import acp_notebook
import acp_notebook.traces

from .conftest import CHROMIUM, unavailable, wait_value

sync_api = pytest.importorskip("playwright.sync_api")

STATIC = Path(acp_notebook.__file__).resolve().parent / "static"
TOOL_CALLS = ["call_read", "call_edit", "call_test", "call_search", "call_index", "call_fetch", "call_think"]

if not (STATIC / "runtime.js").exists():
    unavailable("JS bundle not built (cd js && npm install && npm run build)")
if not Path(CHROMIUM).exists():
    unavailable(f"Chromium not installed at {CHROMIUM}")


async def _demo_turn(out: Path) -> dict:
    agent = await acp_notebook.start_agent("python -m acp_notebook.demo_agent", env={"ACP_DEMO_SPEED": "0"})
    try:
        session = await agent.new_session(str(out.parent))
        session.permission_handler = lambda request: "allow-once"
        stop = await asyncio.wait_for(session.prompt("Fix the bug"), 30)
        acp_notebook.export_html(session, out)
        terminals = list(session.state.terminals)
        return {"stop": stop, "tool_calls": list(session.state.tool_calls), "terminals": terminals}
    finally:
        await agent.close()


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("export") / "session.html"
    # in a thread of its own: the shared browser's Playwright marks its loop as running in this one
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        info = pool.submit(asyncio.run, _demo_turn(out)).result()
    assert info["stop"] == "end_turn" and info["terminals"]
    return out, info


def test_exported_page_renders_offline(exported, lab_browser):
    path, info = exported
    blocked: list[str] = []
    attempted: list[str] = []
    dialogs: list[str] = []
    errors: list[str] = []

    def route(r):
        if r.request.url.startswith("file://"):
            r.continue_()
        else:
            blocked.append(r.request.url)
            r.abort()

    ctx = lab_browser.new_context(viewport={"width": 1100, "height": 1400})
    try:
        ctx.route("**/*", route)
        page = ctx.new_page()
        page.on("request", lambda r: r.url.startswith("file://") or attempted.append(r.url))
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("console", lambda m: m.type == "error" and errors.append(m.text))
        page.goto(path.as_uri(), timeout=15_000)
        wait_value(page, "() => document.documentElement.dataset.acpExport || null", "mounted", "the mount")
        keys = page.evaluate("() => [...document.querySelectorAll('.acp-card')].map((c) => c.dataset.key)")
        assert [f"tool_call:{tc}" for tc in info["tool_calls"]] == keys
        states = page.evaluate(
            "() => [...document.querySelectorAll('.acp-card')].map((c) => c.dataset.status)"
        )
        assert set(states) <= {"completed", "failed"}, states
        # a diff: the edit card's changed lines
        edit = '.acp-card[data-key="tool_call:call_edit"]'
        page.locator(edit).scroll_into_view_if_needed()
        wait_value(
            page,
            "(s) => document.querySelectorAll(s).length > 0",
            True,
            "a diff",
            f"{edit} .acp-diff-file",
        )
        inserted = page.evaluate(
            "(s) => [...document.querySelectorAll(s)].map((e) => e.textContent).join('\\n')",
            f"{edit} td.d2h-ins .d2h-code-line-ctn",
        )
        assert inserted.strip(), "the diff shows no inserted line"
        # a terminal drawn from the embedded bytes
        term = f'[data-terminal-id="{info["terminals"][0]}"]'
        page.locator(term).first.scroll_into_view_if_needed()
        lines_js = """async (s) => {
          const api = (await globalThis.__acpNotebook).debug;
          const t = document.querySelector(s);
          if (!t || !api.isInstantiated(t)) return false;
          return (await api.terminalLines(t)).some((l) => l.includes("test_greet PASSED"));
        }"""
        wait_value(page, lines_js, True, "the terminal's text", term, timeout=15_000)
        # read-only: a click on a button sends nowhere and breaks nothing
        buttons = page.locator("button")
        if buttons.count():
            buttons.first.click(timeout=5_000)
        page.screenshot(path=str(path.with_suffix(".png")), full_page=True)
        assert blocked == [] and attempted == [], (
            f"the exported page tried the network: {blocked + attempted}"
        )
        page_errors = list(errors)  # the probes below log CSP refusals on purpose
        # the page's own CSP refuses a fetch; and the route guard sees what gets past a page
        assert (
            page.evaluate("() => fetch('http://example.invalid/a').then(() => 'sent', () => 'refused')")
            == "refused"
        )
        with pytest.raises(sync_api.Error):
            ctx.new_page().goto("http://example.invalid/probe", timeout=5_000)
        assert blocked == ["http://example.invalid/probe"]
    finally:
        ctx.close()
    assert dialogs == [], f"dialogs fired: {dialogs}"
    assert page_errors == [], f"page errors: {page_errors}"


# -- the X-ray in an exported page ----------------------------------------------------------------
HOSTILE = "<img src=x onerror=alert(1)>"


def _long_trace(out: Path, extra: int) -> Path:
    """The shipped demo trace with ``extra`` updates before the turn ends (the last one with a status
    that v2 does not have)."""
    lines = acp_notebook.traces.path("demo_v2.jsonl").read_text().splitlines()
    entries = [json.loads(line) for line in lines]
    end = len(entries) - 1  # before the last entry: the v2 state_update that ends the turn
    session = entries[end - 1]["message"]["params"]["sessionId"]

    def update(n: int, status: str) -> dict:
        upd = {"sessionUpdate": "tool_call_update", "toolCallId": "call_read", "status": status,
               "title": f"Read {n} {HOSTILE}"}  # fmt: skip
        message = {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {"sessionId": session, "update": upd},
        }
        return {
            "dir": "in",
            "t": entries[end - 1]["t"],
            "kind": "message",
            "message": message,
            "session": session,
        }

    added = [update(n, "completed") for n in range(extra - 1)] + [update(extra, "suspended")]
    path = out / "long.jsonl"
    path.write_text("\n".join(json.dumps(e) for e in [*entries[:end], *added, *entries[end:]]) + "\n")
    return path


def _open(browser, path: Path, errors: list[str], dialogs: list[str]):
    """A page of a new context of ``browser`` showing the exported ``path``, file:// only; (context, page)."""
    ctx = browser.new_context(viewport={"width": 1500, "height": 1200})
    ctx.route("**/*", lambda r: r.continue_() if r.request.url.startswith("file://") else r.abort())
    page = ctx.new_page()
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(path.as_uri(), timeout=15_000)
    wait_value(page, "() => document.documentElement.dataset.acpExport || null", "mounted", "the mount")
    return ctx, page


ROWS = "() => [...document.querySelectorAll('.acp-xray-row[data-index]')].map((r) => Number(r.dataset.index))"


def test_exported_xray_filters_links_and_marks_offline(exported, lab_browser):
    path, _info = exported
    errors: list[str] = []
    dialogs: list[str] = []
    ctx, page = _open(lab_browser, path, errors, dialogs)
    try:
        wait_value(page, f"() => ({ROWS})().length > 5", True, "the X-ray rows")
        page.fill(".acp-xray-filter", "session/request_permission")
        wait_value(page, f"() => ({ROWS})().length", 2, "the two permission requests")
        count = "() => document.querySelector('.acp-xray-count').textContent"
        assert page.evaluate(count).startswith("2 of ")  # the count follows the filter
        placeholder = """() => { const f = document.querySelector('.acp-xray-filter');
          const c = document.createElement('canvas').getContext('2d'); c.font = getComputedStyle(f).font;
          return c.measureText(f.placeholder).width <= f.clientWidth; }"""
        assert page.evaluate(placeholder)  # the placeholder fits its box
        asked = page.evaluate(ROWS)[0]
        page.locator(f'.acp-xray-row[data-index="{asked}"]').click()
        wait_value(page, "() => !!document.querySelector('.acp-xray-json')", True, "the detail")
        shown = page.locator(".acp-xray-detail").inner_text()
        assert (
            json.loads(page.locator(".acp-xray-json").inner_text())["method"] == "session/request_permission"
        ), shown
        assert "needs the kernel" in page.locator(".acp-xray-detail").inner_text()
        page.locator(".acp-xray-detail-head .acp-xray-goto").click()  # to its response
        wait_value(page, "() => document.querySelector('.acp-xray-detail-head strong')?.textContent",
                   f"#{asked + 1} response", "the linked response")  # fmt: skip
        assert page.locator(".acp-xray-filter").input_value() == ""  # the filter hid it: cleared
        page.locator('.acp-card[data-key="tool_call:call_edit"] .acp-card-title').click()
        bar = "() => /built by \\d+ messages/.test(document.querySelector('.acp-xray-cardbar').innerText)"
        wait_value(page, bar, True, "the card bar")
        title = page.locator('.acp-card[data-key="tool_call:call_edit"] .acp-card-title').inner_text()
        named = page.locator(".acp-xray-cardbar .acp-xray-card-name").inner_text()
        assert named.startswith(f"{title}: built by"), named  # the card by its title, not its key
        marked = "() => document.querySelectorAll('.acp-xray-row.acp-xray-marked').length >= 3"
        wait_value(page, marked, True, "the card's messages marked")
    finally:
        ctx.close()
    assert errors == [] and dialogs == []


def test_exported_xray_of_a_long_trace_virtualises_and_shows_findings(tmp_path, lab_browser):
    rep = acp_notebook.replay(_long_trace(tmp_path, 3000))
    out = acp_notebook.export_html(rep, tmp_path / "long.html")
    rep.close()
    errors: list[str] = []
    dialogs: list[str] = []
    ctx, page = _open(lab_browser, out, errors, dialogs)
    try:
        wait_value(
            page,
            "() => document.querySelector('.acp-xray-count').textContent",
            "3075 messages",
            "the count",
        )
        assert len(page.evaluate(ROWS)) < 60  # only the rows in view are in the DOM
        page.locator(".acp-xray-list").evaluate("(el) => { el.scrollTop = el.scrollHeight; }")
        wait_value(page, f"() => ({ROWS})().includes(3074)", True, "the last row after scrolling")
        summary = page.locator(".acp-xray-findings summary").inner_text()
        assert summary.startswith("Doctor: 1 violation"), summary
        page.locator(".acp-xray-findings").evaluate("(d) => { d.open = true; }")
        page.locator(".acp-xray-findings .acp-xray-goto").first.click()
        flagged = page.locator(".acp-xray-detail .acp-xray-finding").inner_text()
        assert "reserved-value" in flagged and "suspended" in flagged, flagged
        assert page.locator(".acp-xray-row .acp-xray-flag.acp-sev-error").count() == 1
        assert HOSTILE in page.locator(".acp-xray-json").inner_text()  # as text, never markup
    finally:
        ctx.close()
    assert errors == [] and dialogs == []


async def _subagent_session(out: Path) -> None:
    """A session whose subagent ran a command (its own terminal, the same id as the root's) and
    a grandchild of its own, exported."""
    from ..support import update
    from ..test_client_framing import connect
    from ..test_subagents import announce

    peer, agent, session = await connect(2)
    term = {"type": "terminal", "terminalId": "t1"}
    output = {
        "sessionUpdate": "terminal_update",
        "terminalId": "t1",
        "output": {"data": "Y2hpbGQgc2F5cyBoaQ=="},
    }
    peer.send(announce(title="Explore <script>", state={"state": "idle"}))
    peer.send(
        update(
            {"sessionUpdate": "tool_call_update", "toolCallId": "c1", "title": "Run", "content": [term]},
            "child-1",
        )
    )
    peer.send(update(output, "child-1"))
    peer.send(announce("grand-1", "child-1", title="Deeper"))
    await peer.settled()
    acp_notebook.export_html(session, out, xray=False)
    await agent.close()


def test_an_exported_page_draws_the_subagent_tree(tmp_path, lab_browser):
    out = tmp_path / "subagents.html"
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, _subagent_session(out)).result()
    ctx = lab_browser.new_context(viewport={"width": 1100, "height": 900})
    try:
        ctx.route("**/*", lambda r: r.continue_() if r.request.url.startswith("file://") else r.abort())
        page = ctx.new_page()
        page.goto(out.as_uri(), timeout=15_000)
        wait_value(page, "() => document.documentElement.dataset.acpExport || null", "mounted", "the mount")
        card = '.acp-subagent[data-key="subagent:child-1"]'
        assert page.locator(f"{card} > .acp-sub-head .acp-sub-title").text_content() == "Explore <script>"
        page.locator(f"{card} > .acp-sub-head").click()  # closed: nothing waits
        inner = f'{card} .acp-card[data-key="subagent:child-1/tool_call:c1"] .acp-terminal'
        page.locator(inner).scroll_into_view_if_needed()
        lines_js = """async (s) => {
          const api = (await globalThis.__acpNotebook).debug;
          const t = document.querySelector(s);
          return !!t && api.isInstantiated(t) && (await api.terminalLines(t)).includes("child says hi");
        }"""
        wait_value(page, lines_js, True, "the child's terminal text", inner, timeout=15_000)
        grand = f'{card} .acp-subagent[data-key="subagent:child-1/subagent:grand-1"] .acp-sub-title'
        assert page.locator(grand).text_content() == "Deeper"
    finally:
        ctx.close()
