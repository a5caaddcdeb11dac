// An ACP v2 agent on the official SDK's `experimental/v2` API, for acp_notebook's interop tests.
//
// No model: the first word of the prompt picks a script.
//   tour   — every tool-call content type, a content chunk then a replacing update, a terminal
//            (snapshot, chunks with a UTF-8 character split across two chunks, exit status),
//            permission requests with a `tool_call` and a `command` subject whose answers decide
//            what happens next, custom and unknown values, a plan; ends idle `end_turn`.
//   cancel — a streaming terminal and a pending permission request; `session/cancel` ends it
//            idle `cancelled` (the permission request is withdrawn with `$/cancel_request`).
//   items  — a tool call and a terminal advertising `capabilities.cancel`; the turn ends once the
//            client has cancelled both (`tool_call/cancel`, `terminal/cancel`).
//   withdraw — a permission request the agent withdraws with `$/cancel_request`.
//   stray  — a permission request naming a session that does not exist.
//   elicit — elicitations, each mode only if the client advertised it: a form with every field
//            type tied to a tool call (the answer decides it), a URL one followed by unknown,
//            matching and repeated `elicitation/complete`s, a form the agent withdraws
//            (`$/cancel_request`), two stray ones (an unknown `requestId`, an unknown
//            `sessionId`) and one in a custom mode (`_acme_chat`), whose errors are recorded.
// INTEROP_ELICIT_AT_NEW=form|url: `session/new` first asks a request-scoped elicitation whose
// `requestId` is that pending `session/new` (a URL one is then completed).
// The tour also calls v1 client methods and an extension method, which must get -32601.
// Also `session/list` (one session per page), `session/resume` (replays every update sent for
// the session when `replayFrom` is `{type: "start"}`) and `session/close`.
// INTEROP_CAPS=minimal advertises no `session.additionalDirectories`.
// What the client sent and what the SDK said about it goes to $ACP_INTEROP_REPORT (recorder.mjs).

import * as acp from "@agentclientprotocol/sdk/experimental/v2";
import { b64, createRecorder, sleep } from "./recorder.mjs";

const rec = await createRecorder(2);
// INTEROP_CAPS=minimal: advertise the baseline session methods only (no `additionalDirectories`).
const MINIMAL = process.env.INTEROP_CAPS === "minimal";
const CAPABILITIES = MINIMAL ? { session: {} } : { session: { additionalDirectories: {} } };
const sessions = new Map(); // sessionId -> {id, cwd, history, turn, closed, cancels, title}
let sessionCount = 0;

const ALLOW = [
  { optionId: "allow-once", name: "Allow", kind: "allow_once" },
  { optionId: "reject-once", name: "Reject", kind: "reject_once" },
];

const app = acp.agent({ name: "acp-notebook-interop-v2" });

app.onRequest(acp.methods.agent.initialize, ({ params }) => {
  rec.event("initialize", { parsed: params });
  clientCapabilities = params.capabilities ?? {};
  return {
    protocolVersion: acp.PROTOCOL_VERSION,
    info: { name: "sdk-interop-v2", title: "SDK interop agent (v2)", version: "2.4.0-interop" },
    capabilities: CAPABILITIES,
  };
});

// "Clients MUST only send `additionalDirectories` when the Agent advertises
// `session.additionalDirectories`" (v2 session-setup).
function checkAdditionalDirectories(method, params) {
  if (params.additionalDirectories !== undefined && !CAPABILITIES.session.additionalDirectories) {
    rec.violation("additionalDirectories sent without session.additionalDirectories", { method, params });
  }
}

let clientCapabilities = {};

app.onRequest(acp.methods.agent.session.new, async ({ params, client, requestId }) => {
  checkAdditionalDirectories("session/new", params);
  const atNew = process.env.INTEROP_ELICIT_AT_NEW;
  if (atNew) await elicitAtNew(client, requestId, atNew);
  const id = `sess_${++sessionCount}`;
  sessions.set(id, { id, cwd: params.cwd, history: [], turn: null, closed: false, cancels: {}, title: null });
  rec.event("session_new", { sessionId: id, parsed: params });
  return { sessionId: id };
});

app.onRequest(acp.methods.agent.session.list, ({ params }) => {
  const all = [...sessions.values()].filter((s) => !s.closed && (!params.cwd || s.cwd === params.cwd));
  const start = params.cursor ? Number(params.cursor) : 0;
  const page = all.slice(start, start + 1).map((s) => ({
    sessionId: s.id,
    cwd: s.cwd,
    ...(s.title ? { title: s.title } : {}),
  }));
  rec.event("session_list", { parsed: params });
  return start + 1 < all.length ? { sessions: page, nextCursor: String(start + 1) } : { sessions: page };
});

