"""``%acp login METHOD``: each kind of auth method the way it works, from the notebook.

- ``terminal`` methods (and claude-agent-acp's ``_meta["terminal-auth"]`` commands) run the
  agent's own login in an interactive terminal shown in the cell: keystrokes go to it, its size
  follows the view. Exit 0 is success; otherwise the exit and its last lines are shown.
- ``env_var`` methods (codex-acp) ask for each variable in a password field — never echoed,
  logged, recorded or saved in the notebook — then restart the agent with them and
  ``authenticate``.
- methods marked ``_meta["api-key"]`` (Gemini CLI) ask for the key the same way and send it in
  ``authenticate``'s ``_meta``;
- other methods: ``authenticate`` (v2 ``auth/login``), bounded by ``--timeout``; an interrupt
  withdraws it.

After a successful login, a start that was waiting for it opens its session; a session the
restart ended is opened again under the same name.
"""

from __future__ import annotations

import asyncio
from typing import Any

from IPython.display import display

from ..client.agent import Agent
from ..client.login import TerminalLogin
from ..client.wire import AuthMethod
from ..widgets.actions import Actions
from .errors import MagicError


class LoginActions(Actions):
    """What a login terminal's view sends back: keystrokes, size, Stop."""

    def __init__(self, login: TerminalLogin) -> None:
        super().__init__(login.state)
        self.login = login

    def terminal_input(self, terminal_id: str, data: bytes) -> None:
        """Keystrokes for the login."""
        self.login.terminal_input(terminal_id, data)

    def terminal_resize(self, terminal_id: str, cols: int, rows: int) -> None:
        """The view's size."""
        self.login.terminal_resize(terminal_id, cols, rows)

    def interactive_terminals(self) -> list[str]:
        """The login terminal while it runs."""
        return self.login.interactive_terminals()

    def cancel_turn(self) -> None:
        """Stop stops the login."""
        self.login.cancel()


async def run_login(agent: Agent, method: AuthMethod, timeout: float | None) -> str:
    """Log in with ``method``; returns what to tell the user, raises ``MagicError`` on failure."""
    if method.runs_in_terminal:
        return await _terminal(agent, method)
    if method.type == "env_var":
        return await _env_var(agent, method, timeout)
    if method.key_provider is not None:
        return await _api_key(agent, method, timeout)
    await agent.authenticate(method.id, timeout)
    return f"Logged in with {method.id!r}."


async def _terminal(agent: Agent, method: AuthMethod) -> str:
    from ..widgets import SessionView

    login = await agent.login_terminal(method.id)
    display(SessionView(login.state, actions=LoginActions(login), title=f"Log in: {method.name}"))
    try:
        status = await login.wait()
    except asyncio.CancelledError:
        login.cancel()
        await login.close()
        raise MagicError("the login was interrupted (its terminal was stopped)", "TurnInterrupted") from None
    await login.close()
    if not login.succeeded:
        tail = "\n".join(f"  {line}" for line in login.last_lines())
        raise MagicError(f"the login exited with {status}" + (f"; its last lines:\n{tail}" if tail else ""))
    return f"Logged in with {method.name!r} (the login terminal exited 0)."


async def _env_var(agent: Agent, method: AuthMethod, timeout: float | None) -> str:
    fields = [_field(v) for v in method.vars]
    values = await _ask(fields, f"{method.name}: the values go to the agent's environment only")
    try:
        await agent.login_env(method.id, values, timeout)
    finally:
        values.clear()  # keep no copy
    names = ", ".join(f["name"] for f in fields)
    return (
        f"Logged in with {method.id!r}: the agent was restarted with {names} in its environment. "
        "The agent may keep the key in its own configuration (codex stores it under CODEX_HOME)."
    )


async def _api_key(agent: Agent, method: AuthMethod, timeout: float | None) -> str:
    field = {"name": "api_key", "label": f"{method.key_provider} API key", "optional": False}
    values = await _ask([field], f"{method.name}: the key goes to the agent in its authenticate call only")
    try:
        await agent.authenticate(method.id, timeout, api_key=values["api_key"])
    finally:
        values.clear()
    return f"Logged in with {method.id!r} (the key was sent to the agent, not kept here)."


async def _ask(fields: list[dict[str, Any]], title: str) -> dict[str, str]:
    """Ask for secret values in password fields; a person submits, or the wait is interrupted."""
    from ..widgets.secret_form import SecretForm

    answer: asyncio.Future[dict[str, str] | None] = asyncio.get_running_loop().create_future()
    form = SecretForm(
        fields=fields,
        title=title,
        on_submit=lambda values: answer.done() or answer.set_result(values),
        on_cancel=lambda: answer.done() or answer.set_result(None),
    )
    display(form)
    try:
        values = await answer
    except asyncio.CancelledError:
        form.set_status("interrupted")
        raise
    if values is None:
        form.set_status("cancelled")
        raise MagicError("the login was cancelled", "UsageError")
    form.set_status("sent to the agent")
    return values


def _field(var: dict[str, Any]) -> dict[str, Any]:
    label = var.get("label") if isinstance(var.get("label"), str) else var["name"]
    return {"name": var["name"], "label": label, "optional": bool(var.get("optional"))}
