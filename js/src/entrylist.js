// The entries of a view (WIRE.md "Entries"), keyed and incremental: a patch appends keys (a full
// one replaces the order) and upserts entries, each drawn again only when it changed. A tool
// call's entry draws the permission requests that belong to it inside its card (the nesting is
// the model's: `PermissionNesting`, by the card's key); a request whose card is not in the view is
// drawn at its own place. A subagent's entries (keys under its card's: WIRE.md "Subagents") are
// drawn in its card's own slot list, at any depth. A view extension: `onPatch`, `onMessage`
// ("show all" answers), `dispose`.
import { elicitationId, kernelRefused, renderElicitation } from "./elicitation.js";
import { renderEntry } from "./entries.js";
import { renderPermission } from "./permission.js";
import { PermissionNesting } from "./permnest.js";
import { SlotList } from "./slots.js";
import { SubagentCard } from "./subagent.js";
import { destroyCard, renderCard } from "./toolcall.js";
import { sig } from "./util.js";

const TOOL_CALL = "tool_call:";
const ASKS = { permission: renderPermission, elicitation: renderElicitation }; // drawn in their tool call's card
const SUBAGENT = "subagent:";

/** The key of the subagent card an entry is drawn in ("" for the view's own session). */
export function containerOf(key) {
  if (!key.startsWith(SUBAGENT)) return "";
  const cut = key.lastIndexOf("/");
  return cut < 0 ? "" : key.slice(0, cut);
}

/** The card a permission request is drawn in: its entry's `card`, else its tool call's. */
function cardKeyOf(entry) {
  if (typeof entry.card === "string") return entry.card;
  if (entry.card === null) return null;
  return entry.tool_call_id != null ? TOOL_CALL + String(entry.tool_call_id) : null;
}

export class EntryList {
  constructor(ctx) {
    this.ctx = ctx;
    this.slots = new SlotList();
    this.el = this.slots.el;
    this.lists = new Map([["", this.slots]]); // card key → the slot list of its entries
    this.subagents = new Map(); // subagent card key → SubagentCard
    this.entries = new Map(); // key → entry
    this.sigs = new Map(); // key → JSON of the drawn entry
    this.cards = new Map(); // tool_call key → {el, items, perms} (toolcall.js)
    this.perms = new Map(); // permission key → {el, inCard}: its block as last drawn
    this.nesting = new PermissionNesting();
    ctx.redraw = (key) => this.entries.has(key) && this.drawPermission(key, this.entries.get(key));
  }

  onPatch(p) {
    const order = Array.isArray(p.order) ? p.order.map(String) : [];
    if (p.full) this.setOrder(order);
    else for (const key of order) this.listOf(key).add(key);
    for (const [key, entry] of Object.entries(p.entries || {})) if (entry && typeof entry === "object") this.upsert(key, entry);
  }

  /** The slot list `key` is drawn in (a subagent card's, made before the card is drawn if need be). */
  listOf(key) {
    return this.listIn(containerOf(key));
  }

  /** The slot list of card `container` ("" for the view's own). */
  listIn(container) {
    let list = this.lists.get(container);
    if (!list) this.lists.set(container, (list = new SlotList()));
    return list;
  }

  /** A full order: each list gets its keys, in order (the others are removed). */
  setOrder(order) {
    const byList = new Map([...this.lists.keys()].map((c) => [c, []]));
    for (const key of order) {
      const container = containerOf(key);
      if (!byList.has(container)) byList.set(container, []);
      byList.get(container).push(key);
    }
    for (const [container, keys] of byList) {
      if (keys.length || this.lists.has(container)) this.listIn(container).setOrder(keys, (key) => this.remove(key));
    }
  }

  /** The kernel's answer to "show all": the whole entry replaces the cut one (until it changes). */
  onMessage(msg) {
    if (msg.type === "elicitation_refused") return this.refused(msg);
    if (msg.type !== "entry_full") return false;
    if (msg.entry && typeof msg.entry === "object" && this.entries.has(msg.key)) this.upsert(msg.key, msg.entry);
    return true;
  }

