"""Permission policies (``acp_notebook.policies``), remembered decisions and the decision log.

Policies match a request's subject — v2 ``command``/``cwd``, the tool call's kind and
``locations``, v1 ``rawInput`` — never its title; allowing picks the request's own option.
"""

from __future__ import annotations

import asyncio
import sys

import pytest

from acp_notebook import SessionState, frontend, policies, start_agent
from acp_notebook.client import headless
from acp_notebook.protocol import PermissionRequest
from acp_notebook.widgets.actions import SessionActions

from .support import INIT_V1, NEW, Peer, until_async

DEMO = [sys.executable, "-m", "acp_notebook.demo_agent", "--speed", "0"]
OPTIONS = [
    {"optionId": "once", "name": "Allow once", "kind": "allow_once"},
    {"optionId": "always", "name": "Always allow", "kind": "allow_always"},
    {"optionId": "no", "name": "Reject", "kind": "reject_once"},
    {"optionId": "never", "name": "Never", "kind": "reject_always"},
]


def v2_command(command: str, cwd: str = "/proj", title: str = "Run?", options=OPTIONS) -> PermissionRequest:
    subject = {"type": "command", "command": command, "cwd": cwd}
    return PermissionRequest("perm_1", 1, {"title": title, "subject": subject, "options": options})


def v2_tool(kind: str, *paths: str, title: str = "Edit?", options=OPTIONS, **extra) -> PermissionRequest:
    tool_call = {"toolCallId": "c1", "kind": kind, "locations": [{"path": p} for p in paths], **extra}
    params = {"title": title, "subject": {"type": "tool_call", "toolCall": tool_call}, "options": options}
    return PermissionRequest("perm_1", 1, params)


def v1_tool(kind: str, raw: dict, title: str = "Bash", options=OPTIONS) -> PermissionRequest:
    tool_call = {"toolCallId": "c1", "kind": kind, "title": title, "rawInput": raw}
    return PermissionRequest("perm_1", 1, {"toolCall": tool_call, "options": options}, version=1)


# -- matching the subject ---------------------------------------------------------------------------
def test_v2_command_subject_matches_by_word_prefix_and_cwd():
    assert policies.allow(commands=["pytest"]).answer(v2_command("pytest -q")) == "once"
    assert policies.allow(commands=["git status"]).answer(v2_command("git status --short")) == "once"
    assert policies.allow(commands=["git status"]).answer(v2_command("git stash")) is None
    assert policies.allow(commands=["py"]).answer(v2_command("pytest")) is None, "words, not characters"
    assert (
        policies.allow(kinds=["execute"], paths=["/proj"]).answer(v2_command("make", cwd="/proj/sub"))
        == "once"
    )
    assert policies.allow(kinds=["execute"], paths=["/proj"]).answer(v2_command("make", cwd="/other")) is None


def test_allow_never_matches_a_chained_command_but_reject_does():
    for command in ("pytest -q && rm -rf /", "pytest; curl x | sh", "pytest $(rm -rf /)", "pytest > /etc/x"):
        assert policies.allow(commands=["pytest"]).answer(v2_command(command)) is None, command
    assert policies.reject(commands=["pytest"]).answer(v2_command("pytest && rm -rf /")) == "no"


def test_tool_call_kind_and_locations_with_dotdot_resolved():
    edit = policies.allow(kinds=["edit"], paths=["/proj/src"])
    assert edit.answer(v2_tool("edit", "/proj/src/app.py", "/proj/src/lib/util.py")) == "once"
    assert edit.answer(v2_tool("edit", "/proj/src/../../etc/passwd")) is None
    assert edit.answer(v2_tool("edit", "/proj/src/app.py", "/proj/README.md")) is None, "every path"
    assert edit.answer(v2_tool("read", "/proj/src/app.py")) is None
    assert edit.answer(v2_tool("edit")) is None, "paths= needs paths"
    assert policies.allow(paths=["/proj"]).answer(v2_command("rm -rf /", cwd="/proj")) is None, (
        "paths= alone never allows running a command"
    )


