// A tool call as a card: kind icon, title, status, elapsed time, locations, items, raw JSON.
import { backgroundBadge } from "./background.js";
import { renderBlock } from "./content.js";
import { renderDiff } from "./diff.js";
import { renderRaw } from "./generic.js";
import { renderNotes } from "./notes.js";
import { icon } from "./icons.js";
import { TermView } from "./terminal.js";
import { fmtElapsed, h, jsonFold, sig, text } from "./util.js";

const ACTIVE = new Set(["pending", "in_progress"]);
const STATUS_LABEL = { pending: "pending", in_progress: "in progress", paused: "paused", completed: "completed", failed: "failed", cancelled: "cancelled" };

/**
 * Render a card: `{el, items, perms}` (`items`: its item nodes, `perms`: the box its permission
 * requests are drawn in). Item nodes of the previous card (`old`) whose item is unchanged are moved
 * into the new card (terminals keep their xterm, diffs their layout); the rest are destroyed.
 */
export function renderCard(key, entry, ctx, old) {
  const phase = STATUS_LABEL[entry.phase] ? entry.phase : "in_progress";
  const status = text(entry.status) || phase;
  const el = h("div", { class: `acp-card acp-phase-${phase}`, dataset: { key, status, phase, kind: text(entry.display_kind) || "other" } });
  if (entry.background) el.classList.add("acp-in-background");
  if (ctx.ui.collapsed.has(key)) el.classList.add("acp-collapsed");
  el.append(cardHead(key, entry, ctx, phase, status, el));
  const locs = locations(entry.locations, ctx);
  if (locs) el.append(locs);
  const perms = h("div", { class: "acp-card-perms" });
  el.append(perms);
  const body = h("div", { class: "acp-card-body" });
  const drawn = items(key, entry, ctx, old ? old.items : [], body);
  if (body.firstChild) el.append(body);
  const notes = renderNotes(entry.notes);
  if (notes) el.append(notes);
  const raw = rawBlocks(entry);
  if (raw) el.append(raw);
  return { el, items: drawn, perms };
}

/** Release what a card's items hold (xterm instances). */
export function destroyCard(card) {
  for (const it of card.items) it.node._acpDestroy?.();
}

function cardHead(key, entry, ctx, phase, status, card) {
  const title = typeof entry.title === "string" && entry.title.trim() ? entry.title : null;
  const head = h("div", { class: "acp-card-head" },
    h("span", { class: "acp-chevron", "aria-hidden": "true" }),
    icon(entry.display_kind, "acp-icon acp-kind-icon"),
    h("span", { class: `acp-card-title${title ? "" : " acp-fallback"}`, title: title || text(entry.fallback_title) }, title || text(entry.fallback_title) || text(entry.id)),
    entry.name ? h("span", { class: "acp-tag acp-tool-name" }, text(entry.name)) : null,
    h("span", { class: "acp-spacer" }),
    elapsed(entry, ctx),
    entry.background ? backgroundBadge(status) : statusBadge(phase, status),
    entry.cancellable ? cancelButton(entry, ctx) : null);
  head.addEventListener("click", (ev) => {
    if (ev.target.closest("button, a")) return;
    const collapsed = card.classList.toggle("acp-collapsed");
    if (collapsed) ctx.ui.collapsed.add(key);
    else ctx.ui.collapsed.delete(key);
  });
  return head;
}

function statusBadge(phase, status) {
  const label = STATUS_LABEL[status] || status;
  const badge = h("span", { class: `acp-badge acp-phase-${phase}`, title: `status: ${status}` });
  if (ACTIVE.has(phase)) badge.append(h("span", { class: "acp-spinner" }));
  if (phase === "paused") badge.append(h("span", { class: "acp-paused-glyph" }));
  badge.append(label);
  return badge;
}

