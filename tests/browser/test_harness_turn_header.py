"""A view of one turn draws the turn's own header (WIRE.md "Turn header", issue 21 item 1), in the
render harness of ``test_render_harness``: its own badge in each state, its duration, a Stop only
while it runs that names the turn, no copy of the session header (usage, stderr, diagnostics),
the compact session line with the stopped or exited agent, and agent text kept as text."""

from __future__ import annotations

import time

from .test_render_harness import browser, page, server  # noqa: F401 - the harness fixtures

EVIL = '<img src=x onerror="window.pwned=1">Evil agent'
HEADER = ".acp-header.acp-turn-header"


def turn_header(**fields) -> dict:
    base = {
        "scope": "turn", "title": "acp: fix it", "turn": 2, "turn_state": "running", "running": True,
        "started": time.time() - 3, "agent": {"name": EVIL, "title": None}, "closed": False,
        "stopped": False, "exit_code": None, "session_anchor": "sess/abc#header", "waiting": [],
    }  # fmt: skip
    return {**base, **fields}


class Patches:
    """Patches carrying only a header, in sequence."""

    def __init__(self, harness) -> None:
        self.page, self.seq = harness, 10_000

    def send(self, header: dict) -> None:
        self.seq += 1
        self.page.patch({"type": "patch", "seq": self.seq, "full": False, "order": [], "entries": {},
                         "header": header})  # fmt: skip

    def state(self, want: str) -> None:
        self.page.page.wait_for_selector(f'{HEADER}[data-turn-state="{want}"]')


def test_a_turn_header_is_about_its_turn(page):  # noqa: F811
    page.load()
    patches = Patches(page)
    patches.send(turn_header())
    patches.state("running")
    assert page.text(f"{HEADER} .acp-badge") == "running"
    assert page.text(f"{HEADER} .acp-turn-duration").endswith("s")
    session_parts = (".acp-header-usage", ".acp-header-extras", ".acp-header-sub")
    chrome = ", ".join(f"{HEADER} {part}" for part in session_parts)
    assert page.count(chrome) == 0, "no copy of the session header"
    line = page.text(f"{HEADER} .acp-turn-session")
    assert line.startswith(f"turn #2 · {EVIL}") and "session header" in line, line
    assert page.count(f"{HEADER} img") == 0 and page.js("() => window.pwned") is None
    page.page.locator(f"{HEADER} .acp-btn-stop").click()
    assert page.sent()[-1] == {"type": "cancel_turn", "turn": 2}

    patches.send(turn_header(turn_state="requires_action", pending=2))
    patches.state("requires_action")
    assert page.text(f"{HEADER} .acp-badge") == "waiting for you · 2 pending"

    error = {"message": "the agent exited (code 3)", "data": {"exitCode": 3}}
    patches.send(turn_header(turn_state="ended", running=False, stop_reason="error", stop_error=error,
                             duration=2.5, closed=True, exit_code=3))  # fmt: skip
    patches.state("ended")
    assert page.text(f"{HEADER} .acp-badge") == "error" and page.count(f"{HEADER} .acp-btn-stop") == 0
    assert page.text(f"{HEADER} .acp-turn-duration") == "2.5s"
    assert page.text(f"{HEADER} .acp-header-error span") == "the agent exited (code 3)"
    assert "agent exited (exit 3)" in page.text(f"{HEADER} .acp-turn-session")

    patches.send(turn_header(turn_state="ended", running=False, stop_reason="cancelled", duration=1.0,
                             closed=True, stopped=True))  # fmt: skip
    page.page.wait_for_selector(f"{HEADER} .acp-state-stopped")
    assert page.text(f"{HEADER} .acp-badge") == "cancelled" and page.count(f"{HEADER} .acp-btn-stop") == 0
    assert page.text(f"{HEADER} .acp-state-stopped") == "agent stopped"
    page.page.locator(f"{HEADER} .acp-turn-to-session").click()
    page.page.wait_for_function(
        f"() => document.querySelector('{HEADER} .acp-turn-note')?.textContent === "
        "'the start cell is not on this page'"
    )
    assert page.errors == []
