"""An elicitation's messages linked in the X-ray, in Chromium, offline: an exported replay of a
trace where the agent asks a URL elicitation scoped to our ``session/new`` (accepted by the
agent's handler) and then completes it — the request names its answer and its completion, the
completion names the request, and the page holds no query of the URL."""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
from pathlib import Path
from typing import Any

import pytest

import acp_notebook
from acp_notebook.client.agent import Agent
from acp_notebook.playback.memory import MemoryStream

from .conftest import CHROMIUM, unavailable, wait_value
from .test_export_html import ROWS, _open

pytest.importorskip("playwright.sync_api")

STATIC = Path(acp_notebook.__file__).resolve().parent / "static"
if not (STATIC / "runtime.js").exists():
    unavailable("JS bundle not built (cd js && npm install && npm run build)")
if not Path(CHROMIUM).exists():
    unavailable(f"Chromium not installed at {CHROMIUM}")

SECRET = "state=Z9QUERYz"
HEAD = "() => document.querySelector('.acp-xray-detail-head')?.innerText || ''"


async def _record(path: Path) -> None:
    def answer(message: Any) -> None:
        if not isinstance(message, dict):
            return
        if message.get("method") == "initialize":
            stream.push({"jsonrpc": "2.0", "id": message["id"], "result": {"protocolVersion": 2}})
        elif message.get("method") == "session/new":
            params = {
                "requestId": message["id"],
                "mode": "url",
                "elicitationId": "el-7",
                "message": "Sign in",
            }
            params["url"] = f"https://auth.example.org/start?{SECRET}"
            stream.push({"jsonrpc": "2.0", "id": 70, "method": "elicitation/create", "params": params})
            held.append(message["id"])
        elif message.get("id") == 70:
            stream.push(
                {"jsonrpc": "2.0", "method": "elicitation/complete", "params": {"elicitationId": "el-7"}}
            )
            stream.push({"jsonrpc": "2.0", "id": held[0], "result": {"sessionId": "s1"}})

    held: list[Any] = []
    stream = MemoryStream(on_sent=answer)
    agent = Agent(stream, record=path, elicitation_handler=lambda e: "accept")
    await agent.initialize(2)
    await agent.new_session("/tmp")
    await agent.close()


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> tuple[Path, list[dict]]:
    folder = tmp_path_factory.mktemp("elicit")
    trace = folder / "elicit.jsonl"
    with concurrent.futures.ThreadPoolExecutor(1) as pool:  # the browser's loop runs in this thread
        pool.submit(asyncio.run, _record(trace)).result()
    rep = acp_notebook.replay(trace)
    try:
        return acp_notebook.export_html(rep, folder / "elicit.html"), list(rep.entries)
    finally:
        rep.close()


def _index(entries: list[dict], direction: str, test: Any) -> int:
    return next(i for i, e in enumerate(entries) if e["dir"] == direction and test(e.get("message") or {}))


def test_the_xray_links_an_elicitation_s_messages(exported, lab_browser):
    path, entries = exported
    assert SECRET not in path.read_text()
    ask = _index(entries, "in", lambda m: m.get("method") == "elicitation/create")
    answered = _index(entries, "out", lambda m: m.get("id") == 70 and "method" not in m)
    done = _index(entries, "in", lambda m: m.get("method") == "elicitation/complete")
    errors: list[str] = []
    dialogs: list[str] = []
    ctx, page = _open(lab_browser, path, errors, dialogs)
    try:
        wait_value(page, f"() => ({ROWS})().length >= {done + 1}", True, "the X-ray rows")
        page.locator(f'.acp-xray-row[data-index="{done}"]').click()
        wait_value(page, f"() => ({HEAD})().includes('request #{ask}')", True, "the completion's request")
        page.locator(".acp-xray-detail-head .acp-xray-goto").first.click()
        wait_value(page, f"() => ({HEAD})().startsWith('#{ask} elicitation/create')", True, "the request")
        head = page.evaluate(HEAD)
        assert f"response #{answered}" in head and f"related: #{done}" in head, head
        page.locator(".acp-xray-related .acp-xray-goto").click()
        wait_value(page, f"() => ({HEAD})().startsWith('#{done} elicitation/complete')", True, "back")
        shown = json.loads(page.locator(".acp-xray-json").inner_text())
        assert shown["params"] == {"elicitationId": "el-7"}
        page.locator(f'.acp-xray-row[data-index="{ask}"]').click()
        wait_value(
            page,
            "() => document.querySelector('.acp-xray-json')?.innerText.includes('auth.example.org')",
            True,
            "url",
        )
        assert SECRET not in page.locator(".acp-xray-json").inner_text()
    finally:
        ctx.close()
    assert errors == [] and dialogs == []
