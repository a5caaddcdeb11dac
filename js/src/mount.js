// One SessionView: draws the snapshot, applies patches (keyed, incremental), resyncs on gaps.
import { renderHeader } from "./header.js";
import { StderrFetcher } from "./stderrfetch.js";
import { renderEntry } from "./entries.js";
import { PageReader, isPaged } from "./pages.js";
import { PartAssembler } from "./parts.js";
import { renderPermission } from "./permission.js";
import { PermissionLinks } from "./permlinks.js";
import { RevertBar } from "./revert.js";
import { injectStyle } from "./style.js";
import { TerminalStore } from "./terminals.js";
import { TerminalObservers } from "./observers.js";
import { Ticker } from "./ticker.js";
import { renderCard } from "./toolcall.js";
import { h, isLab, sig, toU8 } from "./util.js";
import { XRayPanel } from "./xray.js";
import { KernelSource, LocalSource } from "./xraysource.js";

const RESYNC_WAIT_MS = 2000;
const CHUNK = 64; // entries per layout-contained chunk of the list
const MAX_HELD = 10000; // messages held while a paged snapshot loads (more: drop them, resync)

/** api.mount: draw a SessionView into `el`; returns the cleanup function. */
export function mount({ model, el, queued }) {
  const view = new View(model, el);
  view.start(Array.isArray(queued) ? queued : []);
  return () => view.destroy();
}

class View {
  constructor(model, el) {
    this.model = model;
    this.el = el;
    this.seq = -Infinity;
    this.order = [];
    this.entries = new Map(); // key → entry
    this.sigs = new Map(); // key → JSON of the drawn entry
    this.slots = new Map(); // key → node at the key's place in the list
    this.cards = new Map(); // tool_call key → card element
    this.perms = new PermissionLinks(); // permission key → {element (own place or in a card), toolCallId}
    this.terminals = new TerminalStore();
    this.parts = new PartAssembler();
    this.pageReader = new PageReader(model);
    this.held = null; // messages that came while a paged snapshot loads (null: none loading)
    this.observers = new TerminalObservers();
    this.ui = { open: new Set(), collapsed: new Set(), diffMode: new Map(), unfolded: new Set(), pending: new Map(), prompt: null };
    let lab;
    this.ctx = {
      ui: this.ui, terminals: this.terminals, send: (m) => this.send(m), tick: (e, t) => this.ticker.add(e, t),
      interactive: new Set(), // terminal ids that take keystrokes (Header.interactive_terminals)
      isLab: () => (lab ??= isLab(el.ownerDocument || document)),
      observeTerminal: (v) => this.observers.observe(v), unobserveTerminal: (v) => this.observers.unobserve(v),
      fetchStderr: (n) => this.stderrFetcher.fetch(n),
      fetchEntry: (key) => this.send({ type: "entry_full", key }), // "show all" of a cut entry
    };
    this.stderrFetcher = new StderrFetcher((m) => this.send(m)); // "show all" of a cut stderr line
    this.header = h("div", { class: "acp-header" });
    this.list = h("div", { class: "acp-entries" });
    this.revert = new RevertBar(this.ctx); // "Revert this turn" (checkpoints), under the header
    this.root = h("div", { class: "acp-session" }, this.header, this.revert.el, this.list);
    this.xray = null; // the X-ray panel, once the kernel says the view has one
    this.ticker = new Ticker(this.root);
    this.onMsg = (msg, buffers) => this.guard(() => this.onMessage(msg, buffers));
    this.onSnap = () => this.guard(() => this.applySnapshot());
  }

  start(queued) {
    injectStyle(this.el.ownerDocument || document);
    this.guard(() => this.applySnapshot());
    for (const q of queued) this.guard(() => this.onMessage(q && q.msg, q && q.buffers));
    this.el.append(this.root);
    this.model.on("msg:custom", this.onMsg);
    this.model.on("change:snapshot", this.onSnap);
    this.requestResync(true);
    this.revert.start(this.el.ownerDocument || document);
  }

