// Small DOM and formatting helpers. Agent text only ever enters the DOM as text nodes or
// attribute values set here; nothing in this module parses HTML.

const PROPS = new Set(["open", "disabled", "title", "type", "hidden", "value", "checked"]);

/** Create an element: props are attributes (plus a few properties), children text or nodes. */
export function h(tag, props, ...children) {
  const el = document.createElement(tag);
  if (props) setProps(el, props);
  append(el, children);
  return el;
}

function setProps(el, props) {
  for (const [k, v] of Object.entries(props)) {
    if (v == null || v === false) continue;
    if (k === "class") el.className = v;
    else if (k === "text") el.textContent = v;
    else if (k === "on") for (const [ev, fn] of Object.entries(v)) el.addEventListener(ev, fn);
    else if (k === "dataset") {
      for (const [dk, dv] of Object.entries(v)) if (dv != null) el.dataset[dk] = dv;
    }
    else if (PROPS.has(k)) el[k] = v;
    else el.setAttribute(k, v === true ? "" : String(v));
  }
}

/** Append children (nested arrays allowed); strings become text nodes. */
export function append(el, children) {
  for (const c of [children].flat(Infinity)) {
    if (c == null || c === false) continue;
    el.append(c instanceof Node ? c : String(c));
  }
  return el;
}

/**
 * Replace el's children (nested arrays allowed; null/false skipped, strings as text). The DOM's own
 * replaceChildren/append would show a null child as the text "null".
 */
export function fill(el, ...children) {
  el.replaceChildren();
  return append(el, children);
}

/** Any agent value as display text (objects as compact JSON). */
export function text(v) {
  if (typeof v === "string") return v;
  if (v == null) return "";
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  try {
    return JSON.stringify(v);
  } catch {
    return String(v);
  }
}

const JSON_LIMIT = 200000;

/** Pretty JSON for inspection, truncated when huge. */
export function prettyJson(v) {
  let s;
  try {
    s = JSON.stringify(v, null, 2);
  } catch {
    s = String(v);
  }
  if (s === undefined) s = String(v);
  if (s.length > JSON_LIMIT) s = s.slice(0, JSON_LIMIT) + `\n… (${s.length - JSON_LIMIT} more characters)`;
  return s;
}

/** Stable-enough signature of a JSON value, used to skip redundant re-renders. */
export function sig(v) {
  try {
    return JSON.stringify(v);
  } catch {
    return String(Math.random());
  }
}

/** "0.4s", "12s", "3m 05s", "1h 02m". */
export function fmtElapsed(sec) {
  if (!Number.isFinite(sec) || sec < 0) sec = 0;
  if (sec < 10) return `${sec.toFixed(1)}s`;
  if (sec < 60) return `${Math.floor(sec)}s`;
  const m = Math.floor(sec / 60);
  if (m < 60) return `${m}m ${String(Math.floor(sec % 60)).padStart(2, "0")}s`;
  return `${Math.floor(m / 60)}h ${String(m % 60).padStart(2, "0")}m`;
}

/** Compact number: 1234 → "1.2k", 2500000 → "2.5M". */
export function fmtCount(n) {
  if (typeof n !== "number" || !Number.isFinite(n)) return text(n);
  if (Math.abs(n) >= 1e6) return `${+(n / 1e6).toFixed(1)}M`;
  if (Math.abs(n) >= 1e3) return `${+(n / 1e3).toFixed(1)}k`;
  return String(n);
}

/** Byte count as "512 B", "1.5 KB", "2.0 MB" ("" for a missing or non-finite count, never "NaN MB"). */
export function fmtBytes(n) {
  if (typeof n !== "number" || !Number.isFinite(n)) return "";
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

/**
 * A disclosure block (toggle button + hidden body). Not <details>: Chrome keeps every closed
 * <details> (like every content-visibility:auto element) as a "display lock" and walks all of them
 * on each style update, so 2,000 cards with <details> made a one-card update O(cards).
 */
export function fold(cls, label, body, open = false, onToggle = null) {
  const toggle = h("button", { class: "acp-fold-toggle", type: "button", "aria-expanded": String(open) }, label);
  const panel = h("div", { class: "acp-fold-body", hidden: !open }, body);
  const el = h("div", { class: `acp-fold ${cls}${open ? " acp-open" : ""}` }, toggle, panel);
  toggle.addEventListener("click", () => {
    const now = toggle.getAttribute("aria-expanded") !== "true";
    toggle.setAttribute("aria-expanded", String(now));
    panel.hidden = !now;
    el.classList.toggle("acp-open", now);
    if (onToggle) onToggle(now, panel);
  });
  return el;
}

/** A folded, pretty-printed JSON view (always as text), filled when first opened. */
export function jsonFold(label, value, cls = "acp-json") {
  const pre = h("pre", { class: "acp-pre" });
  return fold(cls, label, pre, false, (open) => {
    if (open && !pre.firstChild) pre.textContent = prettyJson(value);
  });
}

/** Is the page JupyterLab (where command-linker links work)? */
export function isLab(doc = document) {
  return !!doc.querySelector(".jp-LabShell");
}

/** Turn a DataView / ArrayBuffer / typed array into a Uint8Array view (no copy). */
export function toU8(x) {
  if (!x) return new Uint8Array(0);
  if (x instanceof Uint8Array) return x;
  if (ArrayBuffer.isView(x)) return new Uint8Array(x.buffer, x.byteOffset, x.byteLength);
  if (x instanceof ArrayBuffer) return new Uint8Array(x);
  if (Array.isArray(x)) return Uint8Array.from(x);
  return new Uint8Array(0);
}

/** One Uint8Array holding `chunks` one after the other. */
export function concatBytes(chunks, size = chunks.reduce((s, c) => s + c.length, 0)) {
  if (chunks.length === 1) return chunks[0];
  const out = new Uint8Array(size);
  let o = 0;
  for (const c of chunks) {
    out.set(c, o);
    o += c.length;
  }
  return out;
}
