"""acp_notebook: an Agent Client Protocol client for Jupyter notebooks."""

__version__ = "0.1.0"

from .client.agent import Agent, start_agent
from .client.errors import AcpError, AgentExited, AgentStartError, ProtocolVersionError, RpcError
from .client.session import Session
from .protocol import (
    Change,
    Diagnostic,
    Message,
    PermissionAlreadyAnswered,
    PermissionRequest,
    Plan,
    SessionState,
    Terminal,
    ToolCall,
)

__all__ = [
    "AcpError",
    "Agent",
    "AgentExited",
    "AgentStartError",
    "Change",
    "Diagnostic",
    "Message",
    "PermissionAlreadyAnswered",
    "PermissionRequest",
    "Plan",
    "ProtocolVersionError",
    "RpcError",
    "Session",
    "SessionState",
    "Terminal",
    "ToolCall",
    "__version__",
    "start_agent",
]