app.onRequest(acp.methods.agent.session.resume, async ({ params, client }) => {
  const session = sessions.get(params.sessionId);
  checkAdditionalDirectories("session/resume", params);
  if (!session || session.closed) throw acp.RequestError.sessionNotFound(params.sessionId);
  rec.event("session_resume", { parsed: params, replayed: params.replayFrom ? session.history.length : 0 });
  if (params.replayFrom?.type === "start") {
    for (const update of session.history) {
      await client.notify(acp.methods.client.session.update, { sessionId: session.id, update });
    }
  }
  const last = [...session.history].reverse().find((u) => u.sessionUpdate === "state_update");
  const snapshot = { sessionUpdate: "state_update", state: "idle" };
  if (last?.stopReason) snapshot.stopReason = last.stopReason;
  await client.notify(acp.methods.client.session.update, { sessionId: session.id, update: snapshot });
  return {};
});

app.onRequest(acp.methods.agent.session.close, ({ params }) => {
  const session = sessions.get(params.sessionId);
  rec.event("session_close", { parsed: params, known: Boolean(session) });
  if (session) {
    session.closed = true;
    session.turn?.abort.abort();
  }
  return {};
});

app.onRequest(acp.methods.agent.session.prompt, async ({ params, client }) => {
  const session = sessions.get(params.sessionId);
  if (!session) throw acp.RequestError.sessionNotFound(params.sessionId);
  const text = params.prompt.map((block) => block.text ?? "").join(" ");
  const script = { tour, cancel, items, withdraw, stray, elicit }[text.trim().split(/\s+/)[0]] ?? tour;
  const messageId = `user_${session.history.length + 1}`;
  rec.event("prompt", { parsed: params, script: script.name });
  const turn = { abort: new AbortController(), cancelled: false };
  session.turn = turn;
  const say = makeSay(client, session);
  await say({ sessionUpdate: "user_message", messageId, content: params.prompt });
  // The response only acknowledges the insertion; the turn runs after it is sent.
  setTimeout(() => {
    script(say, client, session, turn).catch((error) => {
      rec.event("script_error", { message: String(error?.stack ?? error) });
      return say({ sessionUpdate: "state_update", state: "idle", stopReason: "error" });
    });
  }, 0);
  return { messageId };
});

app.onNotification(acp.methods.agent.session.cancel, ({ params }) => {
  const session = sessions.get(params.sessionId);
  rec.event("session_cancel", { parsed: params, hadTurn: Boolean(session?.turn) });
  if (session?.turn) {
    session.turn.cancelled = true;
    session.turn.abort.abort();
  }
});

app.onRequest(acp.methods.agent.toolCall.cancel, async ({ params, client }) => {
  const session = sessions.get(params.sessionId);
  const done = session?.cancels[params.toolCallId];
  if (!done) throw acp.RequestError.invalidParams({ toolCallId: params.toolCallId }, "not cancellable");
  rec.event("tool_call_cancel", { parsed: params });
  setTimeout(() => done(), 0);
  return {};
});

app.onRequest(acp.methods.agent.terminal.cancel, async ({ params }) => {
  const session = sessions.get(params.sessionId);
  const done = session?.cancels[params.terminalId];
  if (!done) throw acp.RequestError.invalidParams({ terminalId: params.terminalId }, "not cancellable");
  rec.event("terminal_cancel", { parsed: params });
  setTimeout(() => done(), 0);
  return {};
});

function makeSay(client, session) {
  return async (update) => {
    session.history.push(update);
    await client.notify(acp.methods.client.session.update, { sessionId: session.id, update });
  };
}

// Ask for permission; a `tool_call` subject is kept in the history as the upsert it is.
async function askPermission(client, session, request, options = {}) {
  if (request.subject?.type === "tool_call") {
    session.history.push({ sessionUpdate: "tool_call_update", ...request.subject.toolCall });
  }
  try {
    const response = await client.request(
      acp.methods.client.session.requestPermission,
      { sessionId: session.id, options: ALLOW, ...request },
      options,
    );
    rec.event("permission", { title: request.title, subject: request.subject?.type, outcome: response.outcome });
    return response.outcome;
  } catch (error) {
    rec.requestFailed("session/request_permission", error);
    return { outcome: "cancelled" };
  }
}

