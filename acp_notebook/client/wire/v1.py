"""ACP v1 on the wire: what agents speak today.

``initialize`` answers ``agentInfo`` + ``agentCapabilities``; session capabilities sit under
``sessionCapabilities``; logging in is ``authenticate``/``logout``. The prompt response carries
``stopReason`` and the agent does not echo the prompt (the client records it and marks the
session running). In a ``tool_call_update`` ``null`` means "unchanged". The client may serve
``fs/*`` and ``terminal/*`` (when offered); ``$/cancel_request`` withdraws a request. Resuming
with history is ``session/load`` (``loadSession``); without, ``session/resume``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...protocol.state import Incoming
from ...protocol.turn import Turn
from ...protocol.v1 import normalize_v1_update
from . import terminal_output
from .base import (
    AgentConnection,
    Handlers,
    Offer,
    Routes,
    Unsupported,
    http_entry,
    obj,
    stdio_entry,
)

FILE_METHODS = ("fs/read_text_file", "fs/write_text_file")
TERMINAL_METHODS = (
    "terminal/create",
    "terminal/output",
    "terminal/wait_for_exit",
    "terminal/kill",
    "terminal/release",
)


def client_capabilities(offer: Offer) -> dict[str, Any]:
    """What a v1 agent may ask of us: file access (limited to session roots), PTY terminals,
    elicitations, and the extensions we understand (``_meta``)."""
    files = offer.files
    capabilities: dict[str, Any] = {
        "fs": {"readTextFile": files, "writeTextFile": files},
        "terminal": offer.terminals,
    }
    if offer.terminal_auth:
        capabilities["auth"] = {"terminal": True}
    if offer.elicitation:
        capabilities["elicitation"] = offer.elicitation_capability()
    meta = meta_offers(offer)
    if meta:
        capabilities["_meta"] = meta
    return capabilities


def meta_offers(offer: Offer) -> dict[str, Any]:
    """The extensions offered in ``_meta`` (v1 ``clientCapabilities._meta``, and v2
    ``capabilities._meta`` too: an agent's SDK router that negotiates a v2 ``initialize`` down to
    v1 rebuilds ``clientCapabilities`` from the v2 ``capabilities`` and keeps only its ``_meta``)."""
    meta = {"terminal_output": True} if offer.terminal_output else {}
    if offer.terminal_auth:
        meta["terminal-auth"] = True  # the `_meta` form claude-agent-acp also reads
    return meta


class ConnectionV1(AgentConnection):
    """ACP v1."""

    version = 1
    null_ids = True
    announces_before_asking = True
    method_id_key = "id"
    env_as_list = False
    login_method = "authenticate"
    logout_method = "logout"

    @property
    def info(self) -> dict[str, Any]:
        """``agentInfo``."""
        return obj(self.result.get("agentInfo"))

    @property
    def capabilities(self) -> dict[str, Any]:
        """``agentCapabilities``."""
        return obj(self.result.get("agentCapabilities"))

    def supports(self, session_capability: str) -> bool:
        """``agentCapabilities.sessionCapabilities.X`` is set."""
        return obj(self.capabilities.get("sessionCapabilities")).get(session_capability) is not None

    def mcp_transports(self) -> frozenset[str]:
        """stdio always (v1 agents must take it); http with ``mcpCapabilities.http``."""
        http = obj(self.capabilities.get("mcpCapabilities")).get("http") is True
        return frozenset({"stdio", "http"} if http else {"stdio"})

    def mcp_server(self, name: str, transport: str, **fields: Any) -> dict[str, Any]:
        """v1 shapes; a stdio entry has no ``type`` key (claude-agent-acp drops one that has)."""
        return http_entry(name, fields) if transport == "http" else stdio_entry(name, fields)

    def routes(self, handlers: Handlers) -> Routes:
        """The common table, and the host methods offered (``fs/*``, ``terminal/*``)."""
        routes = super().routes(handlers)
        offered = (FILE_METHODS if self.offer.files else ()) + (
            TERMINAL_METHODS if self.offer.terminals else ()
        )
        routes.requests.update(dict.fromkeys(offered, handlers.on_host_request))
        return routes

    def _resume_method(self, params: dict[str, Any], replay: bool) -> str:
        """``session/load`` to replay history (``loadSession``), else ``session/resume``."""
        if replay and self.capabilities.get("loadSession"):
            return "session/load"
        if replay or not self.supports("resume"):
            raise Unsupported("this v1 agent cannot load sessions (no `loadSession` capability)")
        return "session/resume"

    async def list_sessions(self, cwd: str | None = None) -> list[dict[str, Any]]:
        """``session/list``, where ``sessionCapabilities.list`` is advertised."""
        if not self.supports("list"):
            raise Unsupported("this v1 agent does not advertise session listing (sessionCapabilities.list)")
        return await super().list_sessions(cwd)

    async def close_session(self, session_id: str) -> bool:
        """``session/close`` when ``sessionCapabilities.close`` is advertised."""
        if not self.supports("close"):
            return False
        await self.call("session/close", {"sessionId": session_id})
        return True

    async def set_config_option(self, session_id: str, config_id: str, value: str | bool) -> Any:
        """v1 sends the bare value."""
        params = {"sessionId": session_id, "configId": config_id, "value": value}
        return await self.call("session/set_config_option", params)

    async def cancel_tool_call(self, session_id: str, tool_call_id: str) -> Any:
        """Not in v1."""
        raise Unsupported("v1 has no per-tool-call cancel: cancel the turn")

    async def cancel_terminal(self, session_id: str, terminal_id: str) -> Any:
        """Not in v1 (client-run terminals are killed by the agent)."""
        raise Unsupported("v1 has no per-terminal cancel: cancel the turn")

    def new_turn(self) -> Turn:
        """The prompt response ends the turn."""
        return Turn(ends_on_response=True)

    def prompt_echo(self, blocks: list[Any]) -> list[dict[str, Any]]:
        """The prompt as user message chunks, then ``running``."""
        echo = [{"sessionUpdate": "user_message_chunk", "content": block} for block in blocks]
        return [*echo, {"sessionUpdate": "state_update", "state": "running"}]

    def read_update(self, update: Any, known: Callable[[str], Any]) -> Incoming:
        """Nulls in a ``tool_call_update`` mean "unchanged"; a patch before its create is noted
        (info); shell output carried in ``_meta`` (``terminal_output``, when offered) is added."""
        update = normalize_v1_update(update)
        tc_id = update.get("toolCallId") if isinstance(update, dict) else None
        stored = known(tc_id) if isinstance(tc_id, str) else None
        problems: list[tuple[str, str, Any, str]] = []
        if stored is None and isinstance(tc_id, str) and update.get("sessionUpdate") == "tool_call_update":
            problems.append(
                ("update-before-create", f"tool_call_update for unknown {tc_id!r}", update, "info")
            )
        if not self.offer.terminal_output or not _may_carry_terminal(update):
            return Incoming(update, (), tuple(problems))
        implied = terminal_output.translate(update, stored.meta if stored is not None else None)
        problems += [("malformed-extension", text, value, "warning") for text, value in implied.problems]
        return Incoming(update, tuple(implied.updates), tuple(problems))


def _may_carry_terminal(update: Any) -> bool:
    """Whether the ``terminal_output`` extension can read anything in ``update``: its ``_meta``, or
    a command (``rawInput``) for a terminal the tool call announced before."""
    return isinstance(update, dict) and ("_meta" in update or "rawInput" in update)
