// What an interop agent saw from the client under test, and what the SDK said about it.
//
// The agents speak through the SDK over stdio (`ndJsonStream`); this module taps that stream in
// both directions so the report holds every message the client sent, exactly as received, with
// the method each response answered. Everything the SDK reports about those messages lands in the
// report too:
//   - `schemaErrors`: a zod failure of the SDK's own validators (dist/v*/schema/zod.gen.js), run on
//     each request, notification and response the client sent — the same validators the SDK uses
//     to parse incoming params (v1 and v2) and responses (v2); the v1 SDK does not parse responses
//     to agent requests itself, so this is where a bad v1 response shows up;
//   - `errorsSent`: error responses the agent side sent back (the SDK answers a request whose params
//     fail its parser with -32602 before any handler runs);
//   - `consoleErrors`: what the SDK logged (e.g. "Error handling notification" for a bad cancel);
//   - `violations`: protocol rules the SDK does not enforce but the agent checks itself (a method or
//     field used although the agent did not advertise the capability it needs).
// The report is rewritten to $ACP_INTEROP_REPORT after every change, so it survives any exit.

import fs from "node:fs";
import { Readable, Writable } from "node:stream";

const SDK_ENTRY = {
  1: "@agentclientprotocol/sdk",
  2: "@agentclientprotocol/sdk/experimental/v2",
};

// The SDK validators for what a client sends, by method (requests, notifications, and the
// responses to the agent's requests). `null` results of methods the SDK maps with
// `response ?? {}` (its `emptyObjectResponse`) are checked as `{}`, as the SDK reads them.
const SCHEMAS = {
  1: {
    request: {
      initialize: "zInitializeRequest",
      "session/new": "zNewSessionRequest",
      "session/load": "zLoadSessionRequest",
      "session/list": "zListSessionsRequest",
      "session/resume": "zResumeSessionRequest",
      "session/close": "zCloseSessionRequest",
      "session/prompt": "zPromptRequest",
    },
    notification: { "session/cancel": "zCancelNotification", "$/cancel_request": "zCancelRequestNotification" },
    response: {
      "session/request_permission": "zRequestPermissionResponse",
      "fs/read_text_file": "zReadTextFileResponse",
      "fs/write_text_file": "zWriteTextFileResponse",
      "terminal/create": "zCreateTerminalResponse",
      "terminal/output": "zTerminalOutputResponse",
      "terminal/wait_for_exit": "zWaitForTerminalExitResponse",
      "terminal/kill": "zKillTerminalResponse",
      "terminal/release": "zReleaseTerminalResponse",
    },
    nullIsEmpty: new Set(["fs/write_text_file", "terminal/kill", "terminal/release"]),
  },
  2: {
    request: {
      initialize: "zInitializeRequest",
      "session/new": "zNewSessionRequest",
      "session/list": "zListSessionsRequest",
      "session/resume": "zResumeSessionRequest",
      "session/close": "zCloseSessionRequest",
      "session/prompt": "zPromptRequest",
      "tool_call/cancel": "zCancelToolCallRequest",
      "terminal/cancel": "zCancelTerminalRequest",
    },
    notification: {
      "session/cancel": "zCancelSessionNotification",
      "$/cancel_request": "zCancelRequestNotification",
    },
    response: {
      "session/request_permission": "zRequestPermissionResponse",
      "elicitation/create": "zCreateElicitationResponse",
    },
    nullIsEmpty: new Set(),
  },
};

export async function createRecorder(version) {
  const entry = import.meta.resolve(SDK_ENTRY[version]);
  const zod = await import(new URL("../schema/zod.gen.js", entry).href);
  const pkg = JSON.parse(fs.readFileSync(new URL("../../../package.json", entry), "utf8"));
  const schemas = SCHEMAS[version];
  const path = process.env.ACP_INTEROP_REPORT;
  const report = {
    agent: `v${version}`,
    sdkVersion: pkg.version,
    received: [], // [{message, method}] every message from the client; `method` names what a response answers
    events: [], // [{type, ...}] what the agent did with it
    schemaErrors: [],
    errorsSent: [],
    consoleErrors: [],
    violations: [],
  };
  const outgoingRequests = new Map(); // id -> method, for the agent's own requests
  const incomingRequests = new Map(); // id -> method, for the client's requests

  const flush = () => {
    if (!path) return;
    fs.writeFileSync(`${path}.tmp`, JSON.stringify(report, null, 1));
    fs.renameSync(`${path}.tmp`, path);
  };

  const check = (kind, method, value) => {
    const name = schemas[kind][method];
    if (!name) return;
    if (kind === "response" && value === null && schemas.nullIsEmpty.has(method)) value = {};
    const result = zod[name].safeParse(value ?? {});
    if (!result.success) {
      report.schemaErrors.push({ kind, method, schema: name, issues: result.error.issues, value });
    }
  };

  const incoming = (message) => {
    let method = message.method;
    if (method !== undefined && message.id !== undefined) {
      incomingRequests.set(message.id, method);
      check("request", method, message.params);
    } else if (method !== undefined) {
      check("notification", method, message.params);
    } else {
      method = outgoingRequests.get(message.id);
      outgoingRequests.delete(message.id);
      if ("result" in message) check("response", method, message.result);
    }
    report.received.push({ message, method: method ?? null });
    flush();
  };

  const outgoing = (message) => {
    if (message.method !== undefined && message.id !== undefined) {
      outgoingRequests.set(message.id, message.method);
    } else if (message.method === undefined && "error" in message) {
      report.errorsSent.push({ to: incomingRequests.get(message.id) ?? null, ...message });
      flush();
    }
  };

  const consoleError = console.error.bind(console);
  console.error = (...args) => {
    report.consoleErrors.push(args.map((a) => (typeof a === "string" ? a : safeJson(a))).join(" "));
    flush();
    consoleError(...args);
  };

  return {
    report,
    flush,
    event(type, data = {}) {
      report.events.push({ type, ...data });
      flush();
    },
    // A rule of the protocol the client broke (checked by the agent, not by the SDK).
    violation(rule, detail = {}) {
      report.violations.push({ rule, ...detail });
      flush();
    },
    // The SDK-reported rejection of a response the agent asked for (v2 parses responses itself).
    requestFailed(method, error) {
      const entry = { method, name: error?.name, code: error?.code, message: String(error?.message ?? error) };
      if (error?.name === "ZodError") report.schemaErrors.push({ kind: "response", method, issues: error.issues });
      report.events.push({ type: "request_failed", ...entry });
      flush();
      return entry;
    },
    // A stdio stream for `ndJsonStream` whose messages pass through the recorder both ways.
    stdioStream(ndJsonStream) {
      const inner = ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin));
      const readable = inner.readable.pipeThrough(
        new TransformStream({
          transform(message, controller) {
            incoming(message);
            controller.enqueue(message);
          },
        }),
      );
      const writer = inner.writable.getWriter();
      const writable = new WritableStream({
        async write(message) {
          outgoing(message);
          await writer.write(message);
        },
        close: () => writer.close(),
        abort: (reason) => writer.abort(reason),
      });
      return { readable, writable };
    },
  };
}

function safeJson(value) {
  try {
    return value instanceof Error ? `${value.name}: ${value.message}` : JSON.stringify(value);
  } catch {
    return String(value);
  }
}

export const b64 = (bytes) => Buffer.from(bytes).toString("base64");
export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
