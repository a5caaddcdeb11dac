// The ReplayBar widget (its own small ESM; needs no runtime): a replay's scrubber in the session
// view's style. `position` and `playing` are set from both sides; `speed` from here; a step is a
// custom message {type: "step", by: ±1}. Every label is our own text (numbers and fixed words).
import css from "./replay_bar.css";
import { h, text } from "./util.js";

const STYLE_ID = "acp-replay-bar-style";

function injectStyle(doc) {
  if (!doc || !doc.head || doc.getElementById(STYLE_ID)) return;
  doc.head.append(h("style", { id: STYLE_ID, text: css }));
}

class Bar {
  constructor(model, el) {
    this.model = model;
    this.back = h("button", { class: "acp-rb-btn acp-rb-back", type: "button", title: "one message back", "aria-label": "one message back" }, "‹ back");
    this.play = h("button", { class: "acp-rb-btn acp-rb-play", type: "button" });
    this.forward = h("button", { class: "acp-rb-btn acp-rb-forward", type: "button", title: "one message on", "aria-label": "one message on" }, "on ›");
    this.slider = h("input", { class: "acp-rb-slider", type: "range", min: "0", step: "1", "aria-label": "message" });
    this.speed = h("select", { class: "acp-rb-speed", "aria-label": "speed" });
    this.where = h("span", { class: "acp-rb-where", role: "status" });
    this.root = h("div", { class: "acp-replay-bar", role: "group", "aria-label": "replay" },
      this.back, this.play, this.forward, this.slider, h("label", { class: "acp-rb-speed-label" }, "speed", this.speed), this.where);
    this.back.addEventListener("click", () => model.send({ type: "step", by: -1 }));
    this.forward.addEventListener("click", () => model.send({ type: "step", by: 1 }));
    this.play.addEventListener("click", () => this.set("playing", !model.get("playing")));
    this.slider.addEventListener("change", () => this.set("position", Number(this.slider.value)));
    this.speed.addEventListener("change", () => this.set("speed", this.speed.value));
    this.onChange = () => this.draw();
    for (const name of ["position", "total", "playing", "speed", "speeds", "where"]) model.on(`change:${name}`, this.onChange);
    this.draw();
    el.append(this.root);
  }

  set(name, value) {
    this.model.set(name, value);
    this.model.save_changes();
  }

  draw() {
    const m = this.model;
    const total = Number.isInteger(m.get("total")) ? m.get("total") : 0;
    const position = Number.isInteger(m.get("position")) ? m.get("position") : 0;
    const playing = !!m.get("playing");
    this.slider.max = String(total);
    if ((this.root.ownerDocument || document).activeElement !== this.slider) this.slider.value = String(position);
    this.play.textContent = playing ? "Pause" : "Play";
    this.play.setAttribute("aria-pressed", String(playing));
    this.back.disabled = position <= 0;
    this.forward.disabled = position >= total;
    const speeds = Array.isArray(m.get("speeds")) ? m.get("speeds").map(text) : [];
    if (this.speed.options.length !== speeds.length || speeds.some((s, i) => this.speed.options[i].value !== s)) {
      this.speed.replaceChildren(...speeds.map((s) => h("option", { value: s }, s)));
    }
    this.speed.value = text(m.get("speed"));
    this.where.textContent = text(m.get("where"));
  }

  destroy() {
    for (const name of ["position", "total", "playing", "speed", "speeds", "where"]) this.model.off(`change:${name}`, this.onChange);
    this.root.remove();
  }
}

export default () => ({
  render({ model, el }) {
    injectStyle(el.ownerDocument || document);
    const bar = new Bar(model, el);
    return () => bar.destroy();
  },
});
