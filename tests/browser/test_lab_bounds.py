"""A large session in a real JupyterLab (Chromium): 300 cards and a 2 MiB terminal, more than one
comm message holds. It draws whole live (the terminal with every byte the kernel holds), again
after a page reload (the paged snapshot, then the resync), and from the saved notebook with the
kernel gone, where the terminal keeps its newest bytes and says "earlier output trimmed".
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ..support import until
from .conftest import unavailable, wait_value, write_code_notebook
from .test_lab_demo import CHROMIUM, STATIC, WIDGET_STATE, save, wait_js

nbformat = pytest.importorskip("nbformat")
pytest.importorskip("playwright.sync_api")
if not (STATIC / "runtime.js").exists() or not Path(CHROMIUM).exists():
    unavailable("JS bundle not built or Chromium missing")

NAME = "bounds.ipynb"
CARDS = 300
LINE = "line %06d of the long build log ...............................\r\n"  # < 80 columns
LINES = 2 * 1024 * 1024 // (len(LINE % 0))  # ~2 MiB
TOTAL = LINES * len(LINE % 0)
SETUP = f"""import base64
from acp_notebook import SessionState, SessionView
state = SessionState()
for i in range({CARDS}):
    content = [{{"type": "terminal", "terminalId": "big"}}] if i == 0 else [
        {{"type": "content", "content": {{"type": "text", "text": f"result of step {{i}} " * 20}}}}]
    state.apply({{"sessionUpdate": "tool_call", "toolCallId": f"c{{i}}", "title": f"step {{i}}",
                 "kind": "execute", "status": "completed", "content": content}})
data = "".join({LINE!r} % n for n in range({LINES})).encode()
for at in range(0, len(data), 65536):
    state.apply({{"sessionUpdate": "terminal_output_chunk", "terminalId": "big",
                 "data": base64.b64encode(data[at:at + 65536]).decode()}})
view = SessionView(state)
view"""
KERNEL_IDLE = (
    "() => window.jupyterapp?.shell?.currentWidget?.sessionContext?.session?.kernel?.status === 'idle'"
)
COUNT = "() => document.querySelectorAll('.acp-card').length"
LAST_TITLE = (
    f"() => document.querySelector('.acp-card[data-key=\"tool_call:c{CARDS - 1}\"] .acp-card-title')"
    "?.textContent ?? null"
)
TERMINAL = """async () => {
  const t = document.querySelector('.acp-card[data-key="tool_call:c0"] .acp-terminal');
  if (!t) return null;
  const api = (await globalThis.__acpNotebook).debug;
  const s = api.storeState(t);
  const marker = t.querySelector('.acp-term-trimmed')?.textContent ?? null;
  t.scrollIntoView();
  const lines = (await api.terminalLines(t)).filter((l) => l);
  return {end: s.end, start: s.start, marker, last: lines[lines.length - 1]};
}"""
LAST_LINE = (LINE % (LINES - 1)).rstrip()


def _open(page, server, what: str) -> None:
    page.goto(server.lab_url(NAME), wait_until="domcontentloaded", timeout=60_000)
    wait_js(page, KERNEL_IDLE, what, timeout=60_000)


def _whole(page, what: str) -> None:
    wait_value(page, COUNT, CARDS, f"{CARDS} cards ({what})")
    wait_value(page, LAST_TITLE, f"step {CARDS - 1}", f"the last card's title ({what})")


def saved_models(path: Path) -> dict:
    nb = json.loads(path.read_text())
    return nb.get("metadata", {}).get("widgets", {}).get(WIDGET_STATE, {}).get("state", {})


def test_a_large_session_draws_live_after_reload_and_saved(lab_log, lab_pages):
    server = lab_log
    write_code_notebook(server.root / NAME, [SETUP])

    page = lab_pages("bounds-live")
    _open(page, server, "the kernel")
    page.evaluate("() => void window.jupyterapp.commands.execute('notebook:run-all-cells')")
    _whole(page, "live")
    full = {"end": TOTAL, "start": 0, "marker": None, "last": LAST_LINE}
    wait_value(page, TERMINAL, full, "every byte of the 2 MiB terminal, live", timeout=60_000)

    def saved() -> bool:
        page.evaluate("() => window.jupyterapp.shell.currentWidget.context.model.dirty = true")
        save(page)
        models = saved_models(server.root / NAME)
        snaps = [m["state"]["snapshot"] for m in models.values() if "snapshot" in m.get("state", {})]
        return any("groups" in s and len(s["groups"]) == CARDS // 25 for s in snaps)

    until(saved, 20, interval=0.5, message="the notebook saved with the paged snapshot")
    models = saved_models(server.root / NAME)
    pages = [m for m in models.values() if m.get("model_name") == "WidgetModel"]
    assert len(pages) >= CARDS // 25 + 1, len(pages)

    _open(page, server, "the kernel after reload")  # a reload: the kernel (and its view) still run
    _whole(page, "after reload")
    wait_value(page, TERMINAL, full, "the whole terminal again after the resync", timeout=60_000)

    page.context.close()
    assert server.shutdown_kernel_of(NAME), server.sessions()
    fresh = lab_pages("bounds-saved")
    _open(fresh, server, "a new kernel")
    _whole(fresh, "saved state, no kernel")
    got = fresh.evaluate(TERMINAL)
    assert got["end"] == TOTAL and got["last"] == LAST_LINE, got
    assert 0 < TOTAL - got["start"] <= 128 * 1024, got
    assert got["marker"] == f"earlier output trimmed ({got['start']:,} bytes)", got
    errors = [e for e in lab_pages.recorder.errors + lab_pages.recorder.console if "acp_notebook" in e]
    assert errors == [], errors
    assert lab_pages.recorder.external_requests() == []


def test_an_exported_page_marks_the_trimmed_terminal(lab_pages, tmp_path):
    import base64

    from acp_notebook import SessionState, export_html

    state = SessionState()
    card = {"sessionUpdate": "tool_call", "toolCallId": "c0", "title": "build", "status": "completed"}
    state.apply({**card, "content": [{"type": "terminal", "terminalId": "big"}]})
    data = "".join(LINE % n for n in range(LINES)).encode()
    encoded = base64.b64encode(data).decode()
    state.apply({"sessionUpdate": "terminal_output_chunk", "terminalId": "big", "data": encoded})
    path = export_html(state, tmp_path / "big.html", xray=False)
    page = lab_pages("bounds-export")
    page.goto(path.as_uri(), wait_until="load")
    wait_value(page, "() => document.documentElement.dataset.acpExport ?? null", "mounted", "the page")
    got = page.evaluate(TERMINAL)
    assert got["end"] == TOTAL and got["last"] == LAST_LINE, got
    assert 0 < TOTAL - got["start"] <= 128 * 1024, got
    assert got["marker"] == f"earlier output trimmed ({got['start']:,} bytes)", got
