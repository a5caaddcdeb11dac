// A fake anywidget host for the SessionView loader: a model with get/set/on/off/send and a
// widget_manager, fed from JSON fixtures (WIRE.md snapshots); tests drive it through window.harness.

const params = new URLSearchParams(location.search);
document.documentElement.className = `theme-${params.get("theme") || "light"}`;

const models = new Map();

class FakeModel {
  constructor(traits) {
    this.traits = { ...traits };
    this.handlers = new Map();
    this.widget_manager = { get_model: async (id) => models.get(id) };
  }
  get(name) {
    return this.traits[name];
  }
  set(name, value) {
    this.traits[name] = value;
    this.emit(`change:${name}`, value);
  }
  save_changes() {}
  on(event, cb) {
    if (!this.handlers.has(event)) this.handlers.set(event, []);
    this.handlers.get(event).push(cb);
  }
  off(event, cb) {
    const list = this.handlers.get(event) || [];
    this.handlers.set(event, cb ? list.filter((x) => x !== cb) : []);
  }
  send(msg) {
    harness.sent.push(JSON.parse(JSON.stringify(msg)));
  }
  emit(event, ...args) {
    for (const cb of [...(this.handlers.get(event) || [])]) cb(...args);
  }
}

function dataView(bytes) {
  const u = bytes instanceof Uint8Array ? bytes : Uint8Array.from(bytes);
  return new DataView(u.buffer, u.byteOffset, u.byteLength);
}

/**
 * Fixture convention: terminal metas carry no `blob`/`end`; their bytes come from `terminal_text`
 * (UTF-8 of each string, or an array of byte values). Here they are concatenated into
 * `terminal_bytes` and `blob` = [start, length], `end` = base + length are filled in.
 */
function buildTerminalBytes(snapshot, texts) {
  const enc = new TextEncoder();
  const parts = [];
  let offset = 0;
  for (const [id, meta] of Object.entries(snapshot.terminals || {})) {
    const src = texts[id] ?? "";
    const bytes = typeof src === "string" ? enc.encode(src) : Uint8Array.from(src);
    meta.gen ??= 0;
    meta.base ??= 0;
    meta.blob = [offset, bytes.length];
    meta.end = meta.base + bytes.length;
    parts.push(bytes);
    offset += bytes.length;
  }
  const out = new Uint8Array(offset);
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

/** Move every tool call's created_at/ended_at by `dt` seconds (fixtures are taken at `now`). */
function shiftTimes(snapshot, dt) {
  for (const e of Object.values(snapshot.entries || {})) {
    if (e.kind !== "tool_call") continue;
    if (typeof e.created_at === "number") e.created_at += dt;
    if (typeof e.ended_at === "number") e.ended_at += dt;
  }
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.floor(s.length / 2)] : NaN;
}

function keyOf(node) {
  const el = node && (node.nodeType === 1 ? node : node.parentElement);
  if (!el) return "(detached)";
  return el.closest("[data-key]")?.dataset.key ?? el.dataset?.placeholder ?? "(outside entries)";
}

const KINDS = ["read", "edit", "execute", "search", "fetch"];

