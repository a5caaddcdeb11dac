// A plain ACP v1 agent on the official SDK's stable API (the package root: `agent()`,
// `methods`, `ndJsonStream`), connected directly — not through the v1/v2 router, which would
// rewrite the client's v2 `initialize` and drop its v1 capability fields.
//
// No model: the first word of the prompt picks a script.
//   tour   — message and thought chunks, a plan, `tool_call` + `tool_call_update`, a v1 diff, a
//            permission request per step (the answers decide what happens), `fs/read_text_file`
//            and `fs/write_text_file` through the client (inside the session cwd, and outside it,
//            and a raw notebook write: both must fail), `terminal/create` + `terminal/output` +
//            `terminal/wait_for_exit` + `terminal/release` (ANSI colour, a UTF-8 character, an
//            `env` entry, exit code 3), an `outputByteLimit` truncation, `terminal/kill`; also a
//            missing file, a new file in a new directory, and a file in an additional root.
//   cancel — a running terminal and a pending permission request; `session/cancel` makes the
//            prompt answer `cancelled`.
//   probe  — calls `fs/read_text_file` and `terminal/create` whatever the client offered.
//   leak   — leaves a terminal running, never released (the client must clean up on close).
// Also `session/load` (replays every update of the session, the prompts included),
// `session/list` and `session/close`; INTEROP_CAPS=minimal advertises none of them, and the agent
// records a violation when the client uses one anyway. What the client sent and what the SDK
// said about it goes to $ACP_INTEROP_REPORT (recorder.mjs).

import path from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import { createRecorder, sleep } from "./recorder.mjs";

const rec = await createRecorder(1);
// INTEROP_CAPS=minimal: advertise no optional session capability at all.
const CAPABILITIES =
  process.env.INTEROP_CAPS === "minimal"
    ? {}
    : { loadSession: true, sessionCapabilities: { list: {}, close: {}, additionalDirectories: {} } };
const SESSION_CAPS = CAPABILITIES.sessionCapabilities ?? {};
const sessions = new Map(); // sessionId -> {id, cwd, history, turn}
let sessionCount = 0;
let clientCapabilities = null;

const OPTIONS = [
  { optionId: "allow", name: "Allow", kind: "allow_once" },
  { optionId: "reject", name: "Reject", kind: "reject_once" },
];
const MODES = {
  currentModeId: "code",
  availableModes: [
    { id: "ask", name: "Ask" },
    { id: "code", name: "Code" },
  ],
};

const app = acp.agent({ name: "acp-notebook-interop-v1" });

app.onRequest(acp.methods.agent.initialize, ({ params }) => {
  clientCapabilities = params.clientCapabilities;
  rec.event("initialize", { parsed: params });
  return {
    protocolVersion: 1,
    agentInfo: { name: "sdk-interop-v1", title: "SDK interop agent (v1)", version: "2.4.0-interop" },
    agentCapabilities: CAPABILITIES,
    authMethods: [],
  };
});

// What the client may only use when the agent advertised it (the v1 docs: "Clients MUST NOT
// attempt to call `session/list`" without `sessionCapabilities.list`, and so on).
function requireCapability(method, advertised, params) {
  if (!advertised) rec.violation(`${method} without the capability`, { method, params });
}

function checkAdditionalDirectories(method, params) {
  if (params.additionalDirectories !== undefined && !SESSION_CAPS.additionalDirectories) {
    rec.violation("additionalDirectories sent without sessionCapabilities.additionalDirectories", {
      method,
      params,
    });
  }
}

app.onRequest(acp.methods.agent.session.new, ({ params }) => {
  checkAdditionalDirectories("session/new", params);
  const id = `v1_sess_${++sessionCount}`;
  sessions.set(id, {
    id,
    cwd: params.cwd,
    additionalDirectories: params.additionalDirectories ?? [],
    history: [],
    turn: null,
  });
  rec.event("session_new", { sessionId: id, parsed: params });
  return { sessionId: id, modes: MODES };
});

