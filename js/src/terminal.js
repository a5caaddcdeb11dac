// A terminal shown in a card: header (command, cwd, exit status, cancel) and an xterm.js screen
// that exists only while the host is near the viewport; it is rebuilt from the stored bytes.
// Read-only, unless the header lists it as interactive: then it takes keystrokes, is fitted to the
// card (rows too; the screen can be dragged taller) and reports its size.
import { FitAddon } from "@xterm/addon-fit";
import { Terminal } from "@xterm/xterm";
import xtermCss from "@xterm/xterm/css/xterm.css";
import { backgroundBadge } from "./background.js";
import { icon } from "./icons.js";
import { linkHandler } from "./termlinks.js";
import { TerminalInput } from "./terminput.js";
import { terminalTheme, termFont } from "./termtheme.js";
import { fmtBytes, h, text } from "./util.js";

const MAX_ROWS = 24;
const DEFAULT_COLS = 80;
const INTERACTIVE_ROWS = 24;

// Each xterm lives in a shadow root of its own: its DOM renderer writes <style> elements (theme,
// dimensions) on open, on every resize and on char-size changes, and a stylesheet change in the
// document costs a style pass over the whole page (~10-20 ms on a 57,000-node session, several
// per terminal); inside a shadow root it stays local. xterm's CSS and ours for it are adopted
// there (one shared sheet). The DOM renderer's width cache measures a glyph by writing a span and
// reading its width, ~20 times per new terminal: its container is size- and layout-contained so
// each of those layouts is local instead of a layout of the page from its root; so is the screen
// (xterm sets its width and height in px), where rows are drawn between two measurements.
const SHADOW_CSS = `${xtermCss}
:host { display: block; }
:host(.acp-interactive), :host(.acp-interactive) .acp-xterm-wrap { height: 100%; }
.xterm { padding: 0; }
:host(.acp-interactive) .xterm { padding: 4px 6px; }
.xterm .xterm-viewport { background-color: transparent !important; }
.xterm .xterm-screen { contain: size layout; }
.xterm-width-cache-measure-container { position: absolute; top: 0; left: 0; width: 1px; height: 1px; contain: strict; }`;
let shadowSheet;

function sharedSheet() {
  if (shadowSheet === undefined) {
    try {
      shadowSheet = new CSSStyleSheet();
      shadowSheet.replaceSync(SHADOW_CSS);
    } catch {
      shadowSheet = null;
    }
  }
  return shadowSheet;
}

/** The element to open an xterm in: a div in a fresh shadow root inside `screen` (or screen). */
function xtermParent(screen, interactive) {
  const host = h("div", { class: interactive ? "acp-term-host acp-interactive" : "acp-term-host" });
  const sheet = typeof host.attachShadow === "function" ? sharedSheet() : null;
  if (!sheet) return screen;
  const root = host.attachShadow({ mode: "open" });
  if ("adoptedStyleSheets" in root) root.adoptedStyleSheets = [sheet];
  else root.append(Object.assign(document.createElement("style"), { textContent: SHADOW_CSS }));
  const wrap = h("div", { class: "acp-xterm-wrap" });
  root.append(wrap);
  screen.replaceChildren(host);
  return wrap;
}

/** host element (.acp-terminal) → TermView, for the debug API. */
export const viewsByHost = new WeakMap();

/** Views with a live xterm; re-themed when JupyterLab switches theme. */
const live = new Set();
let themeWatch = null;

function watchTheme() {
  if (themeWatch || typeof MutationObserver === "undefined" || !document.body) return;
  themeWatch = new MutationObserver(() => {
    for (const v of live) if (v.term) v.term.options.theme = terminalTheme(v.screen);
  });
  themeWatch.observe(document.body, { attributes: true, attributeFilter: ["data-jp-theme-name", "data-jp-theme-light"] });
}

export class TermView {
  constructor(id, ctx) {
    this.id = id;
    this.ctx = ctx;
    this.store = ctx.terminals;
    this.term = null;
    this.fit = null;
    this.interactive = !!ctx.interactive?.has(id);
    this.input = new TerminalInput(id, (m) => ctx.send(m));
    this.head = h("div", { class: "acp-term-head" });
    this.screen = h("div", { class: "acp-term-screen" });
    this.el = h("div", { class: "acp-terminal", dataset: { terminalId: id } }, this.head, this.screen);
    this.el._acpDestroy = () => this.destroy();
    viewsByHost.set(this.el, this);
    this.store.attach(id, this);
    this.updateMeta();
    this.estimateHeight();
    ctx.observeTerminal(this);
  }

