// A message between sessions (WIRE.md "Subagents"): this session's own view of it — a task given
// to a subagent, a report received from one, or (in a subagent's tree) the task from its parent
// and the report sent back — with a link to the other session's view of the same message.
import { renderBlock } from "./content.js";
import { icon } from "./icons.js";
import { renderMarkdown } from "./markdown.js";
import { h, text } from "./util.js";

const LABELS = {
  subagent: { outgoing: (who) => `task → ${who}`, incoming: (who) => `report ← ${who}` },
  parent: { outgoing: () => "report → the parent session", incoming: () => "task from the parent session" },
  session: { outgoing: (who) => `message → ${who}`, incoming: (who) => `message ← ${who}` },
};

/** What the message is, from this session's side ("task → Explore"). */
export function sessionMessageLabel(entry) {
  const who = text(entry.peer_title) || text(entry.peer) || "another session";
  const label = (LABELS[entry.relation] || LABELS.session)[entry.direction];
  return label ? label(who) : "message between sessions";
}

/** A session message entry; `ctx.revealEntry(key)` shows the linked view (false: not in this view). */
export function renderSessionMessage(key, entry, ctx) {
  const head = h("div", { class: "acp-smsg-head" }, h("strong", { class: "acp-smsg-label" }, sessionMessageLabel(entry)));
  if (typeof entry.link === "string" && ctx.revealEntry) head.append(" ", linkButton(entry, ctx));
  const blocks = (Array.isArray(entry.blocks) ? entry.blocks : []).filter((b) => !(b && b.type === "text")).map(renderBlock);
  const body = h("div", { class: "acp-msg-body" }, head, entry.markdown ? renderMarkdown(text(entry.markdown)) : null, ...blocks);
  return h("div", { class: "acp-msg acp-session-msg", dataset: { key, direction: text(entry.direction) || "unknown" } },
    h("div", { class: "acp-msg-gutter", title: "message between sessions" }, icon("agent")), body);
}

function linkButton(entry, ctx) {
  const side = entry.direction === "outgoing" ? "as received" : "as sent";
  const btn = h("button", { class: "acp-btn acp-btn-link acp-smsg-link", type: "button" }, `(${side})`);
  btn.addEventListener("click", () => {
    if (!ctx.revealEntry(entry.link)) btn.textContent = "(not in this view)";
  });
  return btn;
}
