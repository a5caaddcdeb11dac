// One SessionHeaderView (the `%acp start` cell): the session header and one line per turn. A line
// is a button that scrolls the page to the cell showing that turn (`[data-acp-anchor]`), scrolling
// the notebook step by step when the cell is windowed out of the DOM. Agent text: text nodes only.
import { Channel } from "./channel.js";
import { StderrFetcher } from "./stderrfetch.js";
import { renderInlineMarkdown } from "./markdown.js";
import { injectStyle } from "./style.js";
import { Ticker } from "./ticker.js";
import css from "./headerview.css";
import { fmtElapsed, h, sig, text } from "./util.js";
import { HeaderSlot } from "./viewheader.js";

const STYLE_ID = "acp-headerview-style";
const STEP_MS = 80; // between two scroll steps while looking for a windowed-out cell
const MAX_STEPS = 120;
const MAX_MS = 12000;
const FLASH_MS = 1600;

/** api.mountHeader: draw a SessionHeaderView into `el`; returns the cleanup function. */
export function mountHeader({ model, el, queued }) {
  const view = new HeaderView(model, el);
  view.start(queued);
  return () => view.destroy();
}

class HeaderView {
  constructor(model, el) {
    this.model = model;
    this.el = el;
    this.channel = new Channel(model, (msg) => this.onMessage(msg), "header view");
    this.lines = new Map(); // turn number → [line, element]
    this.stderr = new StderrFetcher((m) => this.channel.send(m)); // "show all" of a cut stderr line
    this.ctx = { ui: { open: new Set(), prompt: null }, send: (m) => this.channel.send(m), fetchStderr: (n) => this.stderr.fetch(n) };
    this.header = new HeaderSlot(this.ctx);
    this.list = h("ol", { class: "acp-turn-lines", "aria-label": "Turns" });
    this.hint = h("div", { class: "acp-turn-hint acp-muted", hidden: true });
    this.root = h("div", { class: "acp-session acp-header-view" }, this.header.el, this.list, this.hint);
    this.ticker = new Ticker(this.root);
    this.onSnap = () => this.channel.guard(() => this.applySnapshot());
  }

  start(queued) {
    const doc = this.el.ownerDocument || document;
    injectStyle(doc);
    injectHeaderStyle(doc);
    this.channel.guard(() => this.applySnapshot());
    this.channel.start(queued);
    this.el.append(this.root);
    this.model.on("change:snapshot", this.onSnap);
    this.channel.resync(true);
  }

  destroy() {
    this.channel.close();
    this.model.off?.("change:snapshot", this.onSnap);
    this.ticker.stop();
    this.stderr.dispose();
    this.root.remove();
  }

  onMessage(msg) {
    if (!msg || typeof msg !== "object" || this.stderr.onMessage(msg)) return;
    if (msg.type === "patch") this.apply(msg);
  }

  applySnapshot() {
    const snap = this.model.get("snapshot");
    if (this.channel.newer(snap)) this.apply({ ...snap, full: true }, false);
  }

  apply(p, live = true) {
    if (!this.channel.accept(p, live)) return;
    this.header.onPatch(p);
    if (p.full) this.ticker.freeze(!live && typeof p.saved_at === "number" ? p.saved_at : null); // a saved snapshot: frozen
    if (p.full && "hint" in p) {
      this.hint.textContent = text(p.hint);
      this.hint.hidden = !p.hint;
    }
    for (const line of Array.isArray(p.turns) ? p.turns : []) if (line && Number.isInteger(line.n)) this.setLine(line);
  }

  setLine(line) {
    const old = this.lines.get(line.n);
    if (old && sig(old[0]) === sig(line)) return;
    const node = this.renderLine(line);
    this.lines.set(line.n, [line, node]);
    if (old) return old[1].replaceWith(node);
    const after = [...this.lines.keys()].filter((n) => n > line.n).sort((a, b) => a - b)[0];
    this.list.insertBefore(node, after != null ? this.lines.get(after)[1] : null);
  }

  renderLine(line) {
    const meta = h("span", { class: "acp-turn-meta acp-muted" }, metaText(line));
    if (line.state !== "ended" && typeof line.started === "number") {
      const clock = h("span");
      meta.append(" · ", clock);
      this.ticker.add(clock, line.started);
    }
    const prompt = h("span", { class: "acp-turn-prompt" }, promptText(line));
    prompt.title = prompt.textContent; // elided in a narrow header: whole in the tooltip
    const go = h("button", { class: "acp-btn acp-btn-link acp-turn-go", type: "button", title: "Scroll to this turn's cell" },
      h("span", { class: "acp-turn-n" }, `#${text(line.n)}`), prompt, stateBadge(line), meta);
    const note = h("span", { class: "acp-turn-note acp-muted", role: "status" });
    go.addEventListener("click", () => this.goTo(text(line.anchor), go, note));
    return h("li", { class: "acp-turn-line", dataset: { turn: String(line.n), state: text(line.state), anchor: text(line.anchor), origin: text(line.origin) || "user" } }, go, note);
  }

