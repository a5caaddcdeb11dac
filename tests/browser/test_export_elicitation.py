"""Elicitations in an exported page (``export_html``, issue 20 item 6) in Chromium, offline: a pending
form is drawn inert, an answered one shows its action and values, a URL only as
``scheme://host/path`` (its query, with a one-time code, is in no byte of the file)."""

from __future__ import annotations

from pathlib import Path

import pytest

import acp_notebook
from acp_notebook import SessionState
from acp_notebook.protocol.elicitation import Elicitation

from .conftest import CHROMIUM, unavailable, wait_value

sync_api = pytest.importorskip("playwright.sync_api")

STATIC = Path(acp_notebook.__file__).resolve().parent / "static"
if not (STATIC / "runtime.js").exists():
    unavailable("JS bundle not built (cd js && npm install && npm run build)")
if not Path(CHROMIUM).exists():
    unavailable(f"Chromium not installed at {CHROMIUM}")

FORM = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Name"},
        "langs": {"type": "array", "items": {"enum": ["py", "rs"]}, "title": "Languages"},
    },
    "required": ["name"],
}
URL = "https://auth.example.org/device?code=ONE-TIME-4242"


def _asked(state: SessionState, key: str, **params) -> Elicitation:
    e = Elicitation(key, key, {"sessionId": "s1", "message": f"question {key}", **params})
    state.add_elicitation(e)
    return e


def test_an_export_draws_pending_cards_inert_and_answered_ones_with_their_values(lab_browser, tmp_path):
    state = SessionState()
    _asked(state, "elic_1", mode="form", requestedSchema=FORM)
    done = _asked(state, "elic_2", mode="form", requestedSchema=FORM)
    done.accept({"name": "Ada", "langs": ["rs"]}, by="user")
    state.elicitation_changed(done)
    consent = _asked(state, "elic_3", mode="url", url=URL, elicitationId="dev-1")
    consent.accept(by="user")
    state.elicitation_changed(consent)
    out = tmp_path / "asked.html"
    acp_notebook.export_html(state, out)
    assert "ONE-TIME-4242" not in out.read_text()
    attempted: list[str] = []
    ctx = lab_browser.new_context()
    try:
        page = ctx.new_page()
        page.on("request", lambda r: r.url.startswith("file://") or attempted.append(r.url))
        page.goto(out.as_uri(), timeout=15_000)
        wait_value(page, "() => document.documentElement.dataset.acpExport || null", "mounted", "the mount")
        card = '.acp-elicitation[data-key="elicitation:{}"]'.format
        states = page.evaluate(
            "() => [...document.querySelectorAll('.acp-elicitation')].map((e) => e.dataset.state)"
        )
        assert states == ["saved", "accepted", "waiting"]
        controls = f"{card('elic_1')} input, {card('elic_1')} button"
        assert page.evaluate(f"() => [...document.querySelectorAll('{controls}')].every((c) => c.disabled)")
        values = page.evaluate(
            "(s) => [...document.querySelectorAll(s)].map((r) => r.textContent)",
            f"{card('elic_2')} .acp-el-value",
        )
        assert values == ["NameAda", "Languagesrs"]
        assert page.text_content(f"{card('elic_3')} .acp-el-url") == "https://auth.example.org/device"
        assert page.locator(f"{card('elic_3')} a").count() == 0
        assert attempted == []
    finally:
        ctx.close()
