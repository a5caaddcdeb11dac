"""A session's ``notebook`` MCP server: started before ``session/new``, handed over in its
``mcpServers``, and closed with the session.

Transport: streamable HTTP on 127.0.0.1 with a per-session bearer token when the agent
advertises HTTP MCP servers (the wire says), else the stdio bridge
(``python -m acp_notebook.notebook_mcp.bridge``), which reaches the same endpoint with the token
it gets in its environment. Approval of ``run_code`` (``approve``): a permission the agent already
asked for that very call and the user allowed; else the same permission buttons, asked by the
client (a policy or handler set as ``session.permission_handler`` may answer). Each run is noted
on its tool call's card — the agent's own, or a client-side card when the agent announced none.
"""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from ..protocol.permission import PermissionRequest
from ..protocol.state import SessionState
from .wire import AgentConnection

if TYPE_CHECKING:  # the MCP SDK loads only when a session shares something
    from ..notebook_mcp.server import McpCall, Share

ALLOW = ({"optionId": "allow-once", "name": "Run it", "kind": "allow_once"},)
REJECT = ({"optionId": "reject-once", "name": "Don't run", "kind": "reject_once"},)
RUN_TOOL = "run_code"


class NotebookLink:
    """The server of one session: its ``Share``, its endpoint, its server entry."""

    def __init__(self, share: Share, service: Any, entry: dict[str, Any]) -> None:
        self.share, self.service, self.entry = share, service, entry
        self._state: SessionState | None = None  # the session's, once it exists (``bind``)
        self._ask: Callable[[dict[str, Any]], PermissionRequest] | None = None
        self._wait: Callable[[PermissionRequest], Awaitable[None]] | None = None
        self._used: set[str] = set()  # permission keys already spent on a run
        self._runs = 0

    @classmethod
    async def open(
        cls, conn: AgentConnection, objects: dict[str, Any] | None, run_code: bool
    ) -> NotebookLink:
        """Start the server for a session on ``conn`` (before ``session/new``)."""
        from ..notebook_mcp.http import HttpService  # the web server loads only when shared
        from ..notebook_mcp.server import Share, build_server

        share = Share(objects, run_code=run_code, namespace=_user_namespace())  # None: not in IPython
        service = HttpService(build_server(share))
        url = await service.start()
        link = cls(share, service, {})
        share.approve, share.on_run = link.approve, link.noted
        link.entry = _entry(conn, url, service.headers)
        return link

    def bind(
        self,
        state: SessionState,
        ask: Callable[[dict[str, Any]], PermissionRequest],
        wait: Callable[[PermissionRequest], Awaitable[None]],
    ) -> None:
        """The session now exists: its state gets the notes; ``ask`` / ``wait`` put a question
        of ours to its permission desk (the same buttons, handler and policies)."""
        self._state, self._ask, self._wait = state, ask, wait

    async def close(self) -> None:
        """Stop the server (the session is over)."""
        await self.service.close()

    # -- approval ------------------------------------------------------------------------------
    async def approve(self, code: str) -> str | None:
        """Who approved running ``code`` (None: refused or cancelled)."""
        if self._state is None or self._ask is None or self._wait is None:
            return None
        call_id = self._tool_call_for(code)
        asked = self._agent_asked(call_id) if call_id is not None else None
        if asked is not None:
            return asked
        perm = self._ask(_question(call_id or self._client_card(code), code))
        await self._wait(perm)
        chosen = perm.selected_option
        return (perm.decided_by or "user") if chosen in {o["optionId"] for o in ALLOW} else None

    def _tool_call_for(self, code: str) -> str | None:
        """The agent's latest tool call that is this ``run_code`` call (same code), not yet run."""
        calls = self._state.tool_calls if self._state is not None else {}
        for tc_id in reversed(list(calls)):
            tc = calls[tc_id]
            raw = tc.raw_input if isinstance(tc.raw_input, dict) else {}
            named = RUN_TOOL in f"{tc.title or ''} {tc.name or ''} {tc_id}"
            if (
                raw.get("code") == code
                and (named or not tc_id.startswith("_"))
                and not tc.extra.get("notebook_ran")
            ):
                return tc_id
        return None

    def _agent_asked(self, call_id: str) -> str | None:
        """Who allowed the agent's own permission request for ``call_id`` (once per request)."""
        assert self._state is not None
        for perm in reversed(list(self._state.permissions.values())):
            if perm.tool_call_id != call_id or perm.key in self._used or perm.pending:
                continue
            kind = next(
                (o.get("kind") for o in perm.options if o.get("optionId") == perm.selected_option), None
            )
            if kind in ("allow_once", "allow_always"):
                self._used.add(perm.key)
                return f"agent request ({perm.decided_by or 'user'})"
        return None

    def _client_card(self, code: str) -> str:
        """A card of our own for a run the agent did not announce."""
        assert self._state is not None
        self._runs += 1
        call_id = f"_notebook_run_{self._runs}"
        self._state.apply({
            "sessionUpdate": "tool_call_update", "toolCallId": call_id, "status": "pending",
            "title": "Run code in the notebook kernel", "kind": "execute", "rawInput": {"code": code},
        })  # fmt: skip
        return call_id

    # -- notes on the card -----------------------------------------------------------------------
    def noted(self, call: McpCall) -> None:
        """After a ``run_code`` call: put the code and what it did on its card."""
        state = self._state
        if state is None:
            return
        code = str(call.arguments.get("code", ""))
        call_id = self._tool_call_for(code) or next(
            (k for k in reversed(list(state.tool_calls)) if k.startswith("_notebook_run_")
             and state.tool_calls[k].raw_input == {"code": code}), None)  # fmt: skip
        if call_id is None:
            return
        note = {"kind": "notebook_run", "code": code, "approved_by": call.approved_by, "error": call.error}
        note.update({"duration": call.duration, **(call.outcome.to_dict() if call.outcome else {})})
        state.add_note(call_id, note)
        state.tool_calls[call_id].extra["notebook_ran"] = True
        if call_id.startswith("_notebook_run_"):
            status = "completed" if call.outcome is not None and call.outcome.ok else "failed"
            state.apply({"sessionUpdate": "tool_call_update", "toolCallId": call_id, "status": status})


def _question(call_id: str, code: str) -> dict[str, Any]:
    """A v2-shaped permission question about running ``code`` (the card's own tool call)."""
    first = code.strip().splitlines()[0] if code.strip() else ""
    return {
        "title": "Run code in the notebook kernel?",
        "description": f"The agent wants to run this in your live kernel: {first[:120]}",
        "subject": {"type": "tool_call", "toolCall": {"toolCallId": call_id}},
        "options": [*ALLOW, *REJECT],
    }


def _entry(conn: AgentConnection, url: str, headers: dict[str, str]) -> dict[str, Any]:
    """The server entry for ``session/new``: HTTP when the agent takes it, else the stdio bridge."""
    if "http" in conn.mcp_transports():
        return conn.mcp_server("notebook", "http", url=url, headers=headers)
    env = {"ACP_NOTEBOOK_MCP_URL": url, "ACP_NOTEBOOK_MCP_TOKEN": headers["Authorization"].split(" ", 1)[1]}
    args = ["-m", "acp_notebook.notebook_mcp.bridge"]
    return conn.mcp_server("notebook", "stdio", command=sys.executable, args=args, env=env)


def _user_namespace() -> dict[str, Any] | None:
    """The IPython user namespace (run_code runs there); None outside IPython."""
    try:
        from IPython import get_ipython
    except ImportError:
        return None
    shell = get_ipython()
    return shell.user_ns if shell is not None else None
