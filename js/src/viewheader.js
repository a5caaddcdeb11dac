// The session header of a view (WIRE.md "Header"), for the SessionView and the SessionHeaderView:
// drawn from a patch's or snapshot's `header`, drawn again only when it changed, and kept as it is
// when a patch has none (the kernel sends the header only when it changed). A view extension.
// A view of one turn gets the turn's own header (`scope: "turn"`, turnheader.js).
import { renderHeader } from "./header.js";
import { renderTurnHeader } from "./turnheader.js";
import { h, sig } from "./util.js";

export class HeaderSlot {
  constructor(ctx) {
    this.ctx = ctx;
    this.el = h("div", { class: "acp-header" });
    this.sig = null;
  }

  onPatch(p) {
    if (!p.header) return;
    const s = sig(p.header);
    if (s === this.sig) return;
    this.sig = s;
    this.ctx.cwd = p.header && p.header.cwd; // diffs and writes show paths relative to it
    const node = p.header.scope === "turn" ? renderTurnHeader(p.header, this.ctx) : renderHeader(p.header, this.ctx);
    this.el.replaceWith(node);
    this.el = node;
  }
}
