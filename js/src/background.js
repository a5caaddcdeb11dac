// The badge of work listed in the session's `background` (WIRE.md): a tool call or a terminal that
// runs on after its turn (Claude marks a backgrounded command's tool call `completed`).
import { h } from "./util.js";

/** "running in background", in place of a status or exit badge; `status`: the tool call's own. */
export function backgroundBadge(status) {
  const title = status ? `status: ${status}; its work runs on in the background` : "runs on in the background";
  return h("span", { class: "acp-badge acp-phase-in_progress acp-background", title }, h("span", { class: "acp-spinner" }), "running in background");
}
