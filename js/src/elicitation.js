// An elicitation (the agent asks the user): a form, or a URL to consent to. The card names who asks;
// the message, titles and descriptions are plain text (no markdown: no URL in them is clickable).
// A form: every value reviewed and changeable, checked here before Accept (the error next to its
// field), checked again by the kernel (its errors come back and show the same way); Decline and
// Cancel always there. A URL: shown whole as text with its registrable domain highlighted and the
// kernel's warnings; nothing loads it (no link, no prefetch) until the user clicks Open, which
// opens only http(s) in a new top-level tab without opener or referrer, and says consent.
// A saved view's card (`saved`) is inert: its URL is only scheme://host/path.
import { BadJson, fieldControl } from "./elicitform.js";
import { validate } from "./elicitvalid.js";
import { icon } from "./icons.js";
import { h, text } from "./util.js";

const BY = { policy: "by policy", handler: "by handler", timeout: "timed out", withdrawn: "withdrawn by the agent", user: null };
const STATUS = { accepted: "Accepted", declined: "Declined", cancelled: "Cancelled", waiting: "Opened — waiting for the agent", completed: "Completed (the agent said so)", dismissed: "Dismissed" };

/** The id the kernel knows this elicitation by. */
export function elicitationId(key, entry) {
  return typeof entry.key === "string" ? entry.key : key.replace(/^elicitation:/, "");
}

/** Per-view memory of the cards: drafts (edited values), sent actions, the kernel's errors. */
function memory(ctx) {
  ctx.ui.elicit ??= { drafts: new Map(), sent: new Map(), errors: new Map() };
  return ctx.ui.elicit;
}

/** An elicitation card. `inCard`: drawn inside its tool call's card. */
export function renderElicitation(key, entry, ctx, inCard) {
  const mem = memory(ctx);
  const answered = entry.outcome && typeof entry.outcome === "object";
  if (answered) mem.sent.delete(key);
  const sent = answered ? null : mem.sent.get(key);
  const state = answered ? text(entry.status) || "answered" : entry.saved ? "saved" : sent ? "sent" : "open";
  const el = h("div", { class: `acp-elicitation acp-el-state-${state}${inCard ? " acp-el-in-card" : ""}`,
    dataset: { key, state, mode: text(entry.mode) } });
  el.append(head(entry), ...asker(entry, inCard));
  if (entry.message) el.append(h("div", { class: "acp-el-message" }, text(entry.message)));
  if (entry.mode === "url") el.append(...urlPart(key, entry, ctx, state));
  else el.append(...formPart(key, entry, ctx, state));
  return el;
}

function head(entry) {
  const title = entry.mode === "url" ? "The agent asks you to open a page" : text(entry.title) || "The agent asks you";
  return h("div", { class: "acp-el-head" }, icon("warn"), h("span", { class: "acp-el-title" }, title));
}

function asker(entry, inCard) {
  const out = [];
  const who = entry.agent ? h("strong", null, text(entry.agent)) : "the agent";
  const sub = entry.subagent != null ? [" · subagent ", h("strong", { class: "acp-el-subagent" }, text(entry.subagent))] : [];
  const scope = entry.scope_request && typeof entry.scope_request === "object"
    ? [" · while ", h("code", null, text(entry.scope_request.method))] : [];
  out.push(h("div", { class: "acp-el-asker acp-muted" }, "asked by ", who, ...sub, ...scope));
  if (!inCard && entry.tool_call_id) out.push(h("div", { class: "acp-muted" }, "for tool call ", h("code", null, text(entry.tool_call_id))));
  if (entry.title && entry.mode === "url") out.push(h("div", { class: "acp-el-subtitle" }, text(entry.title)));
  if (entry.description) out.push(h("div", { class: "acp-el-description" }, text(entry.description)));
  return out;
}