  async goTo(anchor, button, note) {
    button.disabled = true;
    note.textContent = "looking for the cell…";
    try {
      const target = await findAnchor(this.el, anchor);
      note.textContent = target ? "" : "cell not on this page";
      if (target) reveal(target);
    } finally {
      button.disabled = false;
    }
  }
}

function stateBadge(line) {
  if (line.state === "running") return h("span", { class: "acp-badge acp-state-running" }, h("span", { class: "acp-spinner" }), "running");
  if (line.state === "requires_action") return h("span", { class: "acp-badge acp-state-action" }, "requires action");
  const reason = line.stop_reason ? text(line.stop_reason).replace(/_/g, " ") : "ended";
  return h("span", { class: `acp-badge ${line.error ? "acp-state-error" : "acp-state-idle"}` }, reason);
}

/** The prompt's first line; a turn the agent started says so, and where it came from. */
function promptText(line) {
  if (line.origin !== "agent") {
    if (line.prompt == null) return "(prompt not seen)";
    return text(line.prompt) ? renderInlineMarkdown(text(line.prompt)) : "(no text)"; // as the turn's view shows it
  }
  const said = text(line.origin_label) || text(line.origin_kind).replace(/[-_]+/g, " ");
  return said ? `agent · ${said}` : "agent";
}

function metaText(line) {
  const n = Number.isInteger(line.tool_calls) ? line.tool_calls : 0;
  const parts = [`${n} tool call${n === 1 ? "" : "s"}`];
  const subs = Number.isInteger(line.subagents) ? line.subagents : 0;
  if (subs) parts.push(`${subs} subagent${subs === 1 ? "" : "s"}`);
  if (typeof line.duration === "number") parts.push(fmtElapsed(line.duration));
  return parts.join(" · ");
}

function injectHeaderStyle(doc) {
  if (!doc || !doc.head || doc.getElementById(STYLE_ID)) return;
  doc.head.append(h("style", { id: STYLE_ID, text: css }));
}

/** The element with `data-acp-anchor` = `anchor`, laid out. When the notebook's windowing took it
 * out of the DOM (or hid it, `display: none`), scroll the notebook step by step until it is drawn:
 * towards it when it is in the DOM, else down first (the turn ran after this cell), then up. */
export async function findAnchor(from, anchor) {
  const doc = from.ownerDocument || document;
  const query = () => (anchor ? doc.querySelector(`[data-acp-anchor="${CSS.escape(anchor)}"]`) : null);
  const find = () => {
    const el = query();
    return el && el.getBoundingClientRect().height > 0 ? el : null; // not hidden (display: none, height 0)
  };
  const box = scroller(from);
  if (find() || !box) return find();
  const hidden = query();
  const above = hidden && hidden.compareDocumentPosition(from) & Node.DOCUMENT_POSITION_FOLLOWING;
  const home = box.scrollTop;
  const deadline = Date.now() + MAX_MS;
  let steps = 0;
  for (const dir of above ? [-1, 1] : [1, -1]) {
    box.scrollTop = home;
    while (steps++ < MAX_STEPS && Date.now() < deadline && !atEnd(box, dir)) {
      box.scrollTop += dir * Math.max(200, box.clientHeight * 0.8);
      await pause(STEP_MS);
      const found = find();
      if (found) return found;
    }
  }
  box.scrollTop = home;
  return null;
}

function atEnd(box, dir) {
  return dir > 0 ? box.scrollTop + box.clientHeight >= box.scrollHeight - 1 : box.scrollTop <= 0;
}

/** The nearest ancestor that scrolls vertically (the notebook's), else the document's scroller. */
function scroller(from) {
  for (let node = from.parentElement; node; node = node.parentElement) {
    const overflow = getComputedStyle(node).overflowY;
    if ((overflow === "auto" || overflow === "scroll" || overflow === "overlay") && node.scrollHeight > node.clientHeight) return node;
  }
  const doc = from.ownerDocument || document;
  return doc.scrollingElement || doc.documentElement;
}

function pause(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Scroll the top of `target`'s turn (its notebook cell: the prompt, then the first cards) to the top
 * of the view, again once the cells around it have their real size; and flash it. */
function reveal(target) {
  const top = target.closest(".jp-Cell") || target;
  top.scrollIntoView({ block: "start" });
  setTimeout(() => top.isConnected && top.scrollIntoView({ block: "start" }), 150);
  target.classList.add("acp-anchor-flash");
  setTimeout(() => target.classList.remove("acp-anchor-flash"), FLASH_MS);
}
