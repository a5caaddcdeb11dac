// The protocol X-ray: the raw messages beside the tree. Filter, findings, a virtualised list, and
// the selected message as pretty JSON with its request/response link; picking a message shows the
// state right after it (the kernel re-enacts it), picking a card highlights the messages that built it.
import { highlightTextNodes } from "./hl.js";
import { fill, fmtBytes, h, text } from "./util.js";
import { XRayList } from "./xraylist.js";

const HIGHLIGHT_MAX = 60000; // characters of JSON coloured (longer: plain text)

export class XRayPanel {
  constructor(source) {
    this.source = source;
    this.meta = { total: 0, findings: [] };
    this.marked = new Set(); // indices that built the selected card
    this.flagged = new Map(); // index -> findings
    this.selected = null;
    this.card = null; // {key, indices, at}
    const onError = (m) => this.unreachable(m);
    const onCount = () => this.showCount();
    this.list = new XRayList(source, { onPick: (i) => this.pick(i), decorate: (r, n) => this.decorate(r, n), onError, onCount });
    this.filter = h("input", { class: "acp-xray-filter", type: "search", placeholder: "filter messages",
      title: "words in a row or in its JSON", "aria-label": "filter messages: words in a row or in its JSON" });
    let timer = null;
    this.filter.addEventListener("input", () => {
      clearTimeout(timer);
      timer = setTimeout(() => this.list.setQuery(this.filter.value.trim()), 150);
    });
    this.count = h("span", { class: "acp-xray-count acp-muted" });
    this.sessions = []; // [{id, parent, depth, title}] from the meta: the session column and filter
    this.sessionPick = h("select", { class: "acp-xray-session", "aria-label": "only this session's messages", hidden: true });
    this.sessionPick.addEventListener("change", () => this.list.setSession(this.sessionPick.value));
    this.list.sessionLabel = (id) => this.sessionTag(id);
    this.cardBar = h("div", { class: "acp-xray-cardbar", hidden: true });
    this.findingsBox = h("details", { class: "acp-xray-findings", hidden: true });
    this.detail = h("div", { class: "acp-xray-detail" }, h("div", { class: "acp-muted" }, "Pick a message to see it whole."));
    const head = h("div", { class: "acp-xray-head" }, h("strong", null, "X-ray"), this.count, this.sessionPick, this.filter);
    this.el = h("div", { class: "acp-xray" }, head, this.findingsBox, this.cardBar, this.list.el, this.detail);
  }

  /** The kernel's `xray` meta (every patch): counts, findings, what is pinned or replayed. */
  setMeta(meta) {
    const before = this.meta;
    this.meta = meta || {};
    this.showCount();
    if (JSON.stringify(before.findings) !== JSON.stringify(this.meta.findings)) this.showFindings(this.meta.findings || []);
    if (JSON.stringify(before.sessions) !== JSON.stringify(this.meta.sessions)) this.showSessions(this.meta.sessions || []);
    if (typeof this.meta.position === "number") this.list.follow = false; // a replay: follow its position
    if (before.total !== this.meta.total || before.first !== this.meta.first) this.list.invalidate(before.first !== this.meta.first);
    else if (before.position !== this.meta.position || before.pinned !== this.meta.pinned) this.list.draw();
    if (typeof this.meta.position === "number" && before.position !== this.meta.position) this.reveal(this.meta.position - 1);
  }

  /** "N messages", or "n of N messages" while the filter or the session pick hides some. */
  showCount() {
    const t = this.meta.total | 0;
    const all = `${t} message${t === 1 ? "" : "s"}`;
    const filtered = !!(this.list.query || this.list.session);
    this.count.textContent = filtered ? `${this.list.total | 0} of ${all}` : all;
  }

