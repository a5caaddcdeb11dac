"""``%%acp --elicitations``, the headless one-line notice of a pending elicitation, and ``--timeout``
answering it ``cancel``, through IPython's in-process test shell with a scripted agent process (no
frontend: no view ever renders here)."""

from __future__ import annotations

from typing import Any

import pytest

from acp_notebook import frontend
from acp_notebook.client import headless

from .support import INIT_V2, NEW, Peer, until
from .test_magic import cell, displayed, ip, start  # noqa: F401 - fixtures shared with test_magic

SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


@pytest.fixture(autouse=True)
def quick_headless(monkeypatch: Any) -> Any:
    """Nobody looks, and we need not wait long to know it."""
    frontend.reset()
    monkeypatch.setattr(frontend, "GRACE", 0.0)
    monkeypatch.setattr(headless, "DELAY", 0.1)
    yield
    frontend.reset()


def state(value: str) -> dict[str, Any]:
    body = {
        "sessionUpdate": "state_update",
        "state": value,
        **({"stopReason": "end_turn"} if value == "idle" else {}),
    }
    return {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s1", "update": body}}


def asking(tmp_path: Any, mode: str = "form") -> Peer:
    """An agent whose turn asks one elicitation and ends once it is answered."""
    params: dict[str, Any] = {"sessionId": "s1", "mode": mode, "message": "Your name?"}
    if mode == "form":
        params["requestedSchema"] = SCHEMA
    else:
        params.update(elicitationId="e1", url="https://login.example.com/auth?code=hidden")
    create = {"jsonrpc": "2.0", "id": 90, "method": "elicitation/create", "params": params}
    steps = [INIT_V2, NEW, {"expect": "session/prompt", "reply": {}}, state("running"), create]
    return Peer(tmp_path, [*steps, {"await_response": True}, state("idle"), {"sleep": 30}])


def answer(peer: Peer) -> dict[str, Any]:
    return until(lambda: next((r for r in peer.responses() if r.get("id") == 90), None), 10)


@pytest.mark.parametrize("name", ["decline", "cancel"])
def test_elicitations_names_an_answer_for_this_turn(ip, capsys, tmp_path, name):  # noqa: F811
    peer = asking(tmp_path)
    session = start(ip, capsys, args=f"--no-view {peer.command_line}")
    session.elicitation_handler = mine = lambda e: None
    _, out, _ = cell(ip, f"%%acp --wait --elicitations {name}\nAsk me", capsys)
    assert out.strip().endswith("acp: turn ended (end_turn)")
    assert answer(peer)["result"] == {"action": name}
    assert [(e.kind, e.who, e.outcome) for e in session.permission_log] == [("elicitation", "policy", name)]
    assert session.elicitation_handler is mine, "the policy held for that turn only"


def test_an_unknown_elicitations_name_is_a_usage_error(ip, capsys, tmp_path):  # noqa: F811
    start(ip, capsys, args=f"--no-view {asking(tmp_path).command_line}")
    _, _, err = cell(ip, "%%acp --wait --elicitations accept\nhi", capsys, ok=False)
    assert "--elicitations" in err and "invalid choice" in err


def test_a_timed_out_headless_wait_describes_then_cancels_the_elicitation(ip, capsys, tmp_path):  # noqa: F811
    peer = asking(tmp_path)
    session = start(ip, capsys, args=f"--no-view {peer.command_line}")
    _, out, err = cell(ip, "%%acp --wait --timeout 1\nAsk me", capsys, ok=False)
    notice = next(line for line in out.splitlines() if line.startswith("acp: waiting for an answer to"))
    assert notice.startswith("acp: waiting for an answer to elic_1 'Your name?': a form (fields: name*)")
    assert "acp.pending_elicitations[0].accept({...}), .decline() or .cancel()" in notice
    assert out.count("waiting for an answer to elic_1") == 1, "one line per elicitation"
    assert "  pending: elic_1 'Your name?'" in err and "1 pending elicitation(s) answered cancel" in err
    assert answer(peer)["result"] == {"action": "cancel"}
    assert [(e.who, e.outcome) for e in session.permission_log] == [("timeout", "cancel")]


def test_a_url_notice_shows_no_query(ip, capsys, tmp_path):  # noqa: F811
    peer = asking(tmp_path, "url")
    start(ip, capsys, args=f"--no-view {peer.command_line}")
    _, out, err = cell(ip, "%%acp --wait --timeout 1\nAsk me", capsys, ok=False)
    notice = next(line for line in out.splitlines() if "waiting for an answer to" in line)
    assert "consent to open https://login.example.com/auth" in notice
    assert "hidden" not in out + err
    assert answer(peer)["result"] == {"action": "cancel"}


def test_a_blocked_cell_answers_an_elicitation_by_its_handler(ip, capsys, tmp_path):  # noqa: F811
    peer = asking(tmp_path)
    session = start(ip, capsys, args=f"--no-view {peer.command_line}")
    session.elicitation_handler = lambda e: {"name": "Ada"}
    _, out, _ = cell(ip, "print(acp.prompt_sync('Ask me'))", capsys)
    assert out.strip() == "end_turn"
    assert answer(peer)["result"] == {"action": "accept", "content": {"name": "Ada"}}


@pytest.mark.parametrize(
    ("permissions", "who", "note"), [(None, "policy", False), ("'allow-once'", "policy", True)]
)
def test_a_blocked_cell_cancels_an_elicitation_nothing_answers(ip, capsys, tmp_path, permissions, who, note):  # noqa: F811
    peer = asking(tmp_path)
    session = start(ip, capsys, args=f"--no-view {peer.command_line}")
    given = f", permissions={permissions}" if permissions else ""
    _, out, err = cell(ip, f"print(acp.prompt_sync('Ask me'{given}))", capsys)
    assert out.strip() == "end_turn", "only the elicitation is cancelled: the turn goes on"
    assert answer(peer)["result"] == {"action": "cancel"}
    assert [(e.who, e.outcome) for e in session.permission_log] == [(who, "cancel")]
    assert ("a blocked cell cannot show it" in err) is note


def starting(tmp_path: Any, *middle: dict) -> Peer:
    """An agent that asks (request-scoped: our session/new, id 2) before it opens the session."""
    params = {"requestId": 2, "mode": "form", "message": "Workspace?", "requestedSchema": SCHEMA}
    create = {"jsonrpc": "2.0", "id": 90, "method": "elicitation/create", "params": params}
    opened = {"jsonrpc": "2.0", "id": 2, "result": {"sessionId": "s1"}}
    return Peer(tmp_path, [INIT_V2, {"expect": "session/new"}, create, *middle, opened, {"sleep": 30}])


def test_start_elicitations_answers_the_agent_while_it_starts(ip, capsys, tmp_path):  # noqa: F811
    peer = starting(tmp_path, {"await_response": True})
    session = start(ip, capsys, args=f"--no-view --elicitations decline {peer.command_line}")
    assert answer(peer)["result"] == {"action": "decline"}
    assert session.elicitation_handler is not None, "the session's elicitations too"
    assert repr(session.elicitation_handler) == "named('decline')"
