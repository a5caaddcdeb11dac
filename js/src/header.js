// The session header: title, agent, run state, usage, Stop, and the expandable extras.
import { icon } from "./icons.js";
import { outputLines } from "./outlines.js";
import { fmtCount, h, prettyJson, text } from "./util.js";

const TITLE_CHARS = 300; // a longer title is cut, with a button that shows it all

/** The session title: cut when very long (an agent may set anything), whole on demand. */
export function headerTitle(full, ctx) {
  if (full.length <= TITLE_CHARS || ctx.ui.open.has("hdr:title")) return h("span", { class: "acp-header-title" }, full);
  const span = h("span", { class: "acp-header-title acp-title-cut" }, full.slice(0, TITLE_CHARS));
  const more = h("button", { class: "acp-btn acp-btn-link acp-title-more", type: "button" }, `… show all (${fmtCount(full.length)} characters)`);
  more.addEventListener("click", () => {
    ctx.ui.open.add("hdr:title");
    span.replaceWith(headerTitle(full, ctx));
  });
  span.append(more);
  return span;
}

/** The header element for `hdr` (the WIRE.md Header). */
export function renderHeader(hdr, ctx) {
  hdr = hdr && typeof hdr === "object" ? hdr : {};
  const main = h("div", { class: "acp-header-main" },
    headerTitle(text(hdr.title) || "ACP session", ctx),
    agentLabel(hdr.agent), authLabel(hdr.auth), runState(hdr), modeLabel(hdr.mode), usageLabel(hdr.usage));
  const top = h("div", { class: "acp-header-top" }, main, stopButton(hdr, ctx));
  const el = h("div", { class: "acp-header", dataset: { runState: text(hdr.run_state) } }, top);
  const where = [hdr.cwd && `cwd ${text(hdr.cwd)}`, hdr.session_id && `session ${text(hdr.session_id)}`].filter(Boolean);
  if (where.length) el.append(h("div", { class: "acp-header-sub acp-muted" }, where.join(" · ")));
  if (hdr.stop_error != null) el.append(errorBlock(hdr.stop_error));
  const waiting = waitingLine(hdr.waiting);
  if (waiting) el.append(waiting);
  const extras = h("div", { class: "acp-header-extras" }, diagnostics(hdr, ctx), stdout(hdr, ctx), stderr(hdr, ctx), commands(hdr, ctx), config(hdr, ctx));
  if (extras.childElementCount) el.append(extras);
  return el;
}

function agentLabel(agent) {
  if (!agent || typeof agent !== "object") return null;
  const name = text(agent.title || agent.name);
  const bits = [name, agent.version && `v${text(agent.version).replace(/^v/, "")}`].filter(Boolean).join(" ");
  const proto = agent.protocol != null ? `ACP ${text(agent.protocol)}` : "";
  const tip = [agent.name && `name: ${text(agent.name)}`, agent.title && `title: ${text(agent.title)}`].filter(Boolean).join("\n");
  return h("span", { class: "acp-header-agent acp-muted", title: tip || null }, [bits, proto].filter(Boolean).join(" · "));
}

/** The agent's login status (`_auth/status_update`): its label and kind, never an identity. */
function authLabel(auth) {
  if (!auth || typeof auth !== "object" || typeof auth.kind !== "string" || !auth.kind) return null;
  const kind = auth.kind.replace(/_/g, " ");
  const label = typeof auth.label === "string" && auth.label ? `${auth.label} (${kind})` : kind;
  return h("span", { class: "acp-tag acp-header-auth", title: "login, as the agent reports it", dataset: { kind: auth.kind } }, `login: ${label}`);
}

function runState(hdr) {
  const state = text(hdr.run_state) || (hdr.running ? "running" : "idle");
  if (hdr.closed) return closedBadge(hdr);
  if (state === "running") return h("span", { class: "acp-badge acp-state-running" }, h("span", { class: "acp-spinner" }), "running");
  if (state === "requires_action") {
    const asks = (Number(hdr.pending_permissions) || 0) + (Number(hdr.pending_elicitations) || 0);
    const n = asks ? ` · ${asks} pending` : "";
    return h("span", { class: "acp-badge acp-state-action" }, `requires action${n}`);
  }
  const reason = state === "idle" && hdr.stop_reason ? ` · ${text(hdr.stop_reason).replace(/_/g, " ")}` : "";
  const cls = state === "idle" ? (hdr.stop_error != null ? "acp-state-error" : "acp-state-idle") : "acp-state-other";
  return h("span", { class: `acp-badge ${cls}` }, `${state.replace(/^([a-z]+)_/, "$1 ")}${reason}`);
}