const allowed = (outcome) => outcome.outcome === "selected" && outcome.optionId === "allow-once";

const DIFF_TEXT = (cwd) => ({
  type: "diff",
  changes: [{ operation: "modify", path: `${cwd}/notes.txt`, fileType: "text", mimeType: "text/plain" }],
  patch: {
    format: "git_patch",
    text:
      "diff --git a/notes.txt b/notes.txt\n--- a/notes.txt\n+++ b/notes.txt\n" +
      "@@ -1,2 +1,2 @@\n line one\n-line two\n+line 2\n",
  },
});
const DIFF_BINARY = (cwd) => ({
  type: "diff",
  changes: [{ operation: "add", path: `${cwd}/logo.png`, fileType: "binary", mimeType: "image/png" }],
});

async function tour(say, client, session) {
  const cwd = session.cwd;
  // On a v2 connection the client must not serve v1 client methods.
  for (const method of ["fs/read_text_file", "terminal/create"]) {
    try {
      await client.request(method, { sessionId: session.id, path: `${cwd}/notes.txt`, command: "true" });
      rec.event("v1_method_on_v2", { method, answered: "result" });
    } catch (error) {
      rec.event("v1_method_on_v2", { method, code: error.code, message: error.message });
    }
  }
  // Extension methods: an unknown request gets -32601, an unknown notification is ignored.
  try {
    await client.request("_acme/ping", { n: 1 });
    rec.event("extension", { method: "_acme/ping", answered: "result" });
  } catch (error) {
    rec.event("extension", { method: "_acme/ping", code: error.code });
  }
  await client.notify("_acme/hello", { from: "agent" });
  await say({ sessionUpdate: "state_update", state: "running" });
  await say({
    sessionUpdate: "agent_message_chunk",
    messageId: "msg_1",
    content: { type: "text", text: "Reading the notes, " },
  });
  await say({ sessionUpdate: "agent_message_chunk", messageId: "msg_1", content: { type: "text", text: "then editing." } });
  await say({
    sessionUpdate: "plan_update",
    plan: {
      type: "items",
      planId: "plan_1",
      entries: [
        { content: "Read notes", priority: "high", status: "in_progress" },
        { content: "Edit notes", priority: "medium", status: "pending" },
      ],
    },
  });

  // text content: two chunks, then one update replacing the whole content
  await say({
    sessionUpdate: "tool_call_update",
    toolCallId: "tc_read",
    name: "read_file",
    title: "Read notes.txt",
    kind: "read",
    status: "in_progress",
    locations: [{ path: `${cwd}/notes.txt`, line: 1 }],
    rawInput: { path: `${cwd}/notes.txt` },
  });
  for (const text of ["line one\n", "line two\n"]) {
    await say({
      sessionUpdate: "tool_call_content_chunk",
      toolCallId: "tc_read",
      content: { type: "content", content: { type: "text", text } },
    });
  }
  await say({
    sessionUpdate: "tool_call_update",
    toolCallId: "tc_read",
    status: "completed",
    content: [{ type: "content", content: { type: "text", text: "line one\nline two\n" } }],
    rawOutput: { lines: 2 },
    _meta: { "interop/elapsedMs": 3 },
  });

  // a permission request about a tool call; the answer decides the edit
  await say({
    sessionUpdate: "tool_call_update",
    toolCallId: "tc_edit",
    title: "Edit notes.txt",
    kind: "edit",
    status: "pending",
    locations: [{ path: `${cwd}/notes.txt` }],
  });
  const edit = await askPermission(client, session, {
    title: "Apply the edit to notes.txt?",
    description: "Replaces line two.",
    subject: { type: "tool_call", toolCall: { toolCallId: "tc_edit", content: [DIFF_TEXT(cwd)] } },
  });
  if (allowed(edit)) {
    await say({
      sessionUpdate: "tool_call_update",
      toolCallId: "tc_edit",
      status: "completed",
      content: [DIFF_TEXT(cwd), DIFF_BINARY(cwd)],
    });
  } else {
    await say({ sessionUpdate: "tool_call_update", toolCallId: "tc_edit", status: "failed", rawOutput: { error: "rejected" } });
  }

  // a permission request about a command; the answer decides whether the terminal runs
  await say({
    sessionUpdate: "tool_call_update",
    toolCallId: "tc_run",
    title: "make test",
    kind: "execute",
    status: "pending",
    rawInput: { command: "make test" },
  });
  await say({ sessionUpdate: "state_update", state: "requires_action" });
  const run = await askPermission(client, session, {
    title: "Run `make test`?",
    subject: { type: "command", command: "make test", cwd, toolCallId: "tc_run" },
  });
  await say({ sessionUpdate: "state_update", state: "running" });
  if (allowed(run)) {
    await say({ sessionUpdate: "tool_call_update", toolCallId: "tc_run", status: "in_progress" });
    await say({
      sessionUpdate: "terminal_update",
      terminalId: "term_1",
      command: "make test",
      cwd,
      size: { cols: 80, rows: 24 },
      output: { data: b64("$ make test\r\n") },
    });
    await say({
      sessionUpdate: "tool_call_content_chunk",
      toolCallId: "tc_run",
      content: { type: "terminal", terminalId: "term_1" },
    });
    const bytes = Buffer.from("\x1b[32mPASS\x1b[0m café ✓\r\n", "utf8");
    const split = bytes.indexOf(0xc3) + 1; // inside "é"
    await say({ sessionUpdate: "terminal_output_chunk", terminalId: "term_1", data: b64(bytes.subarray(0, split)) });
    await say({ sessionUpdate: "terminal_output_chunk", terminalId: "term_1", data: b64(bytes.subarray(split)) });
    await say({ sessionUpdate: "terminal_update", terminalId: "term_1", exitStatus: { exitCode: 0, signal: null } });
    await say({ sessionUpdate: "tool_call_update", toolCallId: "tc_run", status: "completed", rawOutput: { exitCode: 0 } });
  } else {
    await say({ sessionUpdate: "tool_call_update", toolCallId: "tc_run", status: "failed" });
  }

  // custom (`_`) and unknown (future) values: kept; only the unknown update kind is diagnosed
  await say({
    sessionUpdate: "tool_call_update",
    toolCallId: "tc_custom",
    title: "Custom tool",
    kind: "_x",
    status: "_custom",
    content: [
      { type: "hologram", frames: 3 },
      { type: "_acme_widget", widget: "gauge", value: 0.5 },
    ],
  });
  await say({ sessionUpdate: "_acme_progress", percent: 50 });
  await say({ sessionUpdate: "future_update", detail: "from a newer ACP" });
  session.title = "Interop tour";
  await say({ sessionUpdate: "session_info_update", title: "Interop tour" });

  await say({ sessionUpdate: "agent_message_chunk", messageId: "msg_2", content: { type: "text", text: "Done." } });
  await say({
    sessionUpdate: "plan_update",
    plan: {
      type: "items",
      planId: "plan_1",
      entries: [
        { content: "Read notes", priority: "high", status: "completed" },
        { content: "Edit notes", priority: "medium", status: allowed(edit) ? "completed" : "cancelled" },
      ],
    },
  });
  await say({ sessionUpdate: "state_update", state: "idle", stopReason: "end_turn" });
  rec.event("turn_end", { script: "tour", stopReason: "end_turn" });
}