app.onRequest(acp.methods.agent.session.list, ({ params }) => {
  requireCapability("session/list", SESSION_CAPS.list, params);
  rec.event("session_list", { parsed: params });
  return { sessions: [...sessions.values()].map((s) => ({ sessionId: s.id, cwd: s.cwd, title: `Session ${s.id}` })) };
});

app.onRequest(acp.methods.agent.session.load, async ({ params, client }) => {
  requireCapability("session/load", CAPABILITIES.loadSession, params);
  checkAdditionalDirectories("session/load", params);
  const session = sessions.get(params.sessionId);
  if (!session) throw acp.RequestError.sessionNotFound(params.sessionId);
  rec.event("session_load", { parsed: params, replayed: session.history.length });
  for (const update of session.history) {
    await client.notify(acp.methods.client.session.update, { sessionId: session.id, update });
  }
  return { modes: MODES };
});

app.onRequest(acp.methods.agent.session.close, ({ params }) => {
  requireCapability("session/close", SESSION_CAPS.close, params);
  rec.event("session_close", { parsed: params, known: sessions.delete(params.sessionId) });
  return {};
});

app.onRequest(acp.methods.agent.session.prompt, async ({ params, client }) => {
  const session = sessions.get(params.sessionId);
  if (!session) throw acp.RequestError.sessionNotFound(params.sessionId);
  const text = params.prompt.map((block) => block.text ?? "").join(" ");
  const script = { tour, cancel, probe, leak }[text.trim().split(/\s+/)[0]] ?? tour;
  rec.event("prompt", { parsed: params, script: script.name });
  for (const block of params.prompt) session.history.push({ sessionUpdate: "user_message_chunk", content: block });
  const turn = { cancelled: false, abort: new AbortController() };
  session.turn = turn;
  const say = async (update) => {
    session.history.push(update);
    await client.notify(acp.methods.client.session.update, { sessionId: session.id, update });
  };
  const ctx = { say, client, session, turn, cwd: session.cwd, sid: session.id };
  const stopReason = await script(ctx);
  session.turn = null;
  rec.event("turn_end", { script: script.name, stopReason });
  return { stopReason };
});

app.onNotification(acp.methods.agent.session.cancel, ({ params }) => {
  const session = sessions.get(params.sessionId);
  rec.event("session_cancel", { parsed: params, hadTurn: Boolean(session?.turn) });
  if (session?.turn) {
    session.turn.cancelled = true;
    session.turn.abort.abort();
  }
});

// One client request; the result or the JSON-RPC error is recorded under `label`.
async function call(ctx, label, method, params) {
  try {
    const result = await ctx.client.request(method, { sessionId: ctx.sid, ...params });
    rec.event("call", { label, method, params, result: result ?? null });
    return { result };
  } catch (error) {
    const failure = { code: error.code, message: error.message, data: error.data ?? null };
    rec.event("call", { label, method, params, error: failure });
    return { error: failure };
  }
}

async function ask(ctx, label, toolCall) {
  const { result, error } = await call(ctx, label, acp.methods.client.session.requestPermission, {
    toolCall,
    options: OPTIONS,
  });
  return error ? "error" : result.outcome.outcome === "selected" ? result.outcome.optionId : "cancelled";
}

const NEW_TEXT = "line one\nline 2\nline three\n";
const GREEN = "printf '\\033[1;32mgreen\\033[0m caf\\303\\251 %s %s\\n' \"$ACP_INTEROP\" \"$PAGER\"; exit 3";

