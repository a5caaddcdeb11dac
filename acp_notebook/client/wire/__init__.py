"""One wire per protocol version, and the one ``initialize`` offer made before a version is known.

``initialize_params`` offers ``protocolVersion: 2`` in both shapes at once — v2 ``info`` +
``capabilities`` and v1 ``clientInfo`` + ``clientCapabilities`` — so a v1-only agent that
answers ``1`` knows what we offer. ``choose_wire`` reads the answer and returns the wire that
takes over; any other version raises ``ProtocolVersionError``. This is the only place in the
client that compares protocol versions.
"""

from __future__ import annotations

from typing import Any

from ..._version import __version__
from ..errors import ProtocolVersionError
from .auth import AuthMethod
from .base import Call, Handlers, Offer, Routes, Unsupported, Wire
from .v1 import WireV1, client_capabilities, meta_offers
from .v2 import WireV2

__all__ = [
    "CLIENT_INFO",
    "SUPPORTED_VERSIONS",
    "AuthMethod",
    "Call",
    "Handlers",
    "Offer",
    "Routes",
    "Unsupported",
    "Wire",
    "WireV1",
    "WireV2",
    "choose_wire",
    "initialize_params",
]

CLIENT_INFO = {"name": "acp-notebook", "title": "ACP Notebook", "version": __version__}
WIRES: dict[int, type[Wire]] = {1: WireV1, 2: WireV2}
SUPPORTED_VERSIONS = tuple(sorted(WIRES))


def initialize_params(offer: Offer, protocol_version: int = 2) -> dict[str, Any]:
    """The ``initialize`` params: v2 and v1 shapes together when offering v2."""
    params: dict[str, Any] = {
        "protocolVersion": protocol_version,
        "clientInfo": CLIENT_INFO,
        "clientCapabilities": client_capabilities(offer),
    }
    if protocol_version >= 2:
        capabilities: dict[str, Any] = {"auth": {"terminal": {}}} if offer.terminal_auth else {}
        meta = meta_offers(offer)
        if meta:
            capabilities["_meta"] = meta
        params.update({"info": CLIENT_INFO, "capabilities": capabilities})
    return params


def choose_wire(offer: Offer, result: Any, asked: int, stderr_tail: list[str]) -> Wire:
    """The wire for the version the agent answered (at most ``asked``), else an error."""
    result = result if isinstance(result, dict) else {}
    version = result.get("protocolVersion")
    wire = WIRES.get(version) if isinstance(version, int) and not isinstance(version, bool) else None
    if wire is None or wire.version > asked:
        raise ProtocolVersionError(
            f"the agent answered protocolVersion {version!r}; this client speaks "
            f"{' and '.join(map(str, SUPPORTED_VERSIONS))} (asked for {asked})",
            stderr_tail,
        )
    return wire(offer, result)
