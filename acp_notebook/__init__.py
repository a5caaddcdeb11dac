"""acp_notebook: an Agent Client Protocol client for Jupyter notebooks.

The live client (asyncio, subprocesses) is imported on first use, so importing the pure core
(``acp_notebook.protocol``) never pulls in I/O modules.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

from ._version import __version__

_EXPORTS = {
    "Agent": "client.agent",
    "start_agent": "client.launch",
    "agent_of": "client.registry",
    "Session": "client.session",
    "AcpError": "client.errors",
    "AgentExited": "client.errors",
    "AgentStartError": "client.errors",
    "ProtocolVersionError": "client.errors",
    "RpcError": "client.errors",
    "AuthRequired": "client.errors",
    "Change": "protocol",
    "Diagnostic": "protocol",
    "Elicitation": "protocol",
    "ElicitationAlreadyAnswered": "protocol",
    "ElicitationInvalid": "protocol",
    "ElicitationTooLate": "protocol",
    "Message": "protocol",
    "PermissionAlreadyAnswered": "protocol",
    "PermissionRequest": "protocol",
    "PermissionTooLate": "protocol",
    "Plan": "protocol",
    "SessionState": "protocol",
    "Terminal": "protocol",
    "ToolCall": "protocol",
    "SessionView": "widgets",
    "TurnInterrupted": "client.turns",
    "run_sync": "client.sync",
    "start_agent_sync": "client.launch",
    "register_agent": "client.agents",
    "known_agents": "client.agents",
    "Replay": "playback",
    "replay": "playback",
    "doctor": "playback",
    "compare": "comparison",
    "compare_sync": "comparison",
    "Comparison": "comparison",
    "export_json": "export",
    "export_html": "export",
}

__all__ = ["__version__", "load_ipython_extension", "unload_ipython_extension", *sorted(_EXPORTS)]


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext acp_notebook``: register ``%acp`` / ``%%acp`` (imports IPython only now)."""
    from .magic import load_ipython_extension as load

    load(ipython)


def unload_ipython_extension(ipython: Any) -> None:
    """``%unload_ext acp_notebook``: remove the magics, transformer and hooks."""
    from .magic import unload_ipython_extension as unload

    unload(ipython)


_SUBMODULES = frozenset({"policies"})  # ``acp_notebook.policies.allow(...)`` without an import


def __getattr__(name: str) -> Any:
    if name in _SUBMODULES:
        return importlib.import_module(f".{name}", __name__)
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'acp_notebook' has no attribute {name!r}")
    if module == "widgets":  # the composition root: the views' features register first
        importlib.import_module(".playback", __name__)
    if module in ("widgets", "client.launch") and "ipykernel" in sys.modules:
        # in a kernel, a question asked while our request waits is shown in the awaiting cell
        importlib.import_module(".widgets.request_questions", __name__).install()
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value
