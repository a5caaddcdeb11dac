// One view's comm channel (WIRE.md "Bounded messages"), shared by the SessionView and the
// SessionHeaderView: sends custom messages, receives them whole (a packed message's JSON read from
// the buffer its `json` names, `part` pieces joined), holds them while asked to, and keeps the
// `seq` order of patches (a stale patch is dropped; a gap asks for a full patch: `resync`).
import { PartAssembler } from "./parts.js";
import { toU8 } from "./util.js";

const RESYNC_WAIT_MS = 2000; // a resync asked this recently is still on its way
const MAX_HELD = 10000; // messages held (more: dropped, then a resync)
const decoder = new TextDecoder();

/** A packed message `{type, json: i}` as the message its buffer `i` holds (other buffers kept). */
export function unpack(msg, buffers = []) {
  if (!msg || msg.type === "part" || !Number.isInteger(msg.json)) return { msg, buffers };
  const i = msg.json;
  return { msg: JSON.parse(decoder.decode(toU8(buffers[i]))), buffers: buffers.slice(0, i) };
}

export class Channel {
  /** `onMessage(msg, buffers)` gets every whole message; `label` names the view in errors. */
  constructor(model, onMessage, label = "view") {
    this.model = model;
    this.onMessage = onMessage;
    this.label = label;
    this.seq = -Infinity;
    this.parts = new PartAssembler();
    this.held = null; // messages held meanwhile (null: none held)
    this.lost = false;
    this.awaitingFull = false;
    this.listener = (msg, buffers) => this.receive(msg, buffers);
  }

  /** Handle the messages the loader queued, then listen. */
  start(queued) {
    for (const q of Array.isArray(queued) ? queued : []) this.receive(q && q.msg, q && q.buffers);
    this.model.on("msg:custom", this.listener);
  }

  close() {
    this.model.off?.("msg:custom", this.listener);
  }

  send(msg) {
    try {
      this.model.send(msg);
    } catch (err) {
      console.warn("acp_notebook: cannot reach the kernel", err);
    }
  }

  /** Run `fn`, reporting (not throwing) an error: one bad message never stops the view. */
  guard(fn) {
    try {
      fn();
    } catch (err) {
      console.error(`acp_notebook ${this.label}:`, err);
    }
  }

  receive(msg, buffers) {
    if (this.held) return this.hold(msg, buffers);
    this.guard(() => {
      if (msg && msg.type === "part") {
        const whole = this.parts.add(msg, buffers, () => this.resync());
        if (whole) this.onMessage(whole, []);
        return;
      }
      const got = unpack(msg, Array.isArray(buffers) ? buffers : []);
      this.onMessage(got.msg, got.buffers);
    });
  }

  hold(msg, buffers) {
    if (this.held.length < MAX_HELD) this.held.push({ msg, buffers });
    else this.lost = true;
  }

  /** Hold the messages that come from now on (a paged snapshot is being read). */
  pause() {
    this.held ??= [];
  }

  /** Handle the held messages, in order (a resync if some were dropped). */
  resume() {
    const held = this.held || [];
    this.held = null;
    for (const { msg, buffers } of held) this.receive(msg, buffers);
    if (this.lost) this.resync(true);
    this.lost = false;
  }

  get paused() {
    return this.held !== null;
  }

  /** Ask for a full patch, unless one is already on its way (asked less than RESYNC_WAIT_MS ago). */
  resync(force = false) {
    const now = Date.now();
    if (!force && this.awaitingFull && now - this.resyncAt < RESYNC_WAIT_MS) return;
    this.resyncAt = now;
    this.awaitingFull = true;
    this.send({ type: "resync" });
  }

  /** Is a snapshot (or any `{seq}`) newer than what is drawn? */
  newer(snap) {
    return !!snap && typeof snap === "object" && snap.seq > this.seq;
  }

  /** Take patch `p` in `seq` order: false when it is stale (drop it). A full one is always taken. */
  accept(p, live = true) {
    if (!p.full && typeof p.seq === "number" && p.seq <= this.seq) return false;
    if (typeof p.seq === "number") this.seq = p.full ? p.seq : Math.max(this.seq, p.seq);
    if (p.full && live) this.awaitingFull = false; // the answer to a resync
    return true;
  }
}