async function tour(ctx) {
  const { say, cwd } = ctx;
  const notes = path.join(cwd, "notes.txt");
  const outside = path.join(path.dirname(cwd), "outside.txt");
  await say({ sessionUpdate: "agent_thought_chunk", content: { type: "text", text: "Plan first." } });
  await say({
    sessionUpdate: "plan",
    entries: [
      { content: "Read notes", priority: "high", status: "in_progress" },
      { content: "Edit notes", priority: "medium", status: "pending" },
      { content: "Run checks", priority: "low", status: "pending" },
    ],
  });
  await say({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: "Reading " } });
  await say({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: "the notes." } });

  await say({
    sessionUpdate: "tool_call",
    toolCallId: "tc_read",
    title: "Read notes.txt",
    kind: "read",
    status: "pending",
    locations: [{ path: notes, line: 2 }],
    rawInput: { path: notes, line: 2, limit: 2 },
  });
  const read = await call(ctx, "read", acp.methods.client.fs.readTextFile, { path: notes, line: 2, limit: 2 });
  await call(ctx, "read_outside", acp.methods.client.fs.readTextFile, { path: outside });
  await call(ctx, "read_missing", acp.methods.client.fs.readTextFile, { path: path.join(cwd, "missing.txt") });
  await say({
    sessionUpdate: "tool_call_update",
    toolCallId: "tc_read",
    status: "completed",
    content: [{ type: "content", content: { type: "text", text: read.result?.content ?? "" } }],
  });

  const old = (await call(ctx, "read_whole", acp.methods.client.fs.readTextFile, { path: notes })).result?.content;
  await say({
    sessionUpdate: "tool_call",
    toolCallId: "tc_edit",
    title: "Edit notes.txt",
    kind: "edit",
    status: "pending",
    content: [{ type: "diff", path: notes, oldText: old, newText: NEW_TEXT }],
    locations: [{ path: notes }],
  });
  const edit = await ask(ctx, "permission_edit", { toolCallId: "tc_edit", title: "Edit notes.txt", kind: "edit" });
  if (edit === "allow") {
    await say({ sessionUpdate: "tool_call_update", toolCallId: "tc_edit", status: "in_progress" });
    await call(ctx, "write", acp.methods.client.fs.writeTextFile, { path: notes, content: NEW_TEXT });
    await call(ctx, "write_outside", acp.methods.client.fs.writeTextFile, { path: outside, content: "pwned" });
    await call(ctx, "write_notebook", acp.methods.client.fs.writeTextFile, {
      path: path.join(cwd, "analysis.ipynb"),
      content: "{}",
    });
    await call(ctx, "write_new", acp.methods.client.fs.writeTextFile, {
      path: path.join(cwd, "sub", "new.txt"),
      content: "fresh\n",
    });
    for (const dir of ctx.session.additionalDirectories) {
      await call(ctx, "write_extra", acp.methods.client.fs.writeTextFile, {
        path: path.join(dir, "extra.txt"),
        content: "in an additional root\n",
      });
    }
    await say({ sessionUpdate: "tool_call_update", toolCallId: "tc_edit", status: "completed" });
  } else {
    await say({ sessionUpdate: "tool_call_update", toolCallId: "tc_edit", status: "failed" });
  }

  await say({
    sessionUpdate: "tool_call",
    toolCallId: "tc_term",
    title: "Run checks",
    kind: "execute",
    status: "pending",
    rawInput: { command: GREEN },
  });
  const run = await ask(ctx, "permission_run", { toolCallId: "tc_term", title: "Run checks" });
  if (run === "allow") {
    await say({ sessionUpdate: "tool_call_update", toolCallId: "tc_term", status: "in_progress" });
    const created = await call(ctx, "create", acp.methods.client.terminal.create, {
      command: "/bin/sh",
      args: ["-c", GREEN],
      env: [{ name: "ACP_INTEROP", value: "yes" }],
      cwd,
      outputByteLimit: 4096,
    });
    const terminalId = created.result.terminalId;
    await say({
      sessionUpdate: "tool_call_update",
      toolCallId: "tc_term",
      content: [{ type: "terminal", terminalId }],
    });
    const exit = await call(ctx, "wait", acp.methods.client.terminal.waitForExit, { terminalId });
    await call(ctx, "output", acp.methods.client.terminal.output, { terminalId });
    await call(ctx, "release", acp.methods.client.terminal.release, { terminalId });
    await call(ctx, "output_after_release", acp.methods.client.terminal.output, { terminalId });

    // outputByteLimit keeps the newest bytes, cut on a character boundary: "a é b € c" -> "c"
    const small = await call(ctx, "create_limited", acp.methods.client.terminal.create, {
      command: "printf",
      args: ["a\\303\\251b\\342\\202\\254c"],
      outputByteLimit: 3,
    });
    await call(ctx, "wait_limited", acp.methods.client.terminal.waitForExit, { terminalId: small.result.terminalId });
    await call(ctx, "output_limited", acp.methods.client.terminal.output, { terminalId: small.result.terminalId });
    await call(ctx, "release_limited", acp.methods.client.terminal.release, { terminalId: small.result.terminalId });

    const slow = await call(ctx, "create_sleep", acp.methods.client.terminal.create, { command: "sleep", args: ["30"] });
    await call(ctx, "kill", acp.methods.client.terminal.kill, { terminalId: slow.result.terminalId });
    await call(ctx, "wait_killed", acp.methods.client.terminal.waitForExit, { terminalId: slow.result.terminalId });
    await call(ctx, "release_killed", acp.methods.client.terminal.release, { terminalId: slow.result.terminalId });
    await say({
      sessionUpdate: "tool_call_update",
      toolCallId: "tc_term",
      status: "completed",
      rawOutput: { exitCode: exit.result?.exitCode ?? null },
    });
  } else {
    await say({ sessionUpdate: "tool_call_update", toolCallId: "tc_term", status: "failed" });
  }
  await say({
    sessionUpdate: "plan",
    entries: [
      { content: "Read notes", priority: "high", status: "completed" },
      { content: "Edit notes", priority: "medium", status: edit === "allow" ? "completed" : "cancelled" },
      { content: "Run checks", priority: "low", status: run === "allow" ? "completed" : "cancelled" },
    ],
  });
  await say({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: "Done." } });
  return "end_turn";
}

