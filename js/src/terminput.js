// What an interactive terminal sends to the kernel: keystrokes (WIRE.md `terminal_input`, split so
// one message stays well under the kernel's 64 KiB cap) and its size (`terminal_resize`, debounced,
// only when it changed).

const RESIZE_DEBOUNCE_MS = 150;
const PIECE = 16384; // UTF-16 units per message: at most 48 KiB of UTF-8

/** `s` in pieces of at most PIECE units, never splitting a surrogate pair. */
export function pieces(s) {
  const out = [];
  for (let at = 0; at < s.length; ) {
    let end = Math.min(s.length, at + PIECE);
    const last = s.charCodeAt(end - 1);
    if (end < s.length && last >= 0xd800 && last <= 0xdbff) end -= 1;
    out.push(s.slice(at, end));
    at = end;
  }
  return out;
}

export class TerminalInput {
  constructor(id, send) {
    this.id = id;
    this.send = send;
    this.sent = null; // [cols, rows] last sent (kept while the xterm is rebuilt)
    this.timer = null;
    this.subs = [];
  }

  /** Forward what is typed or pasted into `term`. */
  attach(term) {
    this.detach();
    this.subs.push(term.onData((data) => this.data(data)));
  }

  detach() {
    for (const s of this.subs) s.dispose();
    this.subs = [];
  }

  data(data) {
    for (const piece of pieces(String(data))) this.send({ type: "terminal_input", id: this.id, data: piece });
  }

  /** Report the size the terminal is drawn at (the last one within RESIZE_DEBOUNCE_MS wins). */
  size(cols, rows) {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      if (this.sent && this.sent[0] === cols && this.sent[1] === rows) return;
      this.sent = [cols, rows];
      this.send({ type: "terminal_resize", id: this.id, cols, rows });
    }, RESIZE_DEBOUNCE_MS);
  }

  stop() {
    this.detach();
    clearTimeout(this.timer);
    this.timer = null;
  }
}
