// The header of a view of ONE turn (WIRE.md "Turn header"; a `%%acp` cell's, an agent-started
// turn's): the turn's own state badge, its duration, a Stop only while this turn runs (the click
// names the turn), and one compact line about the session that links to the start cell's header,
// which keeps the session-wide state. Agent text: text nodes only.
import { icon } from "./icons.js";
import { closedBadge, errorBlock, headerTitle, waitingLine } from "./header.js";
import { fmtElapsed, h, text } from "./util.js";

/** The element for a turn header `hdr`. */
export function renderTurnHeader(hdr, ctx) {
  const state = text(hdr.turn_state) || "starting";
  const main = h("div", { class: "acp-header-main" },
    headerTitle(text(hdr.title) || "turn", ctx), turnBadge(hdr, state), duration(hdr, state, ctx));
  const top = h("div", { class: "acp-header-top" }, main, stopButton(hdr, ctx));
  const el = h("div", { class: "acp-header acp-turn-header", dataset: { scope: "turn", turnState: state } }, top, sessionLine(hdr, ctx));
  if (hdr.stop_error != null) el.append(errorBlock(hdr.stop_error));
  const waiting = waitingLine(hdr.waiting);
  if (waiting) el.append(waiting);
  return el;
}

/** This turn's own state: starting, running, waiting for you, or its stop reason. */
function turnBadge(hdr, state) {
  if (state === "running") return h("span", { class: "acp-badge acp-state-running" }, h("span", { class: "acp-spinner" }), "running");
  if (state === "requires_action") {
    const n = Number.isInteger(hdr.pending) && hdr.pending > 0 ? ` · ${hdr.pending} pending` : "";
    return h("span", { class: "acp-badge acp-state-action" }, `waiting for you${n}`);
  }
  if (state === "starting") return h("span", { class: "acp-badge acp-state-other" }, "starting");
  const reason = hdr.stop_reason ? text(hdr.stop_reason).replace(/_/g, " ") : "ended";
  const cls = hdr.stop_error != null || hdr.stop_reason === "error" ? "acp-state-error" : "acp-state-idle";
  return h("span", { class: `acp-badge ${cls}`, dataset: { stopReason: text(hdr.stop_reason) } }, reason);
}

/** How long the turn took; ticking while it runs. */
function duration(hdr, state, ctx) {
  if (state === "ended") return typeof hdr.duration === "number" ? h("span", { class: "acp-turn-duration acp-muted" }, fmtElapsed(hdr.duration)) : null;
  if (state === "starting" || typeof hdr.started !== "number" || !ctx.tick) return null;
  const clock = h("span", { class: "acp-turn-duration acp-muted" });
  ctx.tick(clock, hdr.started);
  return clock;
}

function stopButton(hdr, ctx) {
  if (!hdr.running) return null;
  const btn = h("button", { class: "acp-btn acp-btn-stop", type: "button", title: "Cancel this turn" }, icon("stop"), "Stop");
  btn.addEventListener("click", () => {
    btn.disabled = true;
    ctx.send({ type: "cancel_turn", turn: hdr.turn });
  });
  return btn;
}

/** "turn #n · ‹agent› · session ↑" (the link scrolls to the start cell's header), and a stopped agent. */
function sessionLine(hdr, ctx) {
  const agent = hdr.agent && typeof hdr.agent === "object" ? text(hdr.agent.title || hdr.agent.name) : "";
  const line = h("div", { class: "acp-turn-session acp-muted" },
    Number.isInteger(hdr.turn) ? `turn #${hdr.turn}` : "turn", agent ? ` · ${agent}` : "");
  if (hdr.closed) line.append(" · ", closedBadge(hdr));
  const anchor = text(hdr.session_anchor);
  if (!anchor || !ctx.findAnchor) return line;
  const note = h("span", { class: "acp-turn-note", role: "status" });
  const go = h("button", { class: "acp-btn acp-btn-link acp-turn-to-session", type: "button", title: "Scroll to the session's header (the start cell)" }, "session header ↑");
  go.addEventListener("click", async () => {
    go.disabled = true;
    note.textContent = "";
    try {
      const target = await ctx.findAnchor(line, anchor);
      if (target) target.scrollIntoView({ block: "start" });
      else note.textContent = "the start cell is not on this page";
    } finally {
      go.disabled = false;
    }
  });
  line.append(" · ", go, note);
  return line;
}
