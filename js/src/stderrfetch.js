// "show all" for a cut stderr line: ask the kernel for the line as the agent kept it (WIRE.md,
// `stderr_line`). Each ask waits at most WAIT_MS; a line no longer kept answers null. A view
// extension (the SessionView's and the SessionHeaderView's): `onMessage` takes the answers.
const WAIT_MS = 5000;

export class StderrFetcher {
  constructor(send) {
    this.send = send;
    this.waits = new Map(); // line number → [resolve, ...]
  }

  /** A promise of line `n`'s whole text (null when the kernel no longer has it or is gone). */
  fetch(n) {
    return new Promise((resolve) => {
      const list = this.waits.get(n) || [];
      list.push(resolve);
      this.waits.set(n, list);
      if (list.length === 1) this.send({ type: "stderr_line", n });
      setTimeout(() => this.settle(n, null), WAIT_MS);
    });
  }

  /** True if `msg` was a `stderr_line` answer. */
  onMessage(msg) {
    if (!msg || msg.type !== "stderr_line") return false;
    this.settle(msg.n, typeof msg.text === "string" ? msg.text : null);
    return true;
  }

  /** Answer every ask still waiting with null (the view goes). */
  dispose() {
    for (const n of [...this.waits.keys()]) this.settle(n, null);
  }

  settle(n, value) {
    const list = this.waits.get(n);
    if (!list) return;
    this.waits.delete(n);
    for (const resolve of list) resolve(value);
  }
}