const harness = {
  sent: [],
  seq: 0,

  async load({ fixture, data, mode = "fast", early = [] } = {}) {
    const fx = data ?? (await (await fetch(`/harness/fixtures/${fixture}.json`)).json());
    const snapshot = structuredClone(fx.snapshot);
    this.timeShift = typeof fx.now === "number" ? Date.now() / 1000 - fx.now : 0;
    shiftTimes(snapshot, this.timeShift);
    const bytes = buildTerminalBytes(snapshot, fx.terminal_text || {});
    if (mode === "fast") await import("/static/runtime.js");
    const esm = mode === "fallback" ? await (await fetch("/static/runtime.js")).text() : "";
    models.set("rt1", new FakeModel({ _esm: esm }));
    const model = new FakeModel({ snapshot, terminal_bytes: dataView(bytes), runtime: "IPY_MODEL_rt1" });
    const widget = (await import("/static/loader.js")).default();
    widget.initialize({ model });
    const el = document.createElement("div");
    document.getElementById("out").append(el);
    this.model = model;
    this.el = el;
    this.seq = snapshot.seq || 0;
    const t0 = performance.now();
    const rendering = widget.render({ model, el });
    for (const p of early) this.patch(p.msg, p.buffers);
    this.cleanup = await rendering;
    this.renderMs = performance.now() - t0;
    const terminals = {};
    for (const [id, m] of Object.entries(snapshot.terminals || {})) terminals[id] = { end: m.end, gen: m.gen };
    return { terminals, renderMs: this.renderMs };
  },

  /** Render another widget module of /static/ (e.g. "secret_form") on a fake model with `traits`. */
  async loadWidget(module, traits) {
    const model = new FakeModel(traits);
    const widget = (await import(`/static/${module}.js`)).default();
    widget.initialize?.({ model });
    const el = document.createElement("div");
    document.getElementById("out").append(el);
    this.model = model;
    this.el = el;
    this.cleanup = await widget.render({ model, el });
  },

  /** Deliver a custom message (buffers: arrays of byte values). Missing seq = next seq. */
  patch(msg, buffers = []) {
    if (msg.type === "patch" && msg.seq === undefined) msg.seq = this.seq + 1;
    if (typeof msg.seq === "number") this.seq = Math.max(this.seq, msg.seq);
    this.model.emit("msg:custom", msg, buffers.map(dataView));
  },

  /** Run fn (synchronously) and return the entry keys whose DOM it mutated. */
  mutatedKeys(fn) {
    const mo = new MutationObserver(() => {});
    mo.observe(this.el, { subtree: true, childList: true, attributes: true, characterData: true });
    fn();
    const records = mo.takeRecords();
    mo.disconnect();
    const keys = new Set();
    for (const r of records) {
      const list = r.type === "childList" && (r.target.classList?.contains("acp-chunk") || r.target.classList?.contains("acp-entries"));
      const nodes = list ? [...r.addedNodes, ...r.removedNodes] : [r.target];
      for (const n of nodes) keys.add(keyOf(n));
    }
    return { keys: [...keys], records: records.length };
  },

  /** A big generated snapshot: nCards tool calls, nTerms terminals spread among them. */
  bigFixture(nCards = 2000, nTerms = 100) {
    const order = [];
    const entries = {};
    const terminals = {};
    const terminal_text = {};
    const every = Math.floor(nCards / nTerms);
    const t0 = 1700000000;
    for (let i = 0; i < nCards; i++) {
      const key = `tool_call:tc-${i}`;
      const items = [];
      if (i % 3 === 0) items.push({ type: "content", block: { type: "text", text: `Checked **module_${i}** — ok` } });
      if (i % every === 2) {
        const tid = `term-${Math.floor(i / every)}`;
        items.push({ type: "terminal", id: tid });
        terminals[tid] = { id: tid, command: `make check-${i}`, cwd: "/home/user/project", size: null,
          exit_status: { exitCode: 0 }, cancellable: false, gen: 0, base: 0 };
        terminal_text[tid] = Array.from({ length: 12 }, (_, j) => `\u001b[32mok\u001b[0m step ${j} of job ${i}\n`).join("");
      }
      order.push(key);
      entries[key] = {
        kind: "tool_call", id: `tc-${i}`, title: `Read src/pkg/module_${i}.py`, fallback_title: `Read module_${i}.py`,
        tool_kind: KINDS[i % 5], display_kind: KINDS[i % 5], status: "completed", phase: "completed",
        locations: [{ path: `/home/user/project/src/pkg/module_${i}.py`, line: i % 50 || null, rel: null }],
        items, raw_input: { path: `src/pkg/module_${i}.py` }, cancellable: false,
        created_at: t0 + i, ended_at: t0 + i + 0.8,
      };
    }
    const header = { title: "Big session", agent: { name: "bench", title: null, version: "1.0", protocol: 2 },
      session_id: "s-big", cwd: "/home/user/project", run_state: "idle", stop_reason: "end_turn", stop_error: null,
      running: false, usage: null, mode: null, commands: [], config_options: [], diagnostics: [], diagnostic_count: 0,
      stderr: [], stdout: [], stdout_partial: null, pending_permissions: 0, closed: false, exit_code: null,
      can_cancel: false, interactive_terminals: [] };
    return { snapshot: { seq: 1, header, order, entries, terminals }, terminal_text };
  },

  /** Median ms for n single-card upserts (apply + forced layout), and the keys each touched. */
  timeCardUpdates(n = 60, nCards = 2000) {
    const times = [];
    const touched = new Set();
    for (let i = 0; i < n; i++) {
      const idx = (i * 7919 + 13) % nCards;
      const key = `tool_call:tc-${idx}`;
      const entry = { ...this.lastEntry(key), title: `Updated module_${idx} (${i})`, status: i % 2 ? "in_progress" : "completed" };
      entry.phase = entry.status;
      let dt = 0;
      const { keys } = this.mutatedKeys(() => {
        const t = performance.now();
        this.patch({ type: "patch", full: false, entries: { [key]: entry } });
        void document.body.offsetHeight;
        dt = performance.now() - t;
      });
      keys.forEach((k) => touched.add(k === key ? "(the updated card)" : k));
      times.push(dt);
    }
    return { medianMs: median(times), maxMs: Math.max(...times), touched: [...touched] };
  },

  lastEntry(key) {
    return this.entries?.get(key) ?? this.model.get("snapshot").entries[key];
  },

  // --- DOM / terminal queries used by the tests ---------------------------------------------

  async debug() {
    return await globalThis.__acpNotebook;
  },

  async lines(selector) {
    return (await this.debug()).debug.terminalLines(document.querySelector(selector));
  },

  async fg(selector, row, col) {
    return (await this.debug()).debug.cellFg(document.querySelector(selector), row, col);
  },

  async isLive(selector) {
    return (await this.debug()).debug.isInstantiated(document.querySelector(selector));
  },

  /** Ids of the terminals that currently have an xterm instance. */
  async liveTerminals() {
    const api = (await this.debug()).debug;
    return [...document.querySelectorAll(".acp-terminal")].filter((t) => api.isInstantiated(t)).map((t) => t.dataset.terminalId);
  },

  /** Ids of the terminals whose host is within `margin` px of the viewport. */
  terminalsNear(margin) {
    return [...document.querySelectorAll(".acp-terminal")]
      .filter((t) => {
        const r = t.getBoundingClientRect();
        return r.bottom > -margin && r.top < innerHeight + margin;
      })
      .map((t) => t.dataset.terminalId);
  },

  /** key → [status, phase, has a spinner] for every card. */
  cardStates() {
    const out = {};
    for (const c of document.querySelectorAll(".acp-card")) {
      out[c.dataset.key] = [c.dataset.status, c.dataset.phase, !!c.querySelector(".acp-badge .acp-spinner")];
    }
    return out;
  },

  /** The list's slots in order: entry keys, "ph:<key>" for placeholders. */
  slotKeys() {
    return [...document.querySelectorAll(".acp-entries > .acp-chunk > *")].map((n) => n.dataset.key || `ph:${n.dataset.placeholder}`);
  },

  /** The terminal_input data sent for terminal `id`, joined, and the messages it took. */
  typed(id) {
    const msgs = this.sent.filter((m) => m.type === "terminal_input" && m.id === id);
    return { data: msgs.map((m) => m.data).join(""), messages: msgs.length, pieces: msgs.map((m) => m.data.length) };
  },

  /** The terminal_resize messages sent for terminal `id`, as [cols, rows]. */
  resizes(id) {
    return this.sent.filter((m) => m.type === "terminal_resize" && m.id === id).map((m) => [m.cols, m.rows]);
  },

  /** Things agent text must never have produced inside the view (or inside `selector` of it). */
  injectionReport(selector = null) {
    const root = selector ? this.el.querySelector(selector) : this.el;
    const all = [...root.querySelectorAll("*")];
    return {
      img: root.querySelectorAll('img[src="x"], img:not([src^="data:image/"])').length,
      script: root.querySelectorAll("script, iframe, object, embed, style").length,
      handlers: all.filter((e) => [...e.attributes].some((a) => a.name.startsWith("on"))).length,
      js: [...root.querySelectorAll("a")].filter((a) => !/^(https?:|mailto:|#$)/.test(a.getAttribute("href") || "#")).length,
    };
  },

  /** Images, link targets and text of one element. */
  contentReport(selector) {
    const c = document.querySelector(selector);
    return { imgs: c.querySelectorAll("img").length, links: [...c.querySelectorAll("a")].map((a) => a.href), text: c.textContent };
  },

  heapBytes() {
    if (typeof window.gc === "function") window.gc();
    return performance.memory ? performance.memory.usedJSHeapSize : null;
  },

  api() {
    return globalThis.__acpNotebook;
  },
};

window.harness = harness;
window.harnessReady = true;
