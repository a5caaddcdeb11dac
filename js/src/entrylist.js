// The entries of a view (WIRE.md "Entries"), keyed and incremental: a patch appends keys (a full
// one replaces the order) and upserts entries, each drawn again only when it changed. A tool
// call's entry draws the permission requests that belong to it inside its card (the nesting is
// the model's: `PermissionNesting`); a request whose tool call is not in the view is drawn at its
// own place. A view extension: `onPatch`, `onMessage` ("show all" answers), `dispose`.
import { renderEntry } from "./entries.js";
import { renderPermission } from "./permission.js";
import { PermissionNesting } from "./permnest.js";
import { SlotList } from "./slots.js";
import { destroyCard, renderCard } from "./toolcall.js";
import { sig } from "./util.js";

const TOOL_CALL = "tool_call:";

export class EntryList {
  constructor(ctx) {
    this.ctx = ctx;
    this.slots = new SlotList();
    this.el = this.slots.el;
    this.entries = new Map(); // key → entry
    this.sigs = new Map(); // key → JSON of the drawn entry
    this.cards = new Map(); // tool_call key → {el, items, perms} (toolcall.js)
    this.perms = new Map(); // permission key → {el, inCard}: its block as last drawn
    this.nesting = new PermissionNesting();
  }

  onPatch(p) {
    const order = Array.isArray(p.order) ? p.order : [];
    if (p.full) this.slots.setOrder(order, (key) => this.remove(key));
    else for (const key of order) this.slots.add(key);
    for (const [key, entry] of Object.entries(p.entries || {})) if (entry && typeof entry === "object") this.upsert(key, entry);
  }

  /** The kernel's answer to "show all": the whole entry replaces the cut one (until it changes). */
  onMessage(msg) {
    if (msg.type !== "entry_full") return false;
    if (msg.entry && typeof msg.entry === "object" && this.entries.has(msg.key)) this.upsert(msg.key, msg.entry);
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
    this.slots.add(key);
    if (entry.kind === "tool_call") this.drawCard(key, entry);
    else if (entry.kind === "permission") this.drawPermission(key, entry);
    else this.slots.place(key, renderEntry(key, entry, this.ctx));
  }

  cardOf(toolCallId) {
    return toolCallId == null ? undefined : this.cards.get(TOOL_CALL + toolCallId);
  }

  /** The tool call id of a `tool_call:<id>` key (null for the cards of other keys: writes). */
  toolId(key) {
    return key.startsWith(TOOL_CALL) ? key.slice(TOOL_CALL.length) : null;
  }

  /** A tool call's card, with the permission requests that belong to it. */
  drawCard(key, entry) {
    const card = renderCard(key, entry, this.ctx, this.cards.get(key));
    this.cards.set(key, card);
    this.fillCard(this.toolId(key));
    this.slots.place(key, card.el);
  }

  /** A permission request: inside its tool call's card when the view has it, else at its place. */
  drawPermission(key, entry) {
    const tool = entry.tool_call_id != null ? String(entry.tool_call_id) : null;
    const before = this.nesting.set(key, tool);
    const inCard = !!this.cardOf(tool);
    this.perms.set(key, { el: renderPermission(key, entry, this.ctx, inCard), inCard });
    if (before != null && before !== tool) this.fillCard(before); // it left that card
    if (inCard) this.fillCard(tool);
    else this.slots.place(key, this.perms.get(key).el);
  }

  /** Tool call `id`'s card draws its permission requests; their own places show nothing. */
  fillCard(id) {
    const card = this.cardOf(id);
    if (!card) return;
    const blocks = [];
    for (const key of this.nesting.childrenOf(id)) {
      const entry = this.entries.get(key);
      if (!entry) continue;
      let drawn = this.perms.get(key);
      if (!drawn?.inCard) this.perms.set(key, (drawn = { el: renderPermission(key, entry, this.ctx, true), inCard: true }));
      this.slots.hide(key);
      blocks.push(drawn.el);
    }
    card.perms.replaceChildren(...blocks);
  }

  /** Drop `key` (not in a full order): a card's requests go back to their own places. */
  remove(key) {
    this.slots.remove(key);
    this.sigs.delete(key);
    this.entries.delete(key);
    const card = this.cards.get(key);
    this.cards.delete(key);
    if (card) {
      destroyCard(card);
      const id = this.toolId(key);
      for (const pk of id == null ? [] : this.nesting.childrenOf(id)) this.drawPermission(pk, this.entries.get(pk));
    }
    if (this.perms.delete(key)) this.fillCard(this.nesting.drop(key));
  }
}
