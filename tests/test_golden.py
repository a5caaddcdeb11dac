"""Golden wire fixtures replayed through the pure core.

Each ``tests/golden/NAME.jsonl`` holds JSON-RPC lines as an agent sends them (the seed's examples
verbatim where the seed gives one); ``NAME.expected.json`` holds the state the seed's rules
require after the last line, written by hand from the rules. Replay goes through the real client
intake: an ``Agent`` over a ``MemoryStream`` (no process) negotiates the fixture's version, opens
the fixture's session, and then receives each line as if the agent wrote it — the connection
parses it, the wire routes it, the session applies it (``v1_*`` cases through the v1 wire's
normalisation) and its permission desk takes requests. A response line is the client's answer:
the replay makes the same choice on the pending request, and the response the client then writes
must equal that line (it is listed under ``responses``).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from acp_notebook.client.agent import Agent
from acp_notebook.playback.memory import MemoryStream
from acp_notebook.protocol import PermissionRequest, SessionState

GOLDEN_DIR = Path(__file__).parent / "golden"
SCHEMA_DIRS = (Path(__file__).parent / "schema", Path(__file__).parents[2] / "shared" / "spec" / "schema")

# Every fixture, with what it shows. A new fixture must be added here (test_golden_cases_covered).
GOLDEN_CASES: dict[str, str] = {
    # the seed's examples
    "seed_reporting": "Reporting: the first tool_call_update creates call_001",
    "seed_update": "Updating: status and content change, title and kind kept",
    "seed_content_chunk": "Streaming content: a tool_call_content_chunk appends its item",
    "seed_permission_tool_call": "tool_call permission subject; its title does not replace the tool call's",
    "seed_permission_creates_tool_call": "a first-seen toolCallId in a permission subject creates the call",
    "seed_permission_command": "command permission subject kept; creates neither tool call nor terminal",
    "seed_permission_response_selected": "the client's `selected` response, exactly as in the seed",
    "seed_permission_response_cancelled": "the client's `cancelled` response, exactly as in the seed",
    "seed_terminal_update": "terminal_update example: command, cwd, output snapshot, exitStatus",
    "seed_terminal_output_chunk": "terminal_output_chunk example on a first-seen terminal",
    "seed_terminal_update_then_chunk": "the terminal_update example followed by the output chunk example",
    "seed_exit_signal": 'exitStatus {"signal": "SIGTERM"}',
    "seed_regular_content": "regular content item",
    "seed_diff_with_patch": "diff with changes and git_patch text, kept verbatim",
    "seed_diff_binary_without_patch": "binary diff without patch, kept verbatim",
    "seed_terminal_content_item": "terminal content item: the referenced terminal exists, empty",
    "seed_location": "location with path and line",
    "seed_updates_while_idle": "tool call and terminal updates while idle do not change the run state",
    # the rules
    "rule_omit_keeps": "omitted fields keep their values",
    "rule_null_clears": "null clears every field (kind -> other, status -> pending)",
    "rule_value_replaces": "concrete values replace, objects are not merged",
    "rule_new_id_defaults": "a new id starts from defaults, with or without nulls",
    "rule_content_empty_clears": "content: [] and locations: [] clear",
    "rule_content_null_clears": "content: null and locations: null clear (chunked content too)",
    "rule_chunk_update_chunk": "chunks append, an update replaces them, later chunks append to that",
    "rule_chunk_meta_scoped": "a chunk's _meta is chunk-scoped: it never patches the tool call's",
    "rule_meta_patch_by_key": "_meta patches by top-level key; nested objects replaced, not merged",
    "rule_meta_null_clears": "_meta: null clears it; a cleared _meta is absent",
    "rule_null_resets_kind_status_title": "kind null -> other, status null -> pending, title null -> unset",
    "rule_terminal_snapshot_then_chunks": "a snapshot replaces all bytes; later chunks append",
    "rule_terminal_output_null_clears": "output: null clears bytes; output._meta is snapshot-scoped",
    "rule_terminal_patch": "terminal fields patch: omit keeps, null clears, value replaces, _meta by key",
    "rule_terminal_ref_then_update": "terminal first seen via a content item, then terminal_update",
    "rule_output_chunk_before_tool_call": "output chunks before the tool call that shows them",
    "rule_terminal_id_independent": "terminalId is independent of toolCallId",
    "rule_utf8_split_across_chunks": "UTF-8 characters split across independently encoded chunks",
    "rule_custom_status_kind_kept": "custom `_` status and kind kept, no diagnostic",
    "rule_unknown_status_kept": "unknown status / kind kept, with a diagnostic",
    "rule_unknown_content_type_kept": "unknown content item types kept verbatim",
    # v1 traffic
    "v1_tool_call_update_nulls": "v1 tool_call creates; in a v1 tool_call_update null means unchanged",
    "v1_tool_call_replaces_whole": "a second v1 tool_call replaces the tool call whole",
    "v1_diff_item": "v1 diff items {path, oldText, newText} kept verbatim (oldText null: new file)",
    "v1_plan": "v1 plan: one plan, replaced completely by each update",
    "v1_message_chunks": "v1 chunks without messageId: consecutive chunks of one role form a message",
    "v1_current_mode_update": "current_mode_update keeps the latest mode",
    # other v2 kinds
    "v2_messages": "message chunks by messageId; whole-message upserts replace/clear/omit, _meta by key",
    "v2_plan_update": "plan_update replaces the plan named by planId; unknown plan types kept",
    "v2_state_update": "state_update: run state and stop reason",
    "v2_state_unknown_not_idle": "an unknown run state is kept and is not idle",
    "v2_session_kinds": "session-wide kinds, notices, custom and unknown kinds kept",
    "v2_full_turn": "a whole turn: messages, tool call, permission, terminal, idle",
}

# Lines deliberately outside the schema, with the reason.
NOT_SCHEMA_VALID: dict[str, str] = {}


def load_lines(name: str) -> list[str]:
    """The fixture's lines (without newlines)."""
    return (GOLDEN_DIR / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()


def load_expected(name: str) -> dict[str, Any]:
    """The fixture's expected final state."""
    return json.loads((GOLDEN_DIR / f"{name}.expected.json").read_text(encoding="utf-8"))


class Replay:
    """Feeds one fixture's lines to a fresh client session, as the agent would."""

    def __init__(self, version: int, session_id: str) -> None:
        self.version, self.session_id = version, session_id
        self.responses: list[dict[str, Any]] = []
        self.stream = MemoryStream(on_sent=self._on_sent)
        self.agent = Agent(self.stream)

    async def start(self) -> None:
        await self.agent.initialize(self.version)
        self.session = await self.agent.new_session("/")
        self.state = self.session.state

    def _on_sent(self, message: dict[str, Any]) -> None:
        method = message.get("method")
        if method == "initialize":
            self.stream.push(_result(message, {"protocolVersion": self.version}))
        elif method == "session/new":
            self.stream.push(_result(message, {"sessionId": self.session_id}))
        elif method is None:
            self.responses.append(message)

    async def feed(self, line: str) -> None:
        message = json.loads(line)
        if "method" in message:
            self.stream.push(line)
            await asyncio.wait_for(self.stream.idle(), 5)
        else:
            self._answer(message)

    def _answer(self, response: dict[str, Any]) -> None:
        """The client answers as the response line says; the request produces the actual response."""
        perm = next(p for p in self.session.pending_permissions if p.request_id == response["id"])
        outcome = response["result"]["outcome"]
        if outcome["outcome"] == "selected":
            perm.select(outcome["optionId"])
        else:
            perm.cancel()

    def snapshot(self) -> dict[str, Any]:
        """The state in the fixtures' expected shape (sections at their defaults are left out)."""
        state = self.state
        snap: dict[str, Any] = {
            "tool_calls": {k: tc.to_dict() for k, tc in state.tool_calls.items()},
            "terminals": {k: t.to_dict() for k, t in state.terminals.items()},
            "diagnostic_codes": [d.code for d in state.diagnostics],
        }
        texts = {k: t.text for k, t in state.terminals.items() if t.output}
        optional = {
            "terminal_text": texts,
            "messages": [_message(m) for m in state.messages.values()],
            "plans": {k: p.to_dict() for k, p in state.plans.items()},
            "session": _session(state),
            "notices": state.notices,
            "other_updates": state.other_updates,
            "permissions": {k: _permission(p) for k, p in state.permissions.items()},
            "responses": self.responses,
        }
        snap.update({k: v for k, v in optional.items() if v})
        if state.run_state != "idle" or state.stop_reason is not None:
            snap["run_state"] = state.run_state
            snap["stop_reason"] = state.stop_reason
        return snap


def _message(msg: Any) -> dict[str, Any]:
    out = msg.to_dict()
    if msg.synthetic:  # v1: the id is made up by the client, not part of the expected state
        del out["messageId"]
    return out


def _session(state: SessionState) -> dict[str, Any]:
    values = {
        "current_mode_id": state.current_mode_id,
        "available_commands": state.available_commands,
        "config_options": state.config_options,
        "session_info": state.session_info,
        "usage": state.usage,
    }
    return {k: v for k, v in values.items() if v}


def _permission(perm: PermissionRequest) -> dict[str, Any]:
    return {
        "requestId": perm.request_id,
        "title": perm.title,
        "description": perm.description,
        "subject": perm.subject,
        "options": perm.options,
        "toolCallId": perm.tool_call_id,
        "outcome": perm.outcome,
    }


def _result(request: dict[str, Any], result: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request["id"], "result": result}


async def replay(name: str) -> Replay:
    """Replay one fixture through a fresh client session."""
    lines = load_lines(name)
    ids = [json.loads(line).get("params", {}).get("sessionId") for line in lines]
    rep = Replay(1 if name.startswith("v1_") else 2, next((i for i in ids if i), "sess_golden"))
    await rep.start()
    for line in lines:
        await rep.feed(line)
    rep.final = rep.snapshot()  # before the agent closes (which the state records)
    await rep.agent.close()
    return rep


_NAMES = sorted(GOLDEN_CASES)


@pytest.mark.parametrize("name", _NAMES)
async def test_golden_replay(name: str) -> None:
    expected = load_expected(name)
    rep = await replay(name)
    assert rep.final == expected
    # first-seen order of tool calls and terminals
    assert list(rep.state.tool_calls) == list(expected["tool_calls"])
    assert list(rep.state.terminals) == list(expected["terminals"])


@pytest.mark.parametrize("name", _NAMES)
async def test_golden_replay_is_deterministic(name: str) -> None:
    """Replaying the same lines again gives the same state (nothing depends on hidden globals)."""
    assert (await replay(name)).final == (await replay(name)).final


def test_golden_cases_covered() -> None:
    files = {p.name for p in GOLDEN_DIR.iterdir()}
    traces = {n.removesuffix(".jsonl") for n in files if n.endswith(".jsonl")}
    expected = {n.removesuffix(".expected.json") for n in files if n.endswith(".expected.json")}
    assert traces == expected, "every .jsonl needs its .expected.json and vice versa"
    assert files == {f"{n}.jsonl" for n in traces} | {f"{n}.expected.json" for n in traces}, "stray files"
    assert traces == set(GOLDEN_CASES), "add the new golden file to GOLDEN_CASES (or remove the entry)"
    for name in traces:
        assert load_lines(name), f"{name}.jsonl is empty"
        assert all(line.strip() for line in load_lines(name)), f"{name}.jsonl has a blank line"


def test_golden_seed_examples_present() -> None:
    """The seed's own example objects appear verbatim in the fixtures."""
    seed = {
        "reporting": {"toolCallId": "call_001", "title": "Reading configuration file", "kind": "read"},
        "terminal": {"sessionUpdate": "terminal_update", "output": {"data": "cnVubmluZyB0ZXN0cw0K"}},
        "chunk": {"sessionUpdate": "terminal_output_chunk", "data": "cGFzc2VkDQo="},
    }
    updates = [
        json.loads(line).get("params", {}).get("update", {})
        for name in GOLDEN_CASES
        for line in load_lines(name)
    ]
    for label, fields in seed.items():
        assert any(fields.items() <= u.items() for u in updates), label


def _schema_validator(version: int, definition: str) -> Any:
    jsonschema = pytest.importorskip("jsonschema")
    for folder in SCHEMA_DIRS:
        path = folder / f"v{version}.schema.json"
        if path.exists():
            schema = json.loads(path.read_text(encoding="utf-8"))
            break
    else:
        pytest.skip("ACP JSON schemas not available")
    wrapper = {"$schema": schema["$schema"], "$defs": schema["$defs"], "$ref": f"#/$defs/{definition}"}
    return jsonschema.Draft202012Validator(wrapper)


@pytest.mark.parametrize("name", [n for n in _NAMES if n not in NOT_SCHEMA_VALID])
def test_golden_lines_match_schema(name: str) -> None:
    """Fixture lines are real wire messages: their params validate against the ACP schema."""
    version = 1 if name.startswith("v1_") else 2
    notification = "UpdateSessionNotification" if version == 2 else "SessionNotification"
    validators = {
        "notification": _schema_validator(version, notification),
        "request": _schema_validator(version, "RequestPermissionRequest"),
        "response": _schema_validator(version, "RequestPermissionResponse"),
    }
    for line in load_lines(name):
        obj = json.loads(line)
        assert obj["jsonrpc"] == "2.0"
        if "method" in obj and "id" not in obj:
            validators["notification"].validate(obj["params"])
        elif "method" in obj:
            validators["request"].validate(obj["params"])
        else:
            validators["response"].validate(obj["result"])
