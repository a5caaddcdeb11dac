"""The doctor's findings (``Finding``, ``Findings``) and the entry helpers it reads traces with.

Pure, no I/O. ``Findings`` is a list with ``records()`` (rows as dicts, for a table) and
``frame()`` (a pandas DataFrame, with the optional ``[pandas]`` extra).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, replace
from typing import Any

VIOLATION, HAZARD = "violation", "hazard"
SEVERITY = {VIOLATION: "error", HAZARD: "warning"}
COLUMNS = ("code", "severity", "kind", "message", "index", "cite")


@dataclass(frozen=True)
class Finding:
    """One thing the doctor found, at entry ``index`` of the traffic it read.

    ``kind`` is ``"violation"`` (severity ``"error"``: the agent breaks the spec sentence in
    ``cite``) or ``"hazard"`` (severity ``"warning"``: legal, but ``cite`` names what breaks).
    """

    code: str
    severity: str
    kind: str
    message: str
    index: int
    cite: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def counted(self, count: int) -> Finding:
        """The same finding, saying it happened ``count`` times (from ``index`` on)."""
        return self if count == 1 else replace(self, message=f"{self.message} ({count} times)")


class Findings(list[Finding]):
    """The findings, in entry order."""

    def records(self) -> list[dict[str, Any]]:
        """One dict per finding (the columns of ``COLUMNS``)."""
        return [f.to_dict() for f in self]

    def frame(self) -> Any:
        """The rows as a pandas DataFrame."""
        from ..protocol.tables import PANDAS_HINT

        try:
            import pandas as pd
        except ImportError as exc:
            raise ImportError(PANDAS_HINT) from exc
        return pd.DataFrame(self.records(), columns=list(COLUMNS))

    def errors(self) -> Findings:
        """Only the violations."""
        return Findings(f for f in self if f.kind == VIOLATION)


def finding(i: int, code: str, message: str, cite: str, kind: str = VIOLATION) -> Finding:
    return Finding(code, SEVERITY[kind], kind, message, i, cite)


def messages(entry: dict[str, Any]) -> list[dict[str, Any]]:
    """The JSON-RPC messages of one entry (none for stdout/stderr; each item of a batch)."""
    if entry.get("kind", "message") != "message":
        return []
    message = entry.get("message")
    items = message if isinstance(message, list) else [message]
    return [m for m in items if isinstance(m, dict)]


def negotiated_version(entries: list[dict[str, Any]]) -> int | None:
    """The ``protocolVersion`` of the agent's answer to the first ``initialize`` in ``entries``."""
    asked = None
    for entry in entries:
        for m in messages(entry):
            if entry.get("dir") == "out" and m.get("method") == "initialize" and asked is None:
                asked = key(m.get("id"))
            elif entry.get("dir") == "in" and "method" not in m and asked is not None:
                version = as_dict(m.get("result")).get("protocolVersion")
                if key(m.get("id")) == asked and isinstance(version, int):
                    return version
    return None


def line_size(entry: dict[str, Any]) -> int:
    """The bytes of an entry's line: its recorded ``size``, else its compact JSON (or text)."""
    size = entry.get("size")
    if isinstance(size, int):
        return size
    body = entry.get("text") if entry.get("kind") != "message" else entry.get("message")
    text = body if isinstance(body, str) else json.dumps(body, ensure_ascii=False, separators=(",", ":"))
    return len(text.encode("utf-8"))


def as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def key(value: Any) -> Any:
    """A request id usable as a dict key."""
    return json.dumps(value, sort_keys=True) if isinstance(value, dict | list) else value
