"""Agent-owned display terminals: the byte buffer and the `terminal_update` patch rules.

Rules (seed, "Display-only terminals"): ``terminal_update`` is an upsert keyed by
``terminalId``; ``command``, ``cwd``, ``size``, ``capabilities``, ``exitStatus`` and ``_meta``
patch (omit keeps, null clears, value replaces); ``output.data`` is a base64 snapshot that
*replaces* every stored byte. ``terminal_output_chunk`` decodes each chunk on its own and
appends. The stored output is bytes, the newest ``cap`` of them, in a ``ByteRing`` (so a view
reads only the bytes it has not sent); ``text`` decodes incrementally, so a UTF-8 character
split across chunks comes out whole, and ``plain_text`` strips control sequences as they
complete (``ansi.py``). Schema fallbacks: a wrong-typed field counts as omitted; a ``size``
outside ``1..65535`` (uint16) too; in ``exitStatus`` an ``exitCode`` that is not an int64
integer, or a ``signal`` that is not a string, reads as unknown (``None``); malformed
``capabilities`` mean no controls.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

from .ansi import DecodedText
from .byte_ring import ByteRing
from .diagnostics import Report
from .patch import (
    int_in_range,
    is_absolute,
    json_copy,
    patch_meta,
    read_capabilities,
    type_name,
    wire_fields,
)

DEFAULT_OUTPUT_CAP = 16 * 1024 * 1024
INT64 = (-(2**63), 2**63 - 1)
UINT16_MAX = 65535

_PLAIN: dict[str, tuple[str, type]] = {
    "command": ("command", str),
    "cwd": ("cwd", str),
    "capabilities": ("capabilities", dict),
    "exitStatus": ("exit_status", dict),
    "size": ("size", dict),
}
_OPTIONAL = (
    ("command", "command"),
    ("cwd", "cwd"),
    ("size", "size"),
    ("capabilities", "capabilities"),
    ("exitStatus", "exit_status"),
)


def decode_base64(data: Any) -> bytes | None:
    """Strict RFC 4648 section 3.3 base64: None unless ``data`` is valid base64 text.

    Valid is ``[A-Za-z0-9+/]*`` of a length that is a multiple of 4, with ``=`` only as the last
    one or two characters (no whitespace, no line breaks); ``""`` is ``b""``. CPython's
    ``b64decode(validate=True)`` also takes ``YWJj=`` or ``YWJj====``; ``a2b_base64`` in strict
    mode refuses any other character and misplaced padding but still takes padding past a whole
    quantum (``YWJj====``), so the length and a third ``=`` are checked here first. Non-zero pad
    bits (``YR==``) are accepted and dropped (section 3.5 lets a decoder reject them; we read them
    the same way every time: ``YR==`` is ``b"a"``, like ``YQ==``).
    """
    if not isinstance(data, str) or len(data) % 4 or data.endswith("==="):
        return None
    try:
        return binascii.a2b_base64(data, strict_mode=True)
    except (binascii.Error, ValueError):  # ValueError: a character that is not ASCII
        return None


class Terminal:
    """One display terminal: metadata plus the bytes received (the newest ``cap`` bytes)."""

    __slots__ = (
        "_ring",
        "_text",
        "background",
        "capabilities",
        "command",
        "cwd",
        "exit_status",
        "exited_at",
        "extra",
        "first_seen",
        "generation",
        "last_seen",
        "meta",
        "output_meta",
        "size",
        "terminal_id",
    )

    def __init__(self, terminal_id: str, cap: int = DEFAULT_OUTPUT_CAP, now: float = 0.0) -> None:
        self.terminal_id = terminal_id
        self.command: str | None = None
        self.cwd: str | None = None
        self.size: dict[str, Any] | None = None
        self.capabilities: dict[str, Any] | None = None
        self.exit_status: dict[str, Any] | None = None
        self.meta: dict[str, Any] | None = None
        self.output_meta: dict[str, Any] | None = None
        self.extra: dict[str, Any] = {}
        self.first_seen = self.last_seen = now  # the state's clock: first and latest update
        self.exited_at: float | None = None  # when an exitStatus arrived (None while running)
        self.generation = 0
        self.background = False  # listed in the session's last ``background`` snapshot (the state sets it)
        self._ring = ByteRing(cap)
        self._text: DecodedText | None = None  # made when the text is first read

    @property
    def cap(self) -> int:
        """How many of the newest bytes are held."""
        return self._ring.cap

    @cap.setter
    def cap(self, cap: int) -> None:
        self._ring.set_cap(cap)

    @property
    def output(self) -> bytes:
        """Every byte received since the last snapshot, up to the newest ``cap`` bytes (a copy)."""
        return self._ring.read_from(0)

    @property
    def dropped_bytes(self) -> int:
        """How many of the oldest bytes fell off the front because of ``cap``."""
        return self._ring.base

    @property
    def base_offset(self) -> int:
        """Offset, in this generation's byte stream, of the oldest byte held (no copy)."""
        return self._ring.base

    @property
    def held_bytes(self) -> int:
        """How many bytes ``output`` holds, without copying them."""
        return self._ring.held

    @property
    def end_offset(self) -> int:
        """Offset, in this generation's byte stream, just past the last byte received."""
        return self._ring.end

    def read_from(self, offset: int) -> bytes:
        """The held bytes from absolute ``offset`` on (from the oldest held byte if it fell off)."""
        return self._ring.read_from(offset)

    @property
    def exited(self) -> bool:
        """True once a concrete ``exitStatus`` was received."""
        return self.exit_status is not None

    @property
    def duration(self) -> float | None:
        """Seconds from first sight to the exit status (None while running)."""
        return None if self.exited_at is None else self.exited_at - self.first_seen

    @property
    def text(self) -> str:
        """The output decoded as UTF-8, incrementally (invalid bytes become U+FFFD)."""
        return self._decoded().text

    @property
    def plain_text(self) -> str:
        """``text`` without ECMA-48 control sequences; an unfinished one waits for its end."""
        return self._decoded().plain

    def _decoded(self) -> DecodedText:
        """The held bytes decoded; feeds only the bytes received since the last call."""
        base = self._ring.base
        if self._text is None or self._text.base != base:  # new, or bytes fell off the front
            self._text = DecodedText(base)
        if self._text.end < self._ring.end:
            self._text.feed(self._ring.read_from(self._text.end))
        return self._text

    def append(self, data: bytes) -> None:
        """Append decoded bytes (one ``terminal_output_chunk``)."""
        self._ring.append(data)

    def replace(self, data: bytes) -> None:
        """Replace every stored byte by a snapshot."""
        self.generation += 1
        self._ring.clear()
        self._text = None
        self._ring.append(data)

    def to_dict(self) -> dict[str, Any]:
        """Wire shape (``terminal_update`` without ``sessionUpdate``); output always present."""
        output: dict[str, Any] = {"data": base64.b64encode(self.output).decode("ascii")}
        if self.output_meta is not None:
            output["_meta"] = json_copy(self.output_meta)
        out: dict[str, Any] = {"terminalId": self.terminal_id, "output": output}
        return wire_fields(out, self, _OPTIONAL)

    def __repr__(self) -> str:
        return f"Terminal({self.terminal_id!r}, command={self.command!r}, bytes={self.held_bytes})"


