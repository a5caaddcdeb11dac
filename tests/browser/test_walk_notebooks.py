"""Guard the class, not only the instances (issue 21): every tutorial notebook (``notebooks/*.ipynb``)
is run top to bottom in a real JupyterLab (Chromium), like a person would, twice: at 1280 px wide
(checked in the light theme, then again after switching to the dark one: the views follow a theme
change live) and at 800 px (light). Each walk fails on:

- **junk text** in a view (``null``, ``undefined``, ``NaN``, ``[object …]``): the view-text guard of
  ``conftest.py`` (issue 13), which scans every page a browser test leaves — the walk's included;
- **content clipped without a scroll affordance**: ``CLIPPED_JS`` below (the rule is in its comment);
- **a view of a finished turn that offers Stop**: once the notebook has run (every turn over, the
  agents stopped) no view shows a Stop button; and whenever the walk answers a question (the kernel
  waits for the person: nothing moves), no finished ``%%acp --wait`` cell's view shows one.

The person: an open permission request gets "Allow once"; an open form is accepted with the values it
shows (its defaults); an open URL consent is declined (nothing leaves the machine). The demo agent
runs at ``ACP_DEMO_SPEED=0``; the replays play shipped traces: no key, no network.

Screenshots of the whole notebook go to ``test-artifacts/walk/<notebook>-<light|dark|narrow>.png``.
All cells are attached (the notebook's windowing mode ``none``), so cells far down are checked too;
the left sidebar is closed (the width is the notebook's).

Findings the other branches of issue 21 fix are expected failures, each named in ``KNOWN`` (issue
item, branch, a pattern of the finding): the walk raises ``KnownFinding`` for them only (a strict
xfail), fails on anything else, and fails when an expected finding no longer occurs.
"""

from __future__ import annotations

import json
import re
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from .conftest import ARTIFACTS, CHROMIUM, unavailable

nbformat = pytest.importorskip("nbformat")
sync_api = pytest.importorskip("playwright.sync_api")
pytest.importorskip("jupyterlab")

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"
STATIC = ROOT / "acp_notebook" / "static"
if not (STATIC / "runtime.js").exists() or not (STATIC / "loader.js").exists():
    unavailable("JS bundle not built (cd js && npm install && npm run build)")
if not Path(CHROMIUM).exists():
    unavailable(f"Chromium not installed at {CHROMIUM}")

SHOTS = ARTIFACTS / "walk"
WALK_TIMEOUT = 180  # s, for one notebook to run to its end
THEMES = "/lab/api/settings/@jupyterlab/apputils-extension:themes"
TRACKER = "/lab/api/settings/@jupyterlab/notebook-extension:tracker"
LIGHT, DARK = "JupyterLab Light", "JupyterLab Dark"
MODES = {  # mode -> (viewport width, the themes it is checked in, in order)
    "wide": (1280, {"light": LIGHT, "dark": DARK}),
    "narrow": (800, {"narrow": LIGHT}),
}
WALKED = sorted(p.name for p in NOTEBOOKS.glob("*.ipynb"))


# -- expected findings (fixed on the other branches of issue 21) ------------------------------------
class KnownFinding(AssertionError):
    """Only findings listed in ``KNOWN`` were made (the walk's strict xfail)."""


@dataclass(frozen=True)
class Known:
    """A finding another branch fixes: issue 21's item, that branch, a regex matching the finding."""

    item: str
    branch: str
    pattern: str

    def matches(self, finding: str) -> bool:
        return re.search(self.pattern, finding) is not None


KNOWN: dict[tuple[str, str], list[Known]] = {}  # none left once i21-a and i21-b are merged


def walk_params() -> list:
    params = []
    for mode in MODES:
        for name in WALKED:
            known = KNOWN.get((name, mode), [])
            marks = []
            if known:
                why = "; ".join(f"issue 21 item {k.item}, fixed on {k.branch}" for k in known)
                marks.append(pytest.mark.xfail(raises=KnownFinding, strict=True, reason=why))
            params.append(pytest.param(name, mode, marks=marks, id=f"{name.removesuffix('.ipynb')}-{mode}"))
    return params


