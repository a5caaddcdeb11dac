"""A cut stderr line in the header: "show all" asks the kernel for the kept line and shows it whole
(the render harness of ``test_render_harness``, its fake model answering as the kernel would)."""

from __future__ import annotations

from .test_render_harness import browser, page, server  # noqa: F401 - the harness fixtures

LONG = "E" * 2_000


def _header(lines: list[str], first: int, cut: list[int]) -> dict:
    hdr = {"title": "s", "run_state": "idle", "stderr": lines, "stderr_from": first, "stderr_cut": cut}
    return {"type": "patch", "seq": 10_000, "full": False, "header": hdr}


def test_a_cut_stderr_line_is_fetched_whole_on_demand(page):  # noqa: F811
    page.load()
    shown = ["one", LONG[:500] + "… (1,500 more characters)", "three"]
    page.patch(_header(shown, 40, [1]))
    page.page.locator(".acp-header-section summary", has_text="Agent stderr").click()
    assert page.count(".acp-stderr-more") == 1 and "1,500 more" in page.texts(".acp-stderr-line")[1]
    page.page.locator(".acp-stderr-more").click()
    page.page.wait_for_function("() => harness.sent.some((m) => m.type === 'stderr_line')", timeout=5_000)
    assert [m for m in page.sent() if m["type"] == "stderr_line"] == [{"type": "stderr_line", "n": 41}]
    page.patch({"type": "stderr_line", "n": 41, "text": LONG})
    page.page.wait_for_function("() => !document.querySelector('.acp-stderr-more')", timeout=5_000)
    assert page.texts(".acp-stderr-line") == ["one", LONG, "three"]
    page.patch(_header([*shown, "four"], 40, [1]))  # a later header keeps the whole line
    assert page.texts(".acp-stderr-line")[1] == LONG and page.count(".acp-stderr-more") == 0


def test_a_line_no_longer_kept_says_so(page):  # noqa: F811
    page.load()
    page.patch(_header([LONG[:500] + "…"], 7, [0]))
    page.page.locator(".acp-header-section summary", has_text="Agent stderr").click()
    page.page.locator(".acp-stderr-more").click()
    page.patch({"type": "stderr_line", "n": 7, "text": None})
    page.page.wait_for_function(
        "() => document.querySelector('.acp-stderr-more')?.textContent === 'no longer kept'", timeout=5_000
    )
