// An elicitation form's values checked against its fields (the kernel's `Field.to_dict()`), by the
// rules of acp_notebook/protocol/elicitation_schema.py: the page checks before it sends, the kernel
// checks again. tests/fixtures/elicitation_cases.json holds both to the same answers.
//
// Values are JS values; an integer field's value may be a Number or a BigInt (typed text is read
// into a BigInt: int64 stays exact). Lengths count code points; a `pattern` is ECMA-262 with the
// `u` flag, searched unanchored, and not enforced when the kernel could not check it either.

/** The format sources the kernel checks (elicitation_schema.FORMAT_PATTERNS, ECMA-262). */
export const FORMAT_PATTERNS = {
  email: "^[a-zA-Z0-9.!#$%&'*+\\/=?^_`{|}~-]+@[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*$",
  uri: "^[A-Za-z][A-Za-z0-9+.\\-]*:[^\\s]*$",
  date: "^(\\d{4})-(\\d{2})-(\\d{2})$",
  "date-time": "^(\\d{4})-(\\d{2})-(\\d{2})[Tt](\\d{2}):(\\d{2}):(\\d{2})(?:\\.\\d+)?(?:[Zz]|[+\\-](\\d{2}):(\\d{2}))$",
};
const FORMATS = Object.fromEntries(Object.entries(FORMAT_PATTERNS).map(([k, src]) => [k, new RegExp(src, "u")]));
const INT64 = [-(2n ** 63n), 2n ** 63n - 1n];

/** `{field name: problem}` for `values` (an object); empty when they may be sent. */
export function validate(fields, values) {
  if (!values || typeof values !== "object" || Array.isArray(values)) return { "": "values must be an object" };
  const known = new Map((Array.isArray(fields) ? fields : []).map((f) => [f.name, f]));
  const errors = {};
  for (const name of Object.keys(values)) if (!known.has(name)) errors[name] = "not a field of this form";
  for (const [name, f] of known) {
    const value = Object.prototype.hasOwnProperty.call(values, name) ? values[name] : undefined;
    const problem = value == null ? (f.required ? "required" : null) : check(f, value);
    if (problem != null) errors[name] = problem;
  }
  return errors;
}

/** One value's problem, or null. */
export function check(f, value) {
  const fn = CHECKS[f.kind];
  return fn ? fn(f, value) : null; // an unsupported field: kept as given, the agent checks it
}

function checkString(f, value) {
  if (typeof value !== "string") return "must be text";
  const length = [...value].length;
  if (f.min_length != null && length < f.min_length) return `must be at least ${f.min_length} characters long`;
  if (f.max_length != null && length > f.max_length) return `must be at most ${f.max_length} characters long`;
  if (f.pattern != null && f.pattern_problem == null && !matches(f.pattern, value)) return `must match the pattern ${f.pattern}`;
  if (Object.prototype.hasOwnProperty.call(FORMATS, f.format) && !formatted(f.format, value)) return `must be a valid ${f.format}`;
  return null;
}

function matches(pattern, value) {
  let re;
  try {
    re = new RegExp(pattern, "u");
  } catch {
    return true; // cannot be checked here: the kernel's check decides
  }
  return re.test(value);
}

function formatted(fmt, value) {
  const m = FORMATS[fmt].exec(value);
  if (m == null || fmt === "email" || fmt === "uri") return m != null;
  const [year, month, day, hour, minute, second, offHour, offMinute] = m.slice(1).map((g) => (g == null ? 0 : Number(g)));
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
  if (!(month >= 1 && month <= 12 && day >= 1 && day <= days[month - 1])) return false;
  if (fmt === "date") return true;
  return hour <= 23 && minute <= 59 && second <= 60 && offHour <= 23 && offMinute <= 59;
}

function checkSelect(f, value) {
  const allowed = options(f);
  return typeof value === "string" && allowed.includes(value) ? null : `must be one of ${JSON.stringify(allowed)}`;
}

/** Whether `value` is a whole number (a BigInt, or a finite Number without a fraction). */
export function isInteger(value) {
  return typeof value === "bigint" || (typeof value === "number" && Number.isInteger(value));
}

function checkNumber(f, value) {
  const integer = f.kind === "integer";
  if (integer ? !isInteger(value) : !(typeof value === "number" && Number.isFinite(value))) {
    return integer ? "must be a whole number" : "must be a number";
  }
  if (integer && (value < INT64[0] || value > INT64[1])) return "is out of the 64-bit integer range";
  if (f.minimum != null && value < f.minimum) return `must be at least ${f.minimum}`;
  if (f.maximum != null && value > f.maximum) return `must be at most ${f.maximum}`;
  return null;
}

function checkBoolean(_f, value) {
  return typeof value === "boolean" ? null : "must be true or false";
}

function checkMulti(f, value) {
  if (!Array.isArray(value) || !value.every((v) => typeof v === "string")) return "must be a list of choices";
  const allowed = options(f);
  const unknown = value.filter((v) => !allowed.includes(v));
  if (unknown.length) return `${JSON.stringify(unknown)} not among ${JSON.stringify(allowed)}`;
  if (new Set(value).size !== value.length) return "a choice is selected twice";
  if (f.min_items != null && value.length < f.min_items) return `choose at least ${f.min_items}`;
  if (f.max_items != null && value.length > f.max_items) return `choose at most ${f.max_items}`;
  return null;
}

function options(f) {
  return (Array.isArray(f.options) ? f.options : []).map((o) => o && o.value);
}

const CHECKS = {
  string: checkString,
  single_select: checkSelect,
  number: checkNumber,
  integer: checkNumber,
  boolean: checkBoolean,
  multi_select: checkMulti,
};
