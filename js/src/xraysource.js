// Where the X-ray panel gets its rows: the kernel (asked on demand, so the page holds only what it
// draws) or, in an exported page, the data inlined in it (filtered here the way the kernel filters:
// every word of the query in the row's summary or in the message's compact JSON, ignoring case).

const ANSWER_MS = 8000;

/** Rows, details and card links asked of the kernel through the view's comm. */
export class KernelSource {
  constructor(send) {
    this.send = send;
    this.next = 1;
    this.waiting = new Map(); // req -> {resolve, reject, timer}
    this.canPin = true;
  }

  ask(type, fields) {
    const req = this.next++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(req);
        reject(new Error("no answer from the kernel (is it running?)"));
      }, ANSWER_MS);
      this.waiting.set(req, { resolve, reject, timer });
      this.send({ type, req, ...fields });
    });
  }

  /** A reply from the kernel (`xray_reply`); true if it was one of ours. */
  receive(msg) {
    const w = this.waiting.get(msg.req);
    if (!w) return false;
    this.waiting.delete(msg.req);
    clearTimeout(w.timer);
    if (msg.error && msg.of !== "xray_select") w.reject(new Error(String(msg.error)));
    else w.resolve(msg);
    return true;
  }

  rows(start, count, query, find, session) {
    return this.ask("xray_rows", { start, count, query, ...(find != null ? { find } : {}), ...(session ? { session } : {}) });
  }
  detail(index) {
    return this.ask("xray_detail", { index });
  }
  card(key) {
    return this.ask("xray_card", { key });
  }
  select(index) {
    return this.ask("xray_select", { index });
  }
  unpin() {
    return this.ask("xray_unpin", {});
  }
  stop() {
    for (const w of this.waiting.values()) clearTimeout(w.timer);
    this.waiting.clear();
  }
}

/** The same questions answered from an exported page's data ({rows, texts, cards, findings}). */
export class LocalSource {
  constructor(data) {
    this.all = Array.isArray(data.rows) ? data.rows : [];
    this.texts = Array.isArray(data.texts) ? data.texts : [];
    this.cards = data.cards && typeof data.cards === "object" ? data.cards : {};
    this.findings = Array.isArray(data.findings) ? data.findings : [];
    this.canPin = false;
    this.cache = { query: null, rows: this.all };
  }

  matching(query, session) {
    const words = String(query || "").toLowerCase().split(/\s+/).filter(Boolean);
    if (!words.length && !session) return this.all;
    const key = `${session || ""}\n${words.join(" ")}`;
    if (this.cache.query === key) return this.cache.rows;
    const rows = this.all.filter((r, n) => {
      if (session && r.session !== session) return false;
      const head = `#${r.i} ${["dir", "kind", "label", "id", "tool", "session"].map((k) => (r[k] == null ? "" : String(r[k]))).join(" ")}`.toLowerCase();
      const body = String(this.texts[n] ?? "").toLowerCase();
      return words.every((w) => head.includes(w) || body.includes(w));
    });
    this.cache = { query: key, rows };
    return rows;
  }

  async rows(start, count, query, find, session) {
    const rows = this.matching(query, session);
    const out = { total: rows.length, start, rows: rows.slice(start, start + count) };
    if (find != null) {
      const at = rows.findIndex((r) => r.i === find);
      out.found = at < 0 ? null : at;
    }
    return out;
  }

  async detail(index) {
    const n = this.all.findIndex((r) => r.i === index);
    if (n < 0) return { index, gone: true };
    let json = String(this.texts[n] ?? "");
    const row = this.all[n];
    if (row.kind !== "stdout" && row.kind !== "stderr") {
      try {
        json = JSON.stringify(JSON.parse(json), null, 2);
      } catch {
        /* shown as recorded */
      }
    }
    return { index, row, json, cut: false, findings: this.findings.filter((f) => f.index === index) };
  }

  async card(key) {
    return { key, indices: Array.isArray(this.cards[key]) ? this.cards[key] : [] };
  }

  async select(index) {
    return { index, error: "the state after a message needs the kernel (open the trace with acp_notebook.replay)" };
  }

  async unpin() {
    return { pinned: null };
  }

  stop() {}
}
