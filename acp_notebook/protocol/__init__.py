"""The pure core: JSON-RPC framing, the session-state reducer, permission and elicitation models. No I/O."""

from .changes import Change
from .diagnostics import Diagnostic
from .elicitation import Elicitation, ElicitationAlreadyAnswered, ElicitationInvalid, ElicitationTooLate
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
    "Elicitation",
    "ElicitationAlreadyAnswered",
    "ElicitationInvalid",
    "ElicitationTooLate",
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
