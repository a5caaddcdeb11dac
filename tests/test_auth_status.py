"""The agent's login status (``_auth/status_update``, unstable ``auth/status_update``): kept with
its kind and label only, shown in the header, and never an account name or e-mail address in the
state, the views, the diagnostics or the trace (issue 17)."""

from __future__ import annotations

import asyncio
import json

from acp_notebook import start_agent
from acp_notebook.protocol.auth_status import AuthStatus, read_auth_status
from acp_notebook.protocol.trace import decode
from acp_notebook.widgets import viewmodel as vm

from .support import INIT_V1, INIT_V2, NEW, Peer, until_async

EMAIL = "ada.lovelace@example.com"
CLAUDE = {
    "authStatus": {
        "kind": "account",
        "label": "Claude Max",
        "detail": EMAIL,
        "account": {"plan": "max", "email": EMAIL, "organization": "Analytical Engines Ltd"},
    }
}
UNSTABLE = {
    "state": "authenticated",
    "accounts": [
        {"label": "Vertex AI", "active": False, "email": EMAIL},
        {
            "label": "OpenAI API key",
            "active": True,
            "name": "Ada Lovelace",
            "email": EMAIL,
            "organization": "AE",
        },
    ],
}


def note(method: str, params: dict) -> dict:
    return {"jsonrpc": "2.0", "method": method, "params": params}


def test_both_shapes_read_as_kind_and_label_only() -> None:
    assert read_auth_status(CLAUDE) == AuthStatus("account", "Claude Max")
    assert read_auth_status(UNSTABLE) == AuthStatus("authenticated", "OpenAI API key")
    assert read_auth_status({"state": "unauthenticated"}) == AuthStatus("unauthenticated", None)
    assert read_auth_status({"authStatus": {"kind": "api_key", "label": EMAIL}}) == AuthStatus(
        "api_key", None
    )
    assert read_auth_status({"authStatus": {"label": "x"}}) is None
    assert read_auth_status(None) is None


def test_the_trace_keeps_no_identity_of_a_status_notification() -> None:
    for params in (CLAUDE, UNSTABLE):
        line = json.dumps(note("_auth/status_update", params)).encode()
        entry = decode("in", 0.0, line)
        assert (
            EMAIL not in json.dumps(entry)
            and "Ada" not in json.dumps(entry)
            and "Ltd" not in json.dumps(entry)
        )
        assert entry["redacted"]
    kept = decode("in", 0.0, json.dumps(note("_auth/status_update", CLAUDE)).encode())["message"]["params"]
    assert (kept["authStatus"]["kind"], kept["authStatus"]["label"]) == ("account", "Claude Max")


async def test_a_live_agent_status_reaches_the_header_without_identity(tmp_path) -> None:
    steps = [
        INIT_V2,
        {"send": note("_auth/status_update", {"authStatus": {"kind": "none", "label": "Not logged in"}})},
        NEW,
        {"send": note("_auth/status_update", CLAUDE)},
        {"send": note("_auth/status_update", {"authStatus": "garbage", "email": EMAIL})},
        {"expect": "session/prompt"},
    ]
    peer = Peer(tmp_path, steps)
    agent = await start_agent(peer.command)
    try:
        session = await agent.new_session(str(tmp_path))
        await until_async(lambda: agent.auth_status == AuthStatus("account", "Claude Max"), 10)
        assert session.state.auth_status == AuthStatus("account", "Claude Max")
        header = vm.header(session.state, session.summary())
        assert header["auth"] == {"kind": "account", "label": "Claude Max"}
        await until_async(lambda: any(d.code == "malformed-auth-status" for d in agent.diagnostics), 10)
        seen = json.dumps(
            [
                header,
                repr(vars(session.state)),
                repr(agent.diagnostics),
                repr(agent.summary()),
                agent.traffic,
            ],
            default=repr,
        )
        assert EMAIL not in seen and "Analytical" not in seen
    finally:
        await agent.close()


async def test_v1_agents_send_it_too_and_the_unstable_shape_is_read(tmp_path) -> None:
    steps = [INIT_V1, {"send": note("auth/status_update", UNSTABLE)}, {"sleep": 30}]
    peer = Peer(tmp_path, steps)
    agent = await start_agent(peer.command, protocol_version=1)
    try:
        await until_async(lambda: agent.auth_status is not None, 10)
        assert agent.auth_status == AuthStatus("authenticated", "OpenAI API key")
        assert agent.summary().auth == {"kind": "authenticated", "label": "OpenAI API key"}
        assert EMAIL not in json.dumps(agent.traffic)
    finally:
        await asyncio.wait_for(agent.close(), 10)
