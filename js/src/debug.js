// Test hooks on the registered API (read terminal buffers, check cell colours).
import { Terminal } from "@xterm/xterm";
import { readNumber } from "./elicitform.js";
import { FORMAT_PATTERNS, validate } from "./elicitvalid.js";
import { viewsByHost } from "./terminal.js";

function viewOf(host) {
  if (!host) return null;
  return viewsByHost.get(host) || viewsByHost.get(host.closest?.(".acp-terminal"));
}

async function ready(host) {
  const view = viewOf(host);
  if (!view) return null;
  view.ensure();
  await view.flushed();
  return view.term;
}

export const debug = {
  /** The elicitation form's validator (the page's; the kernel's twin) and its typed-number reader. */
  elicitation: { validate, readNumber, FORMAT_PATTERNS },

  /** The xterm.js Terminal class the views use (benchmarks build a raw one: same version). */
  Terminal,

  /** The bytes the page holds for the terminal: {gen, start, end, size} (offsets in its stream). */
  storeState(host) {
    const view = viewOf(host);
    if (!view) return null;
    const { gen, start, end, size } = view.store.get(view.id);
    return { gen, start, end, size };
  },

  /** Every line of the terminal's active buffer (trailing empty lines dropped). */
  async terminalLines(host) {
    const term = await ready(host);
    if (!term) return null;
    const buf = term.buffer.active;
    const lines = [];
    for (let i = 0; i < buf.length; i++) lines.push(buf.getLine(i)?.translateToString(true) ?? "");
    while (lines.length && !lines[lines.length - 1]) lines.pop();
    return lines;
  },

  /** The foreground colour of a cell: {mode: "default"|"palette"|"rgb", color, chars}. */
  async cellFg(host, row, col) {
    const term = await ready(host);
    const cell = term?.buffer.active.getLine(row)?.getCell(col);
    if (!cell) return null;
    const mode = cell.isFgPalette() ? "palette" : cell.isFgRGB() ? "rgb" : "default";
    return { mode, color: cell.getFgColor(), colorMode: cell.getFgColorMode(), chars: cell.getChars() };
  },

  /** Size and scroll state of the terminal: {cols, rows, length, baseY, viewportY}. */
  async termState(host) {
    const term = await ready(host);
    if (!term) return null;
    const b = term.buffer.active;
    const { disableStdin, cursorBlink } = term.options;
    return { cols: term.cols, rows: term.rows, length: b.length, baseY: b.baseY, viewportY: b.viewportY, stdin: !disableStdin, cursorBlink };
  },

  /** Feed `data` to the terminal as if the user typed or pasted it (fires onData when it takes input). */
  async input(host, data) {
    const term = await ready(host);
    term?.input(data, true);
  },

  /** Is an xterm instance alive for this host right now? */
  isInstantiated(host) {
    return !!viewOf(host)?.term;
  },
};
