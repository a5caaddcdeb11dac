"""Elicitations drawn by the render harness of ``test_render_harness`` (issue 20, items 2, 3 and 6):
the page's validator agrees with the kernel's on the whole case table, a form of every field kind is
reviewed, refused next to its field, accepted and read by the kernel exactly (an int64 too), a URL
is shown as text and opened only by a click (``test_url_consent``), and a saved card is inert."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from acp_notebook import SessionState
from acp_notebook.protocol import elicitation_schema
from acp_notebook.protocol.elicitation import Elicitation
from acp_notebook.widgets.elicitation_entry import answer_click
from acp_notebook.widgets.snapshot import snapshot_of
from acp_notebook.widgets.subtree import ViewTree
from acp_notebook.widgets.tree_entries import build

from .test_render_harness import browser, page, server  # noqa: F401 - the harness fixtures

CASES = json.loads((Path(__file__).parents[1] / "fixtures" / "elicitation_cases.json").read_text())["cases"]
SAFE = 2**53

EVERY_KIND = {
    "type": "object",
    "title": "Tell me <b>more</b>",
    "description": "See https://evil.example/docs for help",
    "properties": {
        "name": {"type": "string", "title": "Name", "minLength": 2, "maxLength": 20, "default": "Ada"},
        "tag": {"type": "string", "pattern": "^v\\d+$", "description": "a version tag"},
        "mail": {"type": "string", "format": "email"},
        "day": {"type": "string", "format": "date"},
        "colour": {"type": "string", "format": "colour"},
        "level": {"type": "string", "enum": ["junior", "senior"]},
        "mode": {
            "type": "string",
            "oneOf": [{"const": "a", "title": "Aggressive"}, {"const": "c", "title": "Calm"}],
        },
        "rate": {"type": "number", "minimum": 0.5, "maximum": 1.5},
        "big": {"type": "integer", "minimum": 0},
        "remote": {"type": "boolean", "default": True},
        "langs": {
            "type": "array",
            "items": {"anyOf": [{"const": "py", "title": "Python"}, {"const": "rs", "title": "Rust"}]},
            "minItems": 1,
        },
        "blob": {"type": "tensor", "shape": [2, 2]},
    },
    "required": ["name", "level", "langs"],
}


def _wire(value):
    """A case value for the page: integers beyond a JS number's precision as BigInt markers."""
    if isinstance(value, bool) or not isinstance(value, int | dict | list):
        return value
    if isinstance(value, int):
        return {"$bigint": str(value)} if abs(value) > SAFE else value
    if isinstance(value, dict):
        return {k: _wire(v) for k, v in value.items()}
    return [_wire(v) for v in value]


VALIDATE_JS = """async (cases) => {
  const api = (await harness.debug()).debug.elicitation;
  const read = (v) => v && typeof v === "object" && !Array.isArray(v)
    ? ("$bigint" in v
      ? BigInt(v.$bigint)
      : Object.fromEntries(Object.entries(v).map(([k, x]) => [k, read(x)])))
    : Array.isArray(v) ? v.map(read) : v;
  return cases.map((c) => Object.keys(api.validate(c.fields, read(c.values))).sort());
}"""


def test_the_pages_validator_agrees_with_the_kernels_on_every_case(page):  # noqa: F811
    page.load()
    fields = [[f.to_dict() for f in elicitation_schema.fields(c["schema"])] for c in CASES]
    sent = [{"fields": f, "values": _wire(c["values"])} for f, c in zip(fields, CASES, strict=True)]
    found = page.js(VALIDATE_JS, sent)
    kernel = [sorted(elicitation_schema.validate(c["schema"], c["values"])) for c in CASES]
    assert len(CASES) >= 40
    for case, js, py in zip(CASES, found, kernel, strict=True):
        assert (case["name"], js) == (case["name"], case["errors"]) == (case["name"], py)
    patterns = page.js("async () => (await harness.debug()).debug.elicitation.FORMAT_PATTERNS")
    assert patterns == elicitation_schema.FORMAT_PATTERNS