  get meta() {
    return this.store.get(this.id).meta;
  }

  /** Create the xterm instance (if not already there) and replay the stored bytes. */
  ensure() {
    if (this.term) return this.term;
    const { size } = this.meta;
    const on = this.interactive;
    const fixed = !on && size && size.cols > 0 && size.rows > 0;
    const font = termFont(this.screen);
    const pty = (this.store.get(this.id).pty ||= on); // a pty's output has its own CRs
    this.screen.style.minHeight = this.screen.style.height = "";
    this.screen.classList.toggle("acp-term-fixed", !!fixed);
    this.screen.classList.toggle("acp-term-interactive", on);
    if (on) this.screen.dataset.lmSuppressShortcuts = "true"; // no Lab shortcut here (xterm also stops its keys)
    else delete this.screen.dataset.lmSuppressShortcuts;
    this.term = new Terminal({
      cols: fixed ? size.cols : DEFAULT_COLS, rows: fixed ? size.rows : this.estimateRows(),
      disableStdin: !on, cursorBlink: on, convertEol: !pty, cursorInactiveStyle: on ? "outline" : "none",
      scrollback: 10000, fontFamily: font.family, fontSize: font.size, theme: terminalTheme(this.screen),
      allowTransparency: false, scrollOnUserInput: on, linkHandler: linkHandler(this.el),
    });
    if (!fixed) this.term.loadAddon((this.fit = new FitAddon()));
    this.term.open(xtermParent(this.screen, on));
    live.add(this);
    watchTheme();
    if (on) this.startInput();
    this.fitCols();
    for (const c of this.store.chunks(this.id)) this.term.write(c);
    this.term.write(new Uint8Array(0), () => this.adjustRows());
    return this.term;
  }

  /** Drop the xterm instance, keeping the screen's height so the page does not jump. */
  dispose() {
    if (!this.term) return;
    const height = this.screen.offsetHeight;
    live.delete(this);
    this.input.detach();
    this.term.dispose();
    this.term = this.fit = null;
    this.rowPx = 0;
    this.screen.replaceChildren();
    if (height) this.screen.style.minHeight = `${height}px`;
  }

  destroy() {
    this.dispose();
    this.input.stop();
    this.store.detach(this.id, this);
    this.ctx.unobserveTerminal(this);
  }

  write(chunk) {
    if (this.term) this.term.write(chunk, () => this.adjustRows());
    else this.estimateHeight();
  }

  reset() {
    this.updateMeta();
    if (!this.term) return this.estimateHeight();
    this.term.reset();
    for (const c of this.store.chunks(this.id)) this.term.write(c);
    this.term.write(new Uint8Array(0), () => this.adjustRows());
  }

  /** Resolves once every queued write has been parsed. */
  flushed() {
    return new Promise((resolve) => (this.term ? this.term.write(new Uint8Array(0), resolve) : resolve()));
  }

  fitCols() {
    if (!this.fit || !this.term) return;
    const dims = this.fit.proposeDimensions();
    if (this.interactive) return this.fitInteractive(dims);
    if (dims && dims.cols > 10 && dims.cols !== this.term.cols) this.term.resize(dims.cols, this.term.rows);
  }

  /** Start forwarding keystrokes; the screen gets the height of INTERACTIVE_ROWS rows. */
  startInput() {
    this.input.attach(this.term);
    const drawn = this.term.element?.querySelector(".xterm-screen")?.offsetHeight;
    const px = drawn || Math.ceil(INTERACTIVE_ROWS * termFont(this.screen).size * 1.2);
    this.screen.style.height = `${px + 8}px`; // + the .xterm padding (style.css)
  }

  /** Fit columns and rows to the screen (the card's width, the screen's height) and report them. */
  fitInteractive(dims) {
    if (!dims || !(dims.cols > 0) || !(dims.rows > 0)) return;
    const cols = Math.max(20, dims.cols);
    const rows = Math.max(2, dims.rows);
    if (cols !== this.term.cols || rows !== this.term.rows) this.term.resize(cols, rows);
    this.input.size(this.term.cols, this.term.rows);
  }

  /** Start or stop taking input: the xterm is rebuilt with the other options. */
  setInteractive(on) {
    if (on === this.interactive) return;
    this.interactive = on;
    if (!on) this.input.stop();
    this.updateMeta();
    if (!this.term) return this.estimateHeight();
    this.dispose();
    this.ensure();
  }

