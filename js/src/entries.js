// Entries that are not tool calls or permissions: messages, plans, notices, other updates.
import { renderNotice, renderOtherEntry, renderRaw } from "./generic.js";
import { renderMessage } from "./message.js";
import { renderPlan } from "./plan.js";
import { renderReview } from "./review.js";
import { text } from "./util.js";

/** Render one simple entry; every node carries data-key. */
export function renderEntry(key, entry, ctx) {
  let node;
  switch (entry.kind) {
    case "message":
      node = renderMessage(key, entry, ctx.ui);
      break;
    case "plan":
      node = renderPlan(key, entry);
      break;
    case "notice":
      node = renderNotice(entry);
      break;
    case "other":
      node = renderOtherEntry(entry);
      break;
    case "review":
      node = renderReview(key, entry, ctx);
      break;
    default:
      node = renderRaw(`entry: ${text(entry.kind) || "unknown"}`, entry, "acp-other acp-entry-unknown");
  }
  node.dataset.key = key;
  node.classList.add("acp-entry");
  return node;
}
