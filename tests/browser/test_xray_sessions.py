"""The X-ray's session column and filter in Chromium, offline: an exported replay of a trace with
subagents (``tests/test_subagent_playback.py``'s conversation) — a tag per row naming its session,
a filter listing the session tree, and picking one keeps only its rows."""

from __future__ import annotations

import asyncio
import concurrent.futures
from pathlib import Path

import pytest

import acp_notebook
from tests.test_subagent_playback import CHILD, GRANDCHILD, conversation, record

from .conftest import CHROMIUM, unavailable, wait_value
from .test_export_html import ROWS, _open

pytest.importorskip("playwright.sync_api")

STATIC = Path(acp_notebook.__file__).resolve().parent / "static"
if not (STATIC / "runtime.js").exists():
    unavailable("JS bundle not built (cd js && npm install && npm run build)")
if not Path(CHROMIUM).exists():
    unavailable(f"Chromium not installed at {CHROMIUM}")

TAGS = (
    "() => [...document.querySelectorAll('.acp-xray-row[data-index] .acp-xray-sess')]"
    ".map((t) => t.textContent)"
)


async def _record(path: Path) -> None:
    agent, _ = await record(path, conversation())
    await agent.close()


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> tuple[Path, list[dict]]:
    folder = tmp_path_factory.mktemp("sessions")
    trace = folder / "sub.jsonl"
    with concurrent.futures.ThreadPoolExecutor(1) as pool:  # the browser's loop runs in this thread
        pool.submit(asyncio.run, _record(trace)).result()
    rep = acp_notebook.replay(trace)
    try:
        out = acp_notebook.export_html(rep, folder / "sub.html")
        return out, list(rep.entries)
    finally:
        rep.close()


def test_the_xray_names_and_filters_sessions(exported, lab_browser):
    path, entries = exported
    errors: list[str] = []
    dialogs: list[str] = []
    ctx, page = _open(lab_browser, path, errors, dialogs)
    try:
        wait_value(page, f"() => ({ROWS})().length > 5", True, "the X-ray rows")
        options = page.locator(".acp-xray-session option").all_inner_texts()
        assert options == ["all sessions", "s1", f"  ↳ Explore ({CHILD})", f"    ↳ Deeper ({GRANDCHILD})"]
        assert page.locator(".acp-xray-session").is_visible()
        tags = page.evaluate(TAGS)
        assert "main" in tags and "› Explore" in tags and "›› Deeper" in tags, tags
        page.select_option(".acp-xray-session", CHILD)
        mine = [i for i, e in enumerate(entries) if e.get("session") == CHILD]
        wait_value(page, ROWS, mine, "only the child's rows")
        assert set(page.evaluate(TAGS)) == {"› Explore"}
        page.fill(".acp-xray-filter", "agent_message_chunk")
        said = [i for i in mine if "agent_message_chunk" in str(entries[i])]
        wait_value(page, ROWS, said, "the child's message chunks")
        page.locator(f'.acp-xray-row[data-index="{said[0]}"]').click()
        wait_value(page, "() => !!document.querySelector('.acp-xray-json')", True, "the detail")
        assert f"session {CHILD}" in page.locator(".acp-xray-detail-head").inner_text()
        page.select_option(".acp-xray-session", "")
        page.fill(".acp-xray-filter", "")
        wait_value(page, f"() => ({ROWS})().length > {len(mine)}", True, "every session again")
    finally:
        ctx.close()
    assert errors == [] and dialogs == []