/** "agent stopped" (closed by the client: `%acp stop`), else "agent exited (exit N)". */
export function closedBadge(hdr) {
  if (hdr.stopped) return h("span", { class: "acp-badge acp-state-stopped" }, "agent stopped");
  const code = hdr.exit_code != null ? ` (exit ${text(hdr.exit_code)})` : "";
  return h("span", { class: "acp-badge acp-state-closed" }, `agent exited${code}`);
}

function modeLabel(mode) {
  return mode ? h("span", { class: "acp-tag", title: "session mode" }, `mode: ${text(mode)}`) : null;
}

function usageLabel(usage) {
  if (!usage || typeof usage !== "object") return null;
  const parts = [];
  if (usage.used != null) {
    const pct = typeof usage.size === "number" && usage.size > 0 && typeof usage.used === "number"
      ? ` (${Math.round((100 * usage.used) / usage.size)}%)` : "";
    parts.push(`ctx ${fmtCount(usage.used)}${usage.size != null ? ` / ${fmtCount(usage.size)}` : ""}${pct}`);
  }
  if (usage.cost != null) parts.push(costLabel(usage.cost));
  return parts.length ? h("span", { class: "acp-header-usage acp-muted", title: prettyJson(usage) }, parts.join(" · ")) : null;
}

function costLabel(cost) {
  if (typeof cost === "number") return `cost ${cost.toFixed(4)}`;
  if (cost && typeof cost.amount === "number") return `cost ${cost.amount.toFixed(4)} ${text(cost.currency)}`.trim();
  return `cost ${text(cost)}`;
}

function stopButton(hdr, ctx) {
  if (!(hdr.running && hdr.can_cancel)) return null;
  const btn = h("button", { class: "acp-btn acp-btn-stop", type: "button", title: "Cancel the current turn" }, icon("stop"), "Stop");
  btn.addEventListener("click", () => {
    btn.disabled = true;
    ctx.send({ type: "cancel_turn" });
  });
  return btn;
}

/** "waiting for you: ‹subagent› — ‹request›, …": the subagents' pending requests (as text). */
export function waitingLine(waiting) {
  const list = Array.isArray(waiting) ? waiting.filter((w) => w && typeof w === "object") : [];
  if (!list.length) return null;
  const items = list.slice(0, 3).map((w, i) => h("span", { class: "acp-waiting-item" }, i ? ", " : "",
    h("strong", null, text(w.subagent) || text(w.session_id) || "a subagent"), w.title ? ` — ${text(w.title)}` : ""));
  const more = list.length > 3 ? ` and ${list.length - 3} more` : "";
  return h("div", { class: "acp-header-waiting" }, icon("warn"), h("span", null, "waiting for you: ", items, more));
}

export function errorBlock(err) {
  const msg = err && typeof err === "object" && typeof err.message === "string" ? err.message : text(err);
  const el = h("div", { class: "acp-header-error" }, icon("warn"), h("span", null, msg));
  if (err && typeof err === "object") el.append(h("details", { class: "acp-json" }, h("summary", null, "details"), h("pre", { class: "acp-pre", text: prettyJson(err) })));
  return el;
}

/** A <details> whose open state survives header re-renders. */
function section(ctx, id, label, count, body, cls = "") {
  const d = h("details", { class: `acp-header-section ${cls}`, open: ctx.ui.open.has(id) },
    h("summary", null, label, h("span", { class: "acp-count" }, text(count))), body);
  d.addEventListener("toggle", () => (d.open ? ctx.ui.open.add(id) : ctx.ui.open.delete(id)));
  return d;
}