// -- forms -----------------------------------------------------------------------------------------
function formPart(key, entry, ctx, state) {
  const mem = memory(ctx);
  const fields = Array.isArray(entry.fields) ? entry.fields : [];
  if (state !== "open" && state !== "sent" && state !== "saved") return [answer(entry, fields)];
  const draft = mem.drafts.get(key) ?? mem.drafts.set(key, {}).get(key);
  const locked = state !== "open" || entry.actionable === false;
  const controls = fields.map((f) => [f, fieldControl(f, draft, locked)]);
  const box = h("div", { class: "acp-el-fields" }, controls.map(([, c]) => c.el));
  showErrors(controls, mem.errors.get(key) || {});
  const out = [box];
  if (entry.saved) out.push(h("div", { class: "acp-el-note acp-muted" }, "Pending when saved: answer it in the live notebook."));
  const accept = () => {
    const values = readAll(controls);
    const errors = values instanceof Errors ? values.errors : validate(fields, values);
    mem.errors.set(key, errors);
    if (!showErrors(controls, errors)) send(key, entry, ctx, "accept", values);
  };
  out.push(buttons(key, entry, ctx, locked, [["Accept", "accept", accept], ["Decline", "decline"], ["Cancel", "cancel"]]));
  return out;
}

class Errors {
  constructor(errors) {
    this.errors = errors;
  }
}

function readAll(controls) {
  const values = {};
  const bad = {};
  for (const [f, c] of controls) {
    const value = c.read();
    if (value instanceof BadJson) bad[f.name] = `not JSON: ${value.message}`;
    else if (value !== undefined) values[f.name] = value;
  }
  return Object.keys(bad).length ? new Errors(bad) : values;
}

/** Show each field's problem next to it (the others cleared); true when there is one. */
function showErrors(controls, errors) {
  for (const [f, c] of controls) c.setError(errors[f.name]);
  return controls.some(([f]) => errors[f.name]);
}

function answer(entry, fields) {
  const values = entry.outcome && entry.outcome.content && typeof entry.outcome.content === "object" ? entry.outcome.content : null;
  const el = outcomeLine(entry);
  if (!values) return el;
  const titles = new Map(fields.map((f) => [f.name, text(f.title) || text(f.name)]));
  const shown = entry.values_text && typeof entry.values_text === "object" ? entry.values_text : {};
  const list = h("div", { class: "acp-el-values" });
  for (const [name, value] of Object.entries(values)) {
    const said = typeof shown[name] === "string" ? shown[name] : Array.isArray(value) ? value.map(text).join(", ") : text(value);
    list.append(h("div", { class: "acp-el-value", dataset: { field: name } },
      h("span", { class: "acp-el-value-name" }, titles.get(name) ?? name), h("span", { class: "acp-el-value-text" }, said)));
  }
  return h("div", null, el, list);
}

function outcomeLine(entry) {
  const by = BY[entry.decided_by];
  const why = entry.too_late ? ` (${text(entry.too_late)})` : by ? ` (${by})` : "";
  return h("div", { class: "acp-el-outcome", dataset: { action: text(entry.outcome && entry.outcome.action) } },
    STATUS[entry.status] || `Answered: ${text(entry.outcome && entry.outcome.action)}`, h("span", { class: "acp-muted" }, why));
}

// -- URLs ------------------------------------------------------------------------------------------
function urlPart(key, entry, ctx, state) {
  const view = entry.url_view && typeof entry.url_view === "object" ? entry.url_view : {};
  const out = [urlText(text(entry.url), view)];
  if (view.ascii_host && view.host && view.ascii_host !== view.host) {
    out.push(h("div", { class: "acp-el-host acp-muted" }, "host as sent: ", h("code", null, text(view.ascii_host))));
  }
  const warnings = Array.isArray(view.warnings) ? view.warnings : [];
  if (warnings.length) out.push(h("ul", { class: "acp-el-warnings" }, warnings.map((w) => h("li", null, text(w)))));
  if (state === "waiting") out.push(outcomeLine(entry), buttons(key, entry, ctx, false, [["Dismiss", "dismiss"]]));
  else if (state !== "open" && state !== "sent" && state !== "saved") out.push(outcomeLine(entry));
  else {
    if (entry.saved) out.push(h("div", { class: "acp-el-note acp-muted" }, "Pending when saved: answer it in the live notebook."));
    const locked = state !== "open" || entry.actionable === false;
    const open = openable(entry.url, view) ? () => openThenConsent(key, entry, ctx) : null;
    out.push(buttons(key, entry, ctx, locked, [["Open", "accept", open], ["Decline", "decline"], ["Cancel", "cancel"]]));
  }
  return out;
}

