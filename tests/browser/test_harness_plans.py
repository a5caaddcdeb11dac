"""Plans of every type, work running in the background, the plan-mode permission's kept card and
the agent's login status, drawn by the render harness of ``test_render_harness`` (issue 17)."""

from __future__ import annotations

from .test_render_harness import browser, page, server  # noqa: F401 - the harness fixtures

EVIL = '# Steps\n\n1. edit <img src=x onerror="window.pwned=1"> **bold**\n\n<script>window.pwned=2</script>'


def _patch(
    entries: dict, order: list[str], header: dict | None = None, terminals: dict | None = None
) -> dict:
    msg = {"type": "patch", "seq": 10_000, "full": False, "order": order, "entries": entries}
    if header is not None:
        msg["header"] = header
    if terminals is not None:
        msg["terminals"] = terminals
    return msg


def _plan(pid: str, **fields) -> dict:
    return {"kind": "plan", "id": pid, "entries": [], **fields}


def test_plans_of_every_type(page):  # noqa: F811
    page.load()
    entries = {
        "plan:md": _plan("md", type="markdown", markdown=EVIL),
        "plan:file": _plan(
            "file", type="file", uri="file:///srv/plan.md", path="/srv/plan.md", rel="plan.md"
        ),
        "plan:web": _plan("web", type="file", uri="https://example.com/plan.md", path=None, rel=None),
        "plan:odd": _plan("odd", type="_graph", raw={"type": "_graph", "planId": "odd", "nodes": [1]}),
        "plan:gone": _plan("gone", type=None, removed=True),
    }
    page.patch(_patch(entries, list(entries)))
    page.page.wait_for_selector('[data-key="plan:gone"]')
    md = '[data-key="plan:md"] .acp-plan-md'
    assert page.text(f"{md} strong") == "bold" and page.count(f"{md} img") == 0
    assert page.count(f"{md} script") == 0 and page.js("() => window.pwned") is None
    assert page.text('[data-key="plan:file"] .acp-plan-uri') == "file:///srv/plan.md"  # outside Lab: text
    assert page.count('[data-key="plan:file"] [data-commandlinker-command]') == 0
    link = page.js("() => document.querySelector('[data-key=\"plan:web\"] a.acp-plan-uri').href")
    assert link == "https://example.com/plan.md"
    assert '"nodes"' in page.text('[data-key="plan:odd"] pre')
    assert page.text('[data-key="plan:gone"]') == "Plan removed"


def test_background_badges_and_kept_card_and_login(page):  # noqa: F811
    page.load()
    card = page.entry(
        "tool_call:tc-read", status="completed", phase="completed", background=True, cancellable=True
    )
    perm = page.entry(
        "permission:perm-2",
        tool_call_id=None,
        shown_before={
            "items": [{"type": "content", "block": {"type": "text", "text": "The **plan**"}}],
            "raw_input": {"plan": "p"},
        },
    )
    term = {
        "term-1": {
            "id": "term-1",
            "command": "sleep 99",
            "exit_status": None,
            "cancellable": True,
            "background": True,
            "gen": 0,
            "base": 0,
            "end": 0,
        }
    }
    header = {"title": "s", "run_state": "idle", "auth": {"kind": "api_key", "label": "Anthropic API key"}}
    page.patch(_patch({"tool_call:tc-read": card, "permission:perm-2": perm}, [], header, term))
    page.page.wait_for_selector(f"{page.card('tc-read')} .acp-background")
    assert page.text(f"{page.card('tc-read')} .acp-card-head .acp-background") == "running in background"
    assert page.count(f"{page.card('tc-read')} .acp-card-head button") == 1  # its Cancel
    head = '[data-terminal-id="term-1"] .acp-term-head'
    page.page.wait_for_selector(f"{head} .acp-background")
    assert page.count(f"{head} button") == 1
    assert page.text(".acp-perm-shown strong") == "plan"
    assert page.text(".acp-header-auth") == "login: Anthropic API key (api key)"
