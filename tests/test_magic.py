"""``%acp`` / ``%%acp`` through IPython's test shell (``IPython.testing.globalipapp``).

The test shell has no running loop between cells: the extension's rewrite makes ``%acp`` cells
top-level ``await`` cells, which IPython runs on its own persistent asyncio loop, where the
agents live. A background turn therefore advances only while a later cell awaits
(``%acp wait``), which keeps these tests deterministic.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest

import acp_notebook
from acp_notebook.client.registry import registry
from acp_notebook.magic import magics as magics_module
from acp_notebook.magic import parser as parser_module
from acp_notebook.magic.transform import rewrite

from .support import NEW, Peer, until_async

globalipapp = pytest.importorskip("IPython.testing.globalipapp")

DEMO = f"{sys.executable} -m acp_notebook.demo_agent"


class Displayed:
    """Records what the magic displays (and display-handle updates)."""

    def __init__(self) -> None:
        self.objects: list = []

    def __call__(self, obj, **kwargs):
        self.objects.append(obj)
        return self

    def update(self, obj) -> None:
        self.objects.append(obj)

    def views(self) -> list:
        return [o for o in self.objects if type(o).__name__ == "SessionView"]


@pytest.fixture(scope="module")
def ip():
    shell = globalipapp.start_ipython() or globalipapp.get_ipython()
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ACP_DEMO_SPEED", "0")
        shell.run_line_magic("load_ext", "acp_notebook")
        try:
            yield shell
        finally:
            shell.run_cell("%acp stop --all")
            shell.run_line_magic("unload_ext", "acp_notebook")


@pytest.fixture
def displayed(monkeypatch):
    recorder = Displayed()
    from acp_notebook.magic import commands, prompting

    monkeypatch.setattr(commands, "display", recorder)
    monkeypatch.setattr(prompting, "display", recorder)
    return recorder


def cell(ip, code: str, capsys=None, ok: bool = True):
    """Run a cell; returns (result, stdout, stderr) and checks success unless ``ok`` is False."""
    if capsys is not None:
        capsys.readouterr()
    result = ip.run_cell(code)
    out, err = capsys.readouterr() if capsys is not None else ("", "")
    if not ok:  # the terminal shell prints a magic's error to stdout, a UsageError to stderr
        err = out + err
    if ok:
        assert result.success, f"{code!r} failed: {result.error_in_exec or result.error_before_exec}\n{err}"
    return result, out, err


def start(ip, capsys, name: str = "acp", args: str = ""):
    _, out, _ = cell(ip, f"%acp start --name {name} {args}", capsys)
    assert f"is {name}" in out
    return ip.user_ns[name]


# -- the rewrite ------------------------------------------------------------------------------------
def test_top_level_magics_become_awaits_and_the_rest_stays_plain(ip):
    code = ip.transform_cell("%acp start --name a\nx = %acp status\ndef f():\n    %acp status\n")
    lines = code.splitlines()
    assert lines[0] == "await get_ipython().run_line_magic('acp_await', 'start --name a')"
    assert lines[1] == "x = get_ipython().run_line_magic('acp', 'status')"
    assert lines[3] == "    get_ipython().run_line_magic('acp', 'status')"
    cell_code = ip.transform_cell("%%acp --wait\nhello\n")
    assert cell_code.startswith("await get_ipython().run_cell_magic('acp_await', '--wait', 'hello\\n')")
    assert rewrite(["s = '''\n", "get_ipython().run_cell_magic('acp', '', '')\n"])[1].startswith(
        "get_ipython"
    )


def test_no_rewrite_when_autoawait_is_off(ip):
    ip.autoawait = False
    try:
        assert ip.transform_cell("%acp status\n").startswith("get_ipython().run_line_magic('acp'")
    finally:
        ip.autoawait = True


def test_help_documents_every_subcommand(ip, capsys):
    doc = magics_module.AcpMagics.acp.__doc__
    for name in parser_module.PARSERS:
        assert f"  {name}" in doc, name
    for phrase in ("%%acp [--name NAME] [--wait]", "queued", "interrupting the kernel", "prompt_sync"):
        assert phrase in doc
    _, out, _ = cell(ip, "%acp help", capsys)
    assert out.startswith("Drive ACP agents from cells")
    _, out, _ = cell(ip, "%acp start -h", capsys)
    assert "--protocol" in out


# -- start, prompt, wait ----------------------------------------------------------------------------
def test_start_binds_the_session_and_shows_its_view(ip, capsys, displayed):
    session = start(ip, capsys)
    assert type(session).__name__ == "Session" and session.protocol_version == 2
    assert registry().names["acp"] is session
    headers = [o for o in displayed.objects if type(o).__name__ == "SessionHeaderView"]
    assert [v.session for v in headers] == [session] and displayed.views() == []
    _, out, _ = cell(ip, "%acp status", capsys)
    assert "ACP Notebook demo agent" in out and "acp: sess_demo_1" in out and "idle" in out


def test_a_cell_prompts_in_the_background_and_wait_waits(ip, capsys, displayed):
    session = start(ip, capsys, args="--no-view")
    session.permission_handler = lambda request: "allow-once"
    _, out, _ = cell(ip, "%%acp\nFix the failing test", capsys)
    assert out == "", "a background prompt prints nothing; the view shows the turn"
    (view,) = displayed.views()
    assert session.busy and view.following
    _, out, _ = cell(ip, "%acp wait", capsys)
    assert "acp: idle (end_turn)" in out
    assert not view.following, "the turn's view stops following when the turn ends"
    assert {k.split(":")[0] for k in view.entry_keys} >= {"message", "tool_call", "permission"}
    assert len(session.state.tool_calls) == 7


def test_wait_flag_returns_at_the_end_of_the_turn(ip, capsys, displayed):
    session = start(ip, capsys, args="--no-view")
    session.permission_handler = lambda request: "reject-once"
    _, out, _ = cell(ip, "%%acp --wait --title mine\nFix the failing test", capsys)
    assert out.strip() == "acp: turn ended (end_turn)"
    assert displayed.views()[0].title == "mine"
    assert session.state.tool_calls["call_edit"].status == "failed"


def test_the_turn_view_shows_only_this_turn(ip, capsys, displayed):
    session = start(ip, capsys, args=f"--no-view {DEMO} --scenario echo")
    cell(ip, "%%acp --wait\nfirst", capsys)
    cell(ip, "%%acp --wait\nsecond", capsys)
    first, second = displayed.views()
    texts = [session.state.messages[k.split(":", 1)[1]].text for k in second.entry_keys]
    assert texts == ["second", "You said: second"]
    assert len(first.entry_keys) == 2


def test_prompts_sent_during_a_turn_are_queued(ip, capsys, displayed):
    session = start(ip, capsys, args=f"--no-view {DEMO} --scenario echo")
    cell(ip, "%%acp\none", capsys)
    _, out, _ = cell(ip, "%%acp\ntwo", capsys)
    assert "acp is busy: this prompt is queued" in out
    assert len(displayed.views()) == 1, "the queued turn shows a placeholder until it starts"
    _, out, _ = cell(ip, "%acp status", capsys)
    assert "1 queued" in out
    cell(ip, "%acp wait", capsys)
    assert len(displayed.views()) == 2
    assert [t.stop_reason for t in session.turns] == ["end_turn", "end_turn"]
    assert [m.text for m in session.state.messages.values()][-1] == "You said: two"


def test_wait_background_waits_for_the_turns_and_the_background_work(ip, capsys, displayed):
    session = start(ip, capsys, args=f"--no-view {DEMO} --scenario echo")
    cell(ip, "%%acp\none", capsys)
    _, out, _ = cell(ip, "%acp wait --background --timeout 10", capsys)
    assert "acp: idle (end_turn)" in out and not session.busy and not session.state.background


def test_cancel_stops_the_running_turn_and_drops_queued_ones(ip, capsys, displayed):
    session = start(ip, capsys, args=f"--no-view {DEMO} --scenario slow")
    cell(ip, "%%acp\nslow one", capsys)
    # an awaiting cell lets the background turn get under way (the shared helper, imported here)
    under_way = "lambda: acp.running and 'call_slow' in acp.state.tool_calls"
    cell(ip, f"from tests.support import until_async\nawait until_async({under_way}, 10)", capsys)
    cell(ip, "%%acp\nqueued one", capsys)
    assert session.running
    _, out, _ = cell(ip, "%acp cancel", capsys)
    assert "cancelled the running turn; dropped 1 queued prompt(s)" in out
    _, out, _ = cell(ip, "%acp wait --timeout 10", capsys)
    assert "idle (cancelled)" in out
    assert len(session.turns) == 1


def test_prompt_sync_without_a_running_loop(ip, capsys):
    session = start(ip, capsys, args="--no-view")
    _, out, err = cell(ip, "print(acp.prompt_sync('Fix it'))", capsys)
    assert out.strip() == "cancelled" and "a blocked cell cannot receive a click" in err
    _, out, _ = cell(ip, "print(acp.prompt_sync('Fix it', permissions='allow-always'))", capsys)
    assert out.strip() == "end_turn"
    assert session.state.permissions["perm_2"].selected_option == "allow-always"
    with pytest.raises(TypeError):
        session.prompt_sync("x", permissions=3)


def test_plain_magic_calls_block_and_work(ip, capsys):
    start(ip, capsys, args="--no-view")
    _, out, _ = cell(ip, "x = %acp status\nprint(x)", capsys)
    assert "acp: sess_demo_" in out and out.strip().endswith("None")


# -- sessions, agents, settings -------------------------------------------------------------------
def test_new_list_sessions_and_stop(ip, capsys):
    first = start(ip, capsys, "a1", "--no-view")
    _, out, _ = cell(ip, "%acp new --on a1 --name b1", capsys)
    assert "is b1" in out and acp_notebook.agent_of(ip.user_ns["b1"]) is acp_notebook.agent_of(first)
    _, out, _ = cell(ip, "%acp sessions", capsys)
    assert "a1: sess_demo_1" in out and "b1: sess_demo_2" in out
    _, out, _ = cell(ip, "%acp list", capsys)
    assert f"pid {acp_notebook.agent_of(first).process.pid}" in out
    _, out, _ = cell(ip, "%acp stop --name b1", capsys)
    assert "exit code 0" in out and acp_notebook.agent_of(first).closed
    _, out, _ = cell(ip, "%acp list", capsys)
    assert f"pid {acp_notebook.agent_of(first).process.pid}" not in out
    result, _, err = cell(ip, "%%acp --name a1\nhello", capsys, ok=False)
    assert not result.success and "the agent of 'a1' has exited" in err


def test_starting_a_name_again_replaces_its_agent(ip, capsys):
    old = start(ip, capsys, "again", "--no-view")
    new = start(ip, capsys, "again", "--no-view")
    assert acp_notebook.agent_of(old).closed and not acp_notebook.agent_of(new).closed
    assert acp_notebook.agent_of(old) not in registry().agents


def config_agent(tmp_path: Path, version: int) -> Peer:
    """A scripted agent advertising config options (v2) or modes (v1), logging what it got."""
    option = {"configId": "model", "name": "Model", "type": "select", "currentValue": "m1"}
    option["options"] = [{"value": "m1", "name": "M1"}, {"value": "m2", "name": "M2"}]
    mode = {"configId": "mode", "name": "Mode", "category": "mode", "type": "select", "currentValue": "ask"}
    mode["options"] = [{"value": "ask", "name": "Ask"}, {"value": "code", "name": "Code"}]
    brave = {"configId": "brave", "name": "Brave", "type": "boolean", "currentValue": False}
    if version == 2:
        steps = [
            {"expect": "initialize", "reply": {"protocolVersion": 2, "info": {"name": "cfg"}}},
            {"expect": "session/new", "reply": {"sessionId": "s1", "configOptions": [option, mode, brave]}},
            {"expect": "session/set_config_option", "reply": {"configOptions": [option, mode, brave]}},
            {"expect": "session/set_config_option", "reply": {"configOptions": [option, mode, brave]}},
            {"expect": "session/set_config_option", "reply": {"configOptions": [option, mode, brave]}},
        ]
        steps[2]["reply"]["configOptions"] = [{**option, "currentValue": "m2"}, mode, brave]
        steps[3]["reply"] = {
            "configOptions": [{**option, "currentValue": "m2"}, mode, {**brave, "currentValue": True}]
        }
        steps[4]["reply"] = {
            "configOptions": [
                {**option, "currentValue": "m2"},
                {**mode, "currentValue": "code"},
                {**brave, "currentValue": True},
            ]
        }
    else:
        modes = {
            "currentModeId": "ask",
            "availableModes": [{"id": "ask", "name": "Ask"}, {"id": "code", "name": "Code"}],
        }
        steps = [
            {"expect": "initialize", "reply": {"protocolVersion": 1, "agentInfo": {"name": "cfg1"}}},
            {"expect": "session/new", "reply": {"sessionId": "s1", "modes": modes}},
            {"expect": "session/set_mode", "reply": {}},
        ]
    return Peer(tmp_path, steps, f"v{version}")


def test_config_and_mode_on_a_v2_agent(ip, capsys, tmp_path):
    peer = config_agent(tmp_path, 2)
    session = start(ip, capsys, "cfg", f"--no-view {peer.command_line}")
    _, out, _ = cell(ip, "%acp config --name cfg", capsys)
    assert "model = 'm1'  Model (choices: m1, m2)" in out and "brave = False" in out
    _, out, _ = cell(ip, "%acp config model m2 --name cfg", capsys)
    assert out.strip() == "model = 'm2'  Model (choices: m1, m2)"
    cell(ip, "%acp config brave on --name cfg", capsys)
    _, out, _ = cell(ip, "%acp mode code --name cfg", capsys)
    assert out.strip() == "mode: code (available: ask, code)"
    params = peer.requests("session/set_config_option")
    assert [(p["configId"], p["type"], p["value"]) for p in params] == [
        ("model", "id", "m2"),
        ("brave", "boolean", True),
        ("mode", "id", "code"),
    ]
    assert session.state.config_options[2]["currentValue"] is True
    result, _, err = cell(ip, "%acp config brave maybe --name cfg", capsys, ok=False)
    assert not result.success and "is a boolean option" in err


def test_mode_on_a_v1_agent(ip, capsys, tmp_path):
    peer = config_agent(tmp_path, 1)
    session = start(ip, capsys, "m1", f"--no-view --protocol 1 {peer.command_line}")
    _, out, _ = cell(ip, "%acp mode --name m1", capsys)
    assert out.strip() == "mode: ask (available: ask, code)"
    _, out, _ = cell(ip, "%acp mode code --name m1", capsys)
    assert out.strip() == "mode: code (available: ask, code)"
    assert peer.requests("session/set_mode") == [{"sessionId": "s1", "modeId": "code"}]
    assert session.state.current_mode_id == "code"
    _, out, _ = cell(ip, "%acp config --name m1", capsys)
    assert "advertises no config options" in out


# -- errors -------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("%acp bogus", "unknown subcommand 'bogus'"),
        ("%acp start --protocol 3", "invalid choice: 3"),
        ("%acp start --env NOVALUE", "--env takes K=V"),
        ("%acp status --name nobody", "no session named 'nobody'"),
        ("%%acp --name nobody\nhi", "no session named 'nobody'"),
        ("%acp start --name x /nonexistent/agent", "could not start agent"),
        (f"%acp start --name x {DEMO} --protocol 7", "during initialize (exit code 2)"),
        (f"%acp start --name x {DEMO} --scenario version3", "protocolVersion 3"),
        ("%acp start --name x --timeout 0.5 " + DEMO + " --scenario hang", "did not answer initialize"),
        (
            "%acp start --name x "
            + f"{sys.executable} -c 'import sys; print(\"no key\", file=sys.stderr); sys.exit(3)'",
            "exit code 3",
        ),
        ("%acp 'unclosed", "cannot parse"),
    ],
)
def test_errors_are_one_short_message(ip, capsys, line, message):
    result, _, err = cell(ip, line, capsys, ok=False)
    assert not result.success
    assert message in err, err
    assert "Traceback" not in err and "File " not in err, "no traceback wall"


def test_start_errors_show_the_stderr_tail(ip, capsys):
    code = f"{sys.executable} -c 'import sys; print(\"missing API key\", file=sys.stderr); sys.exit(3)'"
    _, _, err = cell(ip, f"%acp start --name x {code}", capsys, ok=False)
    assert "AgentStartError: the agent exited during initialize (exit code 3)" in err
    assert "missing API key" in err
    assert "x" not in ip.user_ns or type(ip.user_ns["x"]).__name__ != "Session"


def test_empty_prompt_is_refused(ip, capsys):
    start(ip, capsys, args="--no-view")
    _, _, err = cell(ip, "%%acp\n   \n", capsys, ok=False)
    assert "the cell has no prompt" in err


# -- interrupt hook --------------------------------------------------------------------------------------
def test_an_interrupted_cell_cancels_the_turns_it_started(ip, capsys):
    session = start(ip, capsys, args="--no-view")
    from acp_notebook.magic import _installed

    hooks = _installed[id(ip)][2]
    hooks.pre_run_cell()
    task = session.prompt_task("Fix the failing test")  # waits for a permission: never answered
    loop = acp_notebook.agent_of(session).loop()
    asked = until_async(lambda: session.pending_permissions, 10, message="the permission request")
    loop.run_until_complete(asked)

    class Result:
        error_in_exec = asyncio.CancelledError()

    hooks.post_run_cell(Result())
    assert "cancelling the turn of acp" in capsys.readouterr().err
    assert loop.run_until_complete(asyncio.wait_for(task, 10)) == "cancelled"
    assert [p.outcome for p in session.state.permissions.values()] == [{"outcome": "cancelled"}]


def test_reload_keeps_one_transformer_and_unload_removes_everything(ip):
    from acp_notebook.magic.transform import make_transformer

    ip.run_line_magic("reload_ext", "acp_notebook")
    ours = [t for t in ip.input_transformers_post if getattr(t, "acp_notebook", False)]
    assert len(ours) == 1 and make_transformer(ip) is not ours[0]
    ip.run_line_magic("unload_ext", "acp_notebook")
    try:
        assert "acp" not in ip.magics_manager.magics["line"]
        assert not [t for t in ip.input_transformers_post if getattr(t, "acp_notebook", False)]
        assert ip.transform_cell("%acp status\n").startswith("get_ipython().run_line_magic('acp'")
    finally:
        ip.run_line_magic("load_ext", "acp_notebook")


def test_a_blocking_wait_cell_cancels_on_a_permission_request(ip, capsys):
    session = start(ip, capsys, args=f"--no-view {DEMO} --scenario permission")
    ip.autoawait = False  # the cell cannot be made awaiting: the magic blocks
    try:
        _, out, err = cell(ip, "%%acp --wait\nDelete the build directory", capsys)
    finally:
        ip.autoawait = True
    assert "turn ended (cancelled)" in out
    assert "a blocked cell cannot receive a click" in err
    assert [p.outcome for p in session.state.permissions.values()] == [{"outcome": "cancelled"}]


def test_start_name_at_latest_runs_that_version_and_says_which_answered(ip, capsys, tmp_path, monkeypatch):
    info = {"name": "fake-acp", "title": "Fake agent", "version": "7.1.0"}
    peer = Peer(
        tmp_path, [{"expect": "initialize", "reply": {"protocolVersion": 2, "info": info}}, NEW], "fake"
    )
    table = tmp_path / "agents.json"
    entry = {"command": [*peer.command, "{package}"], "npm": "fake-acp", "version": "7.0.0"}
    table.write_text(json.dumps({"fake": entry}))
    monkeypatch.setenv("ACP_NOTEBOOK_AGENTS", str(table))
    _, out, _ = cell(ip, "%acp start --name fk --no-view fake@latest", capsys)
    assert "Started Fake agent 7.1.0 (ACP v2, pid" in out, out
    assert acp_notebook.agent_of(ip.user_ns["fk"]).process.argv[-1] == "fake-acp@latest"
    cell(ip, "%acp stop --name fk", capsys)


# -- authentication ---------------------------------------------------------------------------------
def test_start_needing_a_login_lists_methods_then_login_opens_the_session(ip, capsys, tmp_path):
    methods = [{"id": "oauth", "name": "Sign in with a browser"}, {"id": "key", "name": "API key"}]
    init = {"protocolVersion": 2, "info": {"name": "locked", "version": "1"}, "authMethods": methods}
    steps = [
        {"expect": "initialize", "reply": init},
        {"expect": "session/new", "error": {"code": -32000, "message": "Authentication required"}},
        {"expect": "auth/login", "reply": {}},
        {"expect": "session/new", "reply": {"sessionId": "s9"}},
        {"expect": "auth/logout", "reply": {}},
    ]
    peer = Peer(tmp_path, steps, "auth")
    _, out, _ = cell(ip, f"%acp start --name au --no-view {peer.command_line}", capsys)
    assert "needs a login" in out and "oauth  Sign in with a browser" in out
    assert "%acp login oauth --name au" in out and "Traceback" not in out
    _, out, _ = cell(ip, "%acp login --name au", capsys)
    assert "key  API key" in out
    _, out, _ = cell(ip, "%acp login oauth --name au", capsys)
    assert "Logged in" in out and "session s9 is au" in out
    assert ip.user_ns["au"].session_id == "s9"
    _, out, _ = cell(ip, "%acp logout --name au", capsys)
    assert "Logged out" in out
    assert peer.requests("auth/login") == [{"methodId": "oauth"}]
