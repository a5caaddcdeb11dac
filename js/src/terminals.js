// Terminal bytes kept in JS (a list of chunks per terminal) so any view can be (re)built at any
// time; applies WIRE.md byte rules (generations, absolute offsets, overlap, gaps).
import { concatBytes } from "./util.js";

const CAP = 8 * 1024 * 1024; // bytes kept per terminal in the browser
const COMPACT_AT = 64; // merge chunk lists longer than this

class Term {
  constructor(id) {
    this.id = id;
    this.meta = { id };
    this.gen = null; // null: no bytes seen yet
    this.start = 0; // absolute offset of chunks[0][0]
    this.end = 0;
    this.size = 0;
    this.chunks = [];
    this.trimmed = 0; // > 0: drawn from a saved snapshot that left this many held bytes out
    this.views = new Set();
  }

  replace(gen, at, data, trimmed = 0) {
    this.trimmed = trimmed;
    this.gen = gen;
    this.start = at;
    this.end = at + data.length;
    this.size = data.length;
    this.chunks = data.length ? [data.slice()] : [];
    for (const v of this.views) v.reset();
  }

  append(data) {
    const copy = data.slice();
    this.chunks.push(copy);
    this.end += copy.length;
    this.size += copy.length;
    this.trim();
    for (const v of this.views) v.write(copy);
  }

  trim() {
    while (this.size > CAP && this.chunks.length > 1) {
      const c = this.chunks.shift();
      this.size -= c.length;
      this.start += c.length;
    }
    if (this.chunks.length > COMPACT_AT) this.chunks = [concatBytes(this.chunks, this.size)];
  }
}

export class TerminalStore {
  constructor() {
    this.terms = new Map();
  }

  get(id) {
    let t = this.terms.get(id);
    if (!t) this.terms.set(id, (t = new Term(id)));
    return t;
  }

  /** Merge metadata (never bytes); views redraw their header. */
  setMeta(id, meta) {
    const t = this.get(id);
    t.meta = { ...t.meta, ...meta, id };
    for (const v of t.views) v.updateMeta();
  }

  /**
   * Apply one byte record. Returns "ok", "same" (already had it), "stale" or "gap" (the caller
   * should resync).
   */
  apply(id, { gen, at, data, reset, trimmed = 0 }) {
    const t = this.get(id);
    at = Number.isFinite(at) ? at : 0;
    if (reset) {
      if (gen === t.gen && at === t.start && at + data.length === t.end && t.gen !== null && trimmed === t.trimmed) return "same";
      t.replace(gen, at, data, trimmed);
      return "ok";
    }
    if (t.gen === null) {
      const base = Number.isFinite(t.meta.base) ? t.meta.base : 0;
      if (at > base) return "gap";
      t.replace(gen, at, data);
      return "ok";
    }
    if (gen < t.gen) return "stale";
    if (gen > t.gen || at > t.end) return "gap";
    if (at + data.length <= t.end) return "same";
    t.append(data.subarray(t.end - at));
    return "ok";
  }

  /** Take a snapshot's copy of a terminal: only if it is newer than what we hold. */
  fromSnapshot(id, meta, data) {
    const t = this.get(id);
    const gen = Number.isFinite(meta.gen) ? meta.gen : 0;
    const at = Number.isFinite(meta.base) ? meta.base : 0;
    const trimmed = Number.isFinite(meta.trimmed) && meta.trimmed > 0 ? meta.trimmed : 0;
    if (t.gen === null || gen !== t.gen || at > t.end) return this.apply(id, { gen, at, data, reset: true, trimmed });
    return this.apply(id, { gen, at, data, reset: false });
  }

  chunks(id) {
    return this.get(id).chunks;
  }

  /** The views showing terminal `id`. */
  views(id) {
    return this.terms.get(id)?.views ?? [];
  }

  attach(id, view) {
    this.get(id).views.add(view);
  }

  detach(id, view) {
    this.terms.get(id)?.views.delete(view);
  }
}