  /** Unsized terminals grow with their content, up to MAX_ROWS; sized ones hide unused rows. */
  adjustRows() {
    const t = this.term;
    if (!t || this.interactive) return; // an interactive terminal keeps its fitted size
    if (!this.fit) return this.cropToContent();
    const buf = t.buffer.active;
    const used = buf.baseY + buf.cursorY + 1; // the cursor's (often empty) line included: no scrollbar
    const rows = Math.max(1, Math.min(MAX_ROWS, used));
    if (rows !== t.rows) t.resize(t.cols, rows);
  }

  /**
   * A sized terminal keeps its rows (cursor addressing needs them) but the screen is cut below
   * the last row in use, so `rows: 24` with three lines of output does not show 21 empty rows.
   */
  cropToContent() {
    const t = this.term;
    const buf = t.buffer.active;
    let used = t.rows;
    if (buf.baseY === 0) {
      used = buf.cursorY + 1;
      for (let y = t.rows - 1; y >= used; y--) {
        if (buf.getLine(y)?.translateToString(true)) {
          used = y + 1;
          break;
        }
      }
    }
    this.rowPx ||= t.element ? t.element.offsetHeight / t.rows : 0;
    this.screen.style.height = used < t.rows && this.rowPx ? `${Math.ceil(used * this.rowPx) + 8}px` : "";
  }

  /** Rows to show before xterm exists: the number of lines in the bytes (capped). */
  estimateRows() {
    if (this.interactive) return INTERACTIVE_ROWS;
    const size = this.meta.size;
    const max = size && size.rows > 0 ? size.rows : MAX_ROWS;
    let lines = 1;
    for (const c of this.store.chunks(this.id)) {
      for (let i = 0; i < c.length && lines < max; i++) if (c[i] === 10) lines++;
      if (lines >= max) break;
    }
    return lines;
  }

  estimateHeight() {
    if (this.term) return;
    const rows = this.estimateRows();
    this.screen.style.minHeight = `${Math.ceil(rows * termFont(this.screen).size * 1.2) + 10}px`;
  }

  updateMeta() {
    this.head.replaceChildren(...renderTermHead(this.store.get(this.id), this.ctx));
  }
}

function renderTermHead(t, ctx) {
  const m = t.meta;
  const out = [icon("terminal")];
  out.push(h("span", { class: "acp-term-cmd" }, m.command != null ? text(m.command) : `terminal ${text(m.terminal_id ?? t.id)}`));
  if (m.cwd) out.push(h("span", { class: "acp-muted acp-term-cwd", title: text(m.cwd) }, text(m.cwd)));
  if (ctx.interactive?.has(t.id)) {
    out.push(h("span", { class: "acp-tag acp-term-live", title: "Click the terminal and type: keystrokes go to the command" }, "interactive"));
  }
  out.push(h("span", { class: "acp-spacer" }));
  if (t.trimmed > 0) {
    const title = `the saved snapshot keeps the last ${fmtBytes(t.end - t.start)} of this terminal; the kernel sends everything it holds once it runs`;
    out.push(h("span", { class: "acp-muted acp-term-trimmed", title }, `earlier output trimmed (${grouped(t.start)} bytes)`));
  } else if (t.start > 0 || (Number.isFinite(m.base) && m.base > 0)) {
    out.push(h("span", { class: "acp-muted", title: "older output was dropped" }, `… last ${fmtBytes(t.end - t.start)}`));
  }
  out.push(m.background && !m.exit_status ? backgroundBadge() : exitBadge(m.exit_status));
  if (m.cancellable && !m.exit_status) out.push(cancelButton(t.id, ctx));
  return out;
}

/** 1234567 → "1,234,567" (the same on every locale). */
function grouped(n) {
  return String(Math.max(0, Math.floor(n))).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

function exitBadge(status) {
  if (!status || typeof status !== "object") return h("span", { class: "acp-badge acp-phase-in_progress" }, h("span", { class: "acp-spinner" }), "running");
  if (status.signal != null) return h("span", { class: "acp-badge acp-phase-failed" }, `signal ${text(status.signal)}`);
  if (status.exitCode != null) {
    const ok = status.exitCode === 0;
    return h("span", { class: `acp-badge acp-phase-${ok ? "completed" : "failed"}` }, `exit ${text(status.exitCode)}`);
  }
  return h("span", { class: "acp-badge acp-phase-completed" }, "exited");
}

function cancelButton(id, ctx) {
  const btn = h("button", { class: "acp-btn acp-btn-small", type: "button", title: "Cancel this terminal's command" }, icon("cancel"), "Cancel");
  btn.addEventListener("click", () => {
    btn.disabled = true;
    ctx.send({ type: "cancel_terminal", id });
  });
  return btn;
}
