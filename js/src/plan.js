// Plans: a checklist with each entry's status and priority.
import { icon } from "./icons.js";
import { h, text } from "./util.js";

const PRIO = new Set(["high", "medium", "low"]);
const MARK = { completed: "✓", in_progress: "◐", pending: "○" };

/** A plan entry as a checklist. */
export function renderPlan(key, entry) {
  const items = Array.isArray(entry.entries) ? entry.entries : [];
  const done = items.filter((e) => e && e.status === "completed").length;
  const list = h("ul", { class: "acp-plan-list" }, items.map(renderItem));
  const title = entry.type && entry.type !== "plan" ? `Plan (${text(entry.type)})` : "Plan";
  return h(
    "div",
    { class: "acp-plan", dataset: { key } },
    h("div", { class: "acp-plan-head" }, icon("plan"), h("span", null, title), h("span", { class: "acp-muted" }, `${done}/${items.length}`)),
    list,
  );
}

function renderItem(item) {
  const status = item && typeof item.status === "string" ? item.status : "pending";
  const li = h("li", { class: `acp-plan-item acp-plan-${MARK[status] ? status : "other"}`, dataset: { status } });
  li.append(h("span", { class: "acp-plan-mark", title: status }, MARK[status] || "•"));
  li.append(h("span", { class: "acp-plan-text" }, text(item && item.content)));
  const prio = item && item.priority;
  if (prio) li.append(h("span", { class: `acp-tag acp-prio-${PRIO.has(prio) ? prio : "other"}` }, text(prio)));
  if (!MARK[status]) li.append(h("span", { class: "acp-tag" }, status));
  return li;
}
