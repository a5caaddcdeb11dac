"""Exceptions raised by the live client (the pure core never raises on bad input)."""

from __future__ import annotations

import json
from typing import Any


class AcpError(Exception):
    """Base class of every error this package raises about an agent."""


DATA_SHOWN = 300  # characters of an error's `data` shown in its message


def clip(text: str, limit: int = DATA_SHOWN) -> str:
    """``text`` cut to ``limit`` characters (with an ellipsis)."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def data_text(data: Any) -> str:
    """An error's ``data`` as one short line (often the only clue: the agent's own detail)."""
    if data is None:
        return ""
    said = [data.get(k) for k in ("message", "details", "detail", "error")] if isinstance(data, dict) else []
    text = next((v for v in said if isinstance(v, str) and v.strip()), None)
    if text is None:
        text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False, default=repr)
    return clip(" ".join(text.split()))


class RpcError(AcpError):
    """The agent answered a request with a JSON-RPC error; its ``data`` is shown, clipped."""

    def __init__(self, code: int, message: str, data: Any = None, method: str | None = None) -> None:
        self.code, self.message, self.data, self.method = code, message, data, method
        where = f" to {method}" if method else ""
        detail = data_text(data)
        super().__init__(f"agent error{where}: {message} (code {code})" + (f": {detail}" if detail else ""))


TAIL_LINES, TAIL_LINE_CHARS = 20, 300  # an error message quotes this much of the agent's stderr


def _tail_text(stderr_tail: list[str]) -> str:
    if not stderr_tail:
        return ""
    lines = [_clip(line) for line in stderr_tail[-TAIL_LINES:]]
    return "\nlast lines of the agent's stderr:\n  " + "\n  ".join(lines)


def _clip(line: str) -> str:
    return (
        line
        if len(line) <= TAIL_LINE_CHARS
        else f"{line[:TAIL_LINE_CHARS]}… ({len(line) - TAIL_LINE_CHARS:,} more)"
    )


class AgentExited(AcpError):
    """The agent process ended (or closed its stdout) while something still waited on it."""

    def __init__(self, returncode: int | None, stderr_tail: list[str], what: str = "") -> None:
        self.returncode, self.stderr_tail = returncode, list(stderr_tail)
        code = "unknown" if returncode is None else str(returncode)
        lead = f"the agent exited (exit code {code})" + (f" {what}" if what else "")
        super().__init__(lead + _tail_text(self.stderr_tail))


class AgentStartError(AcpError):
    """The agent could not be started or did not complete ``initialize``."""

    def __init__(self, message: str, stderr_tail: list[str] | None = None) -> None:
        self.stderr_tail = list(stderr_tail or [])
        super().__init__(message + _tail_text(self.stderr_tail))


class ProtocolVersionError(AgentStartError):
    """The agent answered ``initialize`` with a protocol version this client does not speak."""


class AuthRequired(RpcError):
    """The agent needs authentication first (JSON-RPC error -32000); ``methods`` lists the ways."""

    def __init__(self, message: str, data: Any = None, method: str | None = None, methods: Any = ()) -> None:
        super().__init__(-32000, message, data, method)
        self.methods = list(methods or [])
        choices = ", ".join(
            f"{m.get('methodId') or m.get('id')!r} ({m.get('name', '')})"
            for m in self.methods
            if isinstance(m, dict)
        )
        hint = (
            f"; log in with `%acp login METHOD` (from code: agent.authenticate, login_terminal or "
            f"login_env), METHOD one of: {choices}"
            if choices
            else ""
        )
        self.args = (f"authentication required: {message}{hint}",)
