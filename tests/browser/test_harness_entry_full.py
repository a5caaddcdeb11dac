"""A message the kernel cut (``entry_bound``): "show all" asks for the whole entry and draws it in
place (the render harness of ``test_render_harness``, its fake model answering as the kernel would)."""

from __future__ import annotations

from .test_render_harness import browser, page, server  # noqa: F401 - the harness fixtures

WHOLE = "word " * 60_000  # 300,000 characters


def _message(markdown: str, cut: dict | None) -> dict:
    entry = {"kind": "message", "role": "agent", "blocks": [], "markdown": markdown}
    return {**entry, "cut": cut} if cut else entry


def test_a_cut_message_is_fetched_whole_on_demand(page):  # noqa: F811
    page.load()
    cut = {"shown": 200_000, "total": len(WHOLE)}
    patch = {"type": "patch", "seq": 1, "full": True, "order": ["message:m1"]}
    page.patch({**patch, "entries": {"message:m1": _message(WHOLE[:200_000], cut)}})
    assert page.count(".acp-entry-more") == 1 and "100k more characters" in page.texts(".acp-entry-more")[0]
    page.page.locator(".acp-entry-more").click()
    page.page.wait_for_function("() => harness.sent.some((m) => m.type === 'entry_full')", timeout=5_000)
    assert [m for m in page.sent() if m["type"] == "entry_full"] == [
        {"type": "entry_full", "key": "message:m1"}
    ]
    page.patch({"type": "entry_full", "key": "message:m1", "entry": _message(WHOLE, None)})
    page.page.wait_for_function("() => !document.querySelector('.acp-entry-more')", timeout=5_000)
    shown = page.texts(".acp-msg-body")[0]
    assert len(shown) >= len(WHOLE.strip()) - 10
