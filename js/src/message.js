// Conversation messages: user prompts, agent messages, thoughts (collapsible) — as markdown.
import { renderBlock } from "./content.js";
import { icon } from "./icons.js";
import { renderMarkdown } from "./markdown.js";
import { fold, h, text } from "./util.js";

const ROLE_LABEL = { user: "You", agent: "Agent", thought: "Thinking" };

/** Non-text blocks (images, resources, unknown) drawn after the markdown. */
function extraBlocks(entry) {
  const blocks = Array.isArray(entry.blocks) ? entry.blocks : [];
  return blocks.filter((b) => !(b && b.type === "text")).map(renderBlock);
}

function renderBody(entry) {
  return [renderMarkdown(text(entry.markdown)), ...extraBlocks(entry)];
}

/** A message entry. `ui.open` remembers which thoughts the user opened. */
export function renderMessage(key, entry, ui) {
  const role = ROLE_LABEL[entry.role] ? entry.role : "agent";
  if (role === "thought") return renderThought(key, entry, ui);
  return h(
    "div",
    { class: `acp-msg acp-msg-${role}`, dataset: { key, role } },
    h("div", { class: "acp-msg-gutter", title: ROLE_LABEL[role] }, icon(role === "user" ? "user" : "agent")),
    h("div", { class: "acp-msg-body" }, renderBody(entry)),
  );
}

function renderThought(key, entry, ui) {
  const md = text(entry.markdown);
  const preview = md.replace(/[`*_#>~]+/g, "").replace(/\s+/g, " ").trim().slice(0, 140);
  const label = [icon("think"), h("span", { class: "acp-thought-label" }, "Thinking"), h("span", { class: "acp-muted acp-thought-preview" }, preview)];
  const body = h("div", { class: "acp-msg-body" });
  const fill = () => body.firstChild || body.append(...renderBody(entry));
  const el = fold("acp-msg acp-msg-thought", label, body, ui.open.has(key), (open) => {
    if (open) ui.open.add(key);
    else ui.open.delete(key);
    if (open) fill();
  });
  if (ui.open.has(key)) fill();
  el.dataset.key = key;
  el.dataset.role = "thought";
  return el;
}
