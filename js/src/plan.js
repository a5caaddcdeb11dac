// Plans, by type: a checklist (`items`), sanitised markdown (`markdown`), a link to the plan's
// file (`file`: opened in JupyterLab when under the server root; the kernel never reads it), the
// raw object (any other type: the kernel sends `raw`); a removed plan is one muted line.
import { renderRaw } from "./generic.js";
import { icon } from "./icons.js";
import { renderMarkdown } from "./markdown.js";
import { isHttpUrl } from "./sanitize.js";
import { labLink } from "./toolcall.js";
import { h, text } from "./util.js";

const PRIO = new Set(["high", "medium", "low"]);
const MARK = { completed: "✓", in_progress: "◐", pending: "○" };

/** A plan entry, drawn by its type. */
export function renderPlan(key, entry, ctx) {
  const type = typeof entry.type === "string" ? entry.type : "items";
  const el = h("div", { class: `acp-plan acp-plan-type-${type.replace(/[^a-z_-]/gi, "")}`, dataset: { key, type } });
  if (entry.removed) {
    el.classList.add("acp-plan-removed");
    el.append(h("div", { class: "acp-plan-head acp-muted" }, icon("plan"), h("span", null, "Plan removed")));
    return el;
  }
  if (type === "markdown") el.append(head(planName(entry, type)), renderMarkdown(text(entry.markdown), "acp-md acp-plan-md"));
  else if (type === "file") el.append(head(planName(entry, type)), fileLink(entry, ctx));
  else if (entry.raw !== undefined && type !== "items") el.append(renderRaw(`Plan (${text(type)})`, entry.raw, "acp-plan-raw"));
  else el.append(...checklist(entry)); // `items` (and the entries of an older saved view)
  return el;
}

const NAME_CHARS = 80;

/** A plan's name, from its content: its first step, its markdown's first line, its file's name. */
export function planName(entry, type) {
  let name = "";
  if (type === "markdown") name = text(entry.markdown).split("\n").map(mdLine).find(Boolean) || "";
  else if (type === "file") name = text(entry.rel || entry.path || entry.uri).split(/[\\/]/).filter(Boolean).pop() || "";
  else {
    const items = Array.isArray(entry.entries) ? entry.entries : [];
    const open = items.find((e) => e && e.status !== "completed") || items[0];
    name = text(open && open.content).trim();
  }
  if (!name) return "Plan";
  return `Plan: ${name.length > NAME_CHARS ? `${name.slice(0, NAME_CHARS - 1)}…` : name}`;
}

/** A markdown line as plain words: no heading marks, list bullets, emphasis or code ticks. */
function mdLine(line) {
  return line.replace(/^\s{0,3}(#{1,6}\s+|[-*+]\s+|\d+[.)]\s+|>\s*)/, "").replace(/[*_`~]+/g, "").trim();
}

function head(title, ...more) {
  return h("div", { class: "acp-plan-head" }, icon("plan"), h("span", { class: "acp-plan-name" }, title), ...more);
}

function checklist(entry) {
  const items = Array.isArray(entry.entries) ? entry.entries : [];
  const done = items.filter((e) => e && e.status === "completed").length;
  return [head(planName(entry, "items"), h("span", { class: "acp-muted" }, `${done}/${items.length}`)), h("ul", { class: "acp-plan-list" }, items.map(renderItem))];
}

/** A file plan: its URI as a link — JupyterLab opens a file under the server root; http(s) opens in a tab. */
function fileLink(entry, ctx) {
  const uri = text(entry.uri);
  const row = h("div", { class: "acp-plan-file" }, h("span", { class: "acp-muted" }, "in "));
  if (ctx && ctx.isLab() && typeof entry.rel === "string" && entry.rel) row.append(labLink(entry.rel, entry.rel, entry.path));
  else if (isHttpUrl(uri)) row.append(h("a", { class: "acp-plan-uri", href: uri, target: "_blank", rel: "noopener noreferrer" }, uri));
  else row.append(h("code", { class: "acp-plan-uri", title: uri }, uri || "(no uri)"));
  return row;
}

function renderItem(item) {
  const status = item && typeof item.status === "string" ? item.status : "pending";
  const li = h("li", { class: `acp-plan-item acp-plan-${MARK[status] ? status : "other"}`, dataset: { status } });
  li.append(h("span", { class: "acp-plan-mark", title: status }, MARK[status] || "•"));
  li.append(h("span", { class: "acp-plan-text" }, text(item && item.content)));
  const prio = item && item.priority;
  if (prio) li.append(h("span", { class: `acp-tag acp-prio-${PRIO.has(prio) ? prio : "other"}` }, text(prio)));
  if (!MARK[status]) li.append(h("span", { class: "acp-tag" }, status));
  return li;
}
