// The client's own notes on a card (`entry.notes`, WIRE.md): code the agent ran in the notebook
// kernel through the `notebook` MCP server, with what it printed, returned, raised and drew; and
// that the agent exited before it finished the call (`agent_exited`).
import { highlightHtml } from "./hl.js";
import { purifySpans } from "./sanitize.js";
import { h, text } from "./util.js";

const PNG = /^[A-Za-z0-9+/]+={0,2}$/;

/** The notes block of a card, or null. */
export function renderNotes(notes) {
  if (!Array.isArray(notes) || !notes.length) return null;
  const shown = notes.map((n) => (n && RENDER[n.kind] ? RENDER[n.kind](n) : null)).filter(Boolean);
  return shown.length ? h("div", { class: "acp-notes" }, shown) : null;
}

function exitNote(n) {
  return h("div", { class: "acp-note acp-note-exit" }, h("strong", null, text(n.message) || "agent exited"));
}

function runNote(n) {
  const who = n.approved_by ? `approved by ${text(n.approved_by)}` : "not approved";
  const secs = typeof n.duration === "number" ? ` · ${n.duration.toFixed(2)} s` : "";
  const head = h("div", { class: "acp-note-head" }, h("strong", null, "Ran in the notebook kernel"), h("span", { class: "acp-muted" }, ` · ${who}${secs}`));
  return h("div", { class: "acp-note acp-note-run", dataset: { ok: String(!n.error) } },
    head, code(text(n.code)),
    section("stdout", n.stdout), section("stderr", n.stderr), section("result", n.result),
    n.error ? h("pre", { class: "acp-note-error" }, text(n.error)) : null,
    (Array.isArray(n.images) ? n.images : []).filter((b) => typeof b === "string" && PNG.test(b)).map(image));
}

const RENDER = { notebook_run: runNote, agent_exited: exitNote };

function code(src) {
  const pre = h("pre", { class: "acp-note-code" });
  const html = highlightHtml(src, "python");
  const inner = h("code", { class: "hljs language-python" });
  if (html != null) inner.append(purifySpans(html));
  else inner.textContent = src;
  pre.append(inner);
  return pre;
}

function section(label, value) {
  if (typeof value !== "string" || !value) return null;
  return h("div", { class: "acp-note-out" }, h("span", { class: "acp-muted" }, label), h("pre", null, value));
}

function image(b64) {
  return h("img", { class: "acp-note-img", alt: "figure drawn by the code", src: `data:image/png;base64,${b64}` });
}