async function cancel(say, client, session, turn) {
  const cwd = session.cwd;
  await say({ sessionUpdate: "state_update", state: "running" });
  await say({
    sessionUpdate: "tool_call_update",
    toolCallId: "tc_slow",
    title: "make build",
    kind: "execute",
    status: "in_progress",
    content: [{ type: "terminal", terminalId: "term_slow" }],
  });
  await say({ sessionUpdate: "terminal_update", terminalId: "term_slow", command: "make build", cwd });
  const streaming = (async () => {
    for (let tick = 1; tick <= 400 && !turn.abort.signal.aborted; tick++) {
      await say({ sessionUpdate: "terminal_output_chunk", terminalId: "term_slow", data: b64(`tick ${tick}\r\n`) });
      await sleep(20);
    }
  })();
  const outcome = await askPermission(
    client,
    session,
    {
      title: "Deploy after the build?",
      subject: { type: "command", command: "make deploy", cwd, toolCallId: "tc_slow", terminalId: "term_slow" },
    },
    { cancellationSignal: turn.abort.signal },
  );
  await streaming;
  if (session.closed) {
    rec.event("turn_end", { script: "cancel", stopReason: null, closed: true, outcome });
    return; // a closed session gets no more updates
  }
  if (!turn.cancelled) {
    await say({ sessionUpdate: "state_update", state: "idle", stopReason: "end_turn" });
    rec.event("turn_end", { script: "cancel", stopReason: "end_turn", outcome });
    return;
  }
  await say({ sessionUpdate: "terminal_update", terminalId: "term_slow", exitStatus: { exitCode: null, signal: "SIGINT" } });
  await say({ sessionUpdate: "tool_call_update", toolCallId: "tc_slow", status: "cancelled" });
  await say({ sessionUpdate: "state_update", state: "idle", stopReason: "cancelled" });
  rec.event("turn_end", { script: "cancel", stopReason: "cancelled", outcome });
}