  destroy() {
    this.destroyed = true;
    this.model.off?.("msg:custom", this.onMsg);
    this.model.off?.("change:snapshot", this.onSnap);
    this.ticker.stop();
    this.xray?.destroy();
    for (const card of this.cards.values()) for (const it of card._acpItems || []) it.node._acpDestroy?.();
    this.observers.disconnect();
    this.root.remove();
  }

  guard(fn) {
    try {
      fn();
    } catch (err) {
      console.error("acp_notebook view:", err);
    }
  }

  send(msg) {
    try {
      this.model.send(msg);
    } catch (err) {
      console.warn("acp_notebook: cannot reach the kernel", err);
    }
  }

  /** Ask for a full patch, unless one is already on its way (asked less than RESYNC_WAIT_MS ago). */
  requestResync(force = false) {
    const now = Date.now();
    if (!force && this.awaitingFull && now - this.resyncAt < RESYNC_WAIT_MS) return;
    this.resyncAt = now;
    this.awaitingFull = true;
    this.send({ type: "resync" });
  }

  onMessage(msg, buffers) {
    if (this.held) return this.hold(msg, buffers);
    if (msg && msg.type === "part") {
      const whole = this.parts.add(msg, buffers, () => this.requestResync());
      return whole && this.onMessage(whole, []);
    }
    if (msg && msg.type === "patch") this.applyPatch(msg, buffers || []);
    else if (this.stderrFetcher.receive(msg)) return;
    else if (msg && msg.type === "entry_full") this.showWhole(msg);
    else if (msg && msg.type === "xray_reply") this.xray?.source.receive?.(msg);
    else if (msg && typeof msg.type === "string" && msg.type.startsWith("checkpoint")) this.revert.receive(msg);
  }

  /** The X-ray meta of a patch or snapshot: make the panel (the first time), mark what is pinned. */
  setXRay(meta, data) {
    if (!this.xray) {
      const source = data ? new LocalSource(data) : new KernelSource((m) => this.send(m));
      this.xray = new XRayPanel(source);
      this.pinBar = h("div", { class: "acp-pinbar", hidden: true });
      const tree = h("div", { class: "acp-tree" }, this.pinBar, this.list);
      this.root.classList.add("acp-with-xray");
      this.root.append(h("div", { class: "acp-split" }, tree, this.xray.el));
      this.list.addEventListener("click", (e) => this.pickEntry(e));
    }
    this.xray.setMeta(meta);
    const pinned = meta.pinned;
    this.root.classList.toggle("acp-readonly", pinned != null || typeof meta.position === "number" || !!data);
    this.pinBar.hidden = pinned == null;
    if (pinned != null) {
      const back = h("button", { type: "button", class: "acp-btn acp-btn-small", on: { click: () => this.xray.source.unpin().catch(() => {}) } }, "Back to live");
      this.pinBar.replaceChildren(h("span", null, `The state right after message #${pinned} (buttons are off).`), " ", back);
    }
  }

  /** A click on an entry of the tree (not on its controls) asks which messages built it. */
  pickEntry(e) {
    if (e.target.closest("button, a, input, textarea, select, summary, .xterm, .acp-term-screen")) return;
    const node = e.target.closest("[data-key]");
    if (!node || !this.list.contains(node)) return;
    for (const old of this.list.querySelectorAll(".acp-xray-picked")) old.classList.remove("acp-xray-picked");
    node.classList.add("acp-xray-picked");
    this.xray.showCard(node.dataset.key);
  }

  hold(msg, buffers) {
    if (this.held.length < MAX_HELD) this.held.push({ msg, buffers });
    else this.heldLost = true;
  }

