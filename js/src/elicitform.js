// An elicitation form's fields as controls (one per `Field.to_dict()` kind), read back as values.
// Every label, title, description and option is agent text: inserted as text, never linkified.
// The user's edits live in `draft` (kept across redraws); typed numbers stay text until read:
// an integer is read into a BigInt (int64 exact), a number into a Number, bad text kept as text
// so that the validator names the problem next to the field.
import { h, text } from "./util.js";

let serial = 0;
const INPUT_MODE = { email: "email", uri: "url" };
const PLACEHOLDER = { "date-time": "2026-12-03T17:30:00Z", email: "name@example.org", uri: "https://…" };

/** The control of one field: `{el, read(), setError(message)}`; `draft` holds its edited value. */
export function fieldControl(f, draft, disabled) {
  const id = `acp-el-${++serial}`;
  const errEl = h("div", { class: "acp-el-error", role: "alert", hidden: true, dataset: { field: text(f.name) } });
  const make = MAKERS[f.kind] || unsupported;
  const control = make(f, draft, id, disabled);
  const label = h("label", { class: "acp-el-label", for: id },
    text(f.title) || text(f.name), f.required ? h("span", { class: "acp-el-req", title: "required" }, " *") : null);
  const el = h("div", { class: `acp-el-field acp-el-${text(f.kind)}`, dataset: { field: text(f.name), kind: text(f.kind) } },
    label, f.description ? h("div", { class: "acp-el-desc acp-muted" }, text(f.description)) : null,
    control.el, hints(f), errEl);
  const setError = (message) => {
    errEl.hidden = !message;
    errEl.textContent = message || "";
    el.classList.toggle("acp-el-invalid", !!message);
  };
  return { el, read: control.read, setError };
}

function initial(f, draft) {
  return Object.prototype.hasOwnProperty.call(draft, f.name) ? draft[f.name] : f.default;
}

function textInput(f, draft, id, disabled) {
  const date = f.format === "date";
  const input = h("input", { id, class: "acp-el-input", type: date ? "date" : "text", disabled, autocomplete: "off",
    inputmode: INPUT_MODE[f.format] || null, placeholder: PLACEHOLDER[f.format] || null, "data-field": text(f.name) });
  const start = initial(f, draft);
  input.value = start == null ? "" : String(start);
  input.addEventListener("input", () => (draft[f.name] = input.value));
  return { el: input, read: () => (input.value === "" ? undefined : input.value) };
}

function numberInput(f, draft, id, disabled) {
  const integer = f.kind === "integer";
  const input = h("input", { id, class: "acp-el-input acp-el-num", type: "text", disabled, autocomplete: "off",
    inputmode: integer ? "numeric" : "decimal", "data-field": text(f.name) });
  const start = initial(f, draft);
  input.value = start == null ? "" : String(start);
  input.addEventListener("input", () => (draft[f.name] = input.value));
  return { el: input, read: () => readNumber(input.value.trim(), integer) };
}

/** Typed text as the value it stands for (bad text kept: the validator names the problem). */
export function readNumber(typed, integer) {
  if (typed === "") return undefined;
  if (integer) return /^[-+]?\d+$/.test(typed) ? BigInt(typed) : typed;
  return /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(typed) ? Number(typed) : typed;
}

function checkbox(f, draft, id, disabled) {
  const input = h("input", { id, class: "acp-el-check", type: "checkbox", disabled, "data-field": text(f.name) });
  input.checked = initial(f, draft) === true;
  input.addEventListener("change", () => (draft[f.name] = input.checked));
  // an optional box nobody touched, without a default, says nothing (not "false")
  const said = () => input.checked || f.required || f.default != null || Object.prototype.hasOwnProperty.call(draft, f.name);
  return { el: h("div", { class: "acp-el-bool" }, input), read: () => (said() ? input.checked : undefined) };
}