async function items(say, client, session) {
  const cwd = session.cwd;
  await say({ sessionUpdate: "state_update", state: "running" });
  const cancelled = (id) => new Promise((resolve) => (session.cancels[id] = resolve));
  const toolCallDone = cancelled("tc_job");
  const terminalDone = cancelled("term_job");
  await say({
    sessionUpdate: "tool_call_update",
    toolCallId: "tc_job",
    title: "Watch the logs",
    kind: "execute",
    status: "in_progress",
    capabilities: { cancel: {} },
    content: [{ type: "terminal", terminalId: "term_job" }],
  });
  await say({
    sessionUpdate: "terminal_update",
    terminalId: "term_job",
    command: "tail -f app.log",
    cwd,
    capabilities: { cancel: {} },
  });
  await say({ sessionUpdate: "terminal_output_chunk", terminalId: "term_job", data: b64("started\r\n") });
  await terminalDone;
  delete session.cancels.term_job;
  await say({
    sessionUpdate: "terminal_update",
    terminalId: "term_job",
    exitStatus: { exitCode: null, signal: "SIGTERM" },
    capabilities: null,
  });
  await toolCallDone;
  delete session.cancels.tc_job;
  await say({ sessionUpdate: "tool_call_update", toolCallId: "tc_job", status: "cancelled", capabilities: null });
  await say({ sessionUpdate: "state_update", state: "idle", stopReason: "end_turn" });
  rec.event("turn_end", { script: "items", stopReason: "end_turn" });
}

async function withdraw(say, client, session) {
  await say({ sessionUpdate: "state_update", state: "running" });
  await say({ sessionUpdate: "tool_call_update", toolCallId: "tc_ask", title: "Ask first", status: "pending" });
  const controller = new AbortController();
  const answer = askPermission(
    client,
    session,
    { title: "Proceed?", subject: { type: "tool_call", toolCall: { toolCallId: "tc_ask" } } },
    { cancellationSignal: controller.signal },
  );
  await sleep(30);
  controller.abort(); // the SDK sends `$/cancel_request` and waits for the client's answer
  const outcome = await answer;
  await say({ sessionUpdate: "tool_call_update", toolCallId: "tc_ask", status: "cancelled" });
  await say({ sessionUpdate: "state_update", state: "idle", stopReason: "end_turn" });
  rec.event("turn_end", { script: "withdraw", stopReason: "end_turn", outcome });
}

async function stray(say, client, session) {
  await say({ sessionUpdate: "state_update", state: "running" });
  try {
    const response = await client.request(acp.methods.client.session.requestPermission, {
      sessionId: "sess_unknown",
      title: "Stray request?",
      options: ALLOW,
    });
    rec.event("unknown_session", { answered: "result", response });
  } catch (error) {
    rec.event("unknown_session", { code: error.code, message: error.message, data: error.data ?? null });
  }
  await say({ sessionUpdate: "state_update", state: "idle", stopReason: "end_turn" });
}

// -- elicitation -----------------------------------------------------------------------------------
// "Form support exists only when `form` is explicitly present and non-null" (v2 elicitation page).
const advertises = (mode) => clientCapabilities.elicitation?.[mode] != null;

const RELEASE_FORM = {
  type: "object",
  title: "Release",
  properties: {
    name: { type: "string", title: "Name", minLength: 2, maxLength: 20, default: "spring" },
    version: { type: "string", title: "Version", pattern: "^\\d+\\.\\d+$" },
    contact: { type: "string", title: "Contact", format: "email" },
    level: { type: "string", title: "Level", enum: ["low", "high"], default: "low" },
    channel: {
      type: "string",
      title: "Channel",
      oneOf: [
        { const: "stable", title: "Stable" },
        { const: "beta", title: "Beta", description: "testers only" },
      ],
    },
    ratio: { type: "number", title: "Ratio", minimum: 0, maximum: 1, default: 0.5 },
    copies: { type: "integer", title: "Copies", minimum: 1, maximum: 9 },
    notify: { type: "boolean", title: "Notify", default: true },
    targets: {
      type: "array",
      title: "Targets",
      items: { type: "string", enum: ["linux", "mac", "windows"] },
      minItems: 1,
      maxItems: 2,
    },
    checks: {
      type: "array",
      title: "Checks",
      items: {
        anyOf: [
          { const: "unit", title: "Unit tests" },
          { const: "types", title: "Type check" },
        ],
      },
    },
  },
  required: ["name", "version", "targets"],
};

