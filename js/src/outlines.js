// The agent's plain stdout lines (login URLs, "Enter the authorization code:" prompts): each line
// whole, as text nodes, with http(s) URLs as links. Nothing here parses HTML.
import { isHttpUrl } from "./sanitize.js";
import { h, text } from "./util.js";

const URL_RE = /\bhttps?:\/\/[^\s<>"'`\u0000-\u001f\u007f]+/gi;
const TRAILING = /[.,;:!?'"*]+$/;
// ANSI: CSI sequences, OSC sequences (terminated by BEL or ST), other two-byte escapes.
const ANSI = /\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)?|\u001b[@-Z\\-_]/g;
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f]/g;

/** A line as it would read on a terminal: escapes and controls gone, the last `\r` rewrite kept. */
export function plainLine(line) {
  const s = text(line).replace(/\r+$/, "");
  return s.slice(s.lastIndexOf("\r") + 1).replace(ANSI, "").replace(CONTROL, "");
}

/** `url` without trailing punctuation and without an unmatched closing bracket. */
function trimUrl(url) {
  let u = url.replace(TRAILING, "");
  for (const [open, close] of [["(", ")"], ["[", "]"], ["{", "}"]]) {
    while (u.endsWith(close) && u.split(close).length > u.split(open).length) u = u.slice(0, -1).replace(TRAILING, "");
  }
  return u;
}

/** Text and link nodes for one line: links only for absolute http(s) URLs, opened in a new tab. */
export function linkified(line) {
  const s = plainLine(line);
  const out = [];
  let at = 0;
  for (const m of s.matchAll(URL_RE)) {
    const url = trimUrl(m[0]);
    if (!isHttpUrl(url)) continue;
    if (m.index > at) out.push(s.slice(at, m.index));
    out.push(h("a", { class: "acp-link", href: url, target: "_blank", rel: "noopener noreferrer" }, url));
    at = m.index + url.length;
  }
  if (at < s.length) out.push(s.slice(at));
  return out;
}

/** The lines (and the unterminated prompt line, marked) as one block. */
export function outputLines(lines, partial) {
  const rows = lines.map((l) => h("div", { class: "acp-out-line" }, linkified(l)));
  if (partial != null) {
    rows.push(h("div", { class: "acp-out-line acp-out-partial", title: "the agent is waiting for input" }, linkified(partial)));
  }
  return h("div", { class: "acp-pre acp-stdout" }, rows);
}
