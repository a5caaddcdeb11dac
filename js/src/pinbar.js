// A view showing a past state (pinned from the X-ray) or a replay (WIRE.md "The X-ray": `pinned`,
// `position`): a bar above the entries says which, with "Back to live", and the entries' buttons
// are off (class `acp-readonly` on the view). A view extension, fed each patch's X-ray meta.
import { h } from "./util.js";

export class PinBar {
  /** `root`: the view's element; `list`: the entries' element (the bar goes above it); `unpin()`. */
  constructor(root, list, unpin) {
    this.root = root;
    this.list = list;
    this.unpin = unpin;
    this.el = h("div", { class: "acp-pinbar", hidden: true });
  }

  onPatch(p) {
    const meta = p.xray;
    if (!meta || typeof meta !== "object") return;
    if (!this.el.parentNode) this.list.before(this.el);
    const pinned = meta.pinned;
    this.root.classList.toggle("acp-readonly", pinned != null || typeof meta.position === "number" || !!p.xray_data);
    this.el.hidden = pinned == null;
    if (pinned == null) return;
    const back = h("button", { type: "button", class: "acp-btn acp-btn-small", on: { click: () => this.unpin().catch(() => {}) } }, "Back to live");
    this.el.replaceChildren(h("span", null, `The state right after message #${pinned} (buttons are off).`), " ", back);
  }
}
