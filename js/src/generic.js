// Generic views: raw JSON items and updates, notices.
import { icon } from "./icons.js";
import { h, jsonFold, prettyJson, text } from "./util.js";

/** A labelled raw-JSON block (shown open, as text) for an unknown item or update. */
export function renderRaw(label, raw, cls = "acp-other") {
  const pre = h("pre", { class: "acp-pre acp-raw-json", text: prettyJson(raw) });
  return h("div", { class: cls }, h("div", { class: "acp-label" }, label), pre);
}

/** An `other` entry: an update the view has no dedicated display for. */
export function renderOtherEntry(entry) {
  const d = jsonFold(h("span", null, "Update ", h("code", null, text(entry.update_kind) || "unknown")), entry.raw);
  d.classList.add("acp-entry-other");
  return d;
}

const SEVERITY = { error: "error", warning: "warn", warn: "warn" };

/** A `notice` entry: severity, title and the raw data folded. */
export function renderNotice(entry) {
  const sev = SEVERITY[entry.severity] || "info";
  const el = h("div", { class: `acp-notice acp-sev-${sev}` });
  el.append(icon(sev === "info" ? "other" : "warn"), h("span", { class: "acp-notice-title" }, text(entry.title) || "Notice"));
  if (entry.raw !== undefined && entry.raw !== null) el.append(jsonFold("details", entry.raw, "acp-json acp-notice-raw"));
  return el;
}