/** The URL as text, its registrable domain (within the host) highlighted. */
function urlText(url, view) {
  const el = h("div", { class: "acp-el-url", translate: "no" });
  const domain = text(view.registrable_domain).toLowerCase();
  const span = hostSpan(url);
  const host = span ? url.slice(span[0], span[1]).toLowerCase() : "";
  const at = domain && host.endsWith(domain) ? span[1] - domain.length : -1;
  if (at < 0) el.append(url);
  else el.append(url.slice(0, at), h("mark", { class: "acp-el-domain" }, url.slice(at, span[1])), url.slice(span[1]));
  return el;
}

/** Where the host is in `url`: after `//` and any user info, up to a port, path, query or fragment. */
function hostSpan(url) {
  const slashes = url.indexOf("//");
  if (slashes < 0) return null;
  const start = slashes + 2;
  const rest = url.slice(start);
  const end = start + (rest.search(/[/?#\\]/) < 0 ? rest.length : rest.search(/[/?#\\]/));
  const hostStart = url.lastIndexOf("@", end - 1) >= start ? url.lastIndexOf("@", end - 1) + 1 : start;
  const port = url.slice(hostStart, end).search(/:\d*$/);
  return [hostStart, port < 0 || url[hostStart] === "[" ? end : hostStart + port];
}

/** Only http(s) URLs with a host open (the kernel's word and the page's own parse agree). */
export function openable(url, view) {
  if (typeof url !== "string" || !view.openable) return false;
  try {
    const parsed = new URL(url);
    return (parsed.protocol === "https:" || parsed.protocol === "http:") && !!parsed.hostname;
  } catch {
    return false;
  }
}

function openThenConsent(key, entry, ctx) {
  window.open(entry.url, "_blank", "noopener,noreferrer");
  send(key, entry, ctx, "accept");
}

// -- buttons ---------------------------------------------------------------------------------------
function buttons(key, entry, ctx, locked, specs) {
  const row = h("div", { class: "acp-el-actions" });
  const sent = memory(ctx).sent.get(key);
  for (const [label, action, run] of specs) {
    const disabled = locked || entry.saved || (action === "accept" && run === null);
    const btn = h("button", { class: `acp-btn acp-el-btn acp-el-${action}`, type: "button", disabled, dataset: { action } }, label);
    if (sent === action) btn.prepend(h("span", { class: "acp-spinner" }));
    btn.addEventListener("click", () => (run ? run() : send(key, entry, ctx, action)));
    row.append(btn);
  }
  return row;
}

function send(key, entry, ctx, action, values) {
  const mem = memory(ctx);
  if (mem.sent.has(key) && action !== "dismiss") return;
  if (action !== "dismiss") mem.sent.set(key, action);
  const msg = { type: "elicitation", key: elicitationId(key, entry), action };
  if (values !== undefined) msg.values = JSON.parse(JSON.stringify(values, (_k, v) => (typeof v === "bigint" ? v.toString() : v)));
  ctx.send(msg);
  ctx.redraw?.(key);
}

/** The kernel refused the values (its own check): show its errors next to the fields. */
export function kernelRefused(ctx, key, errors) {
  const mem = memory(ctx);
  mem.sent.delete(key);
  mem.errors.set(key, errors && typeof errors === "object" ? errors : {});
}
