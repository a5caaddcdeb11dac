// The entry list's DOM: one node per key, in the view's order. A key's node is its drawn entry or
// a hidden placeholder (not drawn yet, or drawn elsewhere: a permission inside its tool call's card).
// The list is split into chunks of CHUNK nodes (layout-contained), so replacing one entry among
// thousands re-lays out only its chunk.
import { h } from "./util.js";

const CHUNK = 64;

export class SlotList {
  constructor() {
    this.el = h("div", { class: "acp-entries" });
    this.order = [];
    this.nodes = new Map(); // key → the node at the key's place
    this.holders = new Map(); // key → its placeholder
    this.chunk = null;
  }

  has(key) {
    return this.nodes.has(key);
  }

  /** The key's placeholder (made once). */
  placeholder(key) {
    let ph = this.holders.get(key);
    if (!ph) this.holders.set(key, (ph = h("div", { class: "acp-slot", hidden: true, dataset: { placeholder: key } })));
    return ph;
  }

  /** Make room for `key` at the end of the order (a placeholder) unless it has its place. */
  add(key) {
    if (this.nodes.has(key)) return;
    const ph = this.placeholder(key);
    this.nodes.set(key, ph);
    this.order.push(key);
    this.append(ph);
  }

  append(node) {
    if (!this.chunk || this.chunk.childElementCount >= CHUNK) this.el.append((this.chunk = h("div", { class: "acp-chunk" })));
    this.chunk.append(node);
  }

  /** Put `node` at key's place (replacing whatever was there). */
  place(key, node) {
    this.add(key);
    const old = this.nodes.get(key);
    if (old === node) return;
    old.replaceWith(node);
    this.nodes.set(key, node);
  }

  /** Show nothing at key's place (its entry is drawn elsewhere). */
  hide(key) {
    this.place(key, this.placeholder(key));
  }

  /** A full order: `onRemove(key)` for each key no longer present, new keys added, DOM order fixed. */
  setOrder(keys, onRemove) {
    const want = new Set(keys);
    for (const key of [...this.nodes.keys()]) if (!want.has(key)) onRemove(key);
    this.order = this.order.filter((k) => want.has(k));
    for (const key of keys) this.add(key);
    if (this.order.every((k, i) => k === keys[i])) return;
    this.order = [...keys];
    this.el.replaceChildren();
    this.chunk = null;
    for (const k of keys) this.append(this.nodes.get(k));
  }

  /** Forget `key` and take its node out of the list. */
  remove(key) {
    this.nodes.get(key)?.remove();
    this.nodes.delete(key);
    this.holders.delete(key);
  }
}
