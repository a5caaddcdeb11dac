// The only way HTML enters the view: DOMPurify with a strict allow-list per source, returning
// DOM fragments. Agent text that is not markdown / diff2html / highlight.js output is never HTML.
import createDOMPurify from "dompurify";

const LINK_SCHEMES = /^(?:https?|mailto):/i;

/** Is `url` an absolute http(s) URL? */
export function isHttpUrl(url) {
  if (typeof url !== "string") return false;
  try {
    const u = new URL(url.trim());
    return u.protocol === "http:" || u.protocol === "https:";
  } catch {
    return false;
  }
}

/** Is `url` a link we allow in markdown (http, https, mailto)? */
export function isLinkUrl(url) {
  if (typeof url !== "string") return false;
  const s = url.trim();
  if (/^mailto:/i.test(s)) return true;
  return isHttpUrl(s);
}

const MD_TAGS = [
  "p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "em", "strong", "s", "del", "code", "pre",
  "blockquote", "ul", "ol", "li", "a", "table", "thead", "tbody", "tr", "th", "td", "span",
];

let mdPurifier;
function markdownPurifier() {
  if (mdPurifier) return mdPurifier;
  mdPurifier = createDOMPurify(window);
  mdPurifier.addHook("afterSanitizeAttributes", (node) => {
    if (node.tagName !== "A") return;
    const href = node.getAttribute("href");
    if (!isLinkUrl(href)) {
      node.removeAttribute("href");
      return;
    }
    node.setAttribute("target", "_blank");
    node.setAttribute("rel", "noopener noreferrer");
  });
  return mdPurifier;
}

/** Sanitise markdown-it output into a fragment (links http/https/mailto only). */
export function purifyMarkdown(html) {
  return markdownPurifier().sanitize(html, {
    ALLOWED_TAGS: MD_TAGS,
    ALLOWED_ATTR: ["href", "title", "start", "class"],
    ALLOWED_URI_REGEXP: LINK_SCHEMES,
    RETURN_DOM_FRAGMENT: true,
  });
}

let plainPurifier;
function purifier() {
  return (plainPurifier ??= createDOMPurify(window));
}

const DIFF_TAGS = ["div", "span", "table", "tbody", "tr", "td", "ins", "del"];

/** Sanitise diff2html output into a fragment: table structure and classes only. */
export function purifyDiff(html) {
  return purifier().sanitize(html, {
    ALLOWED_TAGS: DIFF_TAGS,
    ALLOWED_ATTR: ["class"],
    RETURN_DOM_FRAGMENT: true,
  });
}

/** Sanitise highlight.js output (escaped text in class-only spans) into a fragment. */
export function purifySpans(html) {
  return purifier().sanitize(html, {
    ALLOWED_TAGS: ["span"],
    ALLOWED_ATTR: ["class"],
    RETURN_DOM_FRAGMENT: true,
  });
}
