// Entries that are not tool calls or permissions: messages, plans, notices, other updates.
import { renderNotice, renderOtherEntry, renderRaw } from "./generic.js";
import { renderMessage } from "./message.js";
import { renderPlan } from "./plan.js";
import { renderReview } from "./review.js";
import { renderSessionMessage } from "./sessionmsg.js";
import { fmtCount, h, text } from "./util.js";

/** Render one simple entry; every node carries data-key. */
export function renderEntry(key, entry, ctx) {
  let node;
  switch (entry.kind) {
    case "message":
      node = renderMessage(key, entry, ctx.ui);
      break;
    case "plan":
      node = renderPlan(key, entry, ctx);
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
    case "session_message":
      node = renderSessionMessage(key, entry, ctx);
      break;
    default:
      node = renderRaw(`entry: ${text(entry.kind) || "unknown"}`, entry, "acp-other acp-entry-unknown");
  }
  node.dataset.key = key;
  node.classList.add("acp-entry");
  if (entry.cut && typeof entry.cut === "object" && ctx.fetchEntry) node.append(showAll(key, entry.cut, ctx));
  return node;
}

/** "show all" of an entry the kernel cut (WIRE.md, `cut`): asks for the whole entry, drawn in place. */
function showAll(key, cut, ctx) {
  const more = Math.max(0, (Number(cut.total) || 0) - (Number(cut.shown) || 0));
  const label = `… show all (${fmtCount(more)} more characters)`;
  const button = h("button", { class: "acp-btn acp-btn-link acp-entry-more", type: "button" }, label);
  button.addEventListener("click", () => {
    button.disabled = true;
    button.textContent = "… asking the kernel";
    ctx.fetchEntry(key);
  });
  return button;
}
