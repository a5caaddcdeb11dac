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


T = 1_700_000_000.0  # a past state's own "now": long before the test runs


def _pending_call(created: float) -> dict:
    return {
        "kind": "tool_call",
        "id": "tc-p",
        "title": "Read a.py",
        "fallback_title": "Read",
        "tool_kind": "read",
        "display_kind": "read",
        "status": "pending",
        "phase": "pending",
        "locations": [],
        "items": [],
        "cancellable": False,
        "created_at": created,
        "ended_at": None,
    }


def _past(header: dict, **snap) -> dict:
    entries = {"tool_call:tc-p": _pending_call(T - 2.1)}
    body = {
        "seq": 1,
        "header": {"title": "s", "run_state": "running", **header},
        "order": list(entries),
        "entries": entries,
        "terminals": {},
        **snap,
    }
    return {"snapshot": body}


ELAPSED = "() => document.querySelector('[data-key=\"tool_call:tc-p\"] .acp-elapsed')?.textContent ?? null"


def test_a_past_state_has_a_frozen_clock(page):
    page.load(None, data=_past({"frozen_at": T}))  # a pinned or replayed state
    assert page.js(ELAPSED) == "2.1s"  # pending up to the state's own time, not up to now


def test_a_saved_snapshot_is_frozen_until_the_kernel_speaks(page):
    page.load(None, data=_past({}, saved_at=T))  # a saved notebook, reopened
    assert page.js(ELAPSED) == "2.1s"
    live = _past({"frozen_at": None})["snapshot"]
    page.patch({**live, "type": "patch", "full": True, "seq": 2})  # the kernel's live answer
    page.page.wait_for_function(f"() => ({ELAPSED})() !== '2.1s'")
    assert page.js(ELAPSED).endswith("m")  # live: the time since it started, hours ago


BAR = {
    "position": 75,
    "total": 75,
    "playing": False,
    "speed": "1x",
    "speeds": ["0.5x", "1x", "2x", "10x", "instant"],
    "where": "75/75 · 0.10 s",
}
CLIPPED_JS = """(sel) => [...document.querySelectorAll(sel)].filter((e) => {
  const r = e.getBoundingClientRect(), box = e.closest('.acp-replay-bar').getBoundingClientRect();
  return e.scrollWidth > e.clientWidth + 1 || r.right > box.right + 0.5 || r.width === 0;
}).map((e) => e.textContent)"""


@pytest.mark.parametrize("width", [800, 420])
def test_the_replay_bar_is_in_the_views_style_and_never_clipped(browser, server, width):  # noqa: F811
    p = Page(browser, server, theme="dark", width=width)
    try:
        p.js("(t) => harness.loadWidget('replay_bar', t)", BAR)
        p.page.wait_for_selector(".acp-replay-bar .acp-rb-where")
        assert p.text(".acp-rb-where") == "75/75 · 0.10 s"
        assert p.texts(".acp-replay-bar button") == ["‹ back", "Play", "on ›"]
        assert p.count(".acp-replay-bar .jupyter-button, .acp-replay-bar .widget-button") == 0
        assert p.js(CLIPPED_JS, ".acp-replay-bar button, .acp-rb-where, .acp-rb-speed-label") == []
        assert p.js("() => document.querySelector('.acp-rb-forward').disabled")  # at the end
        p.page.locator(".acp-rb-back").click()
        p.page.locator(".acp-rb-play").click()
        p.page.select_option(".acp-rb-speed", "10x")
        assert p.sent() == [{"type": "step", "by": -1}]
        assert p.js("() => [harness.model.get('playing'), harness.model.get('speed')]") == [True, "10x"]
        assert p.text(".acp-rb-play") == "Pause"
        ARTIFACTS.mkdir(exist_ok=True)
        p.page.locator(".acp-replay-bar").screenshot(
            path=str(ARTIFACTS / f"v21-replay-bar-{width}px-dark.png")
        )
        p.check_clean()
    finally:
        p.ctx.close()