def _asked(params: dict, key: str = "elic_1") -> tuple[SessionState, Elicitation]:
    state = SessionState()
    e = Elicitation(key, 7, {"sessionId": "s1", **params})
    state.add_elicitation(e)
    return state, e


def _show(page, state: SessionState, *, saved: bool = False) -> None:  # noqa: F811
    """Load the view of ``state`` (live entries, or as a saved notebook keeps them)."""
    snap, _ = snapshot_of(state)
    if not saved:
        tree = ViewTree(state)
        snap["entries"] = {k: build(tree, tree.root, *k.split(":", 1)) for k in snap["order"]}
    page.load(data={"snapshot": snap, "terminal_text": {}})
    page.page.wait_for_selector(".acp-elicitation")


def _redraw(page, state: SessionState) -> None:  # noqa: F811
    tree = ViewTree(state)
    entry = build(tree, tree.root, "elicitation", "elic_1")
    page.patch({"type": "patch", "full": False, "order": [], "entries": {"elicitation:elic_1": entry}})


CARD = '.acp-elicitation[data-key="elicitation:elic_1"]'


def test_a_form_of_every_kind_is_reviewed_refused_in_place_and_read_exactly(page):  # noqa: F811
    state, e = _asked(
        {
            "mode": "form",
            "message": "Pick <i>wisely</i> at https://evil.example/x",
            "requestedSchema": EVERY_KIND,
        }
    )
    _show(page, state)
    kinds = page.js(
        f"() => [...document.querySelectorAll('{CARD} .acp-el-field')].map((f) => f.dataset.kind)"
    )
    assert kinds == [f.kind for f in e.fields]
    assert "unsupported" in kinds and "multi_select" in kinds and "single_select" in kinds
    # agent text is text: nothing linkified, no markup
    assert page.count(f"{CARD} a") == 0 and page.count(f"{CARD} b, {CARD} i") == 0
    assert page.text(f"{CARD} .acp-el-message") == "Pick <i>wisely</i> at https://evil.example/x"
    assert page.text(f"{CARD} .acp-el-title") == "Tell me <b>more</b>"
    raw = page.text(f'{CARD} .acp-el-field[data-field="blob"] .acp-el-raw')
    assert json.loads(raw) == EVERY_KIND["properties"]["blob"]
    assert page.count(f'{CARD} .acp-el-field[data-field="blob"] input[type="checkbox"]') == 0
    assert "not checked" in page.text(f'{CARD} .acp-el-field[data-field="colour"] .acp-el-hint')
    # defaults are shown and can be changed
    fill = lambda name, value: page.page.locator(f'{CARD} [data-field="{name}"].acp-el-input').fill(value)  # noqa: E731
    assert page.page.locator(f'{CARD} [data-field="name"].acp-el-input').input_value() == "Ada"
    fill("name", "A")
    fill("tag", "x1")
    fill("big", "9223372036854775807")
    fill("rate", "2")
    page.page.locator(f"{CARD} .acp-el-accept").click()
    errors = page.js(
        "(card) => Object.fromEntries([...document.querySelectorAll(`${card} .acp-el-error:not([hidden])`)]"
        ".map((e) => [e.dataset.field, e.textContent]))",
        CARD,
    )
    assert sorted(errors) == ["langs", "level", "name", "rate", "tag"]
    assert errors["name"] == "must be at least 2 characters long"
    assert not [m for m in page.sent() if m.get("type") == "elicitation"]
    fill("name", "Ada L")
    fill("tag", "v12")
    fill("rate", "1.25")
    page.page.locator(f'{CARD} [data-field="level"] .acp-el-opt[data-value="senior"]').check()
    page.page.locator(f'{CARD} [data-field="langs"] .acp-el-opt[data-value="rs"]').check()
    page.page.locator(f'{CARD} [data-field="mode"] .acp-el-opt[data-value="c"]').check()
    page.page.locator(f'{CARD} [data-field="blob"].acp-el-input').fill("[[1, 0], [0, 1]]")
    page.page.locator(f"{CARD} .acp-el-accept").click()
    msg = [m for m in page.sent() if m.get("type") == "elicitation"][-1]
    assert msg["action"] == "accept" and msg["key"] == "elic_1"
    assert page.js(f"() => document.querySelector('{CARD}').dataset.state") == "sent"
    assert answer_click(e, msg, lambda _key: False) is None
    assert e.outcome == {
        "action": "accept",
        "content": {
            "name": "Ada L", "tag": "v12", "level": "senior", "mode": "c", "rate": 1.25,
            "big": 9223372036854775807, "remote": True, "langs": ["rs"], "blob": [[1, 0], [0, 1]],
        },
    }  # fmt: skip
    state.elicitation_changed(e)
    _redraw(page, state)
    page.page.wait_for_selector(f'{CARD}[data-state="accepted"]')
    shown = page.texts(f"{CARD} .acp-el-value-text")
    assert "9223372036854775807" in shown and "rs" in shown