def test_v1_raw_input_command_and_file_path():
    bash = v1_tool("execute", {"command": "npm test -- --watch=false"})
    assert policies.allow(commands=["npm test"]).answer(bash) == "once"
    codex = v1_tool("execute", {"command": ["bash", "-lc", "pytest -q"]})
    assert policies.allow(commands=["pytest"]).answer(codex) == "once"
    assert policies.allow(commands=["bash"]).answer(codex) is None, "sh -c SCRIPT counts as SCRIPT"
    listed = v1_tool("execute", {"command": ["git", "diff"]})
    assert policies.allow(commands=["git diff"]).answer(listed) == "once"
    write = v1_tool("edit", {"file_path": "/proj/a.txt"}, title="Write")
    assert policies.allow(kinds=["edit"], paths=["/proj"]).answer(write) == "once"
    assert policies.allow(kinds=["edit"], paths=["/proj"]).answer(v1_tool("edit", {"path": "/etc/x"})) is None


def test_the_title_is_never_matched():
    hostile = v1_tool("execute", {"command": "rm -rf ~"}, title="Read safe.txt (kind: read, pytest)")
    assert policies.allow(kinds=["read"]).answer(hostile) is None
    assert policies.allow(commands=["pytest"]).answer(hostile) is None
    assert policies.allow(kinds=["read"]).answer(v2_tool("execute", title="read /proj/a.py")) is None


def test_fields_the_request_omits_come_from_the_state():
    state = SessionState()
    state.apply(
        {"sessionUpdate": "tool_call", "toolCallId": "c1", "kind": "edit", "locations": [{"path": "/p/a"}]}
    )
    bare = PermissionRequest("perm_1", 1, {"toolCall": {"toolCallId": "c1"}, "options": OPTIONS}, version=1)
    assert policies.allow(kinds=["edit"], paths=["/p"]).answer(bare, state) == "once"
    assert policies.allow(kinds=["edit"]).answer(bare) is None, "without the state it knows nothing"


# -- answers ------------------------------------------------------------------------------------------
def test_allow_picks_the_requests_own_option_or_leaves_it_pending():
    assert policies.allow().answer(v2_command("ls")) == "once"
    assert policies.allow(always=True).answer(v2_command("ls")) == "always"
    no_once = [o for o in OPTIONS if o["kind"] != "allow_once"]
    assert policies.allow().answer(v2_command("ls", options=no_once)) is None
    assert policies.reject().answer(v2_command("ls")) == "no"
    assert policies.reject(always=True).answer(v2_command("ls")) == "never"
    assert policies.reject().answer(v2_command("ls", options=OPTIONS[:2])) is None


def test_named_policies_and_plain_strings():
    request = v2_command("ls")
    assert policies.named("allow-once").answer(request) == "once"
    assert policies.named("allow-always").answer(request) == "always"
    assert policies.named("reject").answer(request) == "no"
    assert policies.named("reject-always").answer(request) == "never"
    assert policies.named("cancel").answer(request) is policies.CANCEL
    assert policies.named("ask").answer(request) is None and policies.ask().answer(request) is None
    assert policies.named("always").answer(request) == "always", "an exact optionId"
    assert policies.as_policy("reject_always").answer(request) == "never", "an option kind"
    assert policies.named("cancel")(request) is None, "as a plain handler, cancel reads as no answer"


def test_or_the_first_policy_that_answers_wins():
    policy = policies.reject(commands=["rm"]) | policies.allow(kinds=["execute"]) | "cancel"
    assert policy.answer(v2_command("rm -rf build")) == "no"
    assert policy.answer(v2_command("make")) == "once"
    assert policy.answer(v2_tool("edit", "/p/a")) is policies.CANCEL
    assert repr(policies.ask() | "reject") == "named('ask') | named('reject')"
    assert ("allow-once" | policies.reject()).answer(v2_command("ls")) == "once"
    wrong = policies.as_policy(lambda r: "not-an-option") | "reject"
    assert wrong.answer(v2_command("ls")) == "no", "an unknown option is no answer"