def test_plans_are_named_by_their_content(page):
    page.load()
    steps = [
        {"content": "Reproduce the failing test", "status": "completed", "priority": "high"},
        {"content": "Fix **load_config**", "status": "in_progress", "priority": "high"},
    ]
    entries = {
        "plan:a": {"kind": "plan", "id": "a", "type": "items", "entries": steps},
        "plan:b": {
            "kind": "plan",
            "id": "b",
            "type": "markdown",
            "entries": [],
            "markdown": "## Steps to `fix` it\n\n1. edit",
        },
        "plan:c": {
            "kind": "plan",
            "id": "c",
            "type": "file",
            "entries": [],
            "uri": "file:///srv/plans/PLAN.md",
            "path": "/srv/plans/PLAN.md",
            "rel": None,
        },
        "plan:d": {"kind": "plan", "id": "d", "type": "items", "entries": []},
    }
    page.patch({"type": "patch", "full": False, "order": list(entries), "entries": entries})
    page.page.wait_for_selector('[data-key="plan:d"]')
    names = [page.text(f'[data-key="{key}"] .acp-plan-name') for key in entries]
    assert names == ["Plan: Fix **load_config**", "Plan: Steps to fix it", "Plan: PLAN.md", "Plan"], names


TOML = '[project]\nname = "demo"\n# a comment, not a heading\ndependencies = ["pytest>=8"]\n'


def test_a_file_read_shows_in_a_monospace_font_and_a_command_is_stated_once(page):
    page.load()
    read = page.entry(
        "tool_call:tc-read", items=[{"type": "content", "block": {"type": "text", "text": TOML}}]
    )
    fenced = page.entry(
        "tool_call:tc-v1",
        display_kind="read",
        diff=None,
        items=[{"type": "content", "block": {"type": "text", "text": "```toml\nx = 1\n```"}}],
    )
    perm = page.entry(
        "permission:perm-1",
        subject_type="command",
        command="pytest -q",
        cwd="/home/user/project",
        tool_call_id=None,
        card=None,
        description="The agent wants to run `pytest -q` in /home/user/project.",
    )
    other = {
        **perm,
        "key": "perm-9",
        "description": "Runs `pytest -q` in /home/user/project: it deletes the "
        "cache first and needs the network for the fixtures it downloads from the mirror.",
    }
    page.patch(
        {
            "type": "patch",
            "full": False,
            "order": ["permission:perm-9"],
            "entries": {
                "tool_call:tc-read": read,
                "tool_call:tc-v1": fenced,
                "permission:perm-1": perm,
                "permission:perm-9": other,
            },
        }
    )
    pre = f"{page.card('tc-read')} .acp-item-content pre.acp-read-text"
    page.page.wait_for_selector(pre)
    assert page.js("(s) => document.querySelector(s).textContent", pre) == TOML
    font = page.js("(s) => getComputedStyle(document.querySelector(s)).fontFamily", pre)
    assert "mono" in font.lower() or "consolas" in font.lower() or "menlo" in font.lower(), font
    assert page.count(f"{page.card('tc-read')} h1") == 0
    assert page.count(f"{page.card('tc-v1')} .acp-read-text") == 0  # the agent's own fences: markdown
    assert page.count(f"{page.card('tc-v1')} pre code") == 1
    once = '[data-key="permission:perm-1"]'
    page.page.wait_for_selector(f"{once} .acp-perm-command")
    said = page.text(once)
    assert said.count("pytest -q") == 1 and said.count("/home/user/project") == 1, said
    assert page.count(f"{once} .acp-perm-desc") == 0
    assert page.js("(s) => document.querySelector(s).title", f"{once} .acp-perm-command").startswith(
        "The agent"
    )
    more = '[data-key="permission:perm-9"]'
    assert page.count(f"{more} .acp-perm-desc") == 1  # it says more than the command: kept


def test_a_saved_start_cell_has_a_frozen_clock(page):
    page.load()  # the runtime, once
    line = {
        **LINE,
        "n": 1,
        "anchor": "s/t#1",
        "prompt": "Fix it",
        "origin": "user",
        "state": "running",
        "started": T - 3,
    }
    snapshot = {
        "seq": 1,
        "header": {"title": "acp", "run_state": "running"},
        "turns": [line],
        "hint": None,
        "saved_at": T,
    }
    page.js(
        "(s) => harness.loadWidget('loader', {kind: 'header', runtime: 'IPY_MODEL_rt1', snapshot: s})",
        snapshot,
    )
    page.page.wait_for_selector('.acp-turn-line[data-turn="1"]')
    assert page.text('.acp-turn-line[data-turn="1"] .acp-turn-meta') == "1 tool call · 3.0s"
