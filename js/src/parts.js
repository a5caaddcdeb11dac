// Reassembles `part` messages (WIRE.md "Bounded messages"): a message too big for one comm
// message comes as parts whose buffers hold slices of its UTF-8 JSON, back to back, in order.
import { concatBytes, toU8 } from "./util.js";

const decoder = new TextDecoder();

export class PartAssembler {
  constructor() {
    this.reset();
  }

  reset() {
    this.id = null;
    this.n = 0;
    this.bufs = [];
    this.size = 0;
  }

  /**
   * Take one part. Returns the whole message once its last part came, else null; `onGap()` is
   * called when a set cannot be completed (a part missing or out of order): it is dropped.
   */
  add(msg, buffers, onGap) {
    const { id, i, n } = msg;
    const buf = toU8(buffers && buffers[0]).slice(); // a copy: the comm may reuse its buffer
    if (i === 0) {
      if (this.id !== null) onGap();
      this.reset();
      this.id = id;
      this.n = n;
    } else if (id !== this.id || i !== this.bufs.length || n !== this.n) {
      onGap();
      this.reset();
      return null;
    }
    this.bufs.push(buf);
    this.size += buf.length;
    if (this.bufs.length < this.n) return null;
    const whole = concatBytes(this.bufs, this.size);
    this.reset();
    try {
      return JSON.parse(decoder.decode(whole));
    } catch (err) {
      onGap();
      return null;
    }
  }
}
