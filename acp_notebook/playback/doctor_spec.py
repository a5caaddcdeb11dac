"""What the doctor checks against: the schemas' enum values, each version's wire shapes, and the
spec sentences (or known breakages) its findings cite. Data only; ``doctor`` does the analysis.

The enums are those of ``schema/v1.schema.json`` and ``schema/v2.schema.json`` (the tests compare
them with the schema files). v1's are closed; v2's are open, with an ``other`` fallback for
``_``-prefixed custom values and unknown values reserved for future ACP variants.
"""

from __future__ import annotations

ENUMS: dict[int, dict[str, frozenset[str]]] = {
    1: {
        "ToolCallStatus": frozenset({"pending", "in_progress", "completed", "failed"}),
        "ToolKind": frozenset(
            {"read", "edit", "delete", "move", "search", "execute", "think", "fetch", "switch_mode", "other"}
        ),
        "StopReason": frozenset({"end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled"}),
        "PlanEntryStatus": frozenset({"pending", "in_progress", "completed"}),
    },
    2: {
        "ToolCallStatus": frozenset({"pending", "in_progress", "paused", "completed", "failed", "cancelled"}),
        "ToolKind": frozenset(
            {"read", "edit", "delete", "move", "search", "execute", "think", "fetch", "switch_mode", "other"}
        ),
        "StopReason": frozenset(
            {"end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled", "error"}
        ),
        "PlanEntryStatus": frozenset({"pending", "in_progress", "completed", "cancelled"}),
        "SessionState": frozenset({"running", "idle", "requires_action"}),
    },
}

# sessionUpdate kinds and agent requests that exist in one version only (v2/migration.mdx tables)
ONLY_UPDATES: dict[int, frozenset[str]] = {
    1: frozenset({"tool_call", "plan", "current_mode_update"}),
    2: frozenset(
        {
            "user_message",
            "agent_message",
            "agent_thought",
            "state_update",
            "tool_call_content_chunk",
            "terminal_update",
            "terminal_output_chunk",
            "plan_update",
        }
    ),
}
ONLY_METHODS: dict[int, frozenset[str]] = {
    1: frozenset(
        {
            "fs/read_text_file",
            "fs/write_text_file",
            "terminal/create",
            "terminal/output",
            "terminal/release",
            "terminal/wait_for_exit",
            "terminal/kill",
        }
    ),
    2: frozenset(),
}
TOOL_UPDATES = frozenset({"tool_call", "tool_call_update", "tool_call_content_chunk"})
LINE_LIMIT = 64 * 1024  # asyncio.StreamReader's default limit (2**16 bytes)

_OPEN = (
    '{v}.schema.json ({name}, "other"): "Values beginning with `_` are reserved for '
    "implementation-specific extensions. Unknown values that do not begin with `_` are reserved "
    'for future ACP variants."; v2/extensibility.mdx: "Extensions **MUST NOT** define custom '
    'non-underscore values."'
)
_V2_DOC = {
    "ToolCallStatus": 'v2/tool-calls.mdx: "Custom status values **MUST** begin with `_`; unknown '
    'non-underscore statuses are reserved for future ACP variants."',
    "ToolKind": 'v2/tool-calls.mdx: "Custom tool kinds **MUST** begin with `_`. Unknown '
    'non-underscore tool kinds are reserved for future ACP variants."',
    "StopReason": 'v2/prompt-lifecycle.mdx: "Custom stop reasons **MUST** begin with `_`; unknown '
    'non-underscore stop reasons are reserved for future ACP variants."',
    "PlanEntryStatus": 'v2/agent-plan.mdx: "Custom statuses **MUST** begin with `_`; unknown '
    'non-underscore statuses are reserved for future ACP variants."',
}


def reserved_cite(version: int, name: str) -> str:
    """The sentence a non-underscore value outside ``name``'s enum breaks."""
    if version == 1:
        values = ", ".join(sorted(ENUMS[1][name]))
        return f"v1.schema.json ({name}): a closed enum, one of: {values}"
    return _V2_DOC.get(name) or _OPEN.format(v="v2", name=name)


