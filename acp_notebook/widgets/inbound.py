"""Checks on what a view's page sends: terminal keystrokes and sizes. Pure; no I/O.

The page is not trusted to send well-formed messages: each check returns the arguments for the
action, or raises ``ValueError`` with a reason that never quotes the data (keystrokes may be a
password or an authorisation code).
"""

from __future__ import annotations

from typing import Any

MAX_INPUT_BYTES = 64 * 1024  # one terminal_input message
MAX_TERMINAL_SIZE = 1000  # cols and rows


def terminal_input(content: dict[str, Any]) -> tuple[str, bytes]:
    """``(terminal_id, data as UTF-8)`` from a ``terminal_input`` message."""
    terminal_id, data = _terminal_id(content), content.get("data")
    if not isinstance(data, str):
        raise ValueError("terminal_input: data is not a string")
    if len(data) > MAX_INPUT_BYTES or len(raw := data.encode("utf-8", "replace")) > MAX_INPUT_BYTES:
        raise ValueError(f"terminal_input: over {MAX_INPUT_BYTES} bytes in one message, dropped")
    return terminal_id, raw


def terminal_resize(content: dict[str, Any]) -> tuple[str, int, int]:
    """``(terminal_id, cols, rows)`` from a ``terminal_resize`` message."""
    terminal_id = _terminal_id(content)
    cols, rows = content.get("cols"), content.get("rows")
    if not (_size(cols) and _size(rows)):
        raise ValueError(f"terminal_resize: cols and rows must be integers 1..{MAX_TERMINAL_SIZE}")
    return terminal_id, cols, rows


def _terminal_id(content: dict[str, Any]) -> str:
    terminal_id = content.get("id")
    if not isinstance(terminal_id, str) or not terminal_id:
        raise ValueError(f"{content.get('type')}: id is not a terminal id")
    return terminal_id


def _size(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= MAX_TERMINAL_SIZE
