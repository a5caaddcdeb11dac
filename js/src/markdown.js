// Markdown → sanitised DOM. markdown-it with raw HTML off, links limited to http/https/mailto,
// images shown as links (nothing is fetched), fenced code highlighted; then DOMPurify; then a
// Copy button beside each code block (our own element, added after sanitising).
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
  el.append(withCopyButtons(purifyMarkdown(html)));
  return el;
}

/** One line of markdown rendered inline into a `span` (sanitised; links shown as their text: the
 * line may sit inside a button), as a turn's prompt looks in its view. */
export function renderInlineMarkdown(src, cls = "acp-md-inline") {
  const el = h("span", { class: cls });
  if (typeof src !== "string" || !src) return el;
  let html;
  try {
    html = parser().renderInline(src.slice(0, MAX_MARKDOWN));
  } catch {
    el.textContent = src;
    return el;
  }
  el.append(purifyMarkdown(html));
  for (const a of el.querySelectorAll("a")) a.replaceWith(h("span", { class: "acp-md-link" }, a.textContent));
  return el;
}

const COPIED_FOR = 1500; // ms the button says "Copied"

/** Each `pre` (a code block) of sanitised markdown, wrapped with a Copy button for its text. */
function withCopyButtons(fragment) {
  for (const pre of fragment.querySelectorAll("pre")) {
    const button = h("button", { type: "button", class: "acp-copy", title: "Copy this code", text: "Copy" });
    button.addEventListener("click", (e) => {
      e.stopPropagation();
      copyCode(button, pre);
    });
    const box = h("div", { class: "acp-codebox" });
    pre.replaceWith(box);
    box.append(button, pre);
  }
  return fragment;
}

async function copyCode(button, pre) {
  const code = pre.querySelector("code") || pre;
  const ok = await copyText((code.textContent || "").replace(/\n$/, "")); // as `%acp cell` copies it
  button.textContent = ok ? "Copied" : "Copy failed";
  button.classList.toggle("acp-copied", ok);
  clearTimeout(button._acpReset);
  button._acpReset = setTimeout(() => {
    button.textContent = "Copy";
    button.classList.remove("acp-copied");
  }, COPIED_FOR);
}

/** Put `text` on the clipboard: the async Clipboard API, else a hidden textarea and execCommand. */
export async function copyText(text) {
  if (navigator.clipboard && window.isSecureContext) {
    try {
      await navigator.clipboard.writeText(text);
      return true;
    } catch {
      // denied or unfocused: try the old way
    }
  }
  const area = h("textarea", { class: "acp-copy-area", readonly: true });
  area.value = text;
  document.body.append(area);
  area.select();
  let ok = false;
  try {
    ok = document.execCommand("copy");
  } catch {
    ok = false;
  }
  area.remove();
  return ok;
}