async def test_or_awaits_async_parts_in_order():
    async def later(request):
        await asyncio.sleep(0)
        return None

    policy = policies.as_policy(later) | policies.allow()
    assert await policy.answer(v2_command("ls")) == "once"


def test_lookup_for_the_magic():
    assert repr(policies.lookup("allow-once")) == "named('allow-once')"
    mine = policies.allow(kinds=["edit"])
    assert policies.lookup("mine", {"mine": mine}) is mine
    with pytest.raises(KeyError, match="no permission policy 'nope'"):
        policies.lookup("nope", {})


# -- live: a session's handler, the log, memory ------------------------------------------------------
@pytest.mark.parametrize("protocol", [2, 1])
async def test_a_policy_as_the_session_handler_answers_and_is_logged(tmp_path, protocol):
    agent = await start_agent(DEMO, protocol_version=protocol)
    session = await agent.new_session(str(tmp_path))
    session.permission_handler = policies.allow(kinds=["edit"], paths=[str(tmp_path)]) | policies.allow(
        commands=["pytest"]
    )
    assert await asyncio.wait_for(session.prompt("Fix the failing test"), 30) == "end_turn"
    log = session.permission_log
    assert [(e.who, e.option_kind, e.outcome) for e in log] == [("policy", "allow_once", "selected")] * 2
    assert [e.request for e in log] == ["perm_1", "perm_2"]
    assert all(e.tool_call_id in session.state.tool_calls and e.at.tzinfo is not None for e in log)
    assert log.records()[0]["who"] == "policy" and isinstance(log.records()[0]["at"], str)
    assert [p.decided_by for p in session.state.permissions.values()] == ["policy", "policy"]
    await agent.close()


def ask(rid: int, command: str, tool_call_id: str) -> dict:
    tool_call = {
        "toolCallId": tool_call_id,
        "kind": "execute",
        "title": "x",
        "rawInput": {"command": command},
    }
    params = {"sessionId": "s1", "toolCall": tool_call, "options": OPTIONS}
    return {"jsonrpc": "2.0", "id": rid, "method": "session/request_permission", "params": params}


def answer_of(peer: Peer, rid: int):
    return next((r["result"]["outcome"] for r in peer.responses() if r.get("id") == rid), None)


async def test_an_always_click_is_remembered_for_the_same_command_prefix(tmp_path):
    steps = [INIT_V1, NEW, {"expect": "session/prompt"}, ask(10, "git push origin main", "c1")]
    steps += [{"await_response": True}, ask(11, "git push --tags", "c2"), {"await_response": True}]
    steps += [
        ask(12, "git push x && rm -rf /", "c3"),
        ask(13, "git status", "c4"),
        {"expect": "session/cancel"},
    ]
    steps += [{"send": {"jsonrpc": "2.0", "id": 3, "result": {"stopReason": "cancelled"}}}]
    peer = Peer(tmp_path, steps)
    agent = await start_agent(peer.command, protocol_version=1)
    session = await agent.new_session(str(tmp_path))
    turn = asyncio.ensure_future(session.prompt("go"))
    await until_async(lambda: session.pending_permissions, 10, message="the first request")
    SessionActions(session).select("perm_1", "always")  # the user clicks "Always allow"
    await until_async(lambda: answer_of(peer, 11), 10, message="the remembered answer")
    assert answer_of(peer, 11) == {"outcome": "selected", "optionId": "always"}
    (rule,) = session.permission_rules
    assert (rule.kind, rule.match, rule.decision, rule.from_request) == (
        "execute",
        "git push",
        "allow_always",
        "perm_1",
    )
    await until_async(lambda: len(session.pending_permissions) == 2, 10, message="the last two requests")
    assert [p.key for p in session.pending_permissions] == ["perm_3", "perm_4"], "chained / other command"
    assert [e.who for e in session.permission_log] == ["user", "memory"]
    assert session.permission_log[1].rule == rule
    assert session.state.permissions["perm_2"].decided_by == "memory"
    session.permission_rules.clear()
    assert list(session.permission_rules) == []
    await session.cancel()
    assert await asyncio.wait_for(turn, 10) == "cancelled"
    assert [e.who for e in session.permission_log] == ["user", "memory", "cancel", "cancel"]
    await agent.close()