  /** The snapshot traits, when newer than what is drawn: inline, or paged (read, then drawn). */
  applySnapshot() {
    const snap = this.model.get("snapshot");
    if (!snap || typeof snap !== "object" || !(snap.seq > this.seq)) return;
    if (!isPaged(snap)) {
      const blob = toU8(this.model.get("terminal_bytes"));
      const bytes = new Map();
      for (const [id, meta] of Object.entries(snap.terminals || {})) {
        const [start, length] = Array.isArray(meta.blob) ? meta.blob : [0, 0];
        bytes.set(id, blob.subarray(start, start + length));
      }
      return this.drawSnapshot(snap, bytes);
    }
    if (this.held) return void (this.reload = true); // a load is under way: read the newest after it
    this.held = [];
    this.pageReader
      .load(snap)
      .then((got) => this.destroyed || this.guard(() => snap.seq > this.seq && this.drawSnapshot({ ...snap, ...got }, got.bytes)))
      .catch((err) => console.warn("acp_notebook: cannot read the saved snapshot", err))
      .finally(() => this.released());
  }

  /** A paged snapshot is drawn (or failed): handle what came meanwhile, in order. */
  released() {
    const held = this.held || [];
    this.held = null;
    if (this.destroyed) return;
    for (const { msg, buffers } of held) this.guard(() => this.onMessage(msg, buffers));
    if (this.heldLost) this.requestResync(true);
    this.heldLost = false;
    if (this.reload) this.guard(() => this.applySnapshot());
    this.reload = false;
  }

  drawSnapshot(snap, bytes) {
    this.applyPatch({ ...snap, full: true, bytes: [] }, [], true);
    for (const [id, meta] of Object.entries(snap.terminals || {})) {
      this.terminals.fromSnapshot(id, meta, bytes.get(id) || new Uint8Array(0));
    }
  }

  applyPatch(p, buffers, fromSnapshot = false) {
    if (!p.full && typeof p.seq === "number" && p.seq <= this.seq) return;
    if (typeof p.seq === "number") this.seq = p.full ? p.seq : Math.max(this.seq, p.seq);
    if (p.full && !fromSnapshot) this.awaitingFull = false; // the answer to a resync
    // Only a live patch's list makes terminals take keystrokes: a snapshot alone (a saved notebook
    // reopened without its kernel) stays read-only, and snapshot refreshes do not flip anything.
    if (p.header && !fromSnapshot) this.setInteractive(p.header.interactive_terminals);
    if (p.header) this.setHeader(p.header);
    if (p.xray && typeof p.xray === "object") this.setXRay(p.xray, p.xray_data);
    if (p.full) this.setOrder(Array.isArray(p.order) ? p.order : []);
    else for (const key of Array.isArray(p.order) ? p.order : []) this.slotFor(key);
    for (const [id, meta] of Object.entries(p.terminals || {})) if (meta) this.terminals.setMeta(id, meta);
    let gap = false;
    for (const b of Array.isArray(p.bytes) ? p.bytes : []) {
      const data = toU8(buffers[b.buf]);
      const r = this.terminals.apply(String(b.id), { gen: b.gen, at: b.at, data, reset: !!b.reset });
      gap ||= r === "gap";
    }
    for (const [key, entry] of Object.entries(p.entries || {})) if (entry) this.upsert(key, entry);
    if (gap) this.requestResync();
  }

  setHeader(hdr) {
    const s = sig(hdr);
    if (s === this.headerSig) return;
    this.headerSig = s;
    this.ctx.cwd = hdr && hdr.cwd;
    const node = renderHeader(hdr, this.ctx);
    this.header.replaceWith(node);
    this.header = node;
  }

  /** Terminals that start or stop taking input rebuild their screen. */
  setInteractive(ids) {
    const now = new Set(Array.isArray(ids) ? ids.map(String) : []);
    const before = this.ctx.interactive;
    this.ctx.interactive = now;
    for (const id of new Set([...before, ...now])) {
      if (before.has(id) !== now.has(id)) for (const v of this.terminals.views(id)) v.setInteractive(now.has(id));
    }
  }