def test_values_the_kernel_refuses_show_next_to_their_field(page):  # noqa: F811
    schema = {
        "type": "object",
        "properties": {
            "n": {"type": "integer", "maximum": 5},
            "ok": {"type": "boolean"},
            "tags": {"type": "array", "items": {"enum": ["a", "b"]}},
        },
    }
    state, e = _asked({"mode": "form", "message": "n?", "requestedSchema": schema})
    _show(page, state)
    page.page.locator(f'{CARD} [data-field="n"].acp-el-input').fill("4")
    page.page.locator(f"{CARD} .acp-el-accept").click()
    msg = [m for m in page.sent() if m.get("type") == "elicitation"][-1]
    assert msg["values"] == {"n": "4"}  # an int's digits; an untouched optional box or list says nothing
    errors = answer_click(e, {**msg, "values": {"n": 9}}, lambda _key: False)  # as if the page were wrong
    assert errors == {"n": "must be at most 5"} and e.pending
    page.patch({"type": "elicitation_refused", "key": "elic_1", "errors": errors})
    page.page.wait_for_selector(f'{CARD}[data-state="open"] .acp-el-error:not([hidden])')
    assert page.text(f'{CARD} .acp-el-error[data-field="n"]') == "must be at most 5"
    page.page.locator(f"{CARD} .acp-el-decline").click()
    assert [m for m in page.sent() if m.get("type") == "elicitation"][-1]["action"] == "decline"


class _Watched(BaseHTTPRequestHandler):
    seen: list[str]

    def do_GET(self) -> None:
        self.seen.append(self.path)
        body = b"<!doctype html><title>consent</title><p>opened</p>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def watched():
    """A local server standing for the URL's host: it records every request it gets."""
    seen: list[str] = []
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), type("Handler", (_Watched,), {"seen": seen}))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://localhost:{httpd.server_address[1]}", seen
    httpd.shutdown()
    httpd.server_close()


