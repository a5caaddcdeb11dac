// The view's CSS (ours + xterm's), injected once per document as <style id="acp-notebook-style">.
import xtermCss from "@xterm/xterm/css/xterm.css";
import css from "./style.css";

const STYLE_ID = "acp-notebook-style";

/** Add the stylesheet to `doc` unless it is already there. */
export function injectStyle(doc = document) {
  if (!doc || !doc.head || doc.getElementById(STYLE_ID)) return;
  const style = doc.createElement("style");
  style.id = STYLE_ID;
  style.textContent = `${xtermCss}\n${css}`;
  doc.head.append(style);
}
