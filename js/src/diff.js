// Diffs: one section per file (operation, paths, type); hunks rendered by diff2html (unified or
// side by side, switchable), sanitised, highlighted per line, long files folded.
import { html as d2hHtml, parse as d2hParse } from "diff2html";
import { highlightTextNodes, languageForPath } from "./hl.js";
import { icon } from "./icons.js";
import { purifyDiff } from "./sanitize.js";
import { h, text } from "./util.js";

const FOLD_LINES = 80;
const MODES = { "line-by-line": "Unified", "side-by-side": "Side by side" };
const OPS = { add: "added", delete: "deleted", modify: "modified", move: "moved", copy: "copied" };

/** A diff item. `uiKey` names it in `ctx.ui` (chosen mode, unfolded files). */
export function renderDiff(item, ctx, uiKey) {
  const parsed = parsePatch(item.patch);
  const sections = matchFiles(Array.isArray(item.files) ? item.files : [], parsed);
  const el = h("div", { class: "acp-diff", dataset: { mode: mode(ctx, uiKey) } });
  const bodies = [];
  const draw = () => bodies.forEach((b) => b());
  el.append(toolbar(item, sections, ctx, uiKey, el, draw));
  sections.forEach((s, i) => {
    const body = h("div", { class: "acp-diff-body" });
    const redraw = () => body.replaceChildren(...fileBody(s, ctx, uiKey, i, redraw));
    bodies.push(redraw);
    el.append(h("div", { class: "acp-diff-file", dataset: { op: text(s.file.operation) } }, fileHead(s, ctx.cwd), body));
  });
  draw();
  return el;
}

function mode(ctx, uiKey) {
  return ctx.ui.diffMode.get(uiKey) || "line-by-line";
}

function parsePatch(patch) {
  if (typeof patch !== "string" || !patch.trim()) return [];
  try {
    return d2hParse(patch);
  } catch {
    return [];
  }
}