def test_url_consent(page, watched):  # noqa: F811
    base, seen = watched
    url = f"{base}/consent/start?token=s3cret#frag"
    message = f"Sign in at {url} please"
    state, e = _asked({"mode": "url", "message": message, "url": url, "elicitationId": "login-1"})
    requests: list[str] = []
    page.ctx.on("request", lambda r: requests.append(r.url))
    _show(page, state)
    # the URL is text, whole; nothing on the page points at it or loads it
    assert page.text(f"{CARD} .acp-el-url") == url
    assert page.text(f"{CARD} .acp-el-message") == message
    assert page.count(f"{CARD} a, {CARD} img, {CARD} iframe, link[href*='consent']") == 0
    assert "not HTTPS" in page.text(f"{CARD} .acp-el-warnings")
    page.js("() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")  # painted
    assert seen == [] and not [u for u in requests if u.startswith(base)]
    assert len(page.ctx.pages) == 1
    with page.ctx.expect_page() as opened:
        page.page.locator(f"{CARD} .acp-el-accept").click()
    tab = opened.value
    tab.wait_for_load_state()
    assert tab.url == url
    assert tab.evaluate("() => window.opener") is None
    assert seen[0] == "/consent/start?token=s3cret"  # then the new tab's own favicon
    msg = [m for m in page.sent() if m.get("type") == "elicitation"][-1]
    assert msg == {"type": "elicitation", "key": "elic_1", "action": "accept"}
    assert answer_click(e, msg, lambda _key: False) is None and e.status == "waiting"
    state.elicitation_changed(e)
    _redraw(page, state)
    page.page.wait_for_selector(f'{CARD}[data-state="waiting"]')
    assert page.text(f"{CARD} .acp-el-outcome").startswith("Opened — waiting for the agent")
    page.page.locator(f"{CARD} .acp-el-dismiss").click()
    assert [m for m in page.sent() if m.get("type") == "elicitation"][-1]["action"] == "dismiss"
    assert e.complete()
    state.elicitation_changed(e, ("completed",))
    _redraw(page, state)
    page.page.wait_for_selector(f'{CARD}[data-state="completed"]')
    tab.close()


def test_a_url_card_highlights_the_registrable_domain_and_warns_of_punycode(page):  # noqa: F811
    url = "https://login.xn--pple-43d.com.evil.co.uk/a?b=1"
    state, _ = _asked({"mode": "url", "message": "m", "url": url, "elicitationId": "x"})
    _show(page, state)
    assert page.text(f"{CARD} .acp-el-url") == url
    assert page.text(f"{CARD} .acp-el-domain") == "evil.co.uk"
    assert "Punycode" in page.text(f"{CARD} .acp-el-warnings")
    assert not page.js(f"() => document.querySelector('{CARD} .acp-el-accept').disabled")
    state2, _ = _asked(
        {"mode": "url", "message": "m", "url": "javascript:alert(1)", "elicitationId": "y"}, "elic_9"
    )
    _show(page, state2)
    other = '.acp-elicitation[data-key="elicitation:elic_9"]'
    assert page.js(f"() => document.querySelector('{other} .acp-el-accept').disabled")
    assert "not opened" in page.text(f"{other} .acp-el-warnings")


def test_a_saved_card_is_inert_and_keeps_only_scheme_host_path(page):  # noqa: F811
    url = "https://auth.example.org/start?token=s3cret"
    state, _ = _asked({"mode": "url", "message": "go", "url": url, "elicitationId": "x"})
    form = Elicitation(
        "elic_2", 8, {"sessionId": "s1", "mode": "form", "message": "q", "requestedSchema": EVERY_KIND}
    )
    state.add_elicitation(form)
    _show(page, state, saved=True)
    assert page.text(f"{CARD} .acp-el-url") == "https://auth.example.org/start"
    assert "s3cret" not in page.js("() => document.body.innerHTML")
    assert page.js("() => [...document.querySelectorAll('.acp-elicitation button')].every((b) => b.disabled)")
    assert page.js("() => [...document.querySelectorAll('.acp-elicitation input')].every((b) => b.disabled)")
    page.page.locator('.acp-elicitation[data-key="elicitation:elic_2"] .acp-el-accept').click(force=True)
    assert not [m for m in page.sent() if m.get("type") == "elicitation"]
    done, answered_one = _asked({"mode": "form", "message": "q", "requestedSchema": EVERY_KIND}, "elic_3")
    answered_one.accept({"level": "junior", "langs": ["py"]}, by="user")
    done.elicitation_changed(answered_one)
    _show(page, done, saved=True)
    answered = '.acp-elicitation[data-key="elicitation:elic_3"]'
    assert page.js(f"() => document.querySelector('{answered}').dataset.state") == "accepted"
    assert {"Name", "level", "langs"} <= set(page.texts(f"{answered} .acp-el-value-name"))
