// A write held for review: each hunk drawn by diff2html (sanitised, highlighted) with Accept /
// Reject buttons, plus Accept all / Reject all for the undecided rest. A click sends
// {type: "review", index, decision, hunk} and locks that hunk until the kernel's next entry;
// keyboard focus moves to the next undecided hunk. Once the review is over every button is
// disabled (the pressed ones show the decisions) and its outcome is shown.
import { parse as d2hParse } from "diff2html";
import { renderHunks } from "./diff.js";
import { icon } from "./icons.js";
import { h, text } from "./util.js";

const STATUS = {
  pending: "Waiting for your review", written: "Accepted and written", partial: "Partly accepted and written",
  rejected: "Rejected: not written", cancelled: "Cancelled: not written", conflict: "Not written: the file changed on disk",
  failed: "Not written: the write failed",
};
const DECIDED = { accepted: "Accepted", rejected: "Rejected" };

/** The review block of entry `key` (a `file_write` held for review). */
export function renderReview(key, entry, ctx) {
  const hunks = Array.isArray(entry.hunks) ? entry.hunks.filter((x) => x && typeof x === "object") : [];
  const status = text(entry.status) || "pending";
  const live = entry.actionable === true;
  const el = h("div", { class: `acp-review acp-review-${live ? "open" : "closed"}`, tabindex: "-1",
    role: "group", "aria-label": `Review of the write to ${text(entry.path)}`, dataset: { status } });
  const undecided = hunks.filter((x) => x.decision == null).length;
  el.append(h("div", { class: "acp-review-head" }, icon("edit"),
    h("span", { class: "acp-review-title" }, entry.operation === "add" ? "Create " : "Write ", h("code", { title: text(entry.path) }, shortPath(entry.path, ctx.cwd))),
    h("span", { class: "acp-spacer" }),
    h("span", { class: `acp-tag acp-review-status`, dataset: { status } }, STATUS[status] || status)));
  if (entry.message) el.append(h("div", { class: `acp-review-msg acp-review-msg-${status}`, role: status === "conflict" || status === "failed" ? "alert" : null }, text(entry.message)));
  const bar = h("div", { class: "acp-review-bar" },
    h("span", { class: "acp-muted" }, `${hunks.length} hunk${hunks.length === 1 ? "" : "s"}` + (live ? `, ${undecided} undecided` : "")),
    h("span", { class: "acp-spacer" }));
  bar.append(button("Accept all", "acp-review-accept-all", `Accept all undecided hunks of ${text(entry.path)}`, !live || !undecided, () => send(key, entry, ctx, el, "accept", null)),
    button("Reject all", "acp-review-reject-all", `Reject all undecided hunks of ${text(entry.path)}`, !live || !undecided, () => send(key, entry, ctx, el, "reject", null)));
  el.append(bar);
  hunks.forEach((hunk, i) => el.append(renderHunk(key, entry, hunk, i, hunks.length, live, ctx, el)));
  refocus(key, el, ctx);
  return el;
}

function renderHunk(key, entry, hunk, i, total, live, ctx, el) {
  const decision = hunk.decision == null ? null : text(hunk.decision);
  const box = h("div", { class: "acp-review-hunk", dataset: { hunk: String(hunk.index), decision: decision || "undecided" } });
  const head = h("div", { class: "acp-review-hunk-head" }, h("span", null, `Hunk ${i + 1} of ${total}`),
    h("span", { class: "acp-add" }, `+${Number(hunk.added) || 0}`), h("span", { class: "acp-del" }, `−${Number(hunk.removed) || 0}`),
    decision ? h("span", { class: `acp-tag acp-review-decision`, dataset: { decision } }, DECIDED[decision] || decision) : null,
    h("span", { class: "acp-spacer" }));
  const where = `hunk ${i + 1} of ${total} in ${text(entry.path)}`;
  for (const [label, cls, d, state] of [["Accept", "acp-review-accept", "accept", "accepted"], ["Reject", "acp-review-reject", "reject", "rejected"]]) {
    const b = button(label, cls, `${label} ${where}`, !live, () => send(key, entry, ctx, el, d, hunk.index, box));
    b.setAttribute("aria-pressed", String(decision === state));
    head.append(b);
  }
  box.append(head, body(hunk, entry));
  return box;
}

function body(hunk, entry) {
  let parsed = [];
  try {
    parsed = typeof hunk.patch === "string" ? d2hParse(hunk.patch) : [];
  } catch {
    parsed = [];
  }
  if (!parsed.length || !parsed[0].blocks.length) return h("div", { class: "acp-diff-note acp-muted" }, entry.operation === "add" ? "An empty new file" : "No line changes");
  return renderHunks(parsed[0], "line-by-line", entry.path);
}

function button(label, cls, aria, disabled, onClick) {
  const b = h("button", { class: `acp-btn acp-btn-small ${cls}`, type: "button", disabled, "aria-label": aria }, label);
  b.addEventListener("click", onClick);
  return b;
}

/** Send one decision; lock what it decides until the kernel's answer redraws the entry. */
function send(key, entry, ctx, el, decision, hunk, box = null) {
  const scope = box || el;
  for (const b of scope.querySelectorAll("button")) b.disabled = true;
  scope.setAttribute("aria-busy", "true");
  reviewUi(ctx).set(key, hunk);
  ctx.send({ type: "review", index: entry.index, decision, hunk });
}

function reviewUi(ctx) {
  ctx.ui.reviewFocus ??= new Map(); // entry key → the hunk last decided here (focus follows it)
  return ctx.ui.reviewFocus;
}

/** After a redraw caused by a click here: focus the next undecided hunk's Accept, else the block. */
function refocus(key, el, ctx) {
  const focus = reviewUi(ctx);
  if (!focus.has(key)) return;
  focus.delete(key);
  queueMicrotask(() => {
    if (!el.isConnected) return;
    const next = el.querySelector('.acp-review-hunk[data-decision="undecided"] .acp-review-accept:not(:disabled)');
    (next || el).focus();
  });
}

function shortPath(path, cwd) {
  const p = text(path);
  const base = cwd ? text(cwd).replace(/\/+$/, "") + "/" : null;
  return base && p.startsWith(base) ? p.slice(base.length) : p;
}
