// Permission requests: title, description, subject, one button per option; locked once chosen.
import { renderBlock } from "./content.js";
import { renderRaw } from "./generic.js";
import { icon } from "./icons.js";
import { renderMarkdown } from "./markdown.js";
import { h, jsonFold, text } from "./util.js";

const BY = { memory: "remembered", policy: "by policy", handler: "by handler" };
const KIND_CLASS = { allow_once: "allow", allow_always: "allow", reject_once: "reject", reject_always: "reject" };

/** The id the kernel knows this request by (the entry's `key`, else the entry key's id part). */
export function permissionId(key, entry) {
  return typeof entry.key === "string" ? entry.key : key.replace(/^permission:/, "");
}

/** A permission block. `inCard` drops what the surrounding card already shows. */
export function renderPermission(key, entry, ctx, inCard) {
  const outcome = entry.outcome && typeof entry.outcome === "object" ? entry.outcome : null;
  if (outcome) ctx.ui.pending.delete(key);
  const pending = outcome ? null : ctx.ui.pending.get(key);
  const state = outcome ? "answered" : pending != null ? "sent" : "open";
  const el = h("div", { class: `acp-permission acp-perm-${state}${inCard ? " acp-perm-in-card" : ""}`, dataset: { key, state } });
  el.append(h("div", { class: "acp-perm-head" }, icon("warn"), h("span", { class: "acp-perm-title" }, text(entry.title) || "Permission requested")));
  if (entry.subagent != null) el.append(h("div", { class: "acp-perm-asker acp-muted" }, "asked by subagent ", h("strong", null, text(entry.subagent))));
  const said = text(entry.description);
  const restated = said && restates(said, entry); // "runs `cmd` in cwd" beside the command block: once is enough
  if (said && !restated) el.append(renderMarkdown(said, "acp-md acp-perm-desc"));
  el.append(...subject(entry, inCard, restated ? said : null));
  const before = shownBefore(entry.shown_before);
  if (before) el.append(before);
  el.append(buttons(key, entry, ctx, outcome, pending));
  const note = outcomeNote(entry, outcome);
  if (note) el.append(note);
  return el;
}

const RESTATING_WORDS = 8; // a description that says no more than this besides the command and its folder restates them

/** True when the agent's description only restates the command subject (the command, its folder). */
function restates(said, entry) {
  const command = text(entry.command);
  const cwd = text(entry.cwd);
  if (!command || !said.includes(command) || (cwd && !said.includes(cwd))) return false;
  const rest = said.split(command).join(" ").split(cwd || "\u0000").join(" ");
  return rest.replace(/[`*_.,:;!?()'"]/g, " ").split(/\s+/).filter(Boolean).length <= RESTATING_WORDS;
}

function subject(entry, inCard, said = null) {
  const out = [];
  if (entry.command != null) {
    // the subject is what runs: always shown (the agent's description, when it only restates it, as the tooltip)
    out.push(h("pre", { class: "acp-pre acp-perm-command", title: said }, h("span", { class: "acp-muted" }, "$ "), text(entry.command)));
    if (entry.cwd) out.push(h("div", { class: "acp-muted acp-perm-cwd" }, `in ${text(entry.cwd)}`));
  } else if (!inCard && entry.tool_call_id) {
    out.push(h("div", { class: "acp-muted" }, "for tool call ", h("code", null, text(entry.tool_call_id))));
  } else if (!inCard && entry.subject_type && entry.subject_type !== "tool_call") {
    out.push(h("div", { class: "acp-muted" }, `subject: ${text(entry.subject_type)}`));
  }
  return out;
}

/** What the request's subject emptied of its card (Claude's plan mode: the plan), kept in sight. */
function shownBefore(shown) {
  if (!shown || typeof shown !== "object") return null;
  const items = Array.isArray(shown.items) ? shown.items : [];
  const body = items.map((item) => item && item.type === "content"
    ? h("div", { class: "acp-item-content" }, renderBlock(item.block))
    : renderRaw(text(item && (item.label || item.type)) || "item", item && item.raw !== undefined ? item.raw : item, "acp-item-other"));
  if ("raw_input" in shown) body.push(jsonFold("Input", shown.raw_input, "acp-json acp-raw-input"));
  if (!body.length) return null;
  return h("details", { class: "acp-perm-shown", open: true },
    h("summary", { class: "acp-muted" }, "As shown before this request (its subject emptied the card)"), ...body);
}

function buttons(key, entry, ctx, outcome, pending) {
  const options = Array.isArray(entry.options) ? entry.options : [];
  const chosen = outcome && outcome.outcome === "selected" ? outcome.optionId : null;
  const locked = outcome != null || pending != null || entry.actionable === false;
  const row = h("div", { class: "acp-perm-options" });
  for (const opt of options) {
    if (!opt || typeof opt !== "object") continue;
    const kind = KIND_CLASS[opt.kind] || "neutral";
    const btn = h("button", { class: `acp-btn acp-opt acp-opt-${kind}`, type: "button", disabled: locked,
      title: text(opt.kind), dataset: { optionId: text(opt.id), kind: text(opt.kind) } }, text(opt.name) || text(opt.id));
    if (chosen != null && opt.id === chosen) mark(btn, "acp-opt-chosen");
    if (pending != null && opt.id === pending) mark(btn, "acp-opt-pending");
    btn.addEventListener("click", () => choose(key, entry, ctx, opt.id, row, btn));
    row.append(btn);
  }
  return row;
}

function mark(btn, cls) {
  btn.classList.add(cls);
  btn.setAttribute("aria-pressed", "true");
  if (cls === "acp-opt-pending") btn.prepend(h("span", { class: "acp-spinner" }));
}

function choose(key, entry, ctx, optionId, row, btn) {
  if (ctx.ui.pending.has(key) || entry.outcome || entry.actionable === false) return;
  ctx.ui.pending.set(key, optionId);
  for (const b of row.querySelectorAll("button")) b.disabled = true;
  mark(btn, "acp-opt-pending");
  const block = row.closest(".acp-permission");
  if (block) {
    block.classList.replace("acp-perm-open", "acp-perm-sent");
    block.dataset.state = "sent";
  }
  ctx.send({ type: "select", key: permissionId(key, entry), option: optionId });
}

function outcomeNote(entry, outcome) {
  if (!outcome) return null;
  if (outcome.outcome === "selected") {
    const opt = (entry.options || []).find((o) => o && o.id === outcome.optionId);
    const by = BY[entry.decided_by];
    return h("div", { class: "acp-perm-outcome" }, "Selected: ", h("strong", null, text(opt ? opt.name : outcome.optionId)),
      ...(by ? [h("span", { class: "acp-muted acp-perm-by", dataset: { by: entry.decided_by } }, ` (${by})`)] : []));
  }
  if (outcome.outcome === "cancelled") {
    const why = entry.too_late ? h("span", { class: "acp-muted acp-perm-too-late" }, ` (${text(entry.too_late)})`) : null;
    return h("div", { class: "acp-perm-outcome acp-perm-cancelled" }, "Cancelled", why);
  }
  return h("div", { class: "acp-perm-outcome" }, `Outcome: ${text(outcome.outcome)}`);
}
