// The "Revert this turn" bar under the header (WIRE.md, Checkpoints): the files the turn changed,
// a preview (file list + diff against the checkpoint), confirm / cancel, refusals with their
// reason and "Revert anyway". Every path and reason from the kernel enters the DOM as text. A view
// extension: `start` asks for the view's turn, `onMessage` takes the kernel's checkpoint messages.
import { renderDiff } from "./diff.js";
import { icon } from "./icons.js";
import css from "./revert.css";
import { fill, h, text } from "./util.js";

const STYLE_ID = "acp-revert-style";
const CHANGE = { added: "added", modified: "modified", deleted: "deleted" };

export class RevertBar {
  constructor(ctx) {
    this.ctx = ctx;
    this.status = null;
    this.phase = "idle"; // idle | previewing | preview | reverting | done
    this.preview = null;
    this.outcome = null;
    this.el = h("div", { class: "acp-revert", hidden: true });
  }

  /** Ask the kernel for this view's turn (it then keeps the bar up to date). */
  start(doc) {
    if (doc && doc.head && !doc.getElementById(STYLE_ID)) doc.head.append(h("style", { id: STYLE_ID, text: css }));
    this.ctx.send({ type: "checkpoint_status" });
  }

  /** True if `msg` was one of the bar's messages. */
  onMessage(msg) {
    if (msg.type === "checkpoint") {
      if (this.status && msg.turn !== this.status.turn) this.reset();
      this.status = msg;
    } else if (msg.type === "checkpoint_preview") {
      if (this.phase !== "previewing") return true;
      this.phase = msg.error ? "done" : "preview";
      this.preview = msg.error ? null : msg;
      this.outcome = msg.error ? { error: msg.error } : null;
    } else if (msg.type === "checkpoint_reverted") {
      this.phase = "done";
      this.outcome = msg;
      this.preview = null;
    } else return false;
    this.draw();
    return true;
  }

  reset() {
    this.phase = "idle";
    this.preview = this.outcome = null;
  }

  ask(type, extra = {}) {
    this.ctx.send({ type, turn: this.status.turn, ...extra });
  }

  draw() {
    const s = this.status;
    const show = s && s.turn != null && (s.state === "ready" || s.state === "error") && (s.count || s.error || this.phase !== "idle");
    this.el.hidden = !show || (s.scope === "last" && s.busy && this.phase === "idle");
    if (this.el.hidden) return this.el.replaceChildren();
    fill(this.el, s.state === "error" ? noCheckpoint(s) : [this.summary(s), this.body()]); // body() is null when idle
  }

  summary(s) {
    const name = s.scope === "turn" ? "this turn" : `the last turn (turn ${text(s.turn)})`;
    const count = `${text(s.count)} file${s.count === 1 ? "" : "s"} changed in ${name}`;
    const late = new Set(s.background || []); // changed after the turn ended, by its background subagents
    const list = h("ul", { class: "acp-revert-files" }, (s.files || []).map((r) => fileRow(r, late.has(r.path))));
    if (s.count > (s.files || []).length) list.append(h("li", { class: "acp-muted" }, `… ${s.count - s.files.length} more`));
    const details = h("details", { class: "acp-revert-list", open: this.ctx.ui.open.has("revert:files") },
      h("summary", null, icon("file"), count), list);
    details.addEventListener("toggle", () => (details.open ? this.ctx.ui.open.add("revert:files") : this.ctx.ui.open.delete("revert:files")));
    const label = s.scope === "turn" ? "Revert this turn" : "Revert the last turn";
    const busy = this.phase === "previewing" || this.phase === "reverting";
    const btn = h("button", {
      class: "acp-btn acp-btn-small acp-revert-btn", type: "button", disabled: busy || s.busy || !s.revertible,
      title: s.busy ? "A turn is running: revert once it has ended" : !s.revertible ? "None of these files was checkpointed" : "Preview, then put these files back as they were before the turn",
      on: { click: () => this.startPreview() },
    }, label);
    const note = s.reverted ? h("span", { class: "acp-tag acp-revert-done" }, `reverted (${text(s.reverted.restored)} restored)`) : null;
    const head = h("div", { class: "acp-revert-head" }, details, note, h("span", { class: "acp-spacer" }), btn);
    return s.note ? [head, h("div", { class: "acp-muted acp-revert-note" }, text(s.note))] : head;
  }

  startPreview() {
    this.phase = "previewing";
    this.outcome = null;
    this.ask("checkpoint_preview");
    this.draw();
  }

  confirm(force) {
    this.phase = "reverting";
    this.ask("checkpoint_revert", { force });
    this.draw();
  }

