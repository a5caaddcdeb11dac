"""The pure core: JSON-RPC framing, the session-state reducer and permission model. No I/O."""

from .changes import Change
from .diagnostics import Diagnostic
from .jsonrpc import ErrorObject, Notification, Parsed, Request, Response, encode, encode_batch, parse_line
from .messages import Message, Plan
from .permission import PermissionAlreadyAnswered, PermissionRequest, PermissionTooLate
from .state import SessionState
from .terminal import Terminal
from .toolcall import ToolCall
from .v1 import normalize_v1_update, unified_patch

__all__ = [
    "Change",
    "Diagnostic",
    "ErrorObject",
    "Message",
    "Notification",
    "Parsed",
    "PermissionAlreadyAnswered",
    "PermissionRequest",
    "PermissionTooLate",
    "Plan",
    "Request",
    "Response",
    "SessionState",
    "Terminal",
    "ToolCall",
    "encode",
    "encode_batch",
    "normalize_v1_update",
    "parse_line",
    "unified_patch",
]
