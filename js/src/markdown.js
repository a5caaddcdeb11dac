// Markdown → sanitised DOM. markdown-it with raw HTML off, links limited to http/https/mailto,
// images shown as links (nothing is fetched), fenced code highlighted; then DOMPurify.
import MarkdownIt from "markdown-it";
import { highlightHtml, knownLanguage } from "./hl.js";
import { isHttpUrl, isLinkUrl, purifyMarkdown } from "./sanitize.js";
import { h } from "./util.js";

const MAX_MARKDOWN = 300000;

let md;
function parser() {
  if (md) return md;
  md = new MarkdownIt({ html: false, linkify: true, breaks: true, typographer: false, highlight: fence });
  md.linkify.set({ fuzzyLink: false, fuzzyEmail: false });
  md.validateLink = isLinkUrl;
  md.renderer.rules.image = imageAsLink;
  return md;
}

function fence(code, lang) {
  const language = knownLanguage((lang || "").split(/\s/)[0]);
  return language ? highlightHtml(code, language) || "" : "";
}

function imageAsLink(tokens, idx) {
  const token = tokens[idx];
  const src = token.attrGet("src");
  const esc = md.utils.escapeHtml;
  const label = `[image: ${token.content || src || ""}]`;
  if (!isHttpUrl(src)) return esc(label);
  return `<a href="${esc(src)}">${esc(label)}</a>`;
}

/** Render markdown source into a `div.acp-md` (sanitised; huge input shown as plain text). */
export function renderMarkdown(src, cls = "acp-md") {
  const el = h("div", { class: cls });
  if (typeof src !== "string" || !src) return el;
  if (src.length > MAX_MARKDOWN) {
    el.append(h("pre", { class: "acp-pre", text: src }));
    return el;
  }
  let html;
  try {
    html = parser().render(src);
  } catch {
    el.append(h("pre", { class: "acp-pre", text: src }));
    return el;
  }
  el.append(purifyMarkdown(html));
  return el;
}