  /** The kernel refused an elicitation's values: its card shows why, next to the fields. */
  refused(msg) {
    for (const [key, entry] of this.entries) {
      if (entry.kind !== "elicitation" || elicitationId(key, entry) !== msg.key) continue;
      kernelRefused(this.ctx, key, msg.errors);
      this.drawPermission(key, entry);
    }
    return true;
  }

  dispose() {
    for (const card of this.cards.values()) destroyCard(card);
  }

  upsert(key, entry) {
    const s = sig(entry);
    if (this.sigs.get(key) === s) return;
    this.sigs.set(key, s);
    this.entries.set(key, entry);
    const list = this.listOf(key);
    list.add(key);
    if (entry.kind === "tool_call") this.drawCard(key, entry);
    else if (ASKS[entry.kind]) this.drawPermission(key, entry);
    else if (entry.kind === "subagent") this.drawSubagent(key, entry);
    else list.place(key, renderEntry(key, entry, this.ctx));
  }

  cardOf(cardKey) {
    return cardKey == null ? undefined : this.cards.get(cardKey);
  }

  /** A tool call's card, with the permission requests that belong to it. */
  drawCard(key, entry) {
    const card = renderCard(key, entry, this.ctx, this.cards.get(key));
    this.cards.set(key, card);
    this.fillCard(key);
    this.listOf(key).place(key, card.el);
  }

  /** A subagent's card: drawn once, updated in place; its body is the list of its entries. */
  drawSubagent(key, entry) {
    let card = this.subagents.get(key);
    if (!card) this.subagents.set(key, (card = new SubagentCard(key, this.ctx, this.listIn(key))));
    card.update(entry);
    this.listOf(key).place(key, card.el);
  }

  /** A request (permission, elicitation): inside its tool call's card when the view has it, else at its place. */
  drawPermission(key, entry) {
    const cardKey = cardKeyOf(entry);
    const before = this.nesting.set(key, cardKey);
    const inCard = !!this.cardOf(cardKey);
    this.perms.set(key, { el: ASKS[entry.kind](key, entry, this.ctx, inCard), inCard });
    if (before != null && before !== cardKey) this.fillCard(before); // it left that card
    if (inCard) this.fillCard(cardKey);
    else this.listOf(key).place(key, this.perms.get(key).el);
  }

  /** Card `cardKey` draws its permission requests; their own places show nothing. */
  fillCard(cardKey) {
    const card = this.cardOf(cardKey);
    if (!card) return;
    const blocks = [];
    for (const key of this.nesting.childrenOf(cardKey)) {
      const entry = this.entries.get(key);
      if (!entry) continue;
      let drawn = this.perms.get(key);
      if (!drawn?.inCard) this.perms.set(key, (drawn = { el: ASKS[entry.kind](key, entry, this.ctx, true), inCard: true }));
      this.listOf(key).hide(key);
      blocks.push(drawn.el);
    }
    card.perms.replaceChildren(...blocks);
  }

  /** Show entry `key`: open the subagent cards it is in, scroll to it; false when not drawn. */
  reveal(key) {
    const node = this.listOf(key).nodes.get(key);
    if (!node || node.hidden) return false;
    for (let c = containerOf(key); c; c = containerOf(c)) this.subagents.get(c)?.setOpen(true);
    node.scrollIntoView({ block: "nearest" });
    node.classList.add("acp-anchor-flash");
    setTimeout(() => node.classList.remove("acp-anchor-flash"), 1500);
    return true;
  }

  /** Drop `key` (not in a full order): a card's requests go back to their own places. */
  remove(key) {
    this.listOf(key).remove(key);
    this.sigs.delete(key);
    this.entries.delete(key);
    const card = this.cards.get(key);
    this.cards.delete(key);
    if (card) {
      destroyCard(card);
      for (const pk of this.nesting.childrenOf(key)) this.drawPermission(pk, this.entries.get(pk));
    }
    if (this.subagents.delete(key)) {
      this.lists.get(key)?.setOrder([], (k) => this.remove(k));
      this.lists.delete(key);
    }
    if (this.perms.delete(key)) this.fillCard(this.nesting.drop(key));
  }
}