const norm = (p) => (typeof p === "string" ? p.replace(/^[ab]\//, "").replace(/^\/+/, "") : "");

/** Pair each declared file with its parsed patch section; unmatched patch sections follow. */
function matchFiles(files, parsed) {
  const left = new Set(parsed);
  const sections = files.map((file) => {
    const want = [norm(file.path), norm(file.old_path)].filter(Boolean);
    const hit = [...left].find((p) => want.includes(norm(p.newName)) || want.includes(norm(p.oldName)));
    if (hit) left.delete(hit);
    return { file: file && typeof file === "object" ? file : {}, parsed: hit || null };
  });
  for (const p of left) sections.push({ file: fileFromParsed(p), parsed: p });
  return sections;
}

function fileFromParsed(p) {
  const op = p.isNew ? "add" : p.isDeleted ? "delete" : p.isRename ? "move" : p.isCopy ? "copy" : "modify";
  const path = op === "delete" ? p.oldName : p.newName;
  const moved = op === "move" || op === "copy";
  return { operation: op, path, old_path: moved ? p.oldName : null, binary: !!p.isBinary, file_type: p.isBinary ? "binary" : null };
}

function toolbar(item, sections, ctx, uiKey, el, draw) {
  const added = sections.reduce((n, s) => n + (s.parsed ? s.parsed.addedLines : 0), 0);
  const deleted = sections.reduce((n, s) => n + (s.parsed ? s.parsed.deletedLines : 0), 0);
  const bar = h("div", { class: "acp-diff-bar" }, icon("edit"),
    h("span", null, `${sections.length} file${sections.length === 1 ? "" : "s"}`),
    added || deleted ? [h("span", { class: "acp-add" }, `+${added}`), h("span", { class: "acp-del" }, `−${deleted}`)] : null,
    item.v1 ? h("span", { class: "acp-tag", title: "ACP v1 diff (old/new text)" }, "v1") : null,
    h("span", { class: "acp-spacer" }));
  if (!sections.some((s) => s.parsed && s.parsed.blocks.length)) return bar;
  const seg = h("span", { class: "acp-seg", role: "group", "aria-label": "diff layout" });
  for (const [m, label] of Object.entries(MODES)) {
    const b = h("button", { class: "acp-seg-btn", type: "button", dataset: { mode: m } }, label);
    b.setAttribute("aria-pressed", String(mode(ctx, uiKey) === m));
    b.addEventListener("click", () => {
      if (mode(ctx, uiKey) === m) return;
      ctx.ui.diffMode.set(uiKey, m);
      el.dataset.mode = m;
      for (const x of seg.children) x.setAttribute("aria-pressed", String(x.dataset.mode === m));
      draw();
    });
    seg.append(b);
  }
  bar.append(seg);
  return bar;
}

/** A path relative to the session's cwd when it lies inside it (the full path stays in the tooltip). */
function shortPath(path, cwd) {
  const p = text(path);
  const base = cwd ? text(cwd).replace(/\/+$/, "") + "/" : null;
  return base && p.startsWith(base) ? p.slice(base.length) : p;
}

function fileHead({ file, parsed }, cwd) {
  const op = text(file.operation) || "modify";
  const head = h("div", { class: "acp-diff-file-head" }, h("span", { class: `acp-op acp-op-${OPS[op] ? op : "other"}` }, OPS[op] || op));
  const paired = (op === "move" || op === "copy") && file.old_path;
  head.append(h("span", { class: "acp-diff-path", title: text(file.path) },
    paired ? [h("span", { class: "acp-muted" }, shortPath(file.old_path, cwd)), " → "] : null, shortPath(file.path, cwd)));
  if (file.file_type && file.file_type !== "text") head.append(h("span", { class: "acp-tag" }, text(file.file_type)));
  if (file.mime_type) head.append(h("span", { class: "acp-muted acp-mime" }, text(file.mime_type)));
  head.append(h("span", { class: "acp-spacer" }));
  if (parsed && (parsed.addedLines || parsed.deletedLines)) {
    head.append(h("span", { class: "acp-add" }, `+${parsed.addedLines}`), h("span", { class: "acp-del" }, `−${parsed.deletedLines}`));
  }
  return head;
}

function fileBody(section, ctx, uiKey, index, redraw) {
  const foldKey = `${uiKey}#${index}`;
  const { file, parsed } = section;
  if (file.binary || file.file_type === "binary" || (parsed && parsed.isBinary)) return [note("Binary file — no text diff")];
  if (!parsed) return [note(file.file_type === "directory" || file.file_type === "symlink" ? "No text diff" : "No patch text for this file")];
  if (!parsed.blocks.length) return [note("No content changes")];
  const unfolded = ctx.ui.unfolded.has(foldKey);
  const { file: shown, hidden } = unfolded ? { file: parsed, hidden: 0 } : truncate(parsed, FOLD_LINES);
  const out = [renderHunks(shown, mode(ctx, uiKey), file.path)];
  if (hidden > 0) {
    const more = h("button", { class: "acp-btn acp-btn-link acp-diff-more", type: "button" }, `Show ${hidden} more line${hidden === 1 ? "" : "s"}`);
    more.addEventListener("click", () => {
      ctx.ui.unfolded.add(foldKey);
      redraw();
    });
    out.push(more);
  }
  return out;
}

function note(msg) {
  return h("div", { class: "acp-diff-note acp-muted" }, msg);
}

/** A copy of a parsed file keeping only its first `limit` lines; `hidden` counts the rest. */
function truncate(file, limit) {
  let left = limit;
  let total = 0;
  const blocks = [];
  for (const b of file.blocks) {
    total += b.lines.length;
    if (left <= 0) continue;
    blocks.push({ ...b, lines: b.lines.slice(0, left) });
    left -= Math.min(left, b.lines.length);
  }
  const shown = blocks.reduce((n, b) => n + b.lines.length, 0);
  return { file: { ...file, blocks }, hidden: total - shown };
}

/** diff2html HTML for one file → DOMPurify → per-line syntax highlighting. */
export function renderHunks(file, outputFormat, path) {
  const big = file.blocks.reduce((n, b) => n + b.lines.length, 0) > 2000;
  const html = d2hHtml([file], { outputFormat, drawFileList: false, matching: big ? "none" : "lines", diffStyle: "word" });
  const frag = purifyDiff(html);
  for (const head of frag.querySelectorAll(".d2h-file-header")) head.remove();
  dropLayoutWhitespace(frag);
  const language = languageForPath(text(path) || file.newName);
  if (language) for (const ctn of frag.querySelectorAll(".d2h-code-line-ctn")) highlightTextNodes(ctn, language);
  return h("div", { class: `acp-d2h acp-d2h-${outputFormat}` }, frag);
}

/** Remove the template's indentation text nodes (keeping whitespace inside code lines). */
function dropLayoutWhitespace(root) {
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  const drop = [];
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    if (/^[ \t\r\n]*$/.test(n.nodeValue) && !n.parentElement?.closest(".d2h-code-line-ctn")) drop.push(n);
  }
  for (const n of drop) n.remove();
}