# -- the page -------------------------------------------------------------------------------------
NOTEBOOK_JS = "window.jupyterapp?.shell.currentWidget"
CELLS_JS = f"""() => {{
  const nb = {NOTEBOOK_JS};
  if (!nb?.content?.model) return null;
  const cells = [...nb.content.model.cells].map((c, i) => ({{
    i, type: c.type, source: c.sharedModel.getSource(),
    count: c.type === "code" ? c.executionCount : null,
    running: c.type === "code" && c.executionState === "running",
    errors: c.type === "code" ? [...Array(c.outputs.length).keys()].map((k) => c.outputs.get(k).toJSON())
      .filter((o) => o.output_type === "error").map((o) => `${{o.ename}}: ${{o.evalue}}`) : [],
  }}));
  return {{ kernel: nb.sessionContext?.session?.kernel?.status ?? null, cells }};
}}"""

# Stop buttons that cancel a turn (the Revert bar's "force" button shares the look, not the job).
STOPS_JS = """() => [...document.querySelectorAll('.jp-Notebook .jp-Cell')].flatMap((cell, i) =>
  [...cell.querySelectorAll('.acp-btn-stop:not(.acp-revert-force)')]
    .filter((b) => b.checkVisibility() && !b.disabled).map(() => i))"""

# What a person does: one click per call, on the first open question found not clicked yet (a
# question's block is marked once clicked: its answer may take a moment to show); returns what it did.
PERSON_JS = """() => {
  const visible = (el) => el && el.checkVisibility() && !el.disabled;
  const click = (block, button, what) => { block.dataset.walkClicked = ''; button.click(); return what; };
  for (const block of document.querySelectorAll('.acp-permission.acp-perm-open:not([data-walk-clicked])')) {
    const buttons = [...block.querySelectorAll('button.acp-opt')].filter(visible);
    const pick = buttons.find((b) => b.dataset.kind === 'allow_once') || buttons[0];
    if (pick) return click(block, pick, `permission: ${pick.textContent.trim()}`);
  }
  for (const [mode, action] of [['form', 'accept'], ['url', 'decline']]) {
    const open = `.acp-elicitation[data-mode="${mode}"][data-state="open"]:not([data-walk-clicked])`;
    for (const block of document.querySelectorAll(open)) {
      const button = block.querySelector(`.acp-el-${action}`);
      if (visible(button)) return click(block, button, `${mode}: ${action}`);
    }
  }
  return null;
}"""

