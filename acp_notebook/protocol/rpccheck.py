"""What makes a received JSON-RPC 2.0 line valid: decoding, ids, request and error objects.

- The line must be UTF-8 (invalid bytes: a diagnostic, then U+FFFD) and JSON (RFC 8259): ``NaN``,
  ``Infinity`` and ``-Infinity`` are not, nor is a number too large for a float; a leading BOM
  is ignored with a diagnostic, as RFC 8259 §8.1 allows. A part nested deeper than
  ``depth.MAX_DEPTH`` levels is cut at decoding (diagnostic ``too-deep``); the rest is handled.
- An id is a string or an integer in the int64 range (both schemas' ``RequestId``); an integral
  number written as a float (``1.0``) counts as that integer; ``null`` only where allowed (v1
  requests, and responses to a request whose id could not be read). Booleans, fractional
  numbers, objects and arrays are never ids.
- A request has ``"jsonrpc": "2.0"``, a string ``method`` and, if any, object or array
  ``params`` (``null`` counts as none).
- An ``error`` is an object with an integer ``code`` (an integral float such as ``-32000.0`` is
  accepted as that integer) and a string ``message``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

from .depth import CUT, MAX_DEPTH, Decoded, cut_deep, loads_bounded
from .diagnostics import Diagnostic
from .patch import type_name

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
RequestId = int | str | None
_NONFINITE = "NaN, Infinity or a number beyond float range is not JSON"


class _NonFinite:
    """Stands where the line said ``NaN``, ``Infinity`` or ``-Infinity``."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


def load_json(
    line: bytes | str, diagnostics: list[Diagnostic]
) -> tuple[Any, str | None, str, Decoded | None]:
    """``(value, problem, text, plain)`` for one line; ``problem`` is None when it is JSON.

    When the only problem is ``NaN``/``Infinity`` the value is still returned (with markers in
    their place), so that a request's id can be answered. ``plain`` is ``(value, cuts)`` when
    plain ``json.loads`` reads the line the same way (the trace reuses it: one decode per line),
    else None (not JSON, ``NaN`` and the like, a byte order mark).
    """
    try:
        text = (line if isinstance(line, str) else line.decode("utf-8")).strip(" \t\r\n")
    except UnicodeDecodeError as exc:
        text = _replaced(line, exc, diagnostics).strip(" \t\r\n")  # type: ignore[arg-type]
    bom = text[:1] == "\ufeff"
    if bom:
        diagnostics.append(
            Diagnostic("utf8-bom", "line starts with a byte order mark (ignored)", level="info")
        )
        text = text[1:].strip(" \t\r\n")
    try:  # the common case first: one scan reads the whole line
        value, end = _SCAN(text, 0)
    except (StopIteration, ValueError, RecursionError, _NotHeld):
        end = -1
    if end != len(text):
        return _load_again(text, bom, diagnostics)
    cuts = cut_deep(value, text)
    if cuts:
        _noted_cuts(value, cuts, text, diagnostics)
    return value, None, text, None if bom else (value, cuts)


def _load_again(
    text: str, bom: bool, diagnostics: list[Diagnostic]
) -> tuple[Any, str | None, str, Decoded | None]:
    """``load_json`` of a line one scan did not read whole: empty, not JSON, too deep, ``NaN``."""
    if not text:
        return None, None, text, None
    try:
        value, cuts = plain = loads_bounded(text, _strict)
    except _NotHeld:
        pass  # decode again below, keeping a marker where NaN or the too large number was
    except ValueError as exc:
        return None, str(exc) or type(exc).__name__, text, None
    else:
        return _noted_cuts(value, cuts, text, diagnostics), None, text, None if bom else plain
    value, problem, cuts = _decode_marking(text)
    return _noted_cuts(value, cuts, text, diagnostics), problem, text, None


def _strict(text: str) -> Any:
    """``text`` (stripped) decoded strictly: the C scanner called directly, the decoder's own
    error (``Expecting value``, ``Extra data``) when it does not read the whole text."""
    try:
        value, end = _SCAN(text, 0)
    except StopIteration:
        end = -1
    if end != len(text):
        return _DECODER.decode(text)  # raises
    return value


