// The paged form of a view's snapshot (WIRE.md "The saved snapshot"): entries in groups and
// terminal bytes held by SnapshotPage widgets, listed by the view's `pages` trait. Loaded here
// into the inline form's pieces: {order, entries, terminals (metadata), bytes: Map id → Uint8Array}.
import { concatBytes } from "./util.js";

const decoder = new TextDecoder();
const TRIES = 50; // a page model not registered yet (a reload still restoring): retry
const TRY_MS = 100;

/** Is this snapshot in the paged form? */
export function isPaged(snap) {
  return Array.isArray(snap.groups);
}

/** A page's `data` (base64 text: a plain WidgetModel saves binary values as {}) as bytes. */
function pageBytes(data) {
  const raw = atob(typeof data === "string" ? data : "");
  const out = new Uint8Array(raw.length);
  for (let i = 0; i < raw.length; i++) out[i] = raw.charCodeAt(i);
  return out;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function pageModel(manager, ref) {
  const id = typeof ref === "string" ? ref.replace(/^IPY_MODEL_/, "") : "";
  for (let i = 0; ; i++) {
    try {
      const model = await manager.get_model(id);
      if (model) return model;
    } catch (err) {
      if (i >= TRIES) throw err;
    }
    if (i >= TRIES) throw new Error(`snapshot page ${id} not found`);
    await sleep(TRY_MS);
  }
}

export class PageReader {
  constructor(model) {
    this.model = model;
    this.parsed = new Map(); // page refs of a group (joined) → its parsed JSON, kept for the last load
  }

  async bytes(refs, indices) {
    const manager = this.model.widget_manager;
    const models = await Promise.all(indices.map((i) => pageModel(manager, refs[i])));
    return concatBytes(models.map((m) => pageBytes(m.get("data"))));
  }

  async json(refs, indices, cache) {
    const key = indices.map((i) => refs[i]).join(",");
    let value = this.parsed.get(key);
    if (value === undefined) value = JSON.parse(decoder.decode(await this.bytes(refs, indices)));
    cache.set(key, value);
    return value;
  }

  /** Read every page the snapshot points at (refs: the view's `pages` trait). */
  async load(snap) {
    const refs = this.model.get("pages") || [];
    const cache = new Map();
    const groups = await Promise.all(snap.groups.map((g) => this.json(refs, g, cache)));
    const terminals = Array.isArray(snap.metas) ? await this.json(refs, snap.metas, cache) : {};
    const bytes = new Map();
    await Promise.all(
      Object.entries(terminals).map(async ([id, meta]) => bytes.set(id, await this.bytes(refs, meta.pages || []))),
    );
    this.parsed = cache;
    const entries = Object.assign({}, ...groups);
    return { order: Object.keys(entries), entries, terminals, bytes };
  }
}
