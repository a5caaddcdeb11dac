"""``%acp login METHOD`` in IPython: a terminal login typed into its view, an env_var login
answered in its password form; a start that waited for the login then opens its session."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from acp_notebook.magic import login as login_module

from .support import until_async

globalipapp = pytest.importorskip("IPython.testing.globalipapp")
LOGIN_AGENT = Path(__file__).parent / "agents" / "login_agent.py"


@pytest.fixture(scope="module")
def ip():
    shell = globalipapp.start_ipython() or globalipapp.get_ipython()
    shell.run_line_magic("load_ext", "acp_notebook")
    try:
        yield shell
    finally:
        shell.run_cell("%acp stop --all")
        shell.run_line_magic("unload_ext", "acp_notebook")


class Person:
    """Stands for the user at the displayed widgets: types into a login terminal, fills a form."""

    def __init__(self, code: str = "1234", key: str | None = "s3cret") -> None:
        self.code, self.key, self.shown, self._tasks = code, key, [], set()

    def __call__(self, obj, **_kwargs):
        self.shown.append(obj)
        task = asyncio.get_running_loop().create_task(self._answer(obj))
        self._tasks.add(task)
        return self

    async def _answer(self, obj) -> None:
        if type(obj).__name__ == "SecretForm":
            values = {"FAKE_KEY": self.key} if self.key else {}
            obj._handle({"type": "submit", "values": values} if self.key else {"type": "cancel"})
        elif type(obj).__name__ == "SessionView":
            term = obj.state.terminals["login"]
            await until_async(lambda: "Enter the code:" in term.plain_text, timeout=10)
            assert obj.actions.interactive_terminals() == ["login"]
            obj.actions.terminal_input("login", f"{self.code}\r".encode())


def run(ip, code, capsys):
    capsys.readouterr()
    result = ip.run_cell(code)
    out, err = capsys.readouterr()
    return result, out + err


def test_terminal_login_then_the_waiting_start_opens_its_session(ip, capsys, tmp_path, monkeypatch):
    person = Person()
    monkeypatch.setattr(login_module, "display", person)
    result, out = run(ip, f"%acp start --name lg --no-view {sys.executable} {LOGIN_AGENT} {tmp_path}", capsys)
    assert result.success and "needs a login" in out
    assert (
        "tui  Log in here [runs in a terminal here]" in out
        and "key  Use FAKE_KEY [asks for a key here]" in out
    )
    result, out = run(ip, "%acp login tui --name lg", capsys)
    assert result.success, out
    assert "Logged in with 'Log in here' (the login terminal exited 0)" in out
    assert "session s1 is lg" in out
    (view,) = [o for o in person.shown if type(o).__name__ == "SessionView"]
    assert view.state.tool_calls["login"].status == "completed"


def test_a_wrong_code_shows_the_exit_and_the_last_lines(ip, capsys, tmp_path, monkeypatch):
    monkeypatch.setattr(login_module, "display", Person(code="0000"))
    run(ip, f"%acp start --name lw --no-view {sys.executable} {LOGIN_AGENT} {tmp_path}", capsys)
    result, out = run(ip, "%acp login tui --name lw", capsys)
    assert not result.success
    assert "the login exited with {'exitCode': 3, 'signal': None}" in out and "Wrong code." in out


def test_env_var_login_asks_in_a_password_form_and_restarts(ip, capsys, tmp_path, monkeypatch):
    person = Person()
    monkeypatch.setattr(login_module, "display", person)
    run(ip, f"%acp start --name le --no-view {sys.executable} {LOGIN_AGENT} {tmp_path}", capsys)
    result, out = run(ip, "%acp login key --name le", capsys)
    assert result.success, out
    assert "the agent was restarted with FAKE_KEY in its environment" in out and "s3cret" not in out
    (form,) = [o for o in person.shown if type(o).__name__ == "SecretForm"]
    assert "s3cret" not in str(form.get_state()) and form.phase == "submitted"
    assert ip.user_ns["le"].session_id == "s1"


def test_a_cancelled_form_cancels_the_login(ip, capsys, tmp_path, monkeypatch):
    monkeypatch.setattr(login_module, "display", Person(key=None))
    run(ip, f"%acp start --name lc --no-view {sys.executable} {LOGIN_AGENT} {tmp_path}", capsys)
    result, out = run(ip, "%acp login key --name lc", capsys)
    assert not result.success and "the login was cancelled" in out


def test_a_prompt_refused_for_want_of_a_login_is_sent_again_after_it(ip, capsys, tmp_path, monkeypatch):
    monkeypatch.setattr(login_module, "display", Person())
    command = f"{sys.executable} {LOGIN_AGENT} {tmp_path} --open"
    result, out = run(ip, f"%acp start --name lp --no-view {command}", capsys)
    assert result.success, out
    result, out = run(ip, "%%acp --name lp --wait\nhello", capsys)
    assert not result.success and "Authentication required" in out and "sent again after the login" in out
    result, out = run(ip, "%acp login tui --name lp", capsys)
    assert result.success and "Sending the prompt that needed the login again: 'hello'" in out
    run(ip, "%acp wait --name lp --timeout 10", capsys)
    session = ip.user_ns["lp"]
    assert [t.stop_reason for t in session.turns][-1] == "end_turn"


def test_an_agent_that_reads_credentials_at_start_is_restarted_after_the_login(
    ip, capsys, tmp_path, monkeypatch
):
    monkeypatch.setattr(login_module, "display", Person())
    command = f"{sys.executable} {LOGIN_AGENT} {tmp_path} --cache"
    run(ip, f"%acp start --name lr --no-view {command}", capsys)
    first = ip.user_ns.get("lr")
    result, out = run(ip, "%acp login tui --name lr", capsys)
    assert result.success, out
    assert "restarting it so that it reads the new credentials" in out and "session s1 is lr" in out
    assert first is None and ip.user_ns["lr"].session_id == "s1"
