// One SessionView: sequencing only. It draws the snapshot (inline, or paged: read first, live
// messages held meanwhile), takes patches in `seq` order through its channel, applies their
// terminal bytes (a gap asks for a resync) and hands each patch and message to its extensions, in
// order: interactive terminals, header, stderr lines, revert bar, X-ray, pins, entries. Each
// extension has any of `onPatch(p, fromSnapshot)`, `onMessage(msg)` (true: it was its own),
// `start(doc)` and `dispose()`.
import { Channel } from "./channel.js";
import { findAnchor } from "./headerview.js";
import { EntryList } from "./entrylist.js";
import { InteractiveTerminals } from "./interactive.js";
import { PageReader, isPaged } from "./pages.js";
import { PinBar } from "./pinbar.js";
import { RevertBar } from "./revert.js";
import { StderrFetcher } from "./stderrfetch.js";
import { injectStyle } from "./style.js";
import { TerminalStore } from "./terminals.js";
import { TerminalObservers } from "./observers.js";
import { Ticker } from "./ticker.js";
import { h, isLab, toU8 } from "./util.js";
import { HeaderSlot } from "./viewheader.js";
import { XRayView } from "./xrayview.js";

/** api.mount: draw a SessionView into `el`; returns the cleanup function. */
export function mount({ model, el, queued }) {
  const view = new View(model, el);
  view.start(queued);
  return () => view.destroy();
}

class View {
  constructor(model, el) {
    this.model = model;
    this.el = el;
    this.channel = new Channel(model, (msg, buffers) => this.onMessage(msg, buffers), "view");
    this.terminals = new TerminalStore();
    this.pageReader = new PageReader(model);
    this.observers = new TerminalObservers();
    this.root = h("div", { class: "acp-session" });
    this.ticker = new Ticker(this.root);
    this.ctx = this.context();
    this.extensions = this.attach();
    this.onSnap = () => this.channel.guard(() => this.applySnapshot());
  }

  /** What the renderers share: UI state kept across redraws, and the view's services. */
  context() {
    let lab;
    const send = (m) => this.channel.send(m);
    return {
      ui: { open: new Set(), collapsed: new Set(), diffMode: new Map(), unfolded: new Set(), pending: new Map(), prompt: null },
      terminals: this.terminals, send, tick: (e, t) => this.ticker.add(e, t),
      isLab: () => (lab ??= isLab(this.el.ownerDocument || document)),
      observeTerminal: (v) => this.observers.observe(v), unobserveTerminal: (v) => this.observers.unobserve(v),
      fetchEntry: (key) => send({ type: "entry_full", key }), // "show all" of a cut entry
      findAnchor, // a turn header's link to the start cell's header
    };
  }

  /** The extensions, in the order they see each patch, their elements in the view. */
  attach() {
    const { ctx } = this;
    const header = new HeaderSlot(ctx);
    const stderr = new StderrFetcher(ctx.send); // "show all" of a cut stderr line
    ctx.fetchStderr = (n) => stderr.fetch(n);
    const revert = new RevertBar(ctx); // "Revert this turn" (checkpoints), under the header
    const entries = new EntryList(ctx);
    ctx.revealEntry = (key) => entries.reveal(key); // a session message's link to its other view
    this.root.append(header.el, revert.el, entries.el);
    const xray = new XRayView(this.root, entries.el, ctx.send);
    const pins = new PinBar(this.root, entries.el, () => xray.unpin());
    return [new InteractiveTerminals(ctx, this.terminals), header, stderr, revert, xray, pins, entries];
  }

  start(queued) {
    const doc = this.el.ownerDocument || document;
    injectStyle(doc);
    this.channel.guard(() => this.applySnapshot());
    this.channel.start(queued);
    this.el.append(this.root);
    this.model.on("change:snapshot", this.onSnap);
    this.channel.resync(true);
    for (const ext of this.extensions) ext.start?.(doc);
  }

  destroy() {
    this.destroyed = true;
    this.channel.close();
    this.model.off?.("change:snapshot", this.onSnap);
    this.ticker.stop();
    for (const ext of this.extensions) ext.dispose?.();
    this.observers.disconnect();
    this.root.remove();
  }

  onMessage(msg, buffers) {
    if (!msg || typeof msg !== "object") return;
    if (msg.type === "patch") return this.applyPatch(msg, buffers || []);
    for (const ext of this.extensions) if (ext.onMessage?.(msg)) return;
  }

  /** The snapshot traits, when newer than what is drawn: inline, or paged (read, then drawn). */
  applySnapshot() {
    const snap = this.model.get("snapshot");
    if (!this.channel.newer(snap)) return;
    if (!isPaged(snap)) return this.drawSnapshot(snap, inlineBytes(snap, toU8(this.model.get("terminal_bytes"))));
    if (this.channel.paused) return void (this.reload = true); // a load is under way: read the newest after it
    this.channel.pause();
    this.pageReader
      .load(snap)
      .then((got) => this.destroyed || this.channel.guard(() => this.channel.newer(snap) && this.drawSnapshot({ ...snap, ...got }, got.bytes)))
      .catch((err) => console.warn("acp_notebook: cannot read the saved snapshot", err))
      .finally(() => this.released());
  }

  /** A paged snapshot is drawn (or failed): handle what came meanwhile, in order. */
  released() {
    if (this.destroyed) return;
    this.channel.resume();
    if (this.reload) this.channel.guard(() => this.applySnapshot());
    this.reload = false;
  }

  drawSnapshot(snap, bytes) {
    this.applyPatch({ ...snap, full: true, bytes: [] }, [], true);
    for (const [id, meta] of Object.entries(snap.terminals || {})) {
      this.terminals.fromSnapshot(id, meta, bytes.get(id) || new Uint8Array(0));
    }
  }

  applyPatch(p, buffers, fromSnapshot = false) {
    if (!this.channel.accept(p, !fromSnapshot)) return;
    const gap = this.applyTerminals(p, buffers);
    this.setClock(p, fromSnapshot);
    for (const ext of this.extensions) ext.onPatch?.(p, fromSnapshot);
    if (gap) this.channel.resync();
  }

  /** A past state's clocks are frozen: at its header's `frozen_at` (a pinned or replayed state),
   * or, drawn from the saved snapshot, at `saved_at` until the kernel's live patches arrive. */
  setClock(p, fromSnapshot) {
    if (!p.header || typeof p.header !== "object") return;
    const saved = fromSnapshot && typeof p.saved_at === "number" ? p.saved_at : null;
    this.ticker.freeze(typeof p.header.frozen_at === "number" ? p.header.frozen_at : saved);
  }

  /** Terminal metadata and bytes (WIRE.md "Patches"); true when bytes are missing (a gap). */
  applyTerminals(p, buffers) {
    for (const [id, meta] of Object.entries(p.terminals || {})) if (meta) this.terminals.setMeta(id, meta);
    let gap = false;
    for (const b of Array.isArray(p.bytes) ? p.bytes : []) {
      const data = toU8(buffers[b.buf]);
      gap = this.terminals.apply(String(b.id), { gen: b.gen, at: b.at, data, reset: !!b.reset }) === "gap" || gap;
    }
    return gap;
  }
}

/** The inline snapshot's terminal bytes: id → its slice of `terminal_bytes` (`meta.blob`). */
function inlineBytes(snap, blob) {
  const bytes = new Map();
  for (const [id, meta] of Object.entries(snap.terminals || {})) {
    const [start, length] = Array.isArray(meta.blob) ? meta.blob : [0, 0];
    bytes.set(id, blob.subarray(start, start + length));
  }
  return bytes;
}
