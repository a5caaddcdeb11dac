// A subagent's card (WIRE.md "Subagents"): its title, description, run state, elapsed time,
// tool-call count and Cancel (where the child allows it), and a body holding the child's own
// entries — a slot list the entry list fills with the entries keyed under this card. The card is
// drawn once and updated in place, so the child's tree (terminals included) survives its updates.
// It opens itself when a request of the child (or of a subagent below it) starts waiting.
import { icon } from "./icons.js";
import { fill, fmtCount, fmtElapsed, fold, h, text } from "./util.js";

const STATE_LABEL = { running: "running", requires_action: "requires action", idle: "idle", unknown: "state unknown" };
const STATE_CLASS = { running: "acp-state-running", requires_action: "acp-state-action", idle: "acp-state-idle" };

export class SubagentCard {
  /** `list`: the slot list of the child's entries (the entry list owns it). */
  constructor(key, ctx, list) {
    this.key = key;
    this.ctx = ctx;
    this.pending = 0;
    this.head = h("div", { class: "acp-sub-head" });
    this.about = h("div", { class: "acp-sub-about acp-muted" });
    this.problems = h("div", { class: "acp-sub-problems" });
    this.note = h("div", { class: "acp-sub-note acp-muted", hidden: true });
    this.body = h("div", { class: "acp-sub-body" }, this.note, list.el);
    this.el = h("div", { class: "acp-subagent acp-entry", dataset: { key } }, this.head, this.about, this.problems, this.body);
    this.head.addEventListener("click", (ev) => {
      if (!ev.target.closest("button, a")) this.setOpen(!this.isOpen());
    });
  }

  isOpen() {
    return this.ctx.ui.open.has(this.key);
  }

  setOpen(open) {
    if (open) this.ctx.ui.open.add(this.key);
    else this.ctx.ui.open.delete(this.key);
    this.el.classList.toggle("acp-sub-open", open);
    this.head.setAttribute("aria-expanded", String(open));
  }

  /** Draw `entry` (a new state of the card); the body is kept. */
  update(entry) {
    const pending = Number.isInteger(entry.pending) ? entry.pending : 0;
    if (pending > 0 && this.pending === 0) this.ctx.ui.open.add(this.key); // a request waits: open
    this.pending = pending;
    const state = text(entry.run_state) || "unknown";
    this.el.dataset.state = state;
    this.el.dataset.session = text(entry.id);
    this.el.classList.toggle("acp-sub-waiting", pending > 0);
    fill(this.head, headParts(entry, state, pending, this.ctx)); // (null parts: nothing, never "null")
    this.about.textContent = text(entry.description);
    this.about.hidden = !entry.description;
    fill(this.problems, problems(entry, this.key, this.ctx));
    const note = noteText(entry, state, pending);
    this.note.hidden = !note;
    this.note.textContent = note;
    this.setOpen(this.isOpen());
  }
}

/** The problems met in the subagent's own input (its session's diagnostics), folded. */
function problems(entry, key, ctx) {
  const list = Array.isArray(entry.diagnostics) ? entry.diagnostics.filter((d) => d && typeof d === "object") : [];
  const count = Number.isInteger(entry.diagnostic_count) ? entry.diagnostic_count : list.length;
  if (!count) return null;
  const rows = list.map((d) => h("li", { class: `acp-diag acp-diag-${d.level === "error" ? "error" : "warn"}` },
    h("code", null, text(d.code)), " ", h("span", null, text(d.message))));
  if (count > list.length) rows.unshift(h("li", { class: "acp-muted" }, `… ${fmtCount(count - list.length)} earlier not shown`));
  const id = `${key}#diagnostics`;
  return fold("acp-sub-diag", `Diagnostics of this subagent (${fmtCount(count)})`, h("ul", { class: "acp-diag-list" }, rows),
    ctx.ui.open.has(id), (open) => (open ? ctx.ui.open.add(id) : ctx.ui.open.delete(id)));
}

/** Why the card's tree is not all there is: no tree in this view, or a turn's cell after its end. */
function noteText(entry, state, pending) {
  if (entry.too_deep) return "Nested too deep to draw its own tree here: session.subagents holds it.";
  if (entry.tree === false) return "The subagent's own updates are not in this view.";
  if (entry.followed === false && (pending > 0 || state === "running" || state === "requires_action")) {
    return "It works on after this cell's turn ended: its later work and requests show in the whole session's view (%acp view).";
  }
  return "";
}

function headParts(entry, state, pending, ctx) {
  const title = text(entry.title).trim();
  return [
    h("span", { class: "acp-chevron", "aria-hidden": "true" }),
    icon("agent", "acp-icon acp-kind-icon"),
    h("span", { class: "acp-tag acp-sub-tag" }, "subagent"),
    h("span", { class: `acp-card-title acp-sub-title${title ? "" : " acp-fallback"}`, title: title || text(entry.id) }, title || text(entry.id)),
    h("span", { class: "acp-spacer" }),
    pending ? h("span", { class: "acp-badge acp-state-action acp-sub-pending" }, `waiting for you (${fmtCount(pending)})`) : null,
    counts(entry),
    elapsed(entry, state, ctx),
    h("span", { class: `acp-badge acp-sub-state ${STATE_CLASS[state] || "acp-state-other"}`, title: `state: ${state}` },
      state === "running" ? h("span", { class: "acp-spinner" }) : null, STATE_LABEL[state] || state),
    entry.cancellable ? cancelButton(entry, ctx) : null,
  ];
}

function counts(entry) {
  if (!Number.isInteger(entry.tool_calls)) return null;
  const n = entry.tool_calls;
  const subs = Number.isInteger(entry.subagents) && entry.subagents ? ` · ${fmtCount(entry.subagents)} subagent${entry.subagents === 1 ? "" : "s"}` : "";
  return h("span", { class: "acp-muted acp-sub-count" }, `${fmtCount(n)} tool call${n === 1 ? "" : "s"}${subs}`);
}

function elapsed(entry, state, ctx) {
  if (typeof entry.started !== "number") return null;
  const el = h("span", { class: "acp-elapsed acp-muted" });
  if (typeof entry.ended === "number") el.textContent = fmtElapsed(entry.ended - entry.started);
  else ctx.tick(el, entry.started);
  return el;
}

function cancelButton(entry, ctx) {
  const btn = h("button", { class: "acp-btn acp-btn-small acp-sub-cancel", type: "button", title: "Cancel this subagent's work" }, icon("cancel"), "Cancel");
  btn.addEventListener("click", () => {
    btn.disabled = true;
    ctx.send({ type: "cancel_subagent", session: entry.id });
  });
  return btn;
}
