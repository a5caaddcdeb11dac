// Links an agent writes into a terminal (OSC 8 hyperlinks): never xterm's own confirm() dialog.
// Only http, https and mailto open; the target is shown in our bar first, and opens with noopener.
import { h } from "./util.js";

const OPENABLE = new Set(["http:", "https:", "mailto:"]);

/** An xterm `linkHandler` that asks in a bar above the screen (`host`) before opening. */
export function linkHandler(host) {
  return {
    allowNonHttpProtocols: true, // mailto too; everything else is refused in `activate`
    activate(event, uri) {
      event?.preventDefault?.();
      showBar(host, uri);
    },
  };
}

function showBar(host, uri) {
  host.querySelector(":scope > .acp-term-link")?.remove();
  let url = null;
  try {
    url = new URL(uri);
  } catch {
    /* not a URL: refused below */
  }
  const close = () => bar.remove();
  const target = h("code", { class: "acp-term-link-target" }, uri.length > 300 ? `${uri.slice(0, 300)}…` : uri);
  const bar = h("div", { class: "acp-term-link", role: "dialog", "aria-label": "open link" });
  if (!url || !OPENABLE.has(url.protocol)) {
    bar.append(h("span", null, "Not opened (only http, https and mailto links): "), target,
      h("button", { type: "button", class: "acp-btn acp-btn-small", on: { click: close } }, "Dismiss"));
  } else {
    const open = () => {
      window.open(url.href, "_blank", "noopener,noreferrer");
      close();
    };
    bar.append(h("span", null, "Open "), target, h("span", null, "?"),
      h("button", { type: "button", class: "acp-btn acp-btn-small acp-term-link-open", on: { click: open } }, "Open"),
      h("button", { type: "button", class: "acp-btn acp-btn-small", on: { click: close } }, "Cancel"));
  }
  host.insertBefore(bar, host.querySelector(":scope > .acp-term-screen"));
}