  body() {
    if (this.phase === "previewing") return h("div", { class: "acp-muted acp-revert-wait" }, "Comparing with the checkpoint…");
    if (this.phase === "reverting") return h("div", { class: "acp-muted acp-revert-wait" }, "Reverting…");
    if (this.phase === "preview") return this.previewPanel(this.preview);
    if (this.phase === "done" && this.outcome) return outcomePanel(this.outcome, () => this.startPreview(), () => this.close());
    return null;
  }

  close() {
    this.reset();
    this.draw();
  }

  previewPanel(p) {
    const restored = p.restored || [], refused = p.refused || [], unchanged = p.unchanged || [];
    const forceable = refused.filter((r) => r.forceable);
    const rows = [
      ...restored.map((r) => h("li", { class: "acp-revert-will" }, h("code", null, text(r.path)), " ",
        h("span", { class: "acp-muted" }, r.action === "delete" ? "will be deleted (the turn added it)" : `will be restored (${CHANGE[r.change] || text(r.change)} by the turn)`))),
      ...refused.map(refusedRow),
      ...unchanged.map((path) => h("li", { class: "acp-muted" }, h("code", null, text(path)), " already as before the turn")),
    ];
    const panel = h("div", { class: "acp-revert-preview", role: "dialog", "aria-label": "Revert preview" },
      h("div", { class: "acp-revert-title" }, title(restored.length, forceable.length)),
      p.note ? h("div", { class: "acp-muted acp-revert-note" }, text(p.note)) : null,
      h("ul", { class: "acp-revert-plan" }, rows));
    if (p.patch) {
      panel.append(renderDiff({ files: p.files || [], patch: p.patch, v1: false }, this.ctx, `revert:${text(p.turn)}`));
      if (p.patch_cut) panel.append(h("div", { class: "acp-muted" }, "(the diff is cut; the revert covers every file listed)"));
    }
    const actions = h("div", { class: "acp-revert-actions" });
    if (restored.length) actions.append(h("button", { class: "acp-btn acp-revert-confirm", type: "button", on: { click: () => this.confirm(false) } },
      refused.length ? `Revert ${restored.length} file${restored.length === 1 ? "" : "s"}` : "Revert"));
    if (forceable.length) actions.append(h("button", { class: "acp-btn acp-btn-stop acp-revert-force", type: "button", on: { click: () => this.confirm(true) } },
      `Revert anyway (overwrite ${forceable.length} changed file${forceable.length === 1 ? "" : "s"})`));
    actions.append(h("button", { class: "acp-btn acp-revert-cancel", type: "button", on: { click: () => this.close() } }, "Cancel"));
    panel.append(actions);
    return panel;
  }
}

function title(restore, forceable) {
  const files = (n) => `${n} file${n === 1 ? "" : "s"}`;
  if (restore) return `Revert: ${files(restore)} back to the checkpoint taken before the turn`;
  if (forceable) return `Only ${files(forceable)} changed since the turn ended ${forceable === 1 ? "is" : "are"} left to revert`;
  return "Nothing to revert";
}

function fileRow(r, late) {
  return h("li", { dataset: { change: text(r.change) } }, h("span", { class: `acp-revert-change acp-revert-${text(r.change)}` }, CHANGE[r.change] || text(r.change)), " ",
    h("code", null, text(r.path)), r.revertible ? null : h("span", { class: "acp-muted" }, ` — ${text(r.reason)}`),
    late ? h("span", { class: "acp-muted acp-revert-late" }, " — after the turn ended, by a background subagent") : null);
}

function refusedRow(r) {
  return h("li", { class: "acp-revert-refused" }, icon("warn"), h("code", null, text(r.path)), " ", h("span", null, `left alone: ${text(r.reason)}`));
}

function noCheckpoint(s) {
  return h("div", { class: "acp-muted acp-revert-none" }, `No checkpoint for this turn: ${text(s.error)}`);
}

function outcomePanel(o, retry, close) {
  const el = h("div", { class: "acp-revert-outcome" });
  if (o.error) {
    el.append(h("div", { class: "acp-revert-error" }, icon("warn"), h("span", null, `Revert failed: ${text(o.error)}`)));
  } else {
    const n = (o.restored || []).length;
    el.append(h("div", { class: "acp-revert-ok" }, n ? `Reverted ${n} file${n === 1 ? "" : "s"}.` : "Nothing was reverted."));
    if ((o.refused || []).length) el.append(h("ul", { class: "acp-revert-plan" }, o.refused.map(refusedRow)));
  }
  const again = (o.refused || []).some((r) => r.forceable) || o.error;
  el.append(h("div", { class: "acp-revert-actions" },
    again ? h("button", { class: "acp-btn acp-btn-small", type: "button", on: { click: retry } }, "Preview again") : null,
    h("button", { class: "acp-btn acp-btn-small acp-revert-close", type: "button", on: { click: close } }, "Close")));
  return el;
}
