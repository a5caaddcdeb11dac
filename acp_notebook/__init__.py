"""acp_notebook: an Agent Client Protocol client for Jupyter notebooks.

The live client (asyncio, subprocesses) is imported on first use, so importing the pure core
(``acp_notebook.protocol``) never pulls in I/O modules.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_EXPORTS = {
    "Agent": "client.agent",
    "start_agent": "client.agent",
    "Session": "client.session",
    "AcpError": "client.errors",
    "AgentExited": "client.errors",
    "AgentStartError": "client.errors",
    "ProtocolVersionError": "client.errors",
    "RpcError": "client.errors",
    "Change": "protocol",
    "Diagnostic": "protocol",
    "Message": "protocol",
    "PermissionAlreadyAnswered": "protocol",
    "PermissionRequest": "protocol",
    "Plan": "protocol",
    "SessionState": "protocol",
    "Terminal": "protocol",
    "ToolCall": "protocol",
    "SessionView": "widgets",
}

__all__ = ["__version__", *sorted(_EXPORTS)]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'acp_notebook' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value