function diagnostics(hdr, ctx) {
  const list = Array.isArray(hdr.diagnostics) ? hdr.diagnostics : [];
  const count = hdr.diagnostic_count || list.length;
  if (!count) return null;
  const rows = list.map((d) => h("li", { class: `acp-diag acp-diag-${diagLevel(d)}` },
    h("code", null, text(d && d.code)), " ", h("span", null, text(d && d.message))));
  if (count > list.length) rows.unshift(h("li", { class: "acp-muted" }, `… ${count - list.length} earlier not shown`));
  // only warnings and errors are badged; info-level notes (a permission left for a person) are counted quietly
  const alerts = Number.isInteger(hdr.diagnostic_alerts) ? hdr.diagnostic_alerts : list.filter((d) => diagLevel(d) !== "info").length;
  return section(ctx, "hdr:diag", "Diagnostics", count, h("ul", { class: "acp-diag-list" }, rows), alerts ? "acp-has-diag" : "acp-diag-quiet");
}

/** A diagnostic's level as a class suffix: error, info, or warn (anything else). */
function diagLevel(d) {
  const level = d && d.level;
  return level === "error" || level === "info" ? level : "warn";
}

function stderr(hdr, ctx) {
  const lines = Array.isArray(hdr.stderr) ? hdr.stderr : [];
  if (!lines.length) return null;
  const cut = new Set(Array.isArray(hdr.stderr_cut) ? hdr.stderr_cut : []);
  const from = Number.isInteger(hdr.stderr_from) ? hdr.stderr_from : null;
  const rows = lines.map((line, i) => [i ? "\n" : null, stderrLine(line, from == null ? null : from + i, cut.has(i), ctx)]);
  return section(ctx, "hdr:stderr", "Agent stderr", lines.length, h("pre", { class: "acp-pre acp-stderr" }, rows));
}

/** One stderr line; a cut one gets "show all", which asks the kernel for the line as kept. */
function stderrLine(line, n, cut, ctx) {
  const whole = (ctx.ui.stderrWhole ??= new Map());
  const row = h("span", { class: "acp-stderr-line" }, whole.has(n) ? whole.get(n) : text(line));
  if (!cut || whole.has(n) || n == null || !ctx.fetchStderr) return row;
  const more = h("button", { class: "acp-btn acp-btn-link acp-stderr-more", type: "button" }, "show all");
  more.addEventListener("click", () => {
    more.disabled = true;
    ctx.fetchStderr(n).then((full) => {
      if (full == null) return (more.textContent = "no longer kept");
      whole.set(n, full);
      row.replaceChildren(full);
    });
  });
  row.append(" ", more);
  return row;
}

/** The agent's non-JSON stdout; opens by itself when a new prompt (an unterminated line) arrives. */
function stdout(hdr, ctx) {
  const lines = Array.isArray(hdr.stdout) ? hdr.stdout : [];
  const partial = typeof hdr.stdout_partial === "string" && hdr.stdout_partial ? hdr.stdout_partial : null;
  if (!lines.length && partial == null) return null;
  if (partial != null && ctx.ui.prompt !== partial) ctx.ui.open.add("hdr:stdout");
  ctx.ui.prompt = partial;
  const label = partial != null ? ["Agent output", h("span", { class: "acp-out-waiting" }, " · waiting for input")] : "Agent output";
  const count = lines.length + (partial != null ? 1 : 0);
  return section(ctx, "hdr:stdout", label, count, outputLines(lines, partial), partial != null ? "acp-has-prompt" : "");
}

function commands(hdr, ctx) {
  const cmds = Array.isArray(hdr.commands) ? hdr.commands : [];
  if (!cmds.length) return null;
  const rows = cmds.map((c) => h("li", null, h("code", null, `/${text(c && c.name)}`), " ",
    h("span", { class: "acp-muted" }, text(c && c.description)),
    c && c.input && c.input.hint ? h("span", { class: "acp-muted" }, ` — ${text(c.input.hint)}`) : null));
  return section(ctx, "hdr:cmds", "Slash commands", cmds.length, h("ul", { class: "acp-cmd-list" }, rows));
}

function config(hdr, ctx) {
  const opts = Array.isArray(hdr.config_options) ? hdr.config_options : [];
  if (!opts.length) return null;
  const rows = opts.map((o) => h("li", null, h("span", null, text(o && (o.name || o.id))), ": ",
    h("code", null, text(o && (o.currentValue ?? o.value)))));
  return section(ctx, "hdr:config", "Config", opts.length, h("ul", { class: "acp-cmd-list" }, rows));
}
