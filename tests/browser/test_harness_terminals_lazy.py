"""An xterm is drawn inside a shadow root of its own (the render harness of ``test_render_harness``):
the <style> elements xterm's DOM renderer writes on open, resize and char-size changes stay out of
the document (a stylesheet change there restyles the whole page: the long frames of a scroll past
many terminals), while xterm's CSS and ours still apply, and its measuring spans lay out locally."""

from __future__ import annotations

from .test_render_harness import browser, page, server  # noqa: F401 - the harness fixtures

STATE_JS = """() => {
  const hosts = [...document.querySelectorAll('.acp-terminal .acp-term-screen > .acp-term-host')];
  const doc = [...document.querySelectorAll('style')].map((s) => s.textContent);
  return {
    terminals: document.querySelectorAll('.acp-terminal').length,
    hosts: hosts.length,
    lightXterm: document.querySelectorAll('.xterm').length,
    docRendererStyles: doc.filter((t) => t.includes('xterm-dom-renderer-owner')).length,
    shadow: hosts.map((h) => {
      const r = h.shadowRoot, el = r?.querySelector('.xterm');
      const styles = r ? [...r.querySelectorAll('style')].map((s) => s.textContent) : [];
      const ta = r?.querySelector('.xterm-helper-textarea');
      const screen = r?.querySelector('.xterm-screen');
      const measure = r?.querySelector('.xterm-width-cache-measure-container');
      return {
        xterm: !!el, adopted: r ? r.adoptedStyleSheets.length : 0,
        rendererStyles: styles.filter((t) => t.includes('xterm-dom-renderer-owner')).length,
        textareaOpacity: ta ? getComputedStyle(ta).opacity : null,
        screenContain: screen ? getComputedStyle(screen).contain : null,
        measureContain: measure ? getComputedStyle(measure).contain : null,
        rows: r?.querySelector('.xterm-rows')?.textContent.length ?? 0,
      };
    }),
  };
}"""


def test_xterm_styles_stay_in_its_shadow_root(page):  # noqa: F811
    page.load()
    ids = page.js("() => [...document.querySelectorAll('.acp-terminal')].map((t) => t.dataset.terminalId)")
    for tid in ids:  # build every terminal's xterm (as scrolling near it does) and let it parse
        assert page.lines(f'[data-terminal-id="{tid}"]')
    page.page.evaluate("() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")
    state = page.js(STATE_JS)
    assert state["terminals"] > 0 and state["hosts"] == state["terminals"]
    assert state["lightXterm"] == 0, "no xterm element in the document itself"
    assert state["docRendererStyles"] == 0, "xterm's renderer styles are not in the document"
    for s in state["shadow"]:
        assert s["xterm"] and s["adopted"] == 1 and s["rendererStyles"] >= 1
        assert s["textareaOpacity"] == "0", "xterm.css applies inside the shadow root"
        assert "size" in s["screenContain"] and "layout" in s["screenContain"]
        assert s["measureContain"] in ("strict", "size layout paint style")
        assert s["rows"] > 0, "the rows are drawn"
    page.check_clean()
