"""Views that tell the truth (issue 21, items 3 to 9), drawn by the render harness of
``test_render_harness``: quiet info diagnostics, a turn line that lands at the turn's top, a narrow
window that keeps a diff's changed characters and a terminal's command, the header's prompt as
markdown."""

from __future__ import annotations

import pytest

from .test_render_harness import ARTIFACTS, Page, browser, server  # noqa: F401 - the harness fixtures
from .test_view_text_guard import bad_view_text

EVIL = '<img src=x onerror="window.pwned=1">'


@pytest.fixture
def narrow(browser, server):  # noqa: F811
    """A harness page 800 px wide (a half-screen JupyterLab)."""
    p = Page(browser, server, width=800)
    yield p
    p.check_clean()
    p.ctx.close()


@pytest.fixture
def page(browser, server):  # noqa: F811
    p = Page(browser, server)
    yield p
    p.check_clean()
    p.ctx.close()


def _header_patch(page, header: dict) -> None:
    base = {"title": "s", "run_state": "idle"}
    page.patch({"type": "patch", "full": False, "entries": {}, "header": {**base, **header}})


def _diag(level: str) -> dict:
    return {"code": "permission-unanswered", "message": "left for a person", "level": level}


def test_info_diagnostics_are_counted_quietly_warnings_are_badged(page):
    page.load()
    _header_patch(page, {"diagnostics": [_diag("info")] * 2, "diagnostic_count": 2, "diagnostic_alerts": 0})
    page.page.wait_for_selector(".acp-diag-quiet")
    assert page.count(".acp-has-diag") == 0
    assert page.text(".acp-diag-quiet .acp-count") == "2"
    badge = page.js("() => getComputedStyle(document.querySelector('.acp-diag-quiet .acp-count')).color")
    warn = [_diag("info"), _diag("warning")]
    _header_patch(page, {"diagnostics": warn, "diagnostic_count": 2, "diagnostic_alerts": 1})
    page.page.wait_for_selector(".acp-has-diag")
    assert (
        page.js("() => getComputedStyle(document.querySelector('.acp-has-diag .acp-count')).color") != badge
    )
    assert page.count(".acp-diag-info") == 1 and page.count(".acp-diag-warn") == 1


def _mount_header_view(page, turns: list[dict]) -> None:
    page.load()  # the runtime, once
    snapshot = {"seq": 1, "header": {"title": "acp", "run_state": "idle"}, "turns": turns, "hint": None}
    page.js(
        "(s) => harness.loadWidget('loader', {kind: 'header', runtime: 'IPY_MODEL_rt1', snapshot: s})",
        snapshot,
    )
    page.page.wait_for_selector(f'.acp-turn-line[data-turn="{turns[-1]["n"]}"]')


LINE = {"state": "ended", "stop_reason": "end_turn", "error": False, "tool_calls": 1, "started": None}


def test_a_turn_line_lands_at_the_turns_top(page):
    _mount_header_view(page, [{**LINE, "n": 1, "anchor": "s/t#1", "prompt": "Fix it", "origin": "user"}])
    page.js("""() => {
      const gap = document.createElement('div'); gap.style.height = '2500px';
      const turn = document.createElement('div');
      turn.dataset.acpAnchor = 's/t#1'; turn.style.height = '4000px'; turn.textContent = 'the turn';
      document.body.append(gap, turn);
    }""")
    page.page.locator('.acp-turn-line[data-turn="1"] button.acp-turn-go').click()
    top = (
        "() => Math.round(document.querySelector('[data-acp-anchor=\"s/t#1\"]').getBoundingClientRect().top)"
    )
    page.page.wait_for_function(f"() => ({top})() <= 2")  # scrolled (the smooth part of a jump may lag)
    assert abs(page.js(top)) <= 2  # its top at the top of the window, not its middle


def test_the_header_line_shows_the_prompt_as_markdown(page):
    prompt = f"Fix **the** `config` test {EVIL} [docs](https://example.com)"
    _mount_header_view(page, [{**LINE, "n": 1, "anchor": "s/t#1", "prompt": prompt, "origin": "user"}])
    line = '.acp-turn-line[data-turn="1"] .acp-turn-prompt'
    assert page.text(f"{line} strong") == "the" and page.text(f"{line} code") == "config"
    assert page.count(f"{line} img") == 0 and page.count(f"{line} a") == 0  # no link inside the button
    assert page.text(line) == f"Fix the config test {EVIL} docs"
    assert page.js("() => window.pwned") is None and bad_view_text(page.page) == []


LONG = (
    "    return compute_the_total_of_every_item_in_the_basket(items, discount=discount, tax_rate=TAX_RATE) + "
)
PATCH = (
    "diff --git /p/app.py /p/app.py\n--- /p/app.py\n+++ /p/app.py\n@@ -1,2 +1,2 @@\n def total(items):\n"
    f"-{LONG}0\n+{LONG}1\n"
)


def test_at_800px_a_diff_shows_its_changed_characters_and_a_terminal_its_command(narrow):
    narrow.load()
    diff = {
        "type": "diff",
        "v1": False,
        "patch": PATCH,
        "files": [
            {
                "operation": "modify",
                "path": "/p/app.py",
                "old_path": None,
                "file_type": "text",
                "mime_type": None,
                "binary": False,
            }
        ],
    }
    card = narrow.entry("tool_call:tc-edit", items=[diff], title="Edit app.py")
    run = narrow.entry("tool_call:tc-run", raw_input={"command": "pytest -q tests/test_config.py"})
    cwd = "/home/someone/projects/a-rather-long-folder-name/with/many/levels/of/nesting/before/the/project"
    term = {
        "term-1": {
            "id": "term-1",
            "command": "pytest -q tests/test_config.py",
            "cwd": cwd,
            "size": None,
            "exit_status": None,
            "cancellable": True,
            "gen": 0,
            "base": 0,
            "end": 0,
        }
    }
    narrow.patch(
        {
            "type": "patch",
            "seq": 10_000,
            "full": False,
            "terminals": term,
            "entries": {"tool_call:tc-edit": card, "tool_call:tc-run": run},
        }
    )
    c = narrow.card("tc-edit")
    narrow.page.wait_for_selector(f"{c} td.d2h-ins ins")
    inside = narrow.js(
        """(c) => {
      const box = document.querySelector(c + ' .acp-diff').getBoundingClientRect();
      return [...document.querySelectorAll(c + ' ins, ' + c + ' del')].map((e) => {
        const r = e.getBoundingClientRect();
        return [e.textContent, r.right <= box.right + 0.5 && r.width > 0];
      });
    }""",
        c,
    )
    assert inside == [["0", True], ["1", True]], inside  # the "+ 1" of the fix is on screen
    wide = f"{c} .d2h-file-diff"
    assert narrow.js(
        "(s) => { const e = document.querySelector(s); return e.scrollWidth <= e.clientWidth; }", wide
    )
    head = '[data-terminal-id="term-1"] .acp-term-head'
    cmd = narrow.js(
        "(s) => { const e = document.querySelector(s);"
        " return [e.textContent, e.scrollWidth <= e.clientWidth]; }",
        f"{head} .acp-term-cmd",
    )
    assert cmd == ["pytest -q tests/test_config.py", True]  # whole: the cwd is elided first
    ARTIFACTS.mkdir(exist_ok=True)
    narrow.page.locator(c).screenshot(path=str(ARTIFACTS / "v21-diff-800px.png"))
    narrow.page.locator(head).screenshot(path=str(ARTIFACTS / "v21-terminal-head-800px.png"))
