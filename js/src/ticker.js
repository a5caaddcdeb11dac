// Elapsed-time labels of unfinished tool calls, all driven by one interval per view.
import { fmtElapsed } from "./util.js";

export class Ticker {
  /** `root`: labels no longer inside it are dropped on the next tick. */
  constructor(root) {
    this.root = root;
    this.labels = new Map(); // element → start (epoch seconds)
    this.timer = null;
  }

  /** Show the time since `start` in `el`, updated every second while `el` is in the view. */
  add(el, start) {
    el.textContent = fmtElapsed(Date.now() / 1000 - start);
    this.labels.set(el, start);
    this.timer ??= setInterval(() => this.tick(), 1000);
  }

  tick() {
    const now = Date.now() / 1000;
    for (const [el, start] of this.labels) {
      if (this.root.contains(el)) el.textContent = fmtElapsed(now - start);
      else this.labels.delete(el);
    }
    if (!this.labels.size) this.stop();
  }

  stop() {
    clearInterval(this.timer);
    this.timer = null;
  }
}
