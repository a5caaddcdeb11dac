"""Fixtures for the real-JupyterLab browser tests: a lab server, Chromium pages, diagnostics.

One JupyterLab server and one Chromium serve every test of ``tests/browser`` (package scope):

- ``lab_process``: the ``jupyter lab`` of ``lab.LabServer`` (Lab and Notebook 7). At the end it is
  shut down through ``/api/shutdown`` and every process it started (kernels, the agents they
  spawned) is checked and, if still alive, killed by PID.
- ``lab_server``: what a test module uses, its ``lab.LabFolder``: a folder of its own under the
  server's root (``.root``; ``lab_url``/``notebook7_url``/``shutdown_kernel_of`` take paths in it),
  its kernels' processes (``track``/``seen``/``still_alive``), ``kernel_env`` for its kernels. At
  the module's end its kernels are shut down, their processes must be gone (else killed, and the
  module fails) and the Lab settings it changed through ``api`` are put back.
- ``lab_log``: ``lab_server``, plus the server log written during the test in a failing report.
- ``lab_browser``: Debian's Chromium through Playwright, with the render harness's flags.
- ``lab_pages``: a factory of pages (each in a fresh context, closed after the test) that record
  requests, console messages, page errors and dialogs. When a test fails, the console, the page
  errors, the notebook outputs and the server log tail are appended to the report and a
  screenshot goes to ``test-artifacts/``.
- ``wait_value(page, js, want, what)``: the bounded wait on an element's state that tests use
  before asserting on it (polled in the page; on timeout it fails showing the last value).
- The view-text guard (autouse, no opting in): every page a test leaves — closed, navigated away,
  or still open when the test ends, whoever made it — is scanned by ``bad_view_text``; a view that
  shows ``null``, ``undefined``, ``NaN`` or ``[object Object]`` as text fails the test, naming the
  element path.

Package scope, not session: Playwright's sync API marks its event loop as running in this thread
for as long as it is started, which would break ``asyncio.run`` (and pytest-asyncio) in the tests
of the other directories run after this one.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from .harness_server import ARGS
from .lab import LabFolder, LabServer

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ARGS  # the render harness's (its heap figure needs --expose-gc and precise memory info)
LOCAL_HOSTS = {"127.0.0.1", "localhost", "::1", "[::1]"}

_FAILURE_HOOKS = pytest.StashKey[list]()


# -- failure reports --------------------------------------------------------------------------------
@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    """On a failure, let the fixtures add their diagnostics (console, server log...) to the report."""
    report = yield
    if report.failed and report.when in ("setup", "call"):
        for name, dump in item.stash.get(_FAILURE_HOOKS, []):
            try:
                text = dump()
            except Exception as exc:  # diagnostics must never hide the real failure
                text = f"(could not collect: {exc!r})"
            if text:
                report.sections.append((name, text))
    return report


def on_failure(request: pytest.FixtureRequest, name: str, dump: Callable[[], str]) -> None:
    """Register ``dump()`` to be appended to the report (section ``name``) if the test fails."""
    request.node.stash.setdefault(_FAILURE_HOOKS, []).append((name, dump))


# -- the server: one per run, a folder per module --------------------------------------------------
@pytest.fixture(scope="package")
def lab_process(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabServer]:
    """The one JupyterLab server (Lab and Notebook 7) of the browser tests; stopped at their end.

    Package scope: it is set up by the first browser test that needs it and stopped after the last
    test of ``tests/browser`` (a whole-suite run goes on with the other directories without it)."""
    server = LabServer(tmp_path_factory.mktemp("lab"))
    try:
        server.start()
        yield server
    finally:
        leftovers = server.stop()
        if leftovers:
            pytest.fail("processes outlived the lab server (now killed):\n  " + "\n  ".join(leftovers))


@pytest.fixture(scope="module")
def lab_server(
    request: pytest.FixtureRequest, lab_process: LabServer, tmp_path_factory
) -> Iterator[LabFolder]:
    """This module's folder of the shared server; at the end its kernels are shut down (and must take
    their processes with them) and the settings it changed are put back."""
    if not lab_process.running():  # an earlier module's test killed it: the next ones get a new one
        lab_process.start()
    name = request.module.__name__.rsplit(".", 1)[-1]
    folder = LabFolder(lab_process, name, tmp_path_factory.mktemp(name))
    yield folder
    leftovers = folder.close()
    if leftovers:
        pytest.fail(f"processes outlived the kernels of {name} (now killed):\n  " + "\n  ".join(leftovers))


@pytest.fixture
def lab_log(request: pytest.FixtureRequest, lab_server: LabFolder) -> LabFolder:
    """The module's folder, with the server log written during the test added to a failing test's report."""
    since = lab_server.server.log_size()
    on_failure(
        request, "jupyter server log (this test's lines, tail)", lambda: lab_server.log_tail(120, since)
    )
    return lab_server


def write_code_notebook(path: Path, sources: list[str]) -> Path:
    """A notebook of code cells ``sources`` on the python3 kernel, written to ``path``."""
    import nbformat

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(src) for src in sources])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, path)
    return path


def unavailable(reason: str) -> None:
    """Skip on a developer machine without the browser or the bundle; in CI (CI=true) fail."""
    if os.environ.get("CI"):
        pytest.fail(f"{reason} — CI must install it (see .ci/run)", pytrace=False)
    pytest.skip(reason, allow_module_level=True)


# -- waiting on the page ---------------------------------------------------------------------------
_WAIT_VALUE_JS = """async ({arg, want}) => {
  const eq = (x, y) => x === y || (x !== null && y !== null && typeof x === 'object' && typeof y === 'object'
    && Array.isArray(x) === Array.isArray(y) && Object.keys(x).length === Object.keys(y).length
    && Object.keys(x).every((k) => eq(x[k], y[k])));
  return eq(await (__FN__)(arg), want);
}"""


def wait_value(page, js: str, want: object, what: str, arg: object = None, timeout: float = 30_000) -> None:
    """Wait until the JS function ``js(arg)`` (may be async) returns ``want`` (deep equality); else fail.

    Polled from here with ``page.evaluate``, which awaits a returned promise: Playwright's
    ``wait_for_function`` does not, and would take the promise itself as a truthy answer."""
    probe = _WAIT_VALUE_JS.replace("__FN__", js)
    deadline = time.monotonic() + timeout / 1000
    last: object = None
    while True:
        try:
            if page.evaluate(probe, {"arg": arg, "want": want}):
                return
            last = page.evaluate(js, arg)
        except Exception as exc:  # the page went away, or the function threw: show that
            last = f"(cannot read: {exc!r})"
        if time.monotonic() >= deadline:
            pytest.fail(f"timed out ({timeout / 1000:g}s) waiting for {what}\n got: {last!r}\nwant: {want!r}")
        page.wait_for_timeout(100)


# -- the browser ------------------------------------------------------------------------------------
@pytest.fixture(scope="package")
def lab_browser():
    """Debian's Chromium, headless: the one browser of the browser tests (see the module's docstring)."""
    sync_api = pytest.importorskip("playwright.sync_api")
    if not Path(CHROMIUM).exists():
        unavailable(f"Chromium not installed at {CHROMIUM}")
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


class Recorder:
    """What every page of a test did: requests, console, page errors, dialogs."""

    def __init__(self) -> None:
        self.requests: list[str] = []
        self.console: list[str] = []
        self.errors: list[str] = []
        self.dialogs: list[str] = []
        self.pages: list = []
        self.probes: list[tuple[str, Callable[[], object]]] = []  # (label, fn) run on failure

    def attach(self, page, label: str) -> None:
        self.pages.append(page)
        page.on("request", lambda r: self.requests.append(r.url))
        page.on("console", lambda m: self.console.append(f"[{label}] {m.type}: {m.text}"))
        page.on("pageerror", lambda e: self.errors.append(f"[{label}] {e}"))
        page.on("dialog", lambda d: self._dialog(d, label))

    def _dialog(self, dialog, label: str) -> None:
        if dialog.type == "beforeunload":  # leaving a notebook page: not the agent's doing
            self.console.append(f"[{label}] (beforeunload dialog accepted)")
            dialog.accept()
            return
        self.dialogs.append(f"[{label}] {dialog.type}: {dialog.message}")
        dialog.dismiss()

    def external_requests(self) -> list[str]:
        """Requests whose host is not local (data: and blob: URLs are ignored)."""
        out = []
        for url in self.requests:
            parts = urlsplit(url)
            if parts.scheme in ("data", "blob"):
                continue
            if parts.scheme not in ("http", "https", "ws", "wss") or parts.hostname not in LOCAL_HOSTS:
                out.append(url)
        return out

    def dump(self) -> str:
        lines = ["-- console --", *self.console[-200:], "-- page errors --", *self.errors]
        lines += ["-- dialogs --", *self.dialogs]
        return "\n".join(lines)


@pytest.fixture
def lab_pages(request: pytest.FixtureRequest, lab_browser):
    """``new_page(label)`` -> a Playwright page in a fresh context, recorded in ``.recorder``."""
    recorder = Recorder()
    contexts = []

    def new_page(label: str, width: int = 1280, height: int = 1400):
        ctx = lab_browser.new_context(viewport={"width": width, "height": height}, device_scale_factor=1)
        contexts.append(ctx)
        page = ctx.new_page()
        recorder.attach(page, label)
        return page

    def failure_dump() -> str:
        ARTIFACTS.mkdir(exist_ok=True)
        shots = []
        for i, page in enumerate(recorder.pages):
            if page.is_closed():
                continue
            path = ARTIFACTS / f"failure-{request.node.name}-{i}.png"
            with contextlib.suppress(Exception):
                page.screenshot(path=str(path), timeout=5000)
                shots.append(str(path))
        outputs = []
        for page in recorder.pages:
            if page.is_closed():
                continue
            with contextlib.suppress(Exception):
                outputs.append(page.evaluate(_OUTPUTS_JS))
        probes = []
        for label, probe in recorder.probes:
            try:
                probes.append(f"{label}: {probe()}")
            except Exception as exc:
                probes.append(f"{label}: (failed: {exc!r})")
        sections = [recorder.dump(), "-- notebook outputs --", *outputs, "-- probes --", *probes]
        return "\n".join([*sections, "-- screenshots --", *shots])

    on_failure(request, "browser (console, errors, outputs)", failure_dump)
    new_page.recorder = recorder
    try:
        yield new_page
    finally:
        for ctx in contexts:
            with contextlib.suppress(Exception):
                ctx.close()


_OUTPUTS_JS = """() => [...document.querySelectorAll('.jp-Cell')].map((c, i) => {
  const out = c.querySelector('.jp-OutputArea');
  const text = out ? out.innerText.slice(0, 3000) : '';
  return `cell ${i}: ${text}`;
}).join('\\n')"""


# -- the view-text guard ----------------------------------------------------------------------------
# What counts as "a view shows it": a text node inside one of our views (any element with an
# ``acp-`` class: session and header views, the revert bar, the X-ray, the compare grid, the secret
# form, an exported page's view; shadow roots included) whose text holds ``null``, ``undefined`` or
# ``NaN`` as a whole word or ``[object Something]`` anywhere; or a ``title`` / ``aria-label`` /
# ``alt`` / ``placeholder`` of a rendered element that is one of those words (or holds
# ``[object …]``). Verbatim text is not looked at: <pre>, <code> and the like (folded raw
# input/output, the X-ray's JSON pane, commands, paths, code blocks), xterm, diff lines (a file's
# content), form fields (what the user types), anything under ``[data-acp-verbatim]``; nor anything
# outside our views (the user's cells, JupyterLab itself).
# Besides the DOM as it is when the page is left, an observer put in every page at its start
# (``add_init_script`` on every context) records such text whenever it is added, so a word that a
# later redraw replaced (the Revert bar's ``null`` before a click) still fails the test.
_VIEW_TEXT_LIB = r"""(() => {
  if (window.__acpViewText) return window.__acpViewText;
  const BAD = /(?<![\w$])(?:null|undefined|NaN)(?![\w$])|\[object [A-Z]\w*\]/;
  const OBJECT = /\[object [A-Z]\w*\]/;
  const WHOLE = new Set(["null", "undefined", "NaN"]);
  const ATTRS = ["title", "aria-label", "alt", "placeholder"];
  const VERBATIM = "pre, code, kbd, samp, textarea, input, select, script, style, template, noscript,"
    + " svg, .xterm, .d2h-code-line, .d2h-code-side-line, [data-acp-verbatim]";
  const ours = (el) => !!el.classList && [...el.classList].some((c) => c.startsWith("acp-"));
  const up = (el) => el.parentElement || (el.parentNode instanceof ShadowRoot ? el.parentNode.host : null);
  const inView = (el) => {
    for (; el; el = up(el)) if (ours(el)) return true;
    return false;
  };
  const verbatim = (el) => {
    for (; el; el = up(el)) if (el.matches(VERBATIM)) return true;
    return false;
  };
  const name = (el) => {
    const cls = [...el.classList].filter((c) => c.startsWith("acp-")).slice(0, 2).map((c) => `.${c}`);
    const key = el.dataset && el.dataset.key ? `[data-key="${el.dataset.key}"]` : "";
    return el.localName + (el.id ? `#${el.id}` : "") + cls.join("") + key;
  };
  // from the outermost element of our views down to `el` ("#shadow-root" where it crosses one)
  const pathOf = (el) => {
    const chain = [];
    for (; el; el = up(el)) {
      chain.push([name(el), ours(el)]);
      if (!el.parentElement && el.parentNode instanceof ShadowRoot) chain.push(["#shadow-root", false]);
    }
    let top = chain.length - 1;
    while (top > 0 && !chain[top][1]) top--;
    return chain.slice(0, top + 1).reverse().map((c) => c[0]).join(" > ");
  };
  const clip = (s) => JSON.stringify(s.length > 120 ? s.slice(0, 120) + "…" : s);
  const textHit = (node) => {
    const el = node.parentElement || (node.parentNode instanceof ShadowRoot ? node.parentNode.host : null);
    if (!el || !BAD.test(node.nodeValue) || !inView(el) || verbatim(el)) return null;
    return `${pathOf(el)}: text ${clip(node.nodeValue.trim())}`;
  };
  // a tooltip or label counts where it can be seen: on a rendered element (ipywidgets gives the
  // hidden description <label> of every HTML widget title="null")
  const attrHits = (el) => ATTRS.flatMap((a) => {
    const v = el.getAttribute(a);
    if (v == null || !(WHOLE.has(v.trim()) || OBJECT.test(v)) || !el.checkVisibility()) return [];
    return [`${pathOf(el)}: ${a}=${clip(v)}`];
  });
  // the DOM now: every text node and attribute of our views, shadow roots included
  const scan = () => {
    const found = [];
    const walk = (node) => {
      for (const child of node.childNodes) {
        if (found.length >= 20) return;
        if (child.nodeType === Node.TEXT_NODE) {
          const hit = textHit(child);
          if (hit) found.push(hit);
        } else if (child.nodeType === Node.ELEMENT_NODE && !child.matches(VERBATIM)) {
          found.push(...attrHits(child));
          walk(child);
          if (child.shadowRoot) walk(child.shadowRoot);
        }
      }
    };
    const all = document.querySelectorAll('[class*="acp-"]');
    const roots = [...all].filter((el) => ours(el) && !inView(up(el)));
    for (const root of roots) {
      found.push(...attrHits(root));
      walk(root);
      if (root.shadowRoot) walk(root.shadowRoot);
    }
    return found;
  };
  // text added since the page started (cheap: one textContent test per added subtree)
  const seen = [];
  const added = (node) => {
    if (seen.length >= 20) return;
    if (node.nodeType === Node.TEXT_NODE) {
      const hit = textHit(node);
      if (hit && !seen.includes(hit)) seen.push(hit);
    } else if (node.nodeType === Node.ELEMENT_NODE && BAD.test(node.textContent || "")) {
      const walker = document.createTreeWalker(node, NodeFilter.SHOW_TEXT);
      for (let t; (t = walker.nextNode()); ) added(t);
    }
  };
  const watch = () => new MutationObserver((records) => {
    for (const r of records) {
      if (r.type === "characterData") added(r.target);
      else for (const n of r.addedNodes) added(n);
    }
  }).observe(document, { childList: true, subtree: true, characterData: true });
  const report = () => {
    const now = scan();
    return [...now, ...seen.filter((s) => !now.includes(s)).map((s) => `${s} (shown earlier, gone since)`)];
  };
  return (window.__acpViewText = { scan, watch, report, seen });
})()"""
VIEW_TEXT_INIT_JS = _VIEW_TEXT_LIB + ".watch();"
VIEW_TEXT_JS = f"() => {_VIEW_TEXT_LIB}.report()"


def bad_view_text(page) -> list[str]:
    """Where the views on ``page`` show ``null``, ``undefined``, ``NaN`` or ``[object …]`` as text:
    one line per place, ``element path: text "…"``, now or (with the page's observer) earlier.
    What is looked at: see the comment above ``_VIEW_TEXT_LIB``."""
    return page.evaluate(VIEW_TEXT_JS)


class ViewTextGuard:
    """Scans every page a test leaves with ``bad_view_text``: before it is closed (page, context or
    browser), before it navigates elsewhere (``goto``, ``reload``), and, for the pages still open,
    when the test ends. Browsers are tracked from ``BrowserType.launch`` and every new context gets
    the observer, so pages of fixtures and of tests that launch their own browser are covered alike."""

    def __init__(self) -> None:
        self.browsers: list = []
        self.active = False
        self.found: list[str] = []

    def pages(self) -> list:
        out = []
        for browser in self.browsers:
            with contextlib.suppress(Exception):
                if browser.is_connected():
                    out.extend(page for ctx in browser.contexts for page in ctx.pages)
        return out

    def check(self, page, when: str) -> None:
        if not self.active:
            return
        try:
            if page.is_closed() or page.url in ("", "about:blank"):
                return
            url, bad = page.url, bad_view_text(page)
        except Exception:  # the page crashed, is navigating or went away: nothing left to read
            return
        for place in bad:
            line = f"{url.split('?', 1)[0]} ({when}): {place}"
            if line not in self.found:
                self.found.append(line)

    def begin(self) -> None:
        self.active, self.found = True, []

    def end(self) -> list[str]:
        for page in self.pages():
            self.check(page, "open when the test ended")
        self.active = False
        return self.found

    def install(self, mp: pytest.MonkeyPatch) -> None:
        from playwright.sync_api import Browser, BrowserContext, BrowserType, Page

        guard = self

        def wrap(cls, name: str, before: Callable | None = None, after: Callable | None = None) -> None:
            orig = getattr(cls, name)

            def patched(self, *args, **kwargs):
                if before:
                    before(self)
                result = orig(self, *args, **kwargs)
                if after:
                    after(result)
                return result

            patched.__wrapped__ = orig
            mp.setattr(cls, name, patched)

        def launched(browser) -> None:
            guard.browsers = [b for b in guard.browsers if b.is_connected()] + [browser]

        def leave_all(pages_of: Callable[[], list], when: str) -> None:
            try:
                pages = list(pages_of())
            except Exception:  # already closed
                return
            for page in pages:
                guard.check(page, when)

        def every_page(browser) -> list:
            return [page for ctx in browser.contexts for page in ctx.pages]

        wrap(BrowserType, "launch", after=launched)
        wrap(Browser, "new_context", after=lambda ctx: ctx.add_init_script(VIEW_TEXT_INIT_JS))
        wrap(Browser, "new_page", after=lambda page: page.add_init_script(VIEW_TEXT_INIT_JS))
        wrap(Page, "close", before=lambda page: guard.check(page, "closed"))
        wrap(Page, "goto", before=lambda page: guard.check(page, "left by goto"))
        wrap(Page, "reload", before=lambda page: guard.check(page, "reloaded"))
        wrap(BrowserContext, "close", before=lambda ctx: leave_all(lambda: ctx.pages, "closed"))
        wrap(Browser, "close", before=lambda b: leave_all(lambda: every_page(b), "closed"))


_GUARD = ViewTextGuard()


@pytest.fixture(scope="session", autouse=True)
def _view_text_guard() -> Iterator[ViewTextGuard]:
    """Installs the guard's hooks on Playwright for the whole browser suite (no test opts in)."""
    pytest.importorskip("playwright.sync_api")
    with pytest.MonkeyPatch.context() as mp:
        _GUARD.install(mp)
        yield _GUARD


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item):
    """Around each browser test: scan the pages it leaves; fail it if a view shows a bad word."""
    _GUARD.begin()
    try:
        result = yield
    except BaseException as exc:
        found = _GUARD.end()
        if found:
            exc.add_note("a view also showed null/undefined/NaN/[object …] as text:\n  " + "\n  ".join(found))
        raise
    found = _GUARD.end()
    if found:
        pytest.fail(
            "a view shows null/undefined/NaN/[object …] as text (the guard in tests/browser/conftest.py):\n  "
            + "\n  ".join(found),
            pytrace=False,
        )
    return result
