"""Benchmark: a 2,000-card, 100-terminal session view in Chromium, against plain divs in the same page.

Run as ``python3 bench/browser_cards.py [--cards 2000] [--terminals 100] [--scroll-px-per-s 6000]``.
It serves the render harness of the browser tests (``tests/browser/harness/``: a fake anywidget
model fed a generated WIRE.md snapshot, no Jupyter) and measures, in fresh pages:

- first render: ``harness.load`` of the big snapshot until the next frame (layout included);
- one-card update: 60 single-card patches, each followed by a forced layout (median and max);
- scrolling from top to bottom at a steady rate: frame times from requestAnimationFrame deltas
  (frames over 50 ms, the longest), terminals getting their xterm on the way;
- JS heap in use after a full GC (CDP ``HeapProfiler.collectGarbage``, ``Performance.getMetrics``),
  above the heap of the same page before anything is rendered.

The floor, in the same harness page: the same text as 2,000 plain ``div``s (one ``pre`` per
terminal) in layout-contained chunks of 64 like the view's list, the same single-div updates,
the same scroll over a page of the same height. Ratios are
floor / ours for times (1.0 = as fast as plain divs) and ours / floor for the heap.
"""

from __future__ import annotations

import argparse

from _browser import LONGTASKS_READ_JS, LONGTASKS_START_JS, chromium, harness_server, heap_mb

OPEN_JS = "async () => { await import('/static/runtime.js'); await import('/static/loader.js'); }"
FRAME = "await new Promise((ok) => requestAnimationFrame(() => setTimeout(ok, 0)));"

RENDER_OURS_JS = f"""async (data) => {{
  const t0 = performance.now();
  await harness.load({{ data }});
  void document.body.offsetHeight;
  {FRAME}
  return performance.now() - t0;
}}"""

# The same words as the cards, as plain divs: title, path, the text item, terminal lines in a <pre>.
RENDER_PLAIN_JS = f"""async (data) => {{
  const t0 = performance.now();
  const out = document.getElementById('out'), frag = document.createDocumentFragment();
  const plain = (s) => s.replace(/\\u001b\\[[0-9;]*m/g, '');
  let chunk = null;
  for (const key of data.snapshot.order) {{
    if (!chunk || chunk.childElementCount >= 64) {{
      frag.append((chunk = document.createElement('div')));
      chunk.style.contain = 'layout style';
    }}
    const e = data.snapshot.entries[key], div = document.createElement('div');
    div.dataset.key = key;
    const title = document.createElement('div');
    title.textContent = e.title;
    const path = document.createElement('div');
    path.textContent = e.locations[0].path;
    div.append(title, path);
    for (const item of e.items) {{
      const x = document.createElement(item.type === 'terminal' ? 'pre' : 'div');
      x.textContent = item.type === 'terminal' ? plain(data.terminal_text[item.id]) : item.block.text;
      div.append(x);
    }}
    chunk.append(div);
  }}
  out.append(frag);
  void document.body.offsetHeight;
  {FRAME}
  return performance.now() - t0;
}}"""

UPDATE_PLAIN_JS = """(n) => {
  const divs = document.querySelectorAll('#out > div > div'), times = [];
  for (let i = 0; i < n; i++) {
    const d = divs[(i * 7919 + 13) % divs.length].firstChild, t = performance.now();
    d.textContent = `Updated module (${i})`;
    void document.body.offsetHeight;
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  return { medianMs: times[Math.floor(n / 2)], maxMs: times[n - 1] };
}"""

PAD_JS = "(h) => { document.getElementById('out').style.minHeight = `${h + innerHeight}px`; }"

# Scroll the document from top to bottom at `rate` px/s, one step per animation frame.
SCROLL_JS = """async (rate) => {
  const el = document.scrollingElement, bottom = () => el.scrollHeight - innerHeight, deltas = [];
  el.scrollTop = 0;
  await new Promise((ok) => requestAnimationFrame(() => requestAnimationFrame(ok)));
  const t0 = performance.now();
  let last = t0;
  await new Promise((ok) => {
    const step = (t) => {
      deltas.push(t - last);
      last = t;
      const want = ((t - t0) / 1000) * rate, end = bottom();  // (read before the write: no forced layout)
      el.scrollTop = want;
      if (want >= end || t - t0 > 90000) ok(); else requestAnimationFrame(step);
    };
    requestAnimationFrame(step);
  });
  deltas.shift();
  const sorted = [...deltas].sort((a, b) => a - b);
  return { frames: deltas.length, over50: deltas.filter((d) => d > 50).length, longest: sorted.at(-1) ?? 0,
           median: sorted[Math.floor(sorted.length / 2)] ?? 0, ms: performance.now() - t0, height: bottom() };
}"""


def open_page(browser, base: str):
    """A fresh harness page (its own context) with the bundles imported."""
    ctx = browser.new_context(viewport={"width": 1000, "height": 900}, device_scale_factor=1)
    page = ctx.new_page()
    page.goto(f"{base}/harness/index.html?theme=light")
    page.wait_for_function("() => window.harnessReady === true", timeout=30_000)
    page.evaluate(OPEN_JS)
    return page