function elapsed(entry, ctx) {
  const start = entry.created_at;
  if (typeof start !== "number") return null;
  const el = h("span", { class: "acp-elapsed acp-muted" });
  if (typeof entry.ended_at === "number") el.textContent = fmtElapsed(entry.ended_at - start);
  else ctx.tick(el, start);
  return el;
}

function cancelButton(entry, ctx) {
  const btn = h("button", { class: "acp-btn acp-btn-small", type: "button", title: "Cancel this tool call" }, icon("cancel"), "Cancel");
  btn.addEventListener("click", () => {
    btn.disabled = true;
    ctx.send(typeof entry.session === "string" ? { type: "cancel_tool_call", id: entry.id, session: entry.session } : { type: "cancel_tool_call", id: entry.id });
  });
  return btn;
}

function locations(locs, ctx) {
  if (!Array.isArray(locs) || !locs.length) return null;
  const row = h("div", { class: "acp-card-locs" });
  for (const loc of locs) {
    if (!loc || typeof loc !== "object") continue;
    const label = `${text(loc.rel || loc.path)}${loc.line != null ? `:${text(loc.line)}` : ""}`;
    row.append(ctx.isLab() && typeof loc.rel === "string" && loc.rel ? labLink(loc.rel, label, loc.path) : h("span", { class: "acp-loc", title: text(loc.path) }, label));
  }
  return row;
}

/** A link JupyterLab opens with `docmanager:open` (`rel`: relative to the server root). */
export function labLink(rel, label, path) {
  const a = h("a", { class: "acp-loc acp-loc-link", href: "#", title: `Open ${text(path)}` }, label);
  a.dataset.commandlinkerCommand = "docmanager:open";
  a.dataset.commandlinkerArgs = JSON.stringify({ path: rel });
  a.addEventListener("click", (ev) => ev.preventDefault());
  return a;
}

function itemSig(item) {
  return item && item.type === "terminal" ? `terminal:${text(item.id)}` : sig(item);
}

/** Render items in order, reusing unchanged nodes from the old card; destroy leftovers. */
function items(key, entry, ctx, oldItems, body) {
  const pool = new Map();
  for (const it of oldItems) (pool.get(it.sig) || pool.set(it.sig, []).get(it.sig)).push(it.node);
  const out = (Array.isArray(entry.items) ? entry.items : []).map((item, i) => {
    const s = itemSig(item);
    const node = pool.get(s)?.shift() || renderItem(item, ctx, `${key}/${i}`, entry.display_kind);
    body.append(node);
    return { sig: s, node };
  });
  for (const nodes of pool.values()) for (const n of nodes) n._acpDestroy?.();
  return out;
}

function renderItem(item, ctx, uiKey, kind) {
  if (!item || typeof item !== "object") return renderRaw("item", item, "acp-item-other");
  if (item.type === "content" && kind === "read" && isPlainText(item.block)) {
    return h("div", { class: "acp-item-content" }, h("pre", { class: "acp-pre acp-read-text" }, item.block.text)); // a file as read
  }
  if (item.type === "content") return h("div", { class: "acp-item-content" }, renderBlock(item.block));
  if (item.type === "diff") return renderDiff(item, ctx, uiKey);
  if (item.type === "terminal" && typeof item.id === "string") return new TermView(item.id, ctx).el;
  return renderRaw(text(item.label) || text(item.type) || "item", item.raw !== undefined ? item.raw : item, "acp-item-other");
}

/** A text block that is not markdown with code fences (the agent already formatted those). */
function isPlainText(block) {
  return !!block && block.type === "text" && typeof block.text === "string" && !/^\s*(```|~~~)/m.test(block.text);
}

function rawBlocks(entry) {
  const parts = [];
  if ("raw_input" in entry) parts.push(jsonFold("Input", entry.raw_input, "acp-json acp-raw-input"));
  if ("raw_output" in entry) parts.push(jsonFold("Output", entry.raw_output, "acp-json acp-raw-output"));
  return parts.length ? h("div", { class: "acp-card-raw" }, parts) : null;
}
