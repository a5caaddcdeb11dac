"""Interop, the other way round: the official TypeScript SDK (2.4.0) referees what the demo agent
sends in its subagent scenario (ACP v2, unstable schema: ``subagent_update``, ``session_message``,
``session_message_chunk``, ``background`` subagents, agent-started turns).

The scenario runs through our client with ``record=``; every message the agent sent is then checked
twice: by the SDK's own unstable validators (``check_agent.mjs``: a message counts as rejected when the
SDK's lenient parser fails *or* changes it), and by the unstable JSON Schema shipped in the SDK package.
Needs ``npm ci`` in ``tests/interop`` (the fixture runs it once on a fresh checkout).
"""

from __future__ import annotations

import asyncio
import functools
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from acp_notebook import start_agent
from acp_notebook.protocol import trace

from ..support import until_async
from .test_sdk_agents import HERE, SDK, TIMEOUT, sdk_installed  # noqa: F401  (the fixture)

DEMO = [sys.executable, "-m", "acp_notebook.demo_agent", "--speed", "0"]
PROMPT = "Delegate the fix to subagents."
UNSTABLE = SDK / "schema" / "v2" / "schema.unstable.json"
NEW_KINDS = {"subagent_update", "session_message", "session_message_chunk"}


def agent_messages(path: Path) -> list[dict[str, Any]]:
    """Every message the agent sent in a trace, as ``{message, method}`` (``method``: what a
    response answers)."""
    _, entries = trace.parse(path.read_text(encoding="utf-8").splitlines())
    asked: dict[Any, str] = {}
    found = []
    for entry in entries:
        message = entry.get("message") if entry["kind"] == "message" else None
        if not isinstance(message, dict):
            continue
        if entry["dir"] == "out" and "method" in message and "id" in message:
            asked[message["id"]] = message["method"]
        elif entry["dir"] == "in":
            found.append(
                {"message": message, "method": message.get("method") or asked.get(message.get("id"))}
            )
    return found


def sdk_verdict(items: list[dict[str, Any]], tmp_path: Path) -> list[dict[str, Any]]:
    """What the SDK's unstable validators say about ``items`` (``check_agent.mjs``)."""
    file = tmp_path / "messages.json"
    file.write_text(json.dumps(items))
    done = subprocess.run(
        ["node", str(HERE / "check_agent.mjs"), str(file)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@functools.cache
def unstable_names() -> tuple[dict[str, Any], dict[tuple[str, str], str]]:
    """The SDK's unstable JSON Schema, and its ``$defs`` names by (method, Request/Response/Notification)."""
    schema = json.loads(UNSTABLE.read_text())
    names = {}
    for name, definition in schema["$defs"].items():
        if "x-method" in definition:
            kind = next((k for k in ("Request", "Response", "Notification") if name.endswith(k)), None)
            if kind:
                names[definition["x-method"], kind] = name
    return schema, names


def schema_problems(items: list[dict[str, Any]]) -> list[str]:
    """What the unstable JSON Schema says about each message's params or result."""
    schema, names = unstable_names()
    problems = []
    for item in items:
        message, method = item["message"], item["method"]
        if "error" in message:
            continue
        kind = "Response" if "method" not in message else "Request" if "id" in message else "Notification"
        name = names.get((method, kind))
        if name is None:
            problems.append(f"{method} {kind}: no schema")
            continue
        validator = Draft202012Validator({"$ref": f"#/$defs/{name}", "$defs": schema["$defs"]})
        value = message["result"] if kind == "Response" else message.get("params")
        problems += [f"{method} ({name}): {e.message}" for e in validator.iter_errors(value)]
    return problems


async def record_scenario(tmp_path: Path, cancel_reviewer: bool) -> Path:
    """Play the subagent scenario through the client, recorded (the reviewer cancelled, if asked)."""
    out = tmp_path / f"subagents-{cancel_reviewer}.jsonl"
    agent = await start_agent(DEMO, protocol_version=2, record=out)
    try:
        session = await agent.new_session(str(tmp_path))
        root = session.session_id
        turn = session.prompt_task(PROMPT)
        request = await until_async(
            lambda: session.pending_permissions, TIMEOUT, message="the reviewer's request"
        )
        if cancel_reviewer:
            await session.subagents[f"{root}.reviewer"].cancel()
        else:
            request[0].select("allow-once")
        session.permission_handler = lambda r: "allow-once"
        assert await asyncio.wait_for(turn, TIMEOUT) == "end_turn"
        said = lambda: "changelog writer finished" in "".join(m.text for m in session.state.messages.values())  # noqa: E731
        await until_async(
            lambda: said() and session.state.run_state == "idle", TIMEOUT, message="its own turn"
        )
    finally:
        await agent.close()
    return out


@pytest.mark.parametrize("cancel_reviewer", [False, True], ids=["allowed", "reviewer-cancelled"])
async def test_the_sdk_accepts_every_message_of_the_subagent_scenario(tmp_path, cancel_reviewer):
    items = agent_messages(await record_scenario(tmp_path, cancel_reviewer))
    kinds = {
        i["message"]["params"]["update"]["sessionUpdate"] for i in items if i["method"] == "session/update"
    }
    assert kinds >= NEW_KINDS and len(items) > 50
    assert sdk_verdict(items, tmp_path) == []
    assert schema_problems(items) == []


def test_the_referee_sees_a_bad_subagent_message(tmp_path):
    """Each check would catch a malformed message: here a subagent's ``capabilities.cancel`` that
    is not an object (the SDK's parser quietly drops it) and a ``session_message`` without its id."""

    def update(body: dict[str, Any]) -> dict[str, Any]:
        params = {"sessionId": "s", "update": body}
        return {
            "message": {"jsonrpc": "2.0", "method": "session/update", "params": params},
            "method": "session/update",
        }

    bad_cancel = update(
        {"sessionUpdate": "subagent_update", "sessionId": "c", "capabilities": {"cancel": True}}
    )
    no_id = update({"sessionUpdate": "session_message", "content": []})
    verdict = sdk_verdict([bad_cancel, no_id], tmp_path)
    assert [v["index"] for v in verdict] == [0, 1]
    assert verdict[0]["problem"]["parsed"]["update"]["capabilities"] == {}
    assert len(schema_problems([bad_cancel])) >= 1 and len(schema_problems([no_id])) >= 1