async def test_acp_auto_answer_still_answers_as_a_named_policy(tmp_path, monkeypatch):
    monkeypatch.setenv("ACP_AUTO_ANSWER", "allow-always")
    agent = await start_agent(DEMO)
    session = await agent.new_session(str(tmp_path))
    assert await asyncio.wait_for(session.prompt("Fix the failing test"), 30) == "end_turn"
    assert [(e.who, e.option_kind) for e in session.permission_log] == [("policy", "allow_always")] * 2
    assert list(session.permission_rules) == [], "only a user's answer is remembered"
    await agent.close()


def test_prompt_sync_takes_names_and_policies(tmp_path):
    from acp_notebook import start_agent_sync
    from acp_notebook.client.sync import run_sync

    agent = start_agent_sync(DEMO)
    try:
        session = run_sync(agent.new_session(str(tmp_path)), agent.loop())
        assert session.prompt_sync("Fix it", permissions="allow-once") == "end_turn"
        assert [e.who for e in session.permission_log] == ["policy", "policy"]
        policy = policies.reject(commands=["pytest"]) | policies.allow(kinds=["edit"])
        assert session.prompt_sync("again", permissions=policy) == "end_turn"
        assert [e.option_kind for e in session.permission_log][2:] == ["allow_once", "reject_once"]
        assert session.prompt_sync("ask me", permissions=policies.ask()) == "cancelled"
    finally:
        run_sync(agent.close(), agent.loop())


# -- headless: one line saying what is asked ------------------------------------------------------------
async def test_a_pending_request_is_described_once_when_no_view_rendered(tmp_path, capsys, monkeypatch):
    frontend.reset()
    monkeypatch.setattr(headless, "DELAY", 0.05)
    agent = await start_agent(DEMO)
    session = await agent.new_session(str(tmp_path))
    with headless.notices(session, "acp"):
        turn = asyncio.ensure_future(session.prompt("Fix the failing test"))
        await until_async(lambda: "waiting for permission" in capsys.readouterr().out or None, 10)
    line = headless.describe(session, session.pending_permissions[0], "acp")
    assert line.startswith("acp: waiting for permission perm_1 'Apply edits to 4 files?' (options: ")
    assert 'acp.pending_permissions[0].select("' in line
    assert 'acp.permission_handler = acp_notebook.policies.allow(kinds=["edit"])' in line
    frontend.mark_rendered()  # someone looks now: nothing more is printed
    session.pending_permissions[0].select(session.pending_permissions[0].option_ids[0])
    await session.cancel()
    await asyncio.wait_for(turn, 10)
    frontend.reset()
    await agent.close()


def test_a_rendered_view_tells_the_kernel_and_cards_say_who_decided():
    from acp_notebook import SessionView
    from acp_notebook.widgets import viewmodel

    frontend.reset()
    view = SessionView(SessionState())
    assert not frontend.rendered() and not frontend.headless(grace=60), "shown, not yet rendered"
    view._handle_browser_msg({"type": "rendered"})
    assert frontend.rendered() and not frontend.headless()
    frontend.reset()
    view.close()
    request = v2_command("ls")
    request.select("always", by="memory")
    assert viewmodel.permission_entry(request)["decided_by"] == "memory"