# Content clipped with no way to see it. For every rendered element of a cell's output (our views,
# and the ipywidgets they are built of, such as the replay bar), in each axis where its content is
# larger than its box (scrollWidth > clientWidth + 1, resp. height):
# - overflow hidden or clip: clipped when something that shows is cut off — a text (a non-blank text
#   node) or an image-like leaf (img, svg, canvas, i) of it reaches beyond the box by more than 1 px
#   (a box cut below its last line in use, such as a sized terminal's empty rows, hides nothing) —
#   unless it is an ellipsis by design: text-overflow: ellipsis (or a -webkit-line-clamp) on an
#   element whose whole text is in a tooltip (its own title or aria-label, or its nearest ancestor's
#   title), or that is the preview of a closed disclosure (inside a <summary> or a button with
#   aria-expanded="false": opening it shows the text whole);
# - overflow auto or scroll: a scroll affordance, unless CSS hides the scrollbar (scrollbar-width:
#   none). Where the scrollbar is cannot be measured here: Playwright's headless Chromium hides
#   scrollbars (--hide-scrollbars), so they take no room;
# - overflow visible: not this element's doing (its content spills; a clipping ancestor is caught).
# Not looked at: xterm.js's own layers (it scrolls its buffer itself).
CLIPPED_JS = r"""() => {
  const words = (s) => (s || '').replace(/\s+/g, ' ').trim();
  const tooltip = (el) => {
    const own = words(el.getAttribute('title') || el.getAttribute('aria-label'));
    if (own) return own;
    const up = el.parentElement?.closest('[title]');
    return up ? words(up.getAttribute('title')) : '';
  };
  const byDesign = (el, cs) => {
    const ellipsis = cs.textOverflow === 'ellipsis' || cs.webkitLineClamp !== 'none';
    const full = words(el.textContent);
    const disclosure = el.closest('summary, button[aria-expanded="false"]');
    return ellipsis && full !== '' && (!!disclosure || tooltip(el).includes(full));
  };
  // how far (px) a text or image-like leaf of `el` reaches beyond its padding box on `axis`
  const cutOff = (el, axis) => {
    const box = el.getBoundingClientRect();
    const b = (k) => parseFloat(getComputedStyle(el)[k]) || 0;
    const lo = axis === 'x' ? box.left + b('borderLeftWidth') : box.top + b('borderTopWidth');
    const hi = axis === 'x' ? lo + el.clientWidth : lo + el.clientHeight;
    let most = 0;
    const reach = (r) => {
      if (r.width === 0 && r.height === 0) return;
      const [a, z] = axis === 'x' ? [r.left, r.right] : [r.top, r.bottom];
      most = Math.max(most, lo - a, z - hi);
    };
    const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT | NodeFilter.SHOW_ELEMENT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      if (n.nodeType === Node.TEXT_NODE) {
        if (!n.nodeValue.trim() || !n.parentElement?.checkVisibility()) continue;
        const range = document.createRange();
        range.selectNodeContents(n);
        for (const r of range.getClientRects()) reach(r);
      } else if (n.matches('img, svg, canvas, i') && n.checkVisibility()) {
        reach(n.getBoundingClientRect());
      }
    }
    return Math.round(most);
  };
  const name = (el) => {
    const cls = [...el.classList].filter((c) => !c.startsWith('lm-')).slice(0, 3).map((c) => `.${c}`);
    const key = el.dataset?.key ? `[data-key="${el.dataset.key}"]` : '';
    return el.localName + cls.join('') + key;
  };
  const path = (el, top) => {
    const chain = [];
    for (let n = el; n && n !== top; n = n.parentElement) chain.push(name(n));
    return chain.slice(0, 4).reverse().join(' > ');
  };
  const found = [];
  const cells = [...document.querySelectorAll('.jp-Notebook .jp-Cell')];
  cells.forEach((cell, i) => {
    for (const out of cell.querySelectorAll('.jp-OutputArea-output')) {
      for (const el of out.querySelectorAll('*')) {
        if (el.closest('.xterm') || !el.checkVisibility()) continue;
        const cs = getComputedStyle(el);
        for (const [axis, over, mode] of [
          ['x', el.scrollWidth - el.clientWidth, cs.overflowX],
          ['y', el.scrollHeight - el.clientHeight, cs.overflowY],
        ]) {
          if (over <= 1) continue;
          let why = null;
          if (mode === 'hidden' || mode === 'clip') {
            const cut = cutOff(el, axis);
            if (cut > 1 && !byDesign(el, cs)) why = `overflow-${axis} ${mode}, cuts ${cut}px off`;
          }
          if ((mode === 'auto' || mode === 'scroll') && cs.scrollbarWidth === 'none') {
            why = `overflow-${axis} ${mode} with its scrollbar hidden`;
          }
          if (why) {
            const text = words(el.textContent).slice(0, 60);
            found.push(`cell ${i}: ${path(el, out)}: ${why}: ${JSON.stringify(text)}`);
          }
        }
        if (found.length >= 30) return;
      }
    }
  });
  return found;
}"""


def walk_settings(folder, theme: str) -> None:
    """The Lab's theme, and every cell attached (so the checks see cells far down the notebook)."""
    folder.api("PUT", THEMES, {"raw": json.dumps({"theme": theme})})
    folder.api("PUT", TRACKER, {"raw": json.dumps({"windowingMode": "none"})})


def cells_of(page) -> dict:
    return page.evaluate(CELLS_JS) or {"kernel": None, "cells": []}


def finished_waits(cells: list[dict]) -> list[int]:
    """The ``%%acp --wait`` cells that ran to their end (their turn is over)."""
    return [
        c["i"] for c in cells if c["source"].startswith("%%acp --wait") and c["count"] and not c["running"]
    ]


def run_like_a_person(page, name: str) -> list[str]:
    """Run every cell; answer what the views ask until the last cell ends. Returns findings made
    on the way (a finished turn's view offering Stop while the kernel waits for the person)."""
    page.evaluate("() => void window.jupyterapp.commands.execute('notebook:run-all-cells')")
    findings: list[str] = []
    deadline = time.monotonic() + WALK_TIMEOUT
    while True:
        now = cells_of(page)
        code = [c for c in now["cells"] if c["type"] == "code"]
        errors = [f"cell {c['i']}: {e}" for c in code for e in c["errors"]]
        if errors:
            pytest.fail(f"{name}: a cell raised:\n  " + "\n  ".join(errors), pytrace=False)
        if code and all(c["count"] and not c["running"] for c in code) and now["kernel"] == "idle":
            return findings
        did = page.evaluate(PERSON_JS)
        if did:  # the kernel waits for this answer: the views are at rest
            stale = set(page.evaluate(STOPS_JS)) & set(finished_waits(now["cells"]))
            findings += [f"cell {i}: a finished turn's view offers Stop (while {did})" for i in sorted(stale)]
        if time.monotonic() > deadline:
            pending = [c["i"] for c in code if not c["count"] or c["running"]]
            pytest.fail(
                f"{name}: not finished after {WALK_TIMEOUT}s; cells not done: {pending}", pytrace=False
            )
        page.wait_for_timeout(150)