  /** The sessions met (a session and its subagents): a filter and a column, once there are two. */
  showSessions(sessions) {
    this.sessions = Array.isArray(sessions) ? sessions : [];
    const several = this.sessions.length > 1;
    const chosen = this.sessionPick.value;
    const option = (value, label) => h("option", { value }, label);
    const items = this.sessions.map((s) => option(String(s.id), `${"  ".repeat(s.depth | 0)}${s.depth ? "↳ " : ""}${this.sessionName(s)}`));
    this.sessionPick.replaceChildren(option("", "all sessions"), ...items);
    this.sessionPick.value = this.sessions.some((s) => s.id === chosen) ? chosen : "";
    this.sessionPick.hidden = !several;
    if (chosen && this.sessionPick.value !== chosen) this.list.setSession("");
    else this.list.draw();
  }

  sessionName(s) {
    return s.title ? `${text(s.title)} (${text(s.id)})` : text(s.id);
  }

  /** The session column's tag of a row: none while there is one session; the top one is "main". */
  sessionTag(id) {
    if (this.sessions.length < 2) return null;
    const s = this.sessions.find((x) => x.id === id);
    if (!s) return id == null ? "·" : text(id).slice(0, 12);
    if (!s.depth) return "main";
    return `${"›".repeat(s.depth)} ${text(s.title || s.id).slice(0, 16)}`;
  }

  /** Scroll entry `index` into view (no selection). */
  async reveal(index) {
    if (index < 0) return;
    const pos = await this.list.positionOf(index);
    if (pos != null) this.list.scrollToPosition(pos);
  }

  showFindings(findings) {
    this.flagged = new Map();
    for (const f of findings) this.flagged.set(f.index, [...(this.flagged.get(f.index) || []), f]);
    this.findingsBox.hidden = !findings.length;
    const errors = findings.filter((f) => f.severity === "error").length;
    const summary = h("summary", null, `Doctor: ${errors} violation${errors === 1 ? "" : "s"}, ${findings.length - errors} hazard${findings.length - errors === 1 ? "" : "s"}`);
    const items = findings.map((f) =>
      h("div", { class: `acp-xray-finding acp-sev-${f.severity === "error" ? "error" : "warning"}` },
        h("button", { class: "acp-xray-goto", type: "button", on: { click: () => this.goto(f.index) } }, `#${text(f.index)}`),
        h("code", null, text(f.code)), " ", text(f.message)),
    );
    this.findingsBox.replaceChildren(summary, ...items);
    this.list.draw();
  }

  decorate(r, node) {
    if (this.marked.has(r.i)) node.classList.add("acp-xray-marked");
    if (this.selected === r.i) node.classList.add("acp-xray-selected");
    const pos = this.meta.position;
    if (typeof pos === "number") {
      if (r.i === pos - 1) node.classList.add("acp-xray-current");
      else if (r.i >= pos) node.classList.add("acp-xray-ahead");
    }
    if (this.meta.pinned === r.i) node.classList.add("acp-xray-current");
    const found = this.flagged.get(r.i);
    if (found) {
      const sev = found.some((f) => f.severity === "error") ? "error" : "warning";
      node.prepend(h("span", { class: `acp-xray-flag acp-sev-${sev}`, title: found.map((f) => `${f.code}: ${f.message}`).join("\n") }, "●"));
    }
  }

  /** Select entry `index`: its detail, and (`pin`, when the source can) the state right after it. */
  async pick(index, pin = true) {
    this.selected = index;
    this.list.draw();
    const d = await this.source.detail(index).catch((e) => ({ index, error: String(e.message || e) }));
    if (this.selected === index) this.showDetail(d);
    if (!pin) return;
    const s = await this.source.select(index).catch((e) => ({ error: String(e.message || e) }));
    if (s && s.error && this.selected === index) this.note(s.error);
  }

  /** Scroll to entry `index` and show it (`pin`: also the state after it). */
  async goto(index, pin = false) {
    let pos = await this.list.positionOf(index);
    if (pos == null && (this.filter.value || this.sessionPick.value)) {
      this.filter.value = "";
      this.sessionPick.value = "";
      this.list.session = "";
      this.list.setQuery("");
      pos = await this.list.positionOf(index);
    }
    if (pos == null) return this.note(`message #${index} is no longer kept`);
    this.list.scrollToPosition(pos);
    this.pick(index, pin);
  }