def _noted_cuts(value: Any, cuts: int, text: str, diagnostics: list[Diagnostic]) -> Any:
    if cuts:
        why = f"{cuts} part(s) nested deeper than {MAX_DEPTH} levels replaced by {CUT!r}; the rest is handled"
        diagnostics.append(Diagnostic("too-deep", why, clip(text)))
    return value


def _decode_marking(text: str) -> tuple[Any, str | None, int]:
    found: list[_NonFinite] = []

    def constant(name: str) -> _NonFinite:
        found.append(_NonFinite(name))
        return found[-1]

    def number(digits: str) -> Any:
        value = float(digits)
        return value if math.isfinite(value) else constant(digits)

    try:
        value, cuts = loads_bounded(
            text, lambda t: json.loads(t, parse_constant=constant, parse_float=number)
        )
    except ValueError as exc:
        return None, str(exc) or type(exc).__name__, 0
    return value, (_NONFINITE if found else None), cuts


class _NotHeld(Exception):
    """``NaN``, ``Infinity`` or a number beyond float range (``1e400``): JSON we cannot hold."""


def _finite_float(digits: str) -> float:
    value = float(digits)
    if math.isinf(value):
        raise _NotHeld(digits)
    return value


def _not_held(name: str) -> Any:
    raise _NotHeld(name)


_DECODER = json.JSONDecoder(parse_float=_finite_float, parse_constant=_not_held)
_SCAN: Callable[[str, int], tuple[Any, int]] = _DECODER.scan_once  # type: ignore[attr-defined]


def _replaced(line: bytes, exc: UnicodeDecodeError, diagnostics: list[Diagnostic]) -> str:
    """``line`` decoded with U+FFFD for its invalid bytes, after a diagnostic."""
    why = f"line is not valid UTF-8 ({exc.reason} at byte {exc.start}); shown as U+FFFD"
    diagnostics.append(Diagnostic("invalid-utf8", why, clip(line)))
    return line.decode("utf-8", errors="replace")


def read_id(value: Any, null_ok: bool) -> tuple[bool, RequestId]:
    """``(valid, id)``: whether ``value`` is a valid id, and the id to use (``1.0`` -> ``1``)."""
    if isinstance(value, str):
        return True, value
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return INT64_MIN <= value <= INT64_MAX, value if INT64_MIN <= value <= INT64_MAX else None
    return value is None and null_ok, None


def request_problem(data: dict[str, Any]) -> str | None:
    """Why an object with a ``method`` is not a valid request or notification, or None."""
    if data.get("jsonrpc") != "2.0":
        return 'missing or wrong `jsonrpc` (must be "2.0")'
    if not isinstance(data["method"], str):
        return f"`method` is {type_name(data['method'])}, not a string"
    params = data.get("params")
    if params is not None and not isinstance(params, dict | list):
        return f"`params` is {type_name(params)}, not an object or array"
    return None


def error_problem(error: Any) -> str | None:
    """Why a response's ``error`` member is malformed, or None."""
    if not isinstance(error, dict):
        return f"`error` is {type_name(error)}, not an object"
    code = error.get("code")
    if "code" not in error:
        return "`error.code` is missing"
    if isinstance(code, bool) or not (
        isinstance(code, int) or (isinstance(code, float) and code.is_integer())
    ):
        return f"`error.code` is {_json_repr(code)}, not an integer"
    if not isinstance(error.get("message"), str):
        return "`error.message` is missing" if "message" not in error else "`error.message` is not a string"
    return None


def _json_repr(value: Any) -> str:
    return type_name(value) if not isinstance(value, int | float) else repr(value)


def clip(text: str | bytes, limit: int = 500) -> str | bytes:
    """``text`` cut to ``limit`` characters (bytes) for a diagnostic."""
    if len(text) <= limit:
        return text
    if isinstance(text, str):
        return text[:limit] + "…"
    return text[:limit] + b"..."