def scroll(page, rate: float) -> dict:
    """Scroll figures plus the long tasks during the scroll."""
    page.evaluate(LONGTASKS_START_JS)
    figures = page.evaluate(SCROLL_JS, rate)
    figures["tasks"] = page.evaluate(LONGTASKS_READ_JS)
    return figures


def ours(browser, base: str, cards: int, terminals: int, rate: float) -> dict:
    """The SessionView: render, one-card updates, heap, scroll, heap after the scroll."""
    page = open_page(browser, base)
    try:
        empty = heap_mb(page)
        data = page.evaluate("([c, t]) => harness.bigFixture(c, t)", [cards, terminals])
        render = page.evaluate(RENDER_OURS_JS, data)
        page.wait_for_function("() => harness.isLive('[data-terminal-id=\"term-0\"]')", timeout=30_000)
        update = page.evaluate("([n, c]) => harness.timeCardUpdates(n, c)", [60, cards])
        heap = heap_mb(page)
        scrolled = scroll(page, rate)
        page.wait_for_timeout(3500)  # far terminals drop their xterm after 3 s
        live = len(page.evaluate("() => harness.liveTerminals()"))
        return {"render": render, "update": update, "empty": empty, "heap": heap,
                "scroll": scrolled, "heap_after": heap_mb(page), "live": live,
                "counts": page.evaluate("() => [document.querySelectorAll('.acp-card').length,"
                                        " document.querySelectorAll('.acp-terminal').length]")}  # fmt: skip
    finally:
        page.context.close()


def floor(browser, base: str, cards: int, terminals: int, rate: float, height: float) -> dict:
    """Plain divs with the same text in the same page; scrolled over the same height."""
    page = open_page(browser, base)
    try:
        empty = heap_mb(page)
        data = page.evaluate("([c, t]) => harness.bigFixture(c, t)", [cards, terminals])
        render = page.evaluate(RENDER_PLAIN_JS, data)
        update = page.evaluate(UPDATE_PLAIN_JS, 60)
        heap = heap_mb(page)
        page.evaluate(PAD_JS, height)
        return {
            "render": render,
            "update": update,
            "empty": empty,
            "heap": heap,
            "scroll": scroll(page, rate),
        }
    finally:
        page.context.close()


def report(o: dict, f: dict) -> None:
    """Print the figures and the ratios."""
    ro, rf, uo, uf = o["render"], f["render"], o["update"], f["update"]
    print(f"first_render_ms: ours {ro:.0f}, plain divs {rf:.0f}, ratio {rf / ro:.2f}")
    print(
        f"one_card_update_ms: ours median {uo['medianMs']:.2f} / max {uo['maxMs']:.2f}, plain median"
        f" {uf['medianMs']:.2f} / max {uf['maxMs']:.2f}, ratio (medians)"
        f" {uf['medianMs'] / max(uo['medianMs'], 1e-3):.2f}"
    )
    so, sf = o["scroll"], f["scroll"]
    print(f"scroll: {so['height']:,.0f} px at a steady rate, {so['ms'] / 1000:.1f} s")
    for name, s in (("ours", so), ("plain", sf)):
        print(
            f"  scroll_{name}: {s['frames']} frames, {s['over50']} over 50 ms, longest {s['longest']:.0f} ms,"
            f" median {s['median']:.1f} ms; {s['tasks']['count']} long tasks"
            f" (longest {s['tasks']['max']:.0f} ms)"
        )
    fps = (so["frames"] / so["ms"]) / (sf["frames"] / sf["ms"])
    print(f"scroll_frame_rate_ratio (ours / plain frames per second): {fps:.2f}")
    empty = o["empty"][0]
    ours_heap, plain_heap = o["heap"][0] - empty, f["heap"][0] - f["empty"][0]
    print(
        f"js_heap_mib (above the empty page, {empty:.1f}): ours {ours_heap:.1f}, after scrolling"
        f" {o['heap_after'][0] - empty:.1f} ({o['live']} live xterms), plain divs {plain_heap:.1f},"
        f" ratio ours/plain {ours_heap / max(plain_heap, 0.01):.1f}"
    )
    print(f"dom_nodes: ours {o['heap'][1]:,}, after scrolling {o['heap_after'][1]:,}, plain {f['heap'][1]:,}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cards", type=int, default=2000)
    parser.add_argument("--terminals", type=int, default=100)
    parser.add_argument("--scroll-px-per-s", type=float, default=6000, help="steady scroll rate")
    args = parser.parse_args(argv)
    with harness_server() as base, chromium() as browser:
        o = ours(browser, base, args.cards, args.terminals, args.scroll_px_per_s)
        print(f"session: {o['counts'][0]:,} cards, {o['counts'][1]} terminals")
        f = floor(browser, base, args.cards, args.terminals, args.scroll_px_per_s, o["scroll"]["height"])
        report(o, f)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