  showDetail(d) {
    if (d.error || d.gone) return this.detail.replaceChildren(h("div", { class: "acp-muted" }, d.error || `message #${d.index} is no longer kept`));
    const r = d.row || {};
    const link = r.link != null ? h("button", { class: "acp-xray-goto", type: "button", on: { click: () => this.goto(r.link, true) } }, r.kind === "request" ? `response #${r.link}` : `request #${r.link}`) : null;
    // an elicitation's request, answer, completion or withdrawal (and a permission's withdrawal): each links to the others
    const others = (Array.isArray(r.related) ? r.related : []).filter((i) => Number.isInteger(i) && i !== r.link);
    const related = others.length ? h("span", { class: "acp-xray-related acp-muted" }, "related: ", ...others.map((i) => h("button", { class: "acp-xray-goto", type: "button", on: { click: () => this.goto(i, true) } }, `#${i}`))) : null;
    const where = [r.dir === "out" ? "client → agent" : "agent → client", r.session != null && this.sessions.length > 1 ? `session ${text(r.session)}` : null, r.kind, r.id != null ? `id ${text(r.id)}` : null, fmtBytes(r.size), typeof r.t === "number" ? `${r.t.toFixed(3)} s` : null];
    const head = h("div", { class: "acp-xray-detail-head" }, h("strong", null, `#${text(d.index)} ${text(r.label)}`), " ", h("span", { class: "acp-muted" }, where.filter(Boolean).join(" · ")), " ", link, " ", related);
    const findings = (d.findings || []).map((f) => h("div", { class: `acp-xray-finding acp-sev-${f.severity === "error" ? "error" : "warning"}` }, h("code", null, text(f.code)), " ", text(f.message), f.cite ? h("div", { class: "acp-xray-cite acp-muted" }, text(f.cite)) : null));
    const pre = h("pre", { class: "acp-xray-json" }, h("code", null, String(d.json ?? "")));
    if (String(d.json || "").length <= HIGHLIGHT_MAX && r.kind !== "stdout" && r.kind !== "stderr") highlightTextNodes(pre, "json");
    const cut = d.cut ? h("div", { class: "acp-muted" }, "(cut: the trace file holds it whole)") : null;
    fill(this.detail, head, findings, pre, cut); // cut is null unless the message was cut
  }

  /** The source could not answer (a saved notebook whose kernel has not this view): say so once. */
  unreachable(message) {
    if (this.el.querySelector(".acp-xray-unreachable")) return;
    const why = `${message}. The rows live in the kernel: a saved notebook keeps only the counts and findings (export_html keeps the messages).`;
    this.list.el.before(h("div", { class: "acp-xray-note acp-xray-unreachable" }, why));
  }

  note(message) {
    this.detail.append(h("div", { class: "acp-xray-note" }, String(message)));
  }

  /** A card (or any entry) was picked in the tree: highlight the messages that built it. */
  async showCard(key, name = key) {
    const r = await this.source.card(key).catch(() => null);
    if (!r) return;
    this.marked = new Set(r.indices);
    this.card = { key, indices: r.indices, at: -1 };
    const step = (d) => {
      const c = this.card;
      if (!c || !c.indices.length) return;
      c.at = (c.at + d + c.indices.length) % c.indices.length;
      this.goto(c.indices[c.at]);
    };
    this.cardBar.hidden = false;
    this.cardBar.replaceChildren(
      h("span", { class: "acp-xray-card-name", title: String(key) }, `${name}: built by ${r.indices.length} message${r.indices.length === 1 ? "" : "s"}`),
      h("button", { type: "button", class: "acp-xray-goto", title: "previous", on: { click: () => step(-1) } }, "◀"),
      h("button", { type: "button", class: "acp-xray-goto", title: "next", on: { click: () => step(1) } }, "▶"),
      h("button", { type: "button", class: "acp-xray-goto", title: "clear", on: { click: () => this.clearCard() } }, "✕"),
    );
    this.list.draw();
    if (r.indices.length) step(1);
  }

  clearCard() {
    this.marked = new Set();
    this.card = null;
    this.cardBar.hidden = true;
    this.list.draw();
  }

  destroy() {
    this.source.stop();
  }
}
