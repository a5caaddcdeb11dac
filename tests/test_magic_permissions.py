"""``%%acp --permissions`` / ``--timeout``, ``%acp wait --timeout``, and the headless one-line notice,
through IPython's in-process test shell (no frontend: no view ever renders here)."""

from __future__ import annotations

import pytest

from acp_notebook import frontend
from acp_notebook.client import headless

from .test_magic import DEMO, cell, displayed, ip, start  # noqa: F401 - fixtures shared with test_magic


@pytest.fixture(autouse=True)
def quick_headless(monkeypatch):
    """Nobody looks, and we need not wait long to know it."""
    frontend.reset()
    monkeypatch.setattr(frontend, "GRACE", 0.0)
    monkeypatch.setattr(headless, "DELAY", 0.1)
    yield
    frontend.reset()


def test_permissions_names_a_policy_for_this_turn(ip, capsys, displayed):  # noqa: F811
    session = start(ip, capsys, args="--no-view")
    _, out, _ = cell(ip, "%%acp --wait --permissions allow-once\nFix the failing test", capsys)
    assert out.strip() == "acp: turn ended (end_turn)"
    assert [(e.who, e.option_kind) for e in session.permission_log] == [("policy", "allow_once")] * 2
    assert session.permission_handler is None, "the policy held for that turn only"


def test_permissions_takes_a_variable_holding_a_policy(ip, capsys, displayed):  # noqa: F811
    session = start(ip, capsys, args="--no-view")
    cell(ip, "from acp_notebook import policies\nmine = policies.reject(kinds=['edit']) | 'allow-once'")
    _, out, _ = cell(ip, "%%acp --wait --permissions mine\nFix the failing test", capsys)
    assert out.strip() == "acp: turn ended (end_turn)"
    assert [e.option_kind for e in session.permission_log] == ["reject_once", "allow_once"]
    _, _, err = cell(ip, "%%acp --wait --permissions nope\nhi", capsys, ok=False)
    assert "no permission policy 'nope'" in err


def test_a_timed_out_wait_says_what_is_pending(ip, capsys, displayed):  # noqa: F811
    session = start(ip, capsys, args="--no-view")
    result, out, err = cell(ip, "%%acp --wait --timeout 1\nFix the failing test", capsys, ok=False)
    assert not result.success
    notice = next(line for line in out.splitlines() if line.startswith("acp: waiting for permission"))
    assert notice.startswith(
        "acp: waiting for permission perm_1 'Apply edits to 4 files?' (options: allow-once"
    )
    assert 'answer with acp.pending_permissions[0].select("allow-once")' in notice
    assert 'acp.permission_handler = acp_notebook.policies.allow(kinds=["edit"])' in notice
    assert out.count("acp: waiting for permission perm_1") == 1, "one line per request"
    assert "acp: gave up waiting after 1 s; the turn is still running" in err
    assert "  pending: perm_1 'Apply edits to 4 files?'" in err.split("gave up", 1)[1]
    assert session.busy, "the turn goes on: a timeout only ends the wait"
    result, out, err = cell(ip, "%acp wait --timeout 0.5", capsys, ok=False)
    assert "acp: gave up waiting after 0.5 s; it is still busy" in err and "perm_1" in err
    assert "acp: waiting for permission" not in out, "already described"
    answer = "import asyncio\nawait asyncio.sleep(0)\nacp.pending_permissions[0].select('allow-once')"
    cell(ip, answer + "\nacp.permission_handler = 'allow-once'")  # an awaiting cell: the loop runs
    _, out, _ = cell(ip, "%acp wait --timeout 30", capsys)
    assert "acp: idle (end_turn)" in out
