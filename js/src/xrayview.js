// The protocol X-ray beside a view's entries (WIRE.md "The X-ray"): made when the first patch or
// snapshot carries `xray`, fed each one's meta; it asks the kernel (or, in an exported page, the
// page's own data) for rows. A click on an entry of the tree (not on its controls) shows which
// messages built it. A view extension.
import { h } from "./util.js";
import { XRayPanel } from "./xray.js";
import { KernelSource, LocalSource } from "./xraysource.js";

export class XRayView {
  /** `root`: the view's element (split in two when the X-ray comes); `list`: the entries' element. */
  constructor(root, list, send) {
    this.root = root;
    this.list = list;
    this.send = send;
    this.panel = null;
  }

  onPatch(p) {
    if (!p.xray || typeof p.xray !== "object") return;
    if (!this.panel) this.open(p.xray_data);
    this.panel.setMeta(p.xray);
  }

  onMessage(msg) {
    if (msg.type !== "xray_reply") return false;
    this.panel?.source.receive?.(msg);
    return true;
  }

  /** Back to the live state (the pin bar's button). */
  unpin() {
    return this.panel ? this.panel.source.unpin() : Promise.resolve();
  }

  open(data) {
    const source = data ? new LocalSource(data) : new KernelSource(this.send);
    this.panel = new XRayPanel(source);
    const tree = h("div", { class: "acp-tree" }, this.list);
    this.root.classList.add("acp-with-xray");
    this.root.append(h("div", { class: "acp-split" }, tree, this.panel.el));
    this.list.addEventListener("click", (e) => this.pick(e));
  }

  /** A click on an entry of the tree asks which messages built it. */
  pick(e) {
    if (e.target.closest("button, a, input, textarea, select, summary, .xterm, .acp-term-screen")) return;
    const node = e.target.closest("[data-key]");
    if (!node || !this.list.contains(node)) return;
    for (const old of this.list.querySelectorAll(".acp-xray-picked")) old.classList.remove("acp-xray-picked");
    node.classList.add("acp-xray-picked");
    this.panel.showCard(node.dataset.key, entryName(node));
  }

  dispose() {
    this.panel?.destroy();
  }
}

const KIND_NAMES = { message: "message", permission: "permission request", elicitation: "question", notice: "notice", other: "update" };

/** What the view calls a picked entry: its title as drawn (a card's, a plan's, a subagent's), else its kind. */
function entryName(node) {
  const own = [...node.querySelectorAll(".acp-card-title, .acp-plan-name, .acp-sub-title, .acp-perm-title")]
    .find((t) => t.closest("[data-key]") === node);
  const title = own ? own.textContent.trim() : "";
  if (title) return title;
  const kind = String(node.dataset.key || "").split(":")[0];
  return KIND_NAMES[kind] || kind || "entry";
}
