"""ACP v2 on the wire (the draft the seed describes), offered first.

``initialize`` answers ``info`` + ``capabilities``; session capabilities sit under ``session``;
logging in is ``auth/login``/``auth/logout``. The prompt response is an acknowledgement and the
turn ends with a ``state_update`` ``idle``; the agent echoes the prompt itself. Tool calls are
upserts; terminals are the agent's (no ``fs/*``/``terminal/*`` served by the client); tool
calls and terminals that advertise ``capabilities.cancel`` can be cancelled one by one.
Request ids are never null.
"""

from __future__ import annotations

from typing import Any

from ...protocol.turn import Turn
from .base import (
    AgentConnection,
    Unsupported,
    http_entry,
    obj,
    stdio_entry,
)


class ConnectionV2(AgentConnection):
    """ACP v2."""

    version = 2
    null_ids = False

    @property
    def info(self) -> dict[str, Any]:
        """``info``."""
        return obj(self.result.get("info"))

    @property
    def capabilities(self) -> dict[str, Any]:
        """``capabilities``."""
        return obj(self.result.get("capabilities"))

    def supports(self, session_capability: str) -> bool:
        """``capabilities.session.X`` is set."""
        return obj(self.capabilities.get("session")).get(session_capability) is not None

    def mcp_transports(self) -> frozenset[str]:
        """What ``capabilities.session.mcp`` advertises (``http``, ``stdio``: each gated)."""
        mcp = obj(obj(self.capabilities.get("session")).get("mcp"))
        return frozenset(t for t in ("http", "stdio") if mcp.get(t) is not None)

    def mcp_server(self, name: str, transport: str, **fields: Any) -> dict[str, Any]:
        """v2 shapes: every entry names its ``type``; a transport the agent lacks is refused."""
        if transport not in self.mcp_transports():
            raise Unsupported(f"this v2 agent does not take {transport} MCP servers")
        return (
            http_entry(name, fields)
            if transport == "http"
            else {"type": "stdio", **stdio_entry(name, fields)}
        )

    def _resume_method(self, params: dict[str, Any], replay: bool) -> str:
        """``session/resume``, replaying from the start when ``replay``."""
        if replay:
            params["replayFrom"] = {"type": "start"}
        return "session/resume"

    async def close_session(self, session_id: str) -> bool:
        """``session/close`` (baseline in v2)."""
        await self.call("session/close", {"sessionId": session_id})
        return True

    async def set_config_option(self, session_id: str, config_id: str, value: str | bool) -> Any:
        """v2 tags the value's shape: ``boolean`` or ``id``."""
        kind = "boolean" if isinstance(value, bool) else "id"
        params = {"sessionId": session_id, "configId": config_id, "type": kind, "value": value}
        return await self.call("session/set_config_option", params)

    async def set_mode(self, session_id: str, mode_id: str) -> Any:
        """Not in v2: modes are a config option of category ``mode``."""
        raise Unsupported("this v2 agent advertises no config option of category `mode`")

    async def cancel_tool_call(self, session_id: str, tool_call_id: str) -> Any:
        """``tool_call/cancel``."""
        return await self.call("tool_call/cancel", {"sessionId": session_id, "toolCallId": tool_call_id})

    async def cancel_terminal(self, session_id: str, terminal_id: str) -> Any:
        """``terminal/cancel``."""
        return await self.call("terminal/cancel", {"sessionId": session_id, "terminalId": terminal_id})

    def new_turn(self) -> Turn:
        """The turn ends with ``state_update`` ``idle``."""
        return Turn(ends_on_response=False)

    def prompt_echo(self, blocks: list[Any]) -> list[dict[str, Any]]:
        """Nothing: a v2 agent reports the prompt and the run state itself."""
        return []