CANCEL = {
    1: 'v1/prompt-turn.mdx (Cancellation): "After all ongoing operations have been successfully '
    "aborted and pending updates have been sent, the Agent **MUST** respond to the original "
    '`session/prompt` request with the `cancelled` [stop reason](#stop-reasons)."; '
    'v1/cancellation.mdx: "6. Agent completes prompt cancellation" / "response to id=1 '
    '(stopReason: "cancelled")"',
    2: 'v2/prompt-lifecycle.mdx (Cancellation): "After all ongoing operations have been '
    "successfully aborted and pending updates have been sent, the Agent **MUST** send an idle "
    '`state_update` session update with the `cancelled` [stop reason](#stop-reasons)."; '
    'v2/cancellation.mdx: "6. Agent reports cancellation completion" / "session/update '
    '(state_update: idle, stopReason: "cancelled")"',
}
CANCEL_ERROR = {
    1: 'v1/prompt-turn.mdx (Cancellation): "Agents **MUST** catch these errors and return the '
    "semantically meaningful `cancelled` stop reason, so that Clients can reliably confirm the "
    'cancellation."',
    2: CANCEL[2],
}
AFTER_TURN = {
    1: 'v1/prompt-turn.mdx (Cancellation): "The Agent **MAY** send `session/update` notifications '
    "with content or tool call updates after receiving the `session/cancel` notification, but it "
    '**MUST** ensure that it does so before responding to the `session/prompt` request."',
    2: 'v2/prompt-lifecycle.mdx (Cancellation): "The Agent **MAY** send `session/update` '
    "notifications with content or tool call updates after receiving the `session/cancel` "
    "notification, but it **MUST** ensure that it does so before sending the idle `state_update` "
    'session update that reports cancellation."',
}
TERMINAL = {
    1: 'v1/terminals.mdx: "The Client returns a Terminal ID immediately without waiting for '
    'completion" (of `terminal/create`); "Terminals can be embedded directly in [tool '
    'calls](/protocol/v1/tool-calls) to provide real-time output to users" (by that ID).',
    2: 'v2/tool-calls.mdx (Display-only Terminals): "A terminal content item references an '
    'Agent-owned terminal by ID"; "Agents create and update stored terminal state with '
    '`terminal_update`".',
}
MIXED = (
    'v2/migration.mdx: "a single connection always speaks exactly one negotiated version after '
    '`initialize`." The `sessionUpdate` and method tables there list what each version has.'
)
STDOUT = (
    'v{v}/transports.mdx (stdio): "The agent **MUST NOT** write anything to its `stdout` that is '
    'not a valid ACP message."'
)
EARLY_PERMISSION = (
    "Breakage: v1 clients that look the request's `toolCall.toolCallId` up among the tool calls "
    "they know (to show the prompt on its card, with the tool's title, kind and locations) find "
    "none, and show a bare prompt or drop it (Codex and Gemini ask before announcing). v1 only "
    'implies the order: v1/tool-calls.mdx: "The Agent **MAY** request permission from the user '
    'before executing a tool call" with `toolCall` a `ToolCallUpdate`; v2 allows it: '
    'v2/tool-calls.mdx: "The IDs only associate the permission with displayed state and may be '
    'unavailable before execution starts."'
)
LONG_LINE = (
    "Breakage: the official Python SDK (agentclientprotocol/python-sdk, "
    "`acp.transports.spawn_stdio_transport(limit=None)`) reads stdio with asyncio's default "
    "StreamReader limit of 64 KiB (2**16 bytes); `readline()` raises on a longer line and the "
    'connection stops reading. v{v}/transports.mdx sets no limit: "Messages are delimited by '
    'newlines (`\\n`), and **MUST NOT** contain embedded newlines."'
)
EMPTIED_CARD = (
    "Breakage: the permission's `toolCall` is an upsert that a client applies to the card the user "
    'sees (v2/tool-calls.mdx: "`content` and `locations` are replaced as whole arrays; send `[]` '
    'or `null` to clear them"; "fields ... replace the previous value when concrete values are '
    'sent"): sending `content: []` or `rawInput: {}` with the question wipes what the card showed '
    'just as the user is asked about it (claude-agent-acp\'s plan-mode "Ready to code?" does: the '
    "plan disappears). Omit the fields to leave them unchanged."
)
ANNOUNCE = (
    'v2.unstable.schema.json (SubagentUpdate): "The first update for an unknown `sessionId` '
    "announces the child and MUST be sent before any live request or notification bearing the "
    "child's session ID, including messages naming it as sender or recipient.\" A client routes by "
    "session id: it cannot place what names a session it has not been told of."
)
ELICITATION_MODE = (
    'v{v}/elicitation.mdx (Checking support): "Agents **MUST NOT** request a mode the Client has not '
    'advertised." — "Form support exists only when `form` is explicitly present and non-null. URL '
    'support exists only when `url` is explicitly present and non-null."'
)
ELICITATION_COMPLETE = (
    'v{v}/elicitation.mdx (URL completion): "The Agent **MAY** send `elicitation/complete` after the '
    "external interaction finishes. It **MUST** send that notification only to the same Client that "
    'received the original request and include the original `elicitationId`."'
)
ELICITATION_ID_REUSED = (
    'v{v}/elicitation.mdx (URL completion): "The Agent **MUST** keep each `elicitationId` unique '
    'among outstanding URL elicitations on that Agent-Client connection"'
)
ELICITATION_REQUEST_SCOPE = (
    'v{v}.schema.json (ElicitationRequestScope): "Request-scoped elicitation, tied to a specific '
    'JSON-RPC request outside of a session"; its `requestId`: "{field}"'
)
REQUEST_SCOPE_FIELD = {
    1: "The request this elicitation is tied to.",
    2: "The pending Client-to-Agent request this elicitation is tied to.",
}
ELICITATION_SECRET = (
    'v{v}/elicitation.mdx (Form mode): "Form mode **MUST NOT** be used to request secrets or '
    "credentials that grant access or authorize transactions, such as passwords, API keys, access or "
    'refresh tokens, private keys, recovery codes, or payment credentials." — "Agents **MUST** use '
    'URL mode for sensitive interactions."'
)
ELICITATION_TOOL_CALL = (
    "Breakage: a client shows a tool call's question on that tool call's card (its title, kind and "
    "locations say what it is about); naming a tool call the agent never reports leaves it nothing "
    "to attach to (the question falls back to the turn). v{v}.schema.json (ElicitationSessionScope): "
    '"When `toolCallId` is set, the elicitation is tied to a specific tool call." — its '
    '`toolCallId`: "Optional tool call within the session."'
)
