// The official SDK as referee of an agent's messages (ACP v2, unstable schema).
//
// `node check_agent.mjs MESSAGES.json` reads a JSON array of {message, method}: every message an
// agent sent a client, `method` naming what a response answers. Each is parsed with the SDK's own
// unstable validators (dist/v2/unstable/schema/zod.gen.js) — the ones a client on the SDK runs on
// what it receives. The SDK's parsers are lenient (a malformed optional field falls back to its
// default, an unknown key is dropped), so a message also counts as rejected when the parsed value
// differs from what was sent. Prints a JSON array of {index, method, schema, problem} (empty: all
// accepted) and, on stderr, how many messages of each schema it checked.

import fs from "node:fs";
import { isDeepStrictEqual } from "node:util";

const entry = import.meta.resolve("@agentclientprotocol/sdk/experimental/v2/unstable");
const zod = await import(new URL("./schema/zod.gen.js", entry).href);

const NOTIFICATIONS = {
  "session/update": "zUpdateSessionNotification",
  "$/cancel_request": "zCancelRequestNotification",
  "elicitation/complete": "zCompleteElicitationNotification",
};
const REQUESTS = {
  "session/request_permission": "zRequestPermissionRequest",
  "elicitation/create": "zCreateElicitationRequest",
};
const RESPONSES = {
  initialize: "zInitializeResponse",
  "session/new": "zNewSessionResponse",
  "session/prompt": "zPromptResponse",
  "session/list": "zListSessionsResponse",
  "session/resume": "zResumeSessionResponse",
  "session/close": "zCloseSessionResponse",
  "tool_call/cancel": "zCancelToolCallResponse",
  "terminal/cancel": "zCancelTerminalResponse",
};

function schemaOf({ message, method }) {
  if (message.method !== undefined) {
    return (message.id !== undefined ? REQUESTS : NOTIFICATIONS)[message.method];
  }
  return "result" in message ? RESPONSES[method] : undefined;
}

// JSON drops `undefined`; so does the comparison (a field the parser added as undefined is no change)
const plain = (value) => JSON.parse(JSON.stringify(value ?? null));

const items = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
const problems = [];
const counts = {};
items.forEach((item, index) => {
  const { message } = item;
  const method = message.method ?? item.method;
  if (message.error !== undefined) return; // error responses: the envelope's business, not a schema's
  const name = schemaOf(item);
  if (!name) {
    problems.push({ index, method, schema: null, problem: "no SDK validator for this message" });
    return;
  }
  counts[name] = (counts[name] ?? 0) + 1;
  const value = message.method !== undefined ? message.params : message.result;
  const parsed = zod[name].safeParse(value ?? {});
  if (!parsed.success) {
    problems.push({ index, method, schema: name, problem: parsed.error.issues });
  } else if (!isDeepStrictEqual(plain(parsed.data), plain(value ?? {}))) {
    problems.push({ index, method, schema: name, problem: { sent: value, parsed: plain(parsed.data) } });
  }
});
process.stderr.write(`checked: ${JSON.stringify(counts)}\n`);
process.stdout.write(JSON.stringify(problems));