async function ask(client, params, options = {}) {
  try {
    const response = await client.request(acp.methods.client.elicitation.create, params, options);
    rec.event("elicitation", { message: params.message, mode: params.mode, response });
    return response;
  } catch (error) {
    rec.event("elicitation", { message: params.message, mode: params.mode, code: error.code, error: error.message });
    return { action: "cancel", error: error.code };
  }
}

async function completeUrl(client, elicitationId) {
  await client.notify(acp.methods.client.elicitation.complete, { elicitationId: `${elicitationId}_unknown` });
  await client.notify(acp.methods.client.elicitation.complete, { elicitationId });
  await client.notify(acp.methods.client.elicitation.complete, { elicitationId }); // repeated: ignored
}

async function elicitAtNew(client, requestId, mode) {
  if (!advertises(mode)) {
    rec.event("elicitation_skipped", { mode, scope: "request" });
    return;
  }
  const scope = { requestId, message: mode === "url" ? "Sign in before the session starts." : "Name the session." };
  const params =
    mode === "url"
      ? { ...scope, mode, elicitationId: "elic_new", url: "https://auth.example.com/start?e=elic_new" }
      : { ...scope, mode, requestedSchema: { type: "object", properties: { title: { type: "string" } }, required: ["title"] } };
  const response = await ask(client, params);
  if (mode === "url" && response.action === "accept") await completeUrl(client, "elic_new");
}

async function elicit(say, client, session, turn) {
  await say({ sessionUpdate: "state_update", state: "running" });
  if (advertises("form")) {
    await say({ sessionUpdate: "tool_call_update", toolCallId: "tc_release", title: "Release", kind: "other", status: "pending" });
    await say({ sessionUpdate: "state_update", state: "requires_action" });
    const form = await ask(
      client,
      { sessionId: session.id, toolCallId: "tc_release", mode: "form", message: "How should I release?", requestedSchema: RELEASE_FORM },
      { cancellationSignal: turn.abort.signal },
    );
    await say({ sessionUpdate: "state_update", state: "running" });
    const accepted = form.action === "accept";
    await say({
      sessionUpdate: "tool_call_update",
      toolCallId: "tc_release",
      status: accepted ? "completed" : "failed",
      rawOutput: accepted ? (form.content ?? {}) : { action: form.action },
    });
  }
  if (advertises("url")) {
    const url = await ask(client, {
      sessionId: session.id,
      mode: "url",
      elicitationId: "elic_url_1",
      url: "https://xn--80ak6aa92e.com/consent?e=elic_url_1",
      message: "Consent on the provider's page.",
    });
    if (url.action === "accept") await completeUrl(client, "elic_url_1");
  }
  if (advertises("form")) {
    const controller = new AbortController();
    const answer = ask(
      client,
      { sessionId: session.id, mode: "form", message: "Withdrawn soon?", requestedSchema: { type: "object", properties: {} } },
      { cancellationSignal: controller.signal },
    );
    await sleep(30);
    controller.abort(); // the SDK sends `$/cancel_request` and waits for the client's answer
    await answer;
    for (const scope of [{ requestId: 987654 }, { sessionId: "sess_unknown" }]) {
      await ask(client, { ...scope, mode: "form", message: "Stray?", requestedSchema: { type: "object", properties: {} } });
    }
    await ask(client, { sessionId: session.id, mode: "_acme_chat", message: "A mode nobody advertised?" });
  }
  await say({ sessionUpdate: "state_update", state: "idle", stopReason: "end_turn" });
  rec.event("turn_end", { script: "elicit", stopReason: "end_turn" });
}

const connection = app.connect(rec.stdioStream(acp.ndJsonStream));
connection.initialized.then(
  ({ request }) => rec.event("initialized", { request }),
  (error) => rec.event("initialize_failed", { message: String(error?.message ?? error) }),
);
await connection.closed;
rec.event("closed");
process.exit(0);
