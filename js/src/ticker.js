// Elapsed-time labels of unfinished tool calls, all driven by one interval per view. A past state
// (an X-ray pick, a replay, a saved snapshot drawn without its kernel) has a frozen clock: its
// labels show the time up to that state's own "now" and do not tick.
import { fmtElapsed } from "./util.js";

export class Ticker {
  /** `root`: labels no longer inside it are dropped on the next tick. */
  constructor(root) {
    this.root = root;
    this.labels = new Map(); // element → start (epoch seconds)
    this.timer = null;
    this.frozenAt = null; // epoch seconds: the shown state's own "now", or null (live: the clock ticks)
  }

  /** Show the time since `start` in `el`, updated every second while `el` is in the view (live). */
  add(el, start) {
    el.textContent = fmtElapsed(this.now() - start);
    this.labels.set(el, start);
    if (this.frozenAt == null) this.timer ??= setInterval(() => this.tick(), 1000);
  }

  /** Stop the clock at `at` (epoch seconds; a past state's own time), or let it tick again (null). */
  freeze(at) {
    const frozen = typeof at === "number" && Number.isFinite(at) ? at : null;
    if (frozen === this.frozenAt) return;
    this.frozenAt = frozen;
    this.stop();
    this.tick();
  }

  now() {
    return this.frozenAt ?? Date.now() / 1000;
  }

  tick() {
    const now = this.now();
    for (const [el, start] of this.labels) {
      if (this.root.contains(el)) el.textContent = fmtElapsed(now - start);
      else this.labels.delete(el);
    }
    if (!this.labels.size || this.frozenAt != null) this.stop();
    else this.timer ??= setInterval(() => this.tick(), 1000);
  }

  stop() {
    clearInterval(this.timer);
    this.timer = null;
  }
}