def apply_terminal_fields(term: Terminal, update: dict[str, Any], report: Report) -> list[str]:
    """Patch ``term`` with one ``terminal_update``; returns the wire names of changed fields."""
    changed = []
    for key, value in update.items():
        if key in ("sessionUpdate", "terminalId"):
            continue
        if _apply_one(term, key, value, report):
            changed.append(key)
    return changed


def _apply_one(term: Terminal, key: str, value: Any, report: Report) -> bool:
    if key == "output":
        return _apply_output(term, value, report)
    if key == "_meta":
        if value is not None and not isinstance(value, dict):
            report("invalid-field", f"terminal `_meta` is {type_name(value)}", value)
            return False
        term.meta = patch_meta(term.meta, value)
        return True
    spec = _PLAIN.get(key)
    if spec is None:
        if value is None:
            term.extra.pop(key, None)
        else:
            term.extra[key] = value
        return True
    attr, expected = spec
    if value is None:
        setattr(term, attr, None)
    elif key == "capabilities":
        term.capabilities = read_capabilities(value, "terminal", report)
    elif not _valid(key, value, expected, report):
        return False
    else:
        setattr(term, attr, _exit_status(value, report) if key == "exitStatus" else value)
    return True


def _valid(key: str, value: Any, expected: type, report: Report) -> bool:
    if not isinstance(value, expected):
        report("invalid-field", f"terminal `{key}` is {type_name(value)}", value)
        return False
    size: Any = value
    if key == "size" and not all(int_in_range(size.get(k), 1, UINT16_MAX) for k in ("cols", "rows")):
        report("invalid-field", "terminal `size` needs `cols` and `rows` in 1..65535 (ignored)", value)
        return False
    if key == "cwd" and not is_absolute(value):
        report("relative-path", f"terminal `cwd` {value!r} is not absolute (kept)", value)
    return True


def _exit_status(value: dict[str, Any], report: Report) -> dict[str, Any]:
    """The ``exitStatus`` to store: a malformed ``exitCode`` or ``signal`` reads as unknown."""
    code, signal = value.get("exitCode"), value.get("signal")
    bad_code = code is not None and not int_in_range(code, *INT64)
    bad_signal = signal is not None and not isinstance(signal, str)
    if not (bad_code or bad_signal):
        return value
    report("invalid-field", "terminal `exitStatus` has a malformed exitCode or signal (unknown)", value)
    fixed = dict(value)
    if bad_code:
        fixed["exitCode"] = None
    if bad_signal:
        fixed["signal"] = None
    return fixed


def _apply_output(term: Terminal, value: Any, report: Report) -> bool:
    if value is None:
        term.replace(b"")
        term.output_meta = None
        return True
    data = decode_base64(value.get("data")) if isinstance(value, dict) else None
    if data is None:
        report("invalid-base64", "terminal `output.data` is not valid base64 (ignored)", value)
        return False
    term.replace(data)
    meta = value.get("_meta")
    term.output_meta = meta if isinstance(meta, dict) else None
    return True
