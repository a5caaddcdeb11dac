// The X-ray's message list, virtualised: fixed-height rows, only those in view are in the DOM, and
// rows are fetched from the source a page at a time (a bounded number of pages kept).
import { fmtBytes, h, text } from "./util.js";

export const ROW_H = 22;
const PAGE = 100;
const PAGES_KEPT = 24;
const OVERSCAN = 8;

const ARROW = { out: "→", in: "←" };

export class XRayList {
  constructor(source, { onPick, decorate, onError, onCount }) {
    this.source = source;
    this.onPick = onPick;
    this.onCount = onCount || (() => {}); // () -> void: `total` (the rows the filter lets through) changed
    this.onError = onError; // (message) -> void: a page the source could not give
    this.decorate = decorate; // (row, node) -> void: highlight, findings, position
    this.query = "";
    this.session = ""; // only this session's rows ("": every session)
    this.sessionLabel = () => null; // (session id) -> the short tag of the session column, or null
    this.total = 0;
    this.pages = new Map(); // page number -> rows (insertion order = age)
    this.asked = new Set();
    this.follow = true;
    this.spacer = h("div", { class: "acp-xray-spacer" });
    this.win = h("div", { class: "acp-xray-window" });
    this.el = h("div", { class: "acp-xray-list", tabindex: "0", role: "listbox" }, this.spacer, this.win);
    this.el.addEventListener("scroll", () => {
      this.follow = this.el.scrollTop + this.el.clientHeight >= this.el.scrollHeight - ROW_H;
      this.draw();
    });
    this.el.addEventListener("click", (e) => {
      const row = e.target.closest(".acp-xray-row");
      if (row && row.dataset.index) this.onPick(Number(row.dataset.index));
    });
  }

  /** New filter: forget every page and count again. */
  setQuery(query) {
    this.query = query;
    this.invalidate(true);
  }

  /** Only the rows of session `session` ("": all of them). */
  setSession(session) {
    this.session = session || "";
    this.invalidate(true);
  }

  /** Entries were added (or forgotten): refetch what may have changed, then draw. */
  invalidate(all = false) {
    if (all) this.pages.clear();
    else for (const p of [...this.pages.keys()]) if ((p + 1) * PAGE > this.total) this.pages.delete(p);
    this.asked.clear();
    this.recount();
  }

  async recount() {
    const [query, session] = [this.query, this.session];
    const r = await this.source.rows(0, 0, query, null, session).catch((e) => this.failed(e));
    if (!r || query !== this.query || session !== this.session) return;
    this.total = r.total;
    this.spacer.style.height = `${this.total * ROW_H}px`;
    this.onCount();
    if (this.follow) this.el.scrollTop = this.el.scrollHeight;
    this.draw();
  }

  /** The filtered position of entry `index` (null when the filter hides it). */
  async positionOf(index) {
    const r = await this.source.rows(0, 0, this.query, index, this.session).catch(() => null);
    return r ? r.found : null;
  }

  failed(error) {
    this.onError(String((error && error.message) || error));
    return null;
  }

  scrollToPosition(pos) {
    const top = pos * ROW_H;
    if (top < this.el.scrollTop || top + ROW_H > this.el.scrollTop + this.el.clientHeight) {
      this.el.scrollTop = Math.max(0, top - this.el.clientHeight / 2);
    }
    this.follow = false;
    this.draw();
  }

  draw() {
    const height = this.el.clientHeight || 360;
    const first = Math.max(0, Math.floor(this.el.scrollTop / ROW_H) - OVERSCAN);
    const last = Math.min(this.total, Math.ceil((this.el.scrollTop + height) / ROW_H) + OVERSCAN);
    const nodes = [];
    for (let pos = first; pos < last; pos++) {
      const page = this.pages.get(Math.floor(pos / PAGE));
      const row = page ? page[pos % PAGE] : null;
      if (!page) this.fetch(Math.floor(pos / PAGE));
      nodes.push(row ? this.rowNode(row) : h("div", { class: "acp-xray-row acp-xray-loading" }, "…"));
    }
    this.win.style.transform = `translateY(${first * ROW_H}px)`;
    this.win.replaceChildren(...nodes);
  }

  async fetch(page) {
    if (this.asked.has(page)) return;
    this.asked.add(page);
    const [query, session] = [this.query, this.session];
    const r = await this.source.rows(page * PAGE, PAGE, query, null, session).catch((e) => this.failed(e));
    if (!r || query !== this.query || session !== this.session) return; // not asked again until the rows change (invalidate)
    this.pages.set(page, r.rows);
    while (this.pages.size > PAGES_KEPT) {
      const oldest = this.pages.keys().next().value;
      this.pages.delete(oldest);
      this.asked.delete(oldest);
    }
    if (r.total !== this.total) {
      this.total = r.total;
      this.spacer.style.height = `${this.total * ROW_H}px`;
      this.onCount();
    }
    this.draw();
  }

  rowNode(r) {
    const label = r.kind === "stdout" || r.kind === "stderr" ? `${r.kind}: ${r.text || ""}` : text(r.label);
    const tag = this.sessionLabel(r.session);
    const node = h(
      "div",
      { class: `acp-xray-row acp-xray-${r.dir === "out" ? "out" : "in"} acp-xray-k-${safe(r.kind)}`, dataset: { index: String(r.i) }, role: "option" },
      h("span", { class: "acp-xray-i" }, `#${r.i}`),
      h("span", { class: "acp-xray-dir", title: r.dir === "out" ? "client → agent" : "agent → client" }, ARROW[r.dir] || "·"),
      tag != null ? h("span", { class: "acp-xray-sess", title: `${text(tag)} (session ${text(r.session ?? "(none)")})` }, tag) : null, // elided: whole in the tooltip
      h("span", { class: "acp-xray-label", title: label }, label),
      r.id != null ? h("span", { class: "acp-xray-id", title: "JSON-RPC id" }, `id ${text(r.id)}`) : null,
      r.link != null ? h("span", { class: "acp-xray-link", title: `${r.kind === "request" ? "answered by" : r.kind === "notification" ? "about request" : "answers"} #${r.link}` }, r.kind === "request" ? `⇢${r.link}` : `⇠${r.link}`) : null,
      h("span", { class: "acp-xray-size" }, fmtBytes(r.size)),
      h("span", { class: "acp-xray-t" }, typeof r.t === "number" ? `${r.t.toFixed(3)}s` : ""),
    );
    this.decorate(r, node);
    return node;
  }
}

function safe(s) {
  return String(s || "other").replace(/[^a-z_]/gi, "");
}
