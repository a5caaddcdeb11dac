"""The SessionView renderer in a real browser, without Jupyter.

A localhost http.server serves ``acp_notebook/static/`` (the esbuild output: run
``cd js && npm install && npm run build`` first) and ``tests/browser/harness/``: a page with a fake
anywidget model fed from hand-written WIRE.md fixtures. Chromium (Debian's) loads ``loader.js``
through that model, and the tests push patches and read the DOM / the xterm buffers.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .conftest import unavailable, wait_value
from .harness_server import CHROMIUM, HARNESS, ROOT, STATIC, serve

pytest.importorskip("playwright.sync_api")

ARTIFACTS = ROOT / "test-artifacts"

if not (STATIC / "runtime.js").exists() or not (STATIC / "loader.js").exists():
    unavailable("JS bundle not built (cd js && npm install && npm run build)")
if not Path(CHROMIUM).exists():
    unavailable("Chromium not installed at /usr/bin/chromium")


@pytest.fixture(scope="module")
def server():
    with serve() as base:
        yield base


@pytest.fixture(scope="module")
def browser(lab_browser):
    """The browser tests' one Chromium (``lab_browser``, launched with the harness's ``ARGS``)."""
    return lab_browser


# Every terminal in `sel` that is shown near the viewport (where the observers create xterms) is
# live and has parsed what it was given, and a frame has been drawn since.
SETTLED_JS = """async (sel) => {
  const api = (await harness.debug()).debug;
  const near = (t) => {
    const r = t.getBoundingClientRect();
    return r.width > 0 && r.height > 0 && r.bottom > -350 && r.top < innerHeight + 350;
  };
  const hosts = [...document.querySelectorAll(sel)].flatMap((e) => [...e.querySelectorAll('.acp-terminal')]);
  const shown = hosts.filter(near);
  if (!shown.every((t) => api.isInstantiated(t))) return false;
  for (const t of shown) await api.terminalLines(t);
  await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
  return true;
}"""


class Page:
    """A harness page plus what it did: requests, dialogs, errors."""

    def __init__(self, browser, base: str, theme: str = "light", width: int = 1000, height: int = 900):
        self.base = base
        self.ctx = browser.new_context(viewport={"width": width, "height": height}, device_scale_factor=1)
        self.page = self.ctx.new_page()
        self.requests: list[str] = []
        self.dialogs: list[str] = []
        self.errors: list[str] = []
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.page.on("dialog", lambda d: (self.dialogs.append(d.message), d.dismiss()))
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("console", lambda m: m.type == "error" and self.errors.append(m.text))
        self.page.goto(f"{base}/harness/index.html?theme={theme}")
        self.page.wait_for_function("() => window.harnessReady === true")

    def load(self, fixture: str | None = "session", mode: str = "fast", early=None, data=None) -> dict:
        arg = {"fixture": fixture, "mode": mode, "early": early or [], "data": data}
        return self.page.evaluate("(a) => harness.load(a)", arg)

    def js(self, expr: str, arg=None):
        return self.page.evaluate(expr, arg)

    def text(self, selector: str) -> str | None:
        return self.js("(s) => document.querySelector(s)?.textContent.trim() ?? null", selector)

    def count(self, selector: str) -> int:
        return self.js("(s) => document.querySelectorAll(s).length", selector)

    def texts(self, selector: str) -> list[str]:
        return self.js("(s) => [...document.querySelectorAll(s)].map((e) => e.textContent)", selector)

    def entry(self, entry_key: str, **fields) -> dict:
        return fixture_entry(entry_key, self.js("() => harness.timeShift"), **fields)

    def patch(self, msg: dict, buffers: list[bytes] = ()) -> None:
        self.js("([m, b]) => harness.patch(m, b)", [msg, [list(b) for b in buffers]])

    def sent(self) -> list[dict]:
        return self.js("() => harness.sent")

    def lines(self, selector: str) -> list[str]:
        return self.js("(s) => harness.lines(s)", selector)

    def fg(self, selector: str, row: int, col: int) -> dict:
        return self.js("([s, r, c]) => harness.fg(s, r, c)", [selector, row, col])

    def card(self, tc: str) -> str:
        return f'.acp-card[data-key="tool_call:{tc}"]'

    def settle(self, selector: str = "body") -> None:
        """Wait until the terminals shown in ``selector`` have their xterm drawn (see SETTLED_JS)."""
        wait_value(self.page, SETTLED_JS, True, f"the terminals in {selector} drawn", selector, 10_000)

    def shot(self, name: str, selector: str | None = None, full: bool = False) -> None:
        ARTIFACTS.mkdir(exist_ok=True)
        path = ARTIFACTS / f"{name}.png"
        if selector:
            self.page.locator(selector).first.scroll_into_view_if_needed()
            self.settle(selector)
            self.page.locator(selector).first.screenshot(path=str(path))
        elif full:
            # make the whole page the viewport so every card (and terminal) is drawn
            size = self.page.viewport_size
            height = self.js("() => document.documentElement.scrollHeight")
            self.page.set_viewport_size({"width": size["width"], "height": height})
            self.settle()
            self.page.screenshot(path=str(path))
            self.page.set_viewport_size(size)
        else:
            self.settle()
            self.page.screenshot(path=str(path))

    def check_clean(self) -> None:
        origin = self.base + "/"
        outside = [u for u in self.requests if not (u.startswith(origin) or u.startswith(("blob:", "data:")))]
        assert outside == [], f"requests left 127.0.0.1: {outside}"
        assert self.dialogs == [], f"dialogs fired: {self.dialogs}"
        assert self.errors == [], f"page errors: {self.errors}"


@pytest.fixture
def page(browser, server):
    p = Page(browser, server)
    yield p
    p.check_clean()
    p.ctx.close()


FIXTURE = json.loads((HARNESS / "fixtures" / "session.json").read_text())


def fixture_entry(entry_key: str, shift: float, **fields) -> dict:
    """An entry of the session fixture, times shifted by `shift` (as the harness does), fields replaced."""
    out = {**FIXTURE["snapshot"]["entries"][entry_key], **fields}
    for name in ("created_at", "ended_at"):
        if isinstance(out.get(name), float):
            out[name] += shift
    return out


# --- tree, statuses, header -------------------------------------------------------------------


def test_cards_statuses_and_header(page):
    page.load()
    statuses = page.js("() => harness.cardStates()")
    assert statuses["tool_call:tc-read"] == ["completed", "completed", False]
    assert statuses["tool_call:tc-run"] == ["in_progress", "in_progress", True]
    assert statuses["tool_call:tc-custom"] == ["_waiting_for_ci", "in_progress", True]
    assert statuses["tool_call:tc-paused"] == ["paused", "paused", False]
    assert statuses["tool_call:tc-failed"] == ["failed", "failed", False]
    assert statuses["tool_call:tc-cancelled"] == ["cancelled", "cancelled", False]
    assert statuses["tool_call:tc-perm"] == ["pending", "pending", True]
    assert page.text(f"{page.card('tc-custom')} .acp-badge") == "_waiting_for_ci"
    assert page.count(f"{page.card('tc-paused')} .acp-paused-glyph") == 1
    # every entry drawn in order (perm-1 is inside its card, its own slot a hidden placeholder)
    keys = page.js("() => harness.slotKeys()")
    assert keys[:4] == ["message:u1", "message:th1", "plan:p1", "tool_call:tc-read"]
    assert "ph:permission:perm-1" in keys and keys[-1] == "other:o1"
    # elapsed time: finished shows the duration, unfinished ticks
    assert page.text(f"{page.card('tc-edit')} .acp-elapsed") == "1.3s"
    # fallback title when title is null; locations (plain text outside JupyterLab)
    assert page.text(f"{page.card('tc-cancelled')} .acp-card-title") == "Search (tc-cancelled)"
    assert page.texts(f"{page.card('tc-read')} .acp-loc") == ["src/app.py:4", "/etc/hosts"]
    assert page.count("[data-commandlinker-command]") == 0
    # raw input folded, as text
    page.page.locator(f"{page.card('tc-read')} .acp-raw-input .acp-fold-toggle").click()
    raw = page.text(f"{page.card('tc-read')} .acp-raw-input pre")
    assert json.loads(raw) == {"path": "/home/user/project/src/app.py", "limit": 200}

    header = page.js("() => document.querySelector('.acp-header').textContent")
    for text in (
        "Fix the failing config test",
        "Demo Agent v1.4.2 · ACP 2",
        "requires action · 2 pending",
        "ctx 52.3k / 200k (26%)",
    ):
        assert text in header
    assert page.js("() => document.querySelector('.acp-has-diag .acp-count').textContent") == "2"
    page.page.locator(".acp-header-section summary", has_text="Agent stderr").click()
    assert "<b>warning</b>" in page.js("() => document.querySelector('.acp-stderr').textContent")

    on_page = [{"type": "rendered"}, {"type": "resync"}, {"type": "checkpoint_status"}]
    assert page.sent() == on_page  # the loader says it is on a page; the revert bar asks for its turn
    page.page.locator(".acp-btn-stop").click()
    page.page.locator(f"{page.card('tc-xss')} .acp-card-head button").click()
    page.page.locator(f"{page.card('tc-run')} .acp-term-head button").click()
    assert page.sent()[3:] == [
        {"type": "cancel_turn"},
        {"type": "cancel_tool_call", "id": "tc-xss"},
        {"type": "cancel_terminal", "id": "term-1"},
    ]
    page.shot("tree", full=True)


def test_locations_link_in_jupyterlab(page):
    page.js(
        "() => document.body.append(Object.assign(document.createElement('div'), {className: 'jp-LabShell'}))"
    )
    page.load()
    link = page.js(
        f"() => {{ const a = document.querySelector('{page.card('tc-read')} [data-commandlinker-command]');"
        " return [a.dataset.commandlinkerCommand, a.dataset.commandlinkerArgs, a.textContent]; }"
    )
    assert link == ["docmanager:open", '{"path":"src/app.py"}', "src/app.py:4"]
    assert page.count(f"{page.card('tc-read')} [data-commandlinker-command]") == 1


# --- agent text stays text --------------------------------------------------------------------


def test_agent_text_cannot_inject(page):
    page.load()
    # every image has loaded or failed, so an injected onerror would have fired by now
    page.page.wait_for_function("() => [...document.images].every((i) => i.complete)")
    assert page.text(f"{page.card('tc-xss')} .acp-card-title") == "<img src=x onerror=alert(1)>"
    bad = page.js("() => harness.injectionReport()")
    assert bad == {"img": 0, "script": 0, "handlers": 0, "js": 0}
    text = page.text(page.card("tc-xss"))
    assert "[click me](javascript:alert(1))" in text and "<script>alert(5)</script>" in text
    links = page.js(
        "(s) => [...document.querySelectorAll(s)].map((a) => [a.href, a.target, a.rel])",
        f"{page.card('tc-xss')} a",
    )
    assert links == [
        ["https://example.com/docs", "_blank", "noopener noreferrer"],
        ["https://example.com/x.png", "_blank", "noopener noreferrer"],
    ]
    msg = page.js("() => document.querySelector('[data-key=\"message:a1\"]').innerHTML")
    assert 'href="https://docs.example.com/config"' in msg and 'href="mailto:dev@example.com"' in msg
    assert "javascript:" not in msg.replace("[bad link](javascript:alert(12))", "")
    assert page.js("() => !!document.querySelector('[data-key=\"message:a1\"] pre code .hljs-keyword')")
    # content blocks: only image/* becomes an image; a javascript: resource link is not a link
    content = page.js("(s) => harness.contentReport(s)", page.card("tc-content"))
    assert content["imgs"] == 1 and content["links"] == ["https://docs.example.com/config"]
    assert "evil link" in content["text"] and "<script>alert(11)</script>" in content["text"]
    assert "_custom_block" in content["text"] and "_future_item" in content["text"]
    assert page.dialogs == []


# --- terminals ---------------------------------------------------------------------------------


def test_terminal_bytes_colours_split_utf8_and_reset(page):
    info = page.load()
    t1 = '[data-terminal-id="term-1"]'
    lines = page.lines(t1)
    failed_row = next(i for i, line in enumerate(lines) if line.startswith("FAILED"))
    assert (
        lines[failed_row]
        == "FAILED tests/test_app.py::test_missing_file - AssertionError: <img src=x onerror=alert(13)>"
    )
    assert page.fg(t1, failed_row, 0)["mode"] == "palette" and page.fg(t1, failed_row, 0)["color"] == 1
    summary = lines[failed_row + 1]
    assert summary == "1 failed, 2 passed in 0.12s"
    assert page.fg(t1, failed_row + 1, summary.index("2 passed")) == {
        "mode": "palette",
        "color": 2,
        "colorMode": page.fg(t1, failed_row + 1, summary.index("2 passed"))["colorMode"],
        "chars": "2",
    }
    assert page.fg(t1, failed_row + 1, summary.index(","))["mode"] == "default"

    # a UTF-8 character split across two byte buffers, appended at the terminal's end
    end = info["terminals"]["term-1"]["end"]
    one, two = "price: €5 — ok\n".encode()[:9], "price: €5 — ok\n".encode()[9:]
    assert one.endswith(b"\xe2\x82")
    page.patch(
        {
            "type": "patch",
            "full": False,
            "bytes": [
                {"id": "term-1", "gen": 0, "at": end, "buf": 0, "reset": False},
                {"id": "term-1", "gen": 0, "at": end + len(one), "buf": 1, "reset": False},
            ],
        },
        [one, two],
    )
    # a repeated (already seen) buffer and an overlapping one are ignored / sliced
    page.patch(
        {
            "type": "patch",
            "full": False,
            "bytes": [{"id": "term-1", "gen": 0, "at": end, "buf": 0, "reset": False}],
        },
        [one + two + b"next\n"],
    )
    assert page.lines(t1)[-2:] == ["price: €5 — ok", "next"]

    # metadata updates redraw the terminal header: exit status shown, cancel gone
    page.patch(
        {
            "type": "patch",
            "full": False,
            "terminals": {
                "term-1": {
                    **FIXTURE["snapshot"]["terminals"]["term-1"],
                    "exit_status": {"exitCode": 1},
                    "cancellable": False,
                }
            },
        }
    )
    assert page.text(f"{t1} .acp-term-head .acp-badge") == "exit 1"
    assert page.count(f"{t1} .acp-term-head button") == 0
    # the same terminal referenced by a second card shows there too (its own xterm, same bytes)
    again = page.entry(
        "tool_call:tc-progress",
        id="tc-again",
        title="Show the pytest output again",
        items=[{"type": "terminal", "id": "term-1"}],
    )
    page.patch(
        {
            "type": "patch",
            "full": False,
            "order": ["tool_call:tc-again"],
            "entries": {"tool_call:tc-again": again},
        }
    )
    assert page.count('[data-terminal-id="term-1"]') == 2
    page.page.locator(f"{page.card('tc-again')}").scroll_into_view_if_needed()
    assert page.lines(f"{page.card('tc-again')} [data-terminal-id='term-1']") == page.lines(t1)

    t2 = '[data-terminal-id="term-2"]'
    assert page.lines(t2) == [
        "Obtaining file:///home/user/project",
        "Downloading project deps",
        "[##########] 100%",
        "Installed naïve-café 1.0 ✓",
    ]
    page.patch(
        {
            "type": "patch",
            "full": False,
            "terminals": {"term-2": {"gen": 1, "base": 0, "end": 22}},
            "bytes": [{"id": "term-2", "gen": 1, "at": 0, "buf": 0, "reset": True}],
        },
        [b"fresh screen\nline two\n"],
    )
    assert page.lines(t2) == ["fresh screen", "line two"]

    # a sized terminal keeps its columns (no re-wrap) and scrolls sideways
    t3 = '[data-terminal-id="term-3"]'
    long_line = next(line for line in page.lines(t3) if "vite --port" in line)
    assert len(long_line) > 100
    assert page.js(
        "(s) => { const e = document.querySelector(s); return e.scrollWidth > e.clientWidth; }",
        f"{t3} .acp-term-screen",
    )
    assert "signal SIGTERM" in page.text(f"{t3} .acp-term-head")
    # a sized terminal with little output shows only the rows in use (its 24 rows stay for addressing)
    meta = {
        "id": "term-4",
        "command": "ls",
        "cwd": "/",
        "size": {"cols": 80, "rows": 24},
        "exit_status": None,
        "cancellable": False,
        "gen": 0,
        "base": 0,
        "end": 12,
    }
    small = page.entry(
        "tool_call:tc-progress", id="tc-small", title="ls", items=[{"type": "terminal", "id": "term-4"}]
    )
    page.patch(
        {
            "type": "patch",
            "full": False,
            "order": ["tool_call:tc-small"],
            "entries": {"tool_call:tc-small": small},
            "terminals": {"term-4": meta},
            "bytes": [{"id": "term-4", "gen": 0, "at": 0, "buf": 0, "reset": True}],
        },
        [b"a.txt\nb.txt\n"],
    )
    t4 = '[data-terminal-id="term-4"]'
    page.page.locator(t4).scroll_into_view_if_needed()
    assert page.lines(t4) == ["a.txt", "b.txt"]
    assert (
        page.js("async (s) => (await harness.debug()).debug.termState(document.querySelector(s))", t4)["rows"]
        == 24
    )
    page.page.wait_for_function(
        "(s) => document.querySelector(s).offsetHeight < 80", arg=f"{t4} .acp-term-screen"
    )
    page.shot("terminal", page.card("tc-run"))
    page.shot("terminal-progress", page.card("tc-progress"))


# --- diffs -------------------------------------------------------------------------------------


def _file_rows(page, card: str, index: int, cls: str) -> list[str]:
    return page.js(
        "([card, i, cls]) => [...document.querySelectorAll(card + ' .acp-diff-file')[i]"
        ".querySelectorAll('td.' + cls + ' .d2h-code-line-ctn')].map((e) => e.textContent)",
        [card, index, cls],
    )


def test_diff_files_hunks_and_layout_switch(page):
    page.load()
    card = page.card("tc-edit")
    heads = page.texts(f"{card} .acp-diff-file-head")
    assert len(heads) == 4
    assert heads[0].startswith("modifiedsrc/app.py")  # relative to the session's cwd
    titles = page.js("(s) => [...document.querySelectorAll(s)].map((e) => e.title)", f"{card} .acp-diff-path")
    assert titles[0] == "/home/user/project/src/app.py"  # the full path stays in the tooltip
    assert "logo.png" in heads[2] and "binary" in heads[2]
    assert "moveddocs/old_name.md → docs/guide.md" in heads[3]
    assert "import sys" in _file_rows(page, card, 0, "d2h-ins")
    assert "    with open(path) as fh:" in _file_rows(page, card, 0, "d2h-del")
    assert '    assert load_config(tmp_path / "nope") == DEFAULTS' in _file_rows(page, card, 1, "d2h-ins")
    assert '    assert load_config(tmp_path / "nope") is None' in _file_rows(page, card, 1, "d2h-del")
    bodies = page.js(
        "(s) => [...document.querySelectorAll(s)].map((b) => [b.textContent, !!b.querySelector('table')])",
        f"{card} .acp-diff-body",
    )
    assert bodies[2] == ["Binary file — no text diff", False]
    assert bodies[3] == ["No content changes", False]
    assert "        return DEFAULTS  # <script>alert(9)</script>" in _file_rows(page, card, 0, "d2h-ins")
    assert page.count(f"{card} script") == 0
    assert page.count(f"{card} .acp-diff-bar + .acp-diff-file .hljs-keyword") > 3
    assert page.texts(f"{card} .acp-diff-bar + .acp-diff-file .line-num1")[:3] == ["1", "", "2"]
    assert page.texts(f"{card} .acp-diff-bar + .acp-diff-file .line-num2")[:3] == ["1", "2", "3"]
    assert page.text(f"{page.card('tc-v1')} td.d2h-ins .d2h-code-line-ctn") == "New intro with **markdown**."
    page.page.locator(card).scroll_into_view_if_needed()
    page.shot("diff", card)

    page.page.locator(f"{card} .acp-seg-btn[data-mode='side-by-side']").click()
    assert page.js("(s) => document.querySelector(s).dataset.mode", f"{card} .acp-diff") == "side-by-side"
    assert page.count(f"{card} .acp-diff-bar + .acp-diff-file .d2h-file-side-diff") == 2
    assert "import sys" in _file_rows(page, card, 0, "d2h-ins")
    assert "    with open(path) as fh:" in _file_rows(page, card, 0, "d2h-del")
    page.shot("diff-side-by-side", card)
    # the layout choice survives a re-render of the card
    page.patch(
        {
            "type": "patch",
            "full": False,
            "entries": {"tool_call:tc-edit": page.entry("tool_call:tc-edit", title="Edited")},
        }
    )
    assert page.count(f"{card} .d2h-file-side-diff") == 4
    page.page.locator(f"{card} .acp-seg-btn[data-mode='line-by-line']").click()
    assert page.count(f"{card} .d2h-file-side-diff") == 0


def test_long_diff_is_folded(page):
    page.load()
    body = "".join(f"+line {i}\n" for i in range(150))
    head = "diff --git a/new.py b/new.py\nnew file mode 100644\n--- /dev/null\n+++ b/new.py\n"
    patch = f"{head}@@ -0,0 +1,150 @@\n{body}"
    tc = {
        **page.entry("tool_call:tc-v1"),
        "id": "tc-long",
        "title": "Create new.py",
        "items": [
            {
                "type": "diff",
                "v1": False,
                "patch": patch,
                "files": [
                    {
                        "operation": "add",
                        "path": "/home/user/project/new.py",
                        "old_path": None,
                        "file_type": "text",
                        "mime_type": None,
                        "binary": False,
                    }
                ],
            }
        ],
    }
    page.patch(
        {"type": "patch", "full": False, "order": ["tool_call:tc-long"], "entries": {"tool_call:tc-long": tc}}
    )
    card = page.card("tc-long")
    rows = f"{card} td.d2h-ins .d2h-code-line-ctn"
    assert page.count(rows) == 80
    assert page.text(f"{card} .acp-diff-more") == "Show 70 more lines"
    page.page.locator(f"{card} .acp-diff-more").click()
    assert page.count(rows) == 150
    assert page.count(f"{card} .acp-diff-more") == 0


# --- permissions -------------------------------------------------------------------------------


def test_permission_buttons_lock_and_show_outcome(page):
    page.load()
    inside = f"{page.card('tc-perm')} .acp-permission[data-key='permission:perm-1']"
    assert page.count(inside) == 1
    kinds = page.js(
        "(s) => [...document.querySelectorAll(s)].map((b) => [b.dataset.optionId, b.className])",
        f"{inside} button",
    )
    assert [k[0] for k in kinds] == ["allow-once", "allow-always", "reject-once", "ask-later"]
    assert [k[1].split()[-1] for k in kinds] == [
        "acp-opt-allow",
        "acp-opt-allow",
        "acp-opt-reject",
        "acp-opt-neutral",
    ]
    own = ".acp-chunk > .acp-permission[data-key='permission:perm-2']"
    assert page.text(f"{own} .acp-perm-command") == "$ cargo test --all"
    assert "in /home/user/project" in page.text(own)
    page.page.locator(inside).scroll_into_view_if_needed()
    page.shot("permission", page.card("tc-perm"))

    page.page.locator(f"{inside} button[data-option-id='allow-once']").click()
    assert page.sent()[-1] == {"type": "select", "key": "perm-1", "option": "allow-once"}

    def state():
        return page.js(
            "(s) => [...document.querySelectorAll(s)].map((b) =>"
            " [b.disabled, b.classList.contains('acp-opt-pending'), b.classList.contains('acp-opt-chosen')])",
            f"{inside} button",
        )

    assert state() == [[True, True, False], [True, False, False], [True, False, False], [True, False, False]]
    page.page.locator(f"{inside} button[data-option-id='reject-once']").click(force=True)
    assert [m for m in page.sent() if m["type"] == "select"] == [
        {"type": "select", "key": "perm-1", "option": "allow-once"}
    ]
    # an unrelated update of the card keeps the pending lock
    page.patch(
        {
            "type": "patch",
            "full": False,
            "entries": {
                "tool_call:tc-perm": page.entry("tool_call:tc-perm", title="Delete build/ (waiting)")
            },
        }
    )
    assert state()[0] == [True, True, False]

    page.patch(
        {
            "type": "patch",
            "full": False,
            "entries": {
                "permission:perm-1": page.entry(
                    "permission:perm-1", outcome={"outcome": "selected", "optionId": "allow-once"}
                )
            },
        }
    )
    assert state() == [[True, False, True], [True, False, False], [True, False, False], [True, False, False]]
    assert page.text(f"{inside} .acp-perm-outcome") == "Selected: Allow once"

    # answered elsewhere (cancelled): locked, shows it
    page.patch(
        {
            "type": "patch",
            "full": False,
            "entries": {
                "permission:perm-2": page.entry("permission:perm-2", outcome={"outcome": "cancelled"})
            },
        }
    )
    assert page.js("(s) => [...document.querySelectorAll(s)].every((b) => b.disabled)", f"{own} button")
    assert page.text(f"{own} .acp-perm-outcome") == "Cancelled"
    page.shot("permission-answered", page.card("tc-perm"))

    # a request whose card arrives later moves into the card
    perm3 = page.entry("permission:perm-1", key="perm-3", tool_call_id="tc-late", title="Late card?")
    page.patch(
        {
            "type": "patch",
            "full": False,
            "order": ["permission:perm-3"],
            "entries": {"permission:perm-3": perm3},
        }
    )
    assert page.count('.acp-chunk > [data-key="permission:perm-3"]') == 1
    late = page.entry("tool_call:tc-perm", id="tc-late", title="Late tool call")
    page.patch(
        {
            "type": "patch",
            "full": False,
            "order": ["tool_call:tc-late"],
            "entries": {"tool_call:tc-late": late},
        }
    )
    assert page.count(f'{page.card("tc-late")} [data-key="permission:perm-3"]') == 1
    assert page.count('[data-key="permission:perm-3"]') == 1
    assert "for tool call" not in page.text('[data-key="permission:perm-3"]')


WHERE_JS = """(key) => ({
  drawn: [...document.querySelectorAll(`.acp-permission[data-key="${key}"]`)].map((p) =>
    p.closest('.acp-card')?.dataset.key ?? (p.parentElement.matches('.acp-chunk') ? 'own place' : '?')),
  placeholders: document.querySelectorAll(`[data-placeholder="${key}"]`).length,
})"""


def test_permission_follows_its_card(page):
    page.load()
    snap = FIXTURE["snapshot"]
    perm = '[data-key="permission:perm-1"]'

    def where() -> dict:
        return page.js(WHERE_JS, "permission:perm-1")

    def in_card(key: str) -> dict:
        return {"drawn": [key], "placeholders": 1}

    def full(keys: list[str]) -> None:
        entries = {k: page.entry(k) for k in keys}
        page.patch(
            {"type": "patch", "full": True, "header": snap["header"], "order": keys, "entries": entries}
        )

    def upsert(key: str, **fields) -> None:
        page.patch(
            {"type": "patch", "full": False, "order": [key], "entries": {key: page.entry(key, **fields)}}
        )

    assert where() == in_card("tool_call:tc-perm")
    # its card leaves the view: the request goes back to its own place, naming the tool call
    full([k for k in snap["order"] if k != "tool_call:tc-perm"])
    assert where() == {"drawn": ["own place"], "placeholders": 0}
    assert "for tool call tc-perm" in page.text(perm)
    # the card comes back: inside it again, once
    upsert("tool_call:tc-perm")
    assert where() == in_card("tool_call:tc-perm")
    # it now belongs to another tool call: it moves, and a redraw of the old card leaves it there
    upsert("permission:perm-1", tool_call_id="tc-read")
    assert where() == in_card("tool_call:tc-read")
    upsert("tool_call:tc-perm", title="Redrawn")
    assert where() == in_card("tool_call:tc-read")
    # answered, then its card redrawn: still in the card, still showing the answer
    upsert(
        "permission:perm-1", tool_call_id="tc-read", outcome={"outcome": "selected", "optionId": "allow-once"}
    )
    upsert("tool_call:tc-read", title="Read again")
    assert where() == in_card("tool_call:tc-read")
    assert page.text(f"{perm} .acp-perm-outcome") == "Selected: Allow once"
    assert page.js("(s) => document.querySelector(s).dataset.state", perm) == "answered"
    # gone from the view: drawn nowhere, and a redraw of its card does not bring it back
    full([k for k in snap["order"] if k != "permission:perm-1"])
    assert where() == {"drawn": [], "placeholders": 0}
    upsert("tool_call:tc-read", title="Read once more")
    assert where() == {"drawn": [], "placeholders": 0}


# --- patches: keyed and incremental ------------------------------------------------------------


def test_patches_touch_only_their_entry(page):
    page.load()
    page.page.locator(page.card("tc-run")).scroll_into_view_if_needed()
    page.lines('[data-terminal-id="term-1"]')
    page.js("() => { window.host1 = document.querySelector('[data-terminal-id=\"term-1\"]'); }")
    run = page.entry(
        "tool_call:tc-run", status="completed", phase="completed", ended_at=1700000010.0, cancellable=False
    )
    run["ended_at"] = run["created_at"] + 6.0
    update = {"type": "patch", "full": False, "entries": {"tool_call:tc-run": run}}
    touched = page.js("(m) => harness.mutatedKeys(() => harness.patch(m))", update)
    assert touched["keys"] == ["tool_call:tc-run"]
    assert page.js("(s) => document.querySelector(s).dataset.status", page.card("tc-run")) == "completed"
    # the terminal (and its xterm) moved into the new card instead of being rebuilt
    assert page.js("() => document.querySelector('[data-terminal-id=\"term-1\"]') === window.host1")
    assert page.js("async () => (await harness.debug()).debug.isInstantiated(window.host1)")
    # a full patch equal to what is drawn changes nothing
    snap = FIXTURE["snapshot"]
    full = {
        "type": "patch",
        "full": True,
        "seq": 50,
        "header": snap["header"],
        "order": snap["order"],
        "entries": {**{k: page.entry(k) for k in snap["entries"]}, "tool_call:tc-run": run},
        "terminals": {},
    }
    assert page.js("(m) => harness.mutatedKeys(() => harness.patch(m))", full)["keys"] == []
    # once that (resync) answer is in, a gap in a terminal's bytes asks for a resync again
    gap = {
        "type": "patch",
        "full": False,
        "bytes": [{"id": "term-1", "gen": 0, "at": 10**6, "buf": 0, "reset": False}],
    }
    page.patch(gap, [b"x"])
    page.patch(gap, [b"x"])  # not twice while the answer is on its way
    assert page.sent().count({"type": "resync"}) == 2
    # new keys append; stale (seq <= current) patches are ignored
    msg = {"kind": "message", "role": "agent", "blocks": [], "markdown": "All **done**."}
    page.patch(
        {"type": "patch", "seq": 70, "full": False, "order": ["message:a2"], "entries": {"message:a2": msg}}
    )
    page.patch(
        {"type": "patch", "seq": 60, "full": False, "entries": {"message:a2": {**msg, "markdown": "stale"}}}
    )
    assert page.text(".acp-chunk:last-child > :last-child") == "All done."
    # a newer snapshot trait (e.g. after missed messages) is applied; an older one is not
    newer = {
        **snap,
        "seq": 90,
        "header": {**snap["header"], "title": "Renamed by snapshot"},
        "entries": {k: page.entry(k) for k in snap["entries"]},
    }
    page.js("(s) => harness.model.set('snapshot', s)", {**newer, "seq": 65})
    assert page.text(".acp-header-title") == "Fix the failing config test"
    page.js("(s) => harness.model.set('snapshot', s)", newer)
    assert page.text(".acp-header-title") == "Renamed by snapshot"
    # header updates replace only the header
    hdr = {**snap["header"], "running": False, "run_state": "idle", "stop_reason": "end_turn"}
    touched = page.js(
        "(h) => harness.mutatedKeys(() => harness.patch({type: 'patch', seq: 91, full: false, header: h}))",
        hdr,
    )
    assert touched["keys"] == ["(outside entries)"]
    assert "idle · end turn" in page.text(".acp-header")
    assert page.count(".acp-btn-stop") == 0


def test_fallback_loading_and_queued_messages(page):
    early = [
        {
            "msg": {
                "type": "patch",
                "seq": 8,
                "full": False,
                "order": ["message:early"],
                "entries": {
                    "message:early": {
                        "kind": "message",
                        "role": "agent",
                        "blocks": [],
                        "markdown": "queued *before* render",
                    }
                },
            }
        },
        {
            "msg": {
                "type": "patch",
                "seq": 3,
                "full": False,
                "entries": {
                    "message:u1": {
                        "kind": "message",
                        "role": "user",
                        "blocks": [],
                        "markdown": "older than the snapshot",
                    }
                },
            }
        },
    ]
    info = page.load(mode="fallback", early=early)
    assert info["renderMs"] >= 1000  # waited for the runtime, then imported its _esm from a Blob URL
    assert page.text('[data-key="message:early"]') == "queued before render"
    assert "older than" not in page.text('[data-key="message:u1"]')
    assert page.count("#acp-notebook-style") == 1
    assert any(u.startswith("blob:") for u in page.requests)


# --- scale -------------------------------------------------------------------------------------


def test_two_thousand_cards_and_hundred_terminals(page, capsys):
    data = page.js("() => harness.bigFixture(2000, 100)")
    info = page.load(data=data)
    page.page.wait_for_function("(s) => harness.isLive(s)", arg='[data-terminal-id="term-0"]')
    assert page.count(".acp-card") == 2000
    assert page.count(".acp-terminal") == 100
    live = "() => harness.liveTerminals()"
    # only terminals near the viewport (the observers' 400px margin) have an xterm
    alive, near = page.js(live), page.js("() => harness.terminalsNear(450)")
    assert "term-0" in alive and set(alive) <= set(near) and len(near) <= 3, (alive, near)
    perf = page.js("() => harness.timeCardUpdates(60, 2000)")
    assert perf["touched"] == ["(the updated card)"], perf
    heap = page.js("() => harness.heapBytes()")
    # scroll far down: that terminal is built, the first one disposed after its grace period
    page.page.locator('[data-terminal-id="term-90"]').scroll_into_view_if_needed()
    page.page.wait_for_function("(s) => harness.isLive(s)", arg='[data-terminal-id="term-90"]')
    wait_value(page.page, "async (s) => !(await harness.isLive(s))", True, "term-0 disposed",
               '[data-terminal-id="term-0"]', 8000)  # fmt: skip
    assert len(page.js(live)) <= 3
    assert page.lines('[data-terminal-id="term-90"]')[0] == "ok step 0 of job 1802"
    page.page.locator('[data-terminal-id="term-0"]').scroll_into_view_if_needed()
    assert page.lines('[data-terminal-id="term-0"]')[-1] == "ok step 11 of job 2"
    figures = {
        "initial_render_ms": round(info["renderMs"], 1),
        "median_single_card_update_ms": round(perf["medianMs"], 3),
        "max_single_card_update_ms": round(perf["maxMs"], 3),
        "js_heap_used_mb": round(heap / 2**20, 1) if heap else None,
    }
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "perf.json").write_text(json.dumps(figures, indent=2) + "\n")
    with capsys.disabled():
        print(f"\n[render harness] 2,000 cards + 100 terminals: {figures}")


def test_screenshots_other_themes(browser, server):
    for theme in ("dark", "none"):
        p = Page(browser, server, theme=theme)
        try:
            p.load()
            p.shot(f"tree-{theme}", full=True)
            p.shot(f"diff-{theme}", p.card("tc-edit"))
            p.check_clean()
        finally:
            p.ctx.close()


# --- the agent's plain stdout in the header ----------------------------------------------------

LOGIN = json.loads((HARNESS / "fixtures" / "login.json").read_text())
LOGIN_URL = LOGIN["snapshot"]["header"]["stdout"][4]
OUT_LINES_JS = """() => [...document.querySelectorAll('.acp-stdout .acp-out-line')].map((l) => ({
  text: l.textContent, partial: l.classList.contains('acp-out-partial'),
  links: [...l.querySelectorAll('a')].map((a) => [a.getAttribute('href'), a.textContent, a.target, a.rel]),
}))"""


def test_agent_output_is_text_with_http_links(page):
    page.load("login")
    section = ".acp-header-section.acp-has-prompt"
    assert page.js("(s) => document.querySelector(s).open", section)  # a prompt is waiting: opened
    assert page.text(f"{section} summary") == "Agent output · waiting for input10"
    lines = page.js(OUT_LINES_JS)
    assert [line["text"] for line in lines] == [
        "Code Assist login required.",  # ANSI escapes dropped
        "Attempting to open authentication page in your browser.",
        "Otherwise navigate to:",
        "",
        LOGIN_URL,
        "",
        '<img src=x onerror=alert(1)> and javascript:alert(2) and <a href="javascript:alert(3)">click</a>',
        "Docs (see https://example.com/help?topic=login). Status: http://localhost:8765/cb, ftp://example.com/file",
        "progress 100%",  # a carriage-return rewrite shows what a terminal would
        "Enter the authorization code: ",
    ]
    assert [line["partial"] for line in lines] == [False] * 9 + [True]
    assert len(LOGIN_URL) == 566
    assert lines[4]["links"] == [[LOGIN_URL, LOGIN_URL, "_blank", "noopener noreferrer"]]  # whole
    assert lines[6]["links"] == []
    assert [link[0] for link in lines[7]["links"]] == [
        "https://example.com/help?topic=login",  # without the ")." after it
        "http://localhost:8765/cb",
    ]
    bad = page.js("() => harness.injectionReport('.acp-header')")  # (xterm puts <style>s in its screens)
    assert bad == {"img": 0, "script": 0, "handlers": 0, "js": 0}
    # the long URL wraps inside the header instead of widening it
    box = page.js(
        "() => { const a = document.querySelector('.acp-stdout a'), p = a.closest('.acp-stdout');"
        " return {rects: a.getClientRects().length, scroll: p.scrollWidth, client: p.clientWidth}; }"
    )
    assert box["rects"] > 1 and box["scroll"] <= box["client"], box
    page.shot("agent-output", ".acp-header")

    # closed by the user: stays closed through header updates with the same prompt; a new prompt opens it
    toggled = "(s) => { window.toggled = new Promise((r) => document.querySelector(s).ontoggle = r); }"
    page.js(toggled, section)  # <details> fires `toggle` a task later: wait for the view to have seen it
    page.page.locator(f"{section} summary").click()
    page.js("() => window.toggled")
    hdr = LOGIN["snapshot"]["header"]
    page.patch({"type": "patch", "full": False, "header": {**hdr, "stdout": [*hdr["stdout"], "more"]}})
    assert not page.js("(s) => document.querySelector(s).open", section)
    page.patch({"type": "patch", "full": False, "header": {**hdr, "stdout_partial": "Paste the code: "}})
    assert page.js("(s) => document.querySelector(s).open", section)
    page.patch({"type": "patch", "full": False, "header": {**hdr, "stdout_partial": None}})
    assert page.count(".acp-has-prompt") == 0 and page.count(".acp-out-partial") == 0
    assert page.page.wait_for_function("() => [...document.images].every((i) => i.complete)")
    assert page.dialogs == []


# --- interactive terminals ---------------------------------------------------------------------

LOGIN_TERM = '[data-terminal-id="login-1"]'
RO_TERM = '[data-terminal-id="ro-1"]'
TERM_STATE_JS = "async (s) => (await harness.debug()).debug.termState(document.querySelector(s))"


def test_interactive_terminal_sends_keys_and_its_size(page):
    page.load("login")
    page.settle()
    # drawn from the snapshot alone (a saved notebook, maybe no kernel): read-only
    assert page.js(TERM_STATE_JS, LOGIN_TERM)["stdin"] is False and page.count(".acp-term-live") == 0
    hdr = LOGIN["snapshot"]["header"]
    page.patch({"type": "patch", "full": False, "header": hdr})  # live: the kernel's answer to resync
    page.settle()
    live, ro = page.js(TERM_STATE_JS, LOGIN_TERM), page.js(TERM_STATE_JS, RO_TERM)
    assert (live["stdin"], live["cursorBlink"], ro["stdin"], ro["cursorBlink"]) == (True, True, False, False)
    assert (
        page.text(f"{LOGIN_TERM} .acp-term-live") == "interactive"
        and page.count(f"{RO_TERM} .acp-term-live") == 0
    )
    assert page.lines(LOGIN_TERM)[:3] == ["Select login method:", "> 1. Claude account", "  2. API key"]
    # when first shown it reports its size: fitted to the card's width (not the agent's 80), 24 rows
    page.page.wait_for_function("() => harness.resizes('login-1').length === 1")
    ((cols, rows),) = page.js("() => harness.resizes('login-1')")
    assert rows == 24 and cols > 100 and (live["cols"], live["rows"]) == (cols, rows)
    assert page.js("() => harness.resizes('ro-1')") == []

    page.page.locator(f"{LOGIN_TERM} .acp-term-screen").click()
    page.page.keyboard.type("2")
    page.page.keyboard.press("Enter")
    page.page.keyboard.press("ArrowUp")
    assert page.js("() => harness.typed('login-1')")["data"] == "2\r\x1b[A"
    page.page.locator(f"{RO_TERM} .acp-term-screen").click()
    page.page.keyboard.type("nope")
    assert page.js("() => harness.typed('ro-1')")["messages"] == 0

    # a big paste goes in pieces (each well under the kernel's 64 KiB cap), pairs never split
    paste = "a" + "😀" * 20_000
    page.js(
        "async ([s, d]) => (await harness.debug()).debug.input(document.querySelector(s), d)",
        [LOGIN_TERM, paste],
    )
    typed = page.js("() => harness.typed('login-1')")
    assert typed["data"] == "2\r\x1b[A" + paste and max(typed["pieces"]) <= 16384 and typed["messages"] >= 6
    assert page.js(
        "() => harness.sent.filter((m) => m.type === 'terminal_input').every((m) => m.data.isWellFormed())"
    )

    # resized: the card narrower, the screen dragged taller → one debounced report of the new size
    page.page.set_viewport_size({"width": 700, "height": 900})
    page.js("(s) => { document.querySelector(s).style.height = '520px'; }", f"{LOGIN_TERM} .acp-term-screen")
    page.page.wait_for_function("() => harness.resizes('login-1').length === 2")
    new_cols, new_rows = page.js("() => harness.resizes('login-1')")[1]
    assert new_cols < cols and new_rows > 24
    assert page.js(TERM_STATE_JS, LOGIN_TERM)["cols"] == new_cols
    page.shot("terminal-interactive", page.card("tc-login"))

    # no longer interactive (the command exited): read-only again, same screen content
    page.patch({"type": "patch", "full": False, "header": {**hdr, "interactive_terminals": []}})
    page.settle()
    assert page.js(TERM_STATE_JS, LOGIN_TERM)["stdin"] is False
    assert page.count(f"{LOGIN_TERM} .acp-term-live") == 0
    assert page.lines(LOGIN_TERM)[:2] == ["Select login method:", "> 1. Claude account"]
    before = page.js("() => harness.typed('login-1')")["messages"]
    page.page.locator(f"{LOGIN_TERM} .acp-term-screen").click()
    page.page.keyboard.type("x")
    assert page.js("() => harness.typed('login-1')")["messages"] == before


# --- the secret form ---------------------------------------------------------------------------

SECRET = "sk-live-9f8e7d6c5b4a"
FORM_TRAITS = {
    "title": "Log in to Codex",
    "fields": [
        {"name": "OPENAI_API_KEY", "label": "OpenAI API key", "optional": False},
        {"name": "OPENAI_ORG_ID", "label": "Organisation id", "optional": True},
    ],
    "phase": "open",
    "status": "",
}
FORM_DOM_JS = """(secret) => {
  const inputs = [...document.querySelectorAll('.acp-sf-input')];
  const controls = [...document.querySelectorAll('.acp-secret-form input, .acp-secret-form button')];
  const anywhere = [document.documentElement.outerHTML, document.body.innerText,
    JSON.stringify(harness.model.traits), ...inputs.map((i) => i.value)];
  return {
    values: inputs.map((i) => i.value),
    types: inputs.map((i) => [i.type, i.getAttribute('autocomplete')]),
    disabled: controls.map((e) => e.disabled),
    status: document.querySelector('.acp-sf-status').textContent,
    leaked: anywhere.some((s) => s.includes(secret)),
  };
}"""


def test_secret_form_sends_values_once_and_forgets_them(page):
    page.js("(t) => harness.loadWidget('secret_form', t)", FORM_TRAITS)
    form = page.js(FORM_DOM_JS, SECRET)
    assert form["types"] == [["password", "off"], ["password", "off"]] and not any(form["disabled"])
    assert "OpenAI API key OPENAI_API_KEY" in page.text(".acp-sf-fields")
    key = page.page.locator('.acp-sf-input[data-field="OPENAI_API_KEY"]')
    # the required field empty: nothing is sent
    page.page.locator(".acp-sf-submit").click()
    assert page.sent() == [] and page.js(FORM_DOM_JS, SECRET)["status"] == "Required: OPENAI_API_KEY"
    key.click()
    page.page.keyboard.type(SECRET)
    assert page.js(FORM_DOM_JS, SECRET)["leaked"]  # (the check sees a typed value)
    page.page.keyboard.press("Enter")
    assert page.sent() == [{"type": "submit", "values": {"OPENAI_API_KEY": SECRET}}]
    form = page.js(FORM_DOM_JS, SECRET)
    assert form["values"] == ["", ""] and not form["leaked"] and all(form["disabled"])
    assert form["status"] == "submitted"
    page.page.locator(".acp-sf-submit").click(force=True)
    assert len(page.sent()) == 1
    # the kernel's word: phase and status traits
    page.js("() => { harness.model.set('phase', 'submitted'); harness.model.set('status', 'Logged in'); }")
    assert page.js(FORM_DOM_JS, SECRET)["status"] == "Logged in"
    ARTIFACTS.mkdir(exist_ok=True)
    page.page.locator(".acp-secret-form").screenshot(path=str(ARTIFACTS / "secret-form.png"))


def test_secret_form_rejected_then_cancelled(page):
    page.js("(t) => harness.loadWidget('secret_form', t)", FORM_TRAITS)
    page.page.locator('.acp-sf-input[data-field="OPENAI_API_KEY"]').fill(SECRET)
    page.page.locator(".acp-sf-submit").click()
    page.js(
        "() => harness.model.emit('msg:custom', {type: 'rejected', reason: 'OPENAI_API_KEY is required'})"
    )
    form = page.js(FORM_DOM_JS, SECRET)
    assert form["status"] == "Not accepted: OPENAI_API_KEY is required" and not any(form["disabled"])
    assert form["values"] == ["", ""]
    page.page.locator(".acp-sf-cancel").click()
    assert page.sent()[-1] == {"type": "cancel"} and all(page.js(FORM_DOM_JS, SECRET)["disabled"])


def test_a_huge_title_is_cut_and_shown_whole_on_demand(page):
    """A 100,000-character title once made a 21,393 px header: it is cut, with a button."""
    page.load()
    title = "T" * 100_000
    page.patch(
        {"type": "patch", "seq": 10_000, "full": False, "header": {"title": title, "run_state": "idle"}}
    )
    height = "() => document.querySelector('.acp-header').getBoundingClientRect().height"
    assert page.js(height) < 150
    assert page.text(".acp-title-more") == "… show all (100k characters)"
    page.page.locator(".acp-title-more").click()
    assert page.js("() => document.querySelector('.acp-header-title').textContent.length") == 100_000
    assert page.count(".acp-title-more") == 0


def test_terminal_links_open_only_through_our_bar(page):
    """OSC 8 links: never xterm's confirm(); http(s)/mailto shown first and opened with noopener,
    anything else refused."""
    info = page.load()
    t1 = '[data-terminal-id="term-1"]'
    end = info["terminals"]["term-1"]["end"]
    docs = b"\x1b]8;;https://example.com/docs\x07DOCS\x1b]8;;\x07"
    evil = b"\x1b]8;;javascript:alert(1)\x07EVIL\x1b]8;;\x07"
    links = b"\r\n" + docs + b" and " + evil + b"\r\n"
    page.patch(
        {
            "type": "patch",
            "full": False,
            "bytes": [{"id": "term-1", "gen": 0, "at": end, "buf": 0, "reset": False}],
        },
        [links],
    )
    page.js("() => { window.opened = []; window.open = (...a) => { window.opened.push(a); return null; }; }")
    page.page.locator(t1).scroll_into_view_if_needed()
    _click_text(page, t1, "DOCS")
    wait_value(page.page, "() => document.querySelector('.acp-term-link')?.textContent ?? null",
               "Open https://example.com/docs?OpenCancel", "the link bar")  # fmt: skip
    page.page.locator(".acp-term-link-open").click()
    assert page.js("() => window.opened") == [["https://example.com/docs", "_blank", "noopener,noreferrer"]]
    _click_text(page, t1, "EVIL")
    refused = "() => document.querySelector('.acp-term-link')?.textContent.startsWith('Not opened') ?? null"
    wait_value(page.page, refused, True, "the refusal")
    assert len(page.js("() => window.opened")) == 1 and page.dialogs == []


def _click_text(page, terminal: str, word: str) -> None:
    """Click where ``word`` is drawn in an xterm (its screen takes the mouse, not the text spans)."""
    box = page.page.locator(f"{terminal} .xterm-rows span", has_text=word).first.bounding_box()
    page.page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
