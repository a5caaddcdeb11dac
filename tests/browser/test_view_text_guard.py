"""The view-text guard of the browser conftest (``bad_view_text``), tried on render-harness pages:
a view showing ``null`` / ``undefined`` / ``NaN`` / ``[object Object]`` as text is named with its
element path; the same words in verbatim text (a raw-output JSON pre, code) pass. And the Revert
bar of an idle turn, which showed a literal ``null`` under its summary, shows none."""

from __future__ import annotations

from .conftest import bad_view_text
from .test_render_harness import browser, page, server  # noqa: F401 - the harness fixtures

READ = '.acp-card[data-key="tool_call:tc-read"]'
FORGET = "() => { document.querySelectorAll('[data-guard-probe]').forEach((e) => e.remove()); window.__acpViewText.seen.length = 0; }"  # noqa: E501


def _show(harness_page, selector: str, text: str, attr: str | None = None) -> None:
    """Put ``text`` in a span (or, with ``attr``, in that attribute of it) inside ``selector``."""
    harness_page.js(
        """([sel, text, attr]) => {
          const span = document.createElement("span");
          span.dataset.guardProbe = "";
          if (attr) span.setAttribute(attr, text); else span.textContent = text;
          document.querySelector(sel).append(span);
        }""",
        [selector, text, attr],
    )


def test_a_view_showing_null_fails_the_guard_naming_the_element(page):  # noqa: F811
    page.load()
    assert bad_view_text(page.page) == []
    title = f"{READ} .acp-card-title"
    cases = [
        ("null", None, 'text "null"'),
        ("turn undefined", None, 'text "turn undefined"'),
        ("NaN MB", None, 'text "NaN MB"'),
        ("files: [object Object]", None, 'text "files: [object Object]"'),
        ("undefined", "title", 'title="undefined"'),
    ]
    for shown, attr, said in cases:
        _show(page, title, shown, attr)
        found = bad_view_text(page.page)
        assert len(found) == 1, (shown, found)
        path, _, what = found[0].partition(": ")
        assert what == said, found
        assert path.startswith("div.acp-session > "), found  # from the view's root ...
        assert path.endswith('"tool_call:tc-read"] > div.acp-card-head > span.acp-card-title > span'), path
        page.js(FORGET)
    # inside a shadow root of a view
    page.js(
        """(sel) => {
      const host = document.createElement("span");
      host.dataset.guardProbe = "";
      const b = Object.assign(document.createElement("b"), { textContent: "NaN" });
      host.attachShadow({ mode: "open" }).append(b);
      document.querySelector(sel).append(host);
    }""",
        title,
    )
    found = bad_view_text(page.page)
    assert len(found) == 1, found
    assert found[0].endswith('span.acp-card-title > span > #shadow-root > b: text "NaN"'), found
    page.js(FORGET)
    # the words inside other words are fine, and so is the tooltip of an element not rendered
    for shown in ("nullable", "NaNa", "undefinedness", "is_null"):
        _show(page, title, shown)
    page.js("(sel) => document.querySelector(sel).append(Object.assign(document.createElement('label'), "
            "{ title: 'null', hidden: true }))", title)  # fmt: skip
    assert bad_view_text(page.page) == []
    page.js(FORGET)


def test_text_shown_then_replaced_is_still_caught(page):  # noqa: F811
    page.load()
    _show(page, f"{READ} .acp-card-title", "null")
    page.page.wait_for_timeout(50)  # the observer's turn
    page.js("() => document.querySelector('[data-guard-probe]').remove()")
    found = bad_view_text(page.page)
    assert len(found) == 1 and found[0].endswith('text "null" (shown earlier, gone since)'), found
    page.js(FORGET)
    assert bad_view_text(page.page) == []


def test_json_null_in_a_raw_output_pre_passes(page):  # noqa: F811
    page.load()
    raw = {"exit": None, "value": "undefined", "ratio": "NaN", "obj": "[object Object]"}
    entry = page.entry("tool_call:tc-read", raw_output=raw)
    page.patch({"type": "patch", "full": False, "entries": {"tool_call:tc-read": entry}})
    page.page.locator(f"{READ} .acp-raw-output .acp-fold-toggle").click()
    shown = page.text(f"{READ} .acp-raw-output pre")
    assert '"exit": null' in shown and '"value": "undefined"' in shown, shown
    _show(page, f"{READ} .acp-card-title", "null")  # the same word outside the pre is caught
    assert len(bad_view_text(page.page)) == 1
    page.js(FORGET)
    assert bad_view_text(page.page) == []


def test_the_revert_bar_of_an_idle_turn_shows_no_null(page):  # noqa: F811
    page.load()
    files = [{"path": "a.txt", "change": "modified", "revertible": True}]
    status = {"type": "checkpoint", "turn": 1, "scope": "turn", "state": "ready", "count": 1,
              "files": files, "revertible": True, "busy": False}  # fmt: skip
    page.patch(status)
    bar = page.js("() => document.querySelector('.acp-revert').innerText")
    assert "1 file changed in this turn" in bar and "Revert this turn" in bar, bar
    assert "null" not in bar, bar
    assert page.js("() => [...document.querySelector('.acp-revert').childNodes].map((n) => n.nodeName)") == [
        "DIV"
    ]
    assert bad_view_text(page.page) == []