  /** A full order: drop keys no longer present, add new ones, fix the DOM order if needed. */
  setOrder(keys) {
    const want = new Set(keys);
    for (const key of [...this.slots.keys()]) if (!want.has(key)) this.remove(key);
    this.order = this.order.filter((k) => want.has(k));
    for (const key of keys) this.slotFor(key);
    if (this.order.every((k, i) => k === keys[i])) return;
    this.order = [...keys];
    this.list.replaceChildren();
    this.chunk = null;
    for (const k of keys) this.appendSlot(this.slots.get(k));
  }

  /**
   * The list is split into chunks of CHUNK entries (layout-contained), so replacing one entry
   * among thousands re-lays out only its chunk.
   */
  appendSlot(node) {
    if (!this.chunk || this.chunk.childElementCount >= CHUNK) this.list.append((this.chunk = h("div", { class: "acp-chunk" })));
    this.chunk.append(node);
  }

  slotFor(key) {
    if (!this.slots.has(key)) {
      const ph = placeholder(key);
      this.slots.set(key, ph);
      this.order.push(key);
      this.appendSlot(ph);
    }
    return this.slots.get(key);
  }

  /** Put `node` at key's place in the list (replacing whatever was there). */
  place(key, node) {
    const old = this.slotFor(key);
    if (old === node) return;
    old.replaceWith(node);
    this.slots.set(key, node);
  }

  /** The kernel's answer to "show all": the whole entry replaces the cut one (until it changes). */
  showWhole(msg) {
    if (msg.entry && typeof msg.entry === "object" && this.entries.has(msg.key)) this.upsert(msg.key, msg.entry);
  }

  upsert(key, entry) {
    const s = sig(entry);
    if (this.sigs.get(key) === s) return;
    this.sigs.set(key, s);
    this.entries.set(key, entry);
    this.slotFor(key);
    if (entry.kind === "tool_call") this.drawCard(key, entry);
    else if (entry.kind === "permission") this.drawPermission(key, entry);
    else this.place(key, renderEntry(key, entry, this.ctx));
  }

  drawCard(key, entry) {
    const old = this.cards.get(key);
    const card = renderCard(key, entry, this.ctx, old);
    this.cards.set(key, card);
    this.place(key, card);
    for (const { key: pk, element } of this.perms.forCard(entry.id)) {
      if (element.classList.contains("acp-perm-in-card")) card.querySelector(".acp-card-perms").append(element);
      else this.drawPermission(pk, this.entries.get(pk));
    }
  }

  drawPermission(key, entry) {
    const tool = entry.tool_call_id != null ? String(entry.tool_call_id) : null;
    const card = tool != null ? this.cards.get(`tool_call:${tool}`) : null;
    const node = renderPermission(key, entry, this.ctx, !!card);
    const old = this.perms.element(key);
    this.perms.place(key, node, tool);
    const box = card ? card.querySelector(".acp-card-perms") : null;
    if (old && old.parentNode !== box && old.parentElement?.classList.contains("acp-card-perms")) old.remove();
    if (!card) return this.place(key, node);
    if (!this.slots.get(key).dataset.placeholder) this.place(key, placeholder(key));
    if (old && old.parentNode === box) old.replaceWith(node);
    else box.append(node);
  }

  remove(key) {
    this.slots.get(key)?.remove();
    this.slots.delete(key);
    this.sigs.delete(key);
    this.entries.delete(key);
    const card = this.cards.get(key);
    this.cards.delete(key);
    if (card) {
      for (const it of card._acpItems || []) it.node._acpDestroy?.();
      const id = key.slice("tool_call:".length);
      for (const { key: pk } of this.perms.forCard(id)) if (this.entries.has(pk)) this.drawPermission(pk, this.entries.get(pk));
    }
    this.perms.drop(key)?.element.remove();
  }
}

function placeholder(key) {
  return h("div", { class: "acp-slot", hidden: true, dataset: { placeholder: key } });
}
