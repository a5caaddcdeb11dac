// highlight.js core with a handful of common languages, and the file-extension → language map.
import hljs from "highlight.js/lib/core";
import bash from "highlight.js/lib/languages/bash";
import c from "highlight.js/lib/languages/c";
import cpp from "highlight.js/lib/languages/cpp";
import css from "highlight.js/lib/languages/css";
import diff from "highlight.js/lib/languages/diff";
import go from "highlight.js/lib/languages/go";
import ini from "highlight.js/lib/languages/ini";
import java from "highlight.js/lib/languages/java";
import javascript from "highlight.js/lib/languages/javascript";
import json from "highlight.js/lib/languages/json";
import markdown from "highlight.js/lib/languages/markdown";
import python from "highlight.js/lib/languages/python";
import rust from "highlight.js/lib/languages/rust";
import typescript from "highlight.js/lib/languages/typescript";
import xml from "highlight.js/lib/languages/xml";
import yaml from "highlight.js/lib/languages/yaml";
import { purifySpans } from "./sanitize.js";

const LANGS = { bash, c, cpp, css, diff, go, ini, java, javascript, json, markdown, python, rust, typescript, xml, yaml };
for (const [name, lang] of Object.entries(LANGS)) hljs.registerLanguage(name, lang);

const EXT = {
  py: "python", pyi: "python", js: "javascript", mjs: "javascript", cjs: "javascript", jsx: "javascript",
  ts: "typescript", tsx: "typescript", mts: "typescript", json: "json", jsonc: "json", ipynb: "json",
  sh: "bash", bash: "bash", zsh: "bash", rs: "rust", go: "go", java: "java", c: "c", h: "c",
  cc: "cpp", cpp: "cpp", cxx: "cpp", hpp: "cpp", hh: "cpp", hxx: "cpp", css: "css",
  html: "xml", htm: "xml", xml: "xml", svg: "xml", md: "markdown", markdown: "markdown",
  yml: "yaml", yaml: "yaml", toml: "ini", ini: "ini", cfg: "ini", diff: "diff", patch: "diff",
};

/** The highlight.js language for a path, or null. */
export function languageForPath(path) {
  if (typeof path !== "string") return null;
  const base = path.split(/[\\/]/).pop() || "";
  const dot = base.lastIndexOf(".");
  if (dot < 0) return null;
  return EXT[base.slice(dot + 1).toLowerCase()] || null;
}

/** A language name usable with highlight.js (aliases like "py", "sh" included), or null. */
export function knownLanguage(name) {
  if (typeof name !== "string" || !name) return null;
  const lang = hljs.getLanguage(name) ? name : EXT[name.toLowerCase()];
  return lang && hljs.getLanguage(lang) ? lang : null;
}

/** highlight.js HTML for `code` (escaped by highlight.js), or null if it cannot. */
export function highlightHtml(code, language) {
  try {
    return hljs.highlight(code, { language, ignoreIllegals: true }).value;
  } catch {
    return null;
  }
}

/** Replace every text node under `el` with highlighted, sanitised spans (keeps <ins>/<del>). */
export function highlightTextNodes(el, language) {
  const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
  const nodes = [];
  for (let n = walker.nextNode(); n; n = walker.nextNode()) nodes.push(n);
  for (const node of nodes) {
    const value = node.nodeValue;
    if (!value || !value.trim()) continue;
    const html = highlightHtml(value, language);
    if (html != null) node.replaceWith(purifySpans(html));
  }
}
