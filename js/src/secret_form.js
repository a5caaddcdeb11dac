// The SecretForm widget (its own small ESM; needs no runtime): one password input per field. The
// values leave the page once, in one custom message {type: "submit", values}, and the inputs are
// cleared at once; no value is ever put in a trait, an attribute or the console.
import css from "./secret_form.css";
import { h, text } from "./util.js";

const STYLE_ID = "acp-secret-form-style";
let serial = 0;

function injectStyle(doc) {
  if (!doc || !doc.head || doc.getElementById(STYLE_ID)) return;
  doc.head.append(h("style", { id: STYLE_ID, text: css }));
}

class Form {
  constructor(model, el) {
    this.model = model;
    this.inputs = new Map(); // field name → {input, optional}
    this.sent = false; // submitted or cancelled from this page (until the kernel says otherwise)
    this.note = "";
    this.titleEl = h("div", { class: "acp-sf-title" });
    this.fieldsEl = h("div", { class: "acp-sf-fields" });
    this.submitBtn = h("button", { class: "acp-sf-btn acp-sf-submit", type: "button" }, "Submit");
    this.cancelBtn = h("button", { class: "acp-sf-btn acp-sf-cancel", type: "button" }, "Cancel");
    this.statusEl = h("div", { class: "acp-sf-status", role: "status", "aria-live": "polite" }); // note, else status
    this.root = h("div", { class: "acp-secret-form", "data-lm-suppress-shortcuts": "true" },
      this.titleEl, this.fieldsEl, h("div", { class: "acp-sf-actions" }, this.submitBtn, this.cancelBtn), this.statusEl);
    this.submitBtn.addEventListener("click", () => this.submit());
    this.cancelBtn.addEventListener("click", () => this.cancel());
    this.onFields = () => (this.buildFields(), this.draw());
    this.onDraw = () => this.draw();
    this.onStatus = () => this.say(""); // the kernel's newer word replaces this page's note
    this.onMsg = (msg) => this.message(msg);
    model.on("change:fields", this.onFields);
    model.on("change:status", this.onStatus);
    for (const name of ["title", "phase"]) model.on(`change:${name}`, this.onDraw);
    model.on("msg:custom", this.onMsg);
    this.buildFields();
    this.draw();
    el.append(this.root);
  }

  get open() {
    return this.model.get("phase") === "open" && !this.sent;
  }

  buildFields() {
    this.clear();
    this.inputs.clear();
    const fields = Array.isArray(this.model.get("fields")) ? this.model.get("fields") : [];
    this.fieldsEl.replaceChildren(...fields.map((f) => this.field(f)));
  }

  field(f) {
    const name = text(f && f.name);
    const optional = !!(f && f.optional);
    const id = `acp-sf-${++serial}`;
    const input = h("input", {
      id, class: "acp-sf-input", type: "password", autocomplete: "off", spellcheck: "false",
      autocapitalize: "off", "data-field": name, "aria-required": optional ? null : "true",
    });
    input.addEventListener("keydown", (e) => e.key === "Enter" && (e.preventDefault(), this.submit()));
    this.inputs.set(name, { input, optional });
    const label = h("label", { for: id, class: "acp-sf-label" }, text(f && f.label) || name,
      " ", h("code", null, name), optional ? h("span", { class: "acp-sf-optional" }, " (optional)") : null);
    return h("div", { class: "acp-sf-field" }, label, input);
  }

  draw() {
    const phase = text(this.model.get("phase"));
    this.titleEl.textContent = text(this.model.get("title"));
    this.root.dataset.phase = this.sent && phase === "open" ? "sending" : phase;
    for (const { input } of this.inputs.values()) input.disabled = !this.open;
    this.submitBtn.disabled = this.cancelBtn.disabled = !this.open;
    this.statusEl.textContent = this.note || text(this.model.get("status"));
  }

  submit() {
    if (!this.open) return;
    const values = {};
    const missing = [];
    for (const [name, { input, optional }] of this.inputs) {
      if (input.value) values[name] = input.value;
      else if (!optional) missing.push(name);
    }
    if (missing.length) return this.say(`Required: ${missing.join(", ")}`);
    this.sent = true;
    this.model.send({ type: "submit", values });
    this.clear();
    this.say("submitted");
  }

  cancel() {
    if (!this.open) return;
    this.sent = true;
    this.clear();
    this.model.send({ type: "cancel" });
    this.say("cancelled");
  }

  /** The kernel refused a submission (it names fields, never values): let the user try again. */
  message(msg) {
    if (!msg || msg.type !== "rejected") return;
    this.sent = false;
    this.say(`Not accepted: ${text(msg.reason)}`);
  }

  say(note) {
    this.note = note;
    this.draw();
  }

  clear() {
    for (const { input } of this.inputs.values()) input.value = "";
  }

  destroy() {
    this.clear();
    this.model.off("change:fields", this.onFields);
    this.model.off("change:status", this.onStatus);
    for (const name of ["title", "phase"]) this.model.off(`change:${name}`, this.onDraw);
    this.model.off("msg:custom", this.onMsg);
    this.root.remove();
  }
}

export default () => ({
  render({ model, el }) {
    injectStyle(el.ownerDocument || document);
    const form = new Form(model, el);
    return () => form.destroy();
  },
});