function choices(f, draft, id, disabled) {
  const multi = f.kind === "multi_select";
  const start = initial(f, draft);
  const chosen = new Set(multi ? (Array.isArray(start) ? start : []) : start != null ? [start] : []);
  const group = h("div", { class: "acp-el-choices", role: multi ? "group" : "radiogroup", id });
  const name = `${id}-opt`;
  const boxes = [];
  const options = Array.isArray(f.options) ? f.options : [];
  const all = multi || f.required ? options : [...options, { value: null, title: "(none)" }];
  for (const o of all) {
    const box = h("input", { type: multi ? "checkbox" : "radio", name, disabled, class: "acp-el-opt",
      "data-value": o.value == null ? "" : text(o.value) });
    box.checked = o.value == null ? !chosen.size : chosen.has(o.value);
    box.addEventListener("change", () => (draft[f.name] = readChoices(boxes, multi)));
    boxes.push([box, o.value]);
    group.append(h("label", { class: "acp-el-choice" }, box, h("span", null, text(o.title ?? o.value)),
      o.description ? h("span", { class: "acp-el-desc acp-muted" }, ` — ${text(o.description)}`) : null));
  }
  return { el: group, read: () => (multi ? readMulti(f, boxes) : readChoices(boxes, false)) };
}

function readChoices(boxes, multi) {
  const picked = boxes.filter(([box, value]) => box.checked && value != null).map(([, value]) => value);
  return multi ? picked : picked.length ? picked[0] : undefined;
}

/** An optional multi-select left empty says nothing (a required one sends its empty list). */
function readMulti(f, boxes) {
  const picked = readChoices(boxes, true);
  return picked.length || f.required ? picked : undefined;
}

/** A property of a type this client does not know: its raw schema as text, a JSON value to give. */
function unsupported(f, draft, id, disabled) {
  const raw = h("pre", { class: "acp-pre acp-el-raw" }, rawText(f.raw));
  const input = h("textarea", { id, class: "acp-el-input acp-el-json", rows: 2, disabled, spellcheck: "false",
    placeholder: "a JSON value (optional unless required)", "data-field": text(f.name) });
  const start = initial(f, draft);
  input.value = typeof start === "string" && Object.prototype.hasOwnProperty.call(draft, f.name) ? start : "";
  input.addEventListener("input", () => (draft[f.name] = input.value));
  const note = h("div", { class: "acp-el-unsupported acp-muted" }, "unsupported field type: its schema is shown as given");
  return { el: h("div", null, note, raw, input), read: () => readJson(input.value) };
}

/** A JSON value typed by hand: undefined when empty; a syntax error as an `Error` to report. */
function readJson(typed) {
  if (!typed.trim()) return undefined;
  try {
    return JSON.parse(typed);
  } catch (e) {
    return new BadJson(String(e.message || e));
  }
}

/** Text of an unsupported field that is no JSON. */
export class BadJson {
  constructor(message) {
    this.message = message;
  }
}

function rawText(raw) {
  try {
    return JSON.stringify(raw, null, 2) ?? String(raw);
  } catch {
    return String(raw);
  }
}

function hints(f) {
  const out = [];
  if (f.kind === "string") {
    if (f.min_length != null || f.max_length != null) out.push(`length ${f.min_length ?? 0}–${f.max_length ?? "∞"}`);
    if (f.pattern != null) out.push(`pattern ${f.pattern}${f.pattern_problem ? ` (${f.pattern_problem})` : ""}`);
    if (f.format != null) out.push(f.format_checked ? `format ${f.format}` : `format ${f.format} (a hint, not checked)`);
  }
  if ((f.kind === "number" || f.kind === "integer") && (f.minimum != null || f.maximum != null)) {
    out.push(`${f.kind === "integer" ? "whole number " : ""}${f.minimum ?? "−∞"} … ${f.maximum ?? "∞"}`);
  }
  if (f.kind === "multi_select" && (f.min_items != null || f.max_items != null)) {
    out.push(`choose ${f.min_items ?? 0}–${f.max_items ?? "any"}`);
  }
  return out.length ? h("div", { class: "acp-el-hint acp-muted" }, out.map(text).join(" · ")) : null;
}

const MAKERS = {
  string: textInput,
  single_select: choices,
  multi_select: choices,
  number: numberInput,
  integer: numberInput,
  boolean: checkbox,
};