async function cancel(ctx) {
  const { say } = ctx;
  await say({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: "Starting a long job." } });
  await say({ sessionUpdate: "tool_call", toolCallId: "tc_wait", title: "Long job", kind: "execute", status: "in_progress" });
  const created = await call(ctx, "create", acp.methods.client.terminal.create, { command: "sleep", args: ["30"] });
  const terminalId = created.result.terminalId;
  await say({ sessionUpdate: "tool_call_update", toolCallId: "tc_wait", content: [{ type: "terminal", terminalId }] });
  const answer = await ask(ctx, "permission_deploy", { toolCallId: "tc_wait", title: "Long job" });
  // The SDK settles a response before it runs an earlier notification's handler, so the
  // `cancelled` outcome can be seen before `session/cancel` is: either one means cancelled.
  rec.event("cancel_answer", { answer });
  await call(ctx, "kill", acp.methods.client.terminal.kill, { terminalId });
  await call(ctx, "wait", acp.methods.client.terminal.waitForExit, { terminalId });
  await call(ctx, "release", acp.methods.client.terminal.release, { terminalId });
  if (answer !== "cancelled" && !ctx.turn.cancelled) return "end_turn";
  await say({ sessionUpdate: "tool_call_update", toolCallId: "tc_wait", status: "cancelled" });
  return "cancelled";
}

async function probe(ctx) {
  rec.event("probe", { clientCapabilities });
  await call(ctx, "probe_read", acp.methods.client.fs.readTextFile, { path: path.join(ctx.cwd, "notes.txt") });
  await call(ctx, "probe_terminal", acp.methods.client.terminal.create, { command: "true" });
  return "end_turn";
}

async function leak(ctx) {
  const created = await call(ctx, "create", acp.methods.client.terminal.create, {
    command: "/bin/sh",
    args: ["-c", "echo pid=$$; exec sleep 30"],
  });
  const { terminalId } = created.result;
  await ctx.say({
    sessionUpdate: "tool_call",
    toolCallId: "tc_leak",
    title: "Left running",
    kind: "execute",
    status: "in_progress",
    content: [{ type: "terminal", terminalId }],
  });
  for (let i = 0; i < 500; i++) {
    const { output } = await ctx.client.request(acp.methods.client.terminal.output, { sessionId: ctx.sid, terminalId });
    if (output.includes("\n")) break;
    await sleep(10);
  }
  return "end_turn"; // never released: the client must clean up when it closes
}

const connection = app.connect(rec.stdioStream(acp.ndJsonStream));
await connection.closed;
rec.event("closed");
process.exit(0);