def screenshot(page, name: str, mode: str, width: int) -> Path:
    """The whole notebook in one picture: the viewport grown to the notebook's height."""
    tall = page.evaluate("""() => {
      const inner = document.querySelector('.jp-NotebookPanel .jp-WindowedPanel-outer');
      return inner ? inner.scrollHeight : document.body.scrollHeight;
    }""")
    page.set_viewport_size({"width": width, "height": min(max(tall + 200, 900), 16_000)})
    page.evaluate("""() => {
      const inner = document.querySelector('.jp-NotebookPanel .jp-WindowedPanel-outer');
      if (inner) inner.scrollTop = 0;
      return new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
    }""")
    SHOTS.mkdir(parents=True, exist_ok=True)
    path = SHOTS / f"{name.removesuffix('.ipynb')}-{mode}.png"
    page.screenshot(path=str(path))
    page.set_viewport_size({"width": width, "height": 1000})
    return path


def judge(name: str, mode: str, findings: list[str]) -> None:
    """Fail on a finding not in ``KNOWN``, or on an expected one that no longer occurs; raise
    ``KnownFinding`` (the strict xfail) when only expected findings were made."""
    known = KNOWN.get((name, mode), [])
    unknown = [f for f in findings if not any(k.matches(f) for k in known)]
    gone = [k for k in known if not any(k.matches(f) for f in findings)]
    problems = [f"  {f}" for f in unknown]
    problems += [
        f"  expected (item {k.item}, {k.branch}) no longer found: /{k.pattern}/ — drop it" for k in gone
    ]
    assert not problems, f"{name} ({mode}):\n" + "\n".join(problems)
    if known:
        raise KnownFinding(f"{name} ({mode}): only the expected findings:\n  " + "\n  ".join(findings))


@pytest.fixture(scope="module", autouse=True)
def demo_speed(lab_server):
    """The module's kernels (and their agents) get the demo agent at full speed, no auto-answer."""
    lab_server.kernel_env({"ACP_DEMO_SPEED": "0", "ACP_AUTO_ANSWER": None})


@pytest.mark.parametrize(("name", "mode"), walk_params())
def test_walk(lab_log, lab_pages, name: str, mode: str) -> None:
    folder = lab_log
    width, looks = MODES[mode]
    first = next(iter(looks.values()))
    walk_settings(folder, first)
    where = folder.root / mode  # a folder per walk: the demo agent edits the files of its cwd
    where.mkdir(exist_ok=True)
    shutil.copy(NOTEBOOKS / name, where / name)
    page = lab_pages(f"{name}-{mode}", width=width, height=1000)
    page.goto(folder.lab_url(f"{mode}/{name}"), wait_until="domcontentloaded", timeout=60_000)
    idle = f"() => {NOTEBOOK_JS}?.sessionContext?.session?.kernel?.status === 'idle'"
    page.wait_for_function(idle, timeout=60_000, polling=100)
    page.evaluate("() => window.jupyterapp.shell.collapseLeft()")  # the width is the notebook's
    findings = run_like_a_person(page, name)
    for look, theme in looks.items():
        if theme != first:
            page.evaluate(
                "(theme) => window.jupyterapp.commands.execute('apputils:change-theme', {theme})", theme
            )
        page.wait_for_function("(t) => document.body.dataset.jpThemeName === t", arg=theme, timeout=30_000)
        findings += [f"{look}: {f}" for f in at_rest(page)]
        screenshot(page, name, look, width)
    try:
        judge(name, mode, findings)
    finally:
        folder.shutdown_kernel_of(f"{mode}/{name}")
        page.close()  # the view-text guard scans it here


def at_rest(page) -> list[str]:
    """The findings on a notebook that ran: every turn is over, so no view may offer Stop."""
    found = [f"cell {i}: a view offers Stop after the notebook ran" for i in page.evaluate(STOPS_JS)]
    return found + page.evaluate(CLIPPED_JS)
