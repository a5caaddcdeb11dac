"""One connection object per protocol version, and the one ``initialize`` made before a version is known.

``initialize`` offers ``protocolVersion: 2`` in both shapes at once — v2 ``info`` +
``capabilities`` and v1 ``clientInfo`` + ``clientCapabilities`` (``initialize_params``) — so a
v1-only agent that answers ``1`` knows what we offer. ``choose`` reads the answer and returns the
version's ``AgentConnection`` that takes over; any other version raises ``ProtocolVersionError``.
This is the only place in the client that compares protocol versions.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

from ..._version import __version__
from ..connection import Connection
from ..errors import AcpError, ProtocolVersionError
from .auth import AuthMethod
from .base import ELICITATION_SCOPES, AgentConnection, Handlers, Offer, Routes, Unsupported, early_routes
from .v1 import ConnectionV1, client_capabilities, meta_offers
from .v2 import ConnectionV2

__all__ = [
    "CLIENT_INFO",
    "ELICITATION_SCOPES",
    "SUPPORTED_VERSIONS",
    "AgentConnection",
    "AuthMethod",
    "ConnectionV1",
    "ConnectionV2",
    "Handlers",
    "Offer",
    "Routes",
    "Unsupported",
    "choose",
    "initialize",
    "initialize_params",
]

CLIENT_INFO = {"name": "acp-notebook", "title": "ACP Notebook", "version": __version__}
VERSIONS: dict[int, type[AgentConnection]] = {1: ConnectionV1, 2: ConnectionV2}
SUPPORTED_VERSIONS = tuple(sorted(VERSIONS))


async def initialize(
    rpc: Connection,
    offer: Offer,
    handlers: Handlers,
    asked: int = 2,
    stderr_tail: Callable[[], list[str]] = list,
) -> AgentConnection:
    """Send ``initialize`` and return the connection of the version the agent answers (1 or 2),
    routed to ``handlers`` in the reader as the answer arrives: what the agent sends right after
    it (its ``_auth/status_update``) finds its handler. Meanwhile only a request-scoped
    elicitation about ``initialize`` itself is routed (``early_routes``)."""
    adopted: list[AgentConnection] = []
    rpc.route(early_routes(handlers), null_ids=True)

    def adopt(result: Any) -> None:
        with contextlib.suppress(AcpError):  # the request raises it below
            adopted.append(choose(rpc, offer, result, asked, []))
            adopted[-1].route(handlers)

    result = await rpc.request("initialize", initialize_params(offer, asked), hook=adopt)
    if adopted and adopted[-1].result is result:
        return adopted[-1]
    conn = choose(rpc, offer, result, asked, stderr_tail())  # raises if unspoken (or the hook failed)
    conn.route(handlers)
    return conn


def initialize_params(offer: Offer, protocol_version: int = 2) -> dict[str, Any]:
    """The ``initialize`` params: v2 and v1 shapes together when offering v2."""
    params: dict[str, Any] = {
        "protocolVersion": protocol_version,
        "clientInfo": CLIENT_INFO,
        "clientCapabilities": client_capabilities(offer),
    }
    if protocol_version >= 2:
        capabilities: dict[str, Any] = {"auth": {"terminal": {}}} if offer.terminal_auth else {}
        if offer.elicitation:
            capabilities["elicitation"] = offer.elicitation_capability()
        meta = meta_offers(offer)
        if meta:
            capabilities["_meta"] = meta
        params.update({"info": CLIENT_INFO, "capabilities": capabilities})
    return params


def choose(rpc: Connection, offer: Offer, result: Any, asked: int, stderr_tail: list[str]) -> AgentConnection:
    """The connection for the version the agent answered (at most ``asked``), else an error."""
    result = result if isinstance(result, dict) else {}
    version = result.get("protocolVersion")
    kind = VERSIONS.get(version) if isinstance(version, int) and not isinstance(version, bool) else None
    if kind is None or kind.version > asked:
        raise ProtocolVersionError(
            f"the agent answered protocolVersion {version!r}; this client speaks "
            f"{' and '.join(map(str, SUPPORTED_VERSIONS))} (asked for {asked})",
            stderr_tail,
        )
    return kind(rpc, offer, result)
