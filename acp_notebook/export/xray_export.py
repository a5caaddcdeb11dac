"""The X-ray of an exported page: every row, each message's compact JSON, the cards' messages.

An exported page has no kernel to ask, so everything the X-ray panel asks for is inlined (from
the same ``XRaySource`` a live view reads): the rows, the JSON the filter searches and the
detail shows, which messages built each entry of the tree, and the doctor's findings. The state
after a message needs the kernel: the page says so.
"""

from __future__ import annotations

import json
from typing import Any

from ..playback.xray_source import MAX_ROWS, XRaySource
from ..protocol.state import SessionState

TEXT_CHARS = 100_000  # per message (the trace file has it whole)


def source_for(source: Any) -> XRaySource | None:
    """The X-ray source of a Session or a Replay (a bare state has no traffic: None)."""
    if isinstance(source, SessionState):
        return None
    if hasattr(source, "seek") and hasattr(source, "entries"):
        return XRaySource.of_replay(source)
    if hasattr(source, "traffic_log"):
        return XRaySource.live(source)
    return None


def xray_data(source: Any, state: SessionState, keys: list[str]) -> tuple[dict, dict] | None:
    """The panel's meta and its inlined data for ``source`` (None when it has no traffic)."""
    xray = source_for(source)
    if xray is None:
        return None
    try:
        total = xray.total()
        rows: list[dict[str, Any]] = []
        while len(rows) < total:
            page = xray.rows(len(rows), MAX_ROWS)["rows"]
            if not page:
                break
            rows += page
        texts = [_text(xray.entry(r["i"])) for r in rows]
        cards = {key: xray.built_by(key, state) for key in keys}
        findings = xray.findings()
        meta = {"total": len(rows), "first": xray.first, "findings": findings, "pinned": None}
        meta["sessions"] = xray.sessions()
        return meta, {"rows": rows, "texts": texts, "cards": cards, "findings": findings}
    finally:
        xray.close()


def _text(entry: dict[str, Any] | None) -> str:
    if entry is None:
        return ""
    if entry.get("kind", "message") != "message":
        return str(entry.get("text", ""))[:TEXT_CHARS]
    text = json.dumps(entry.get("message"), ensure_ascii=False, separators=(",", ":"), default=repr)
    return text[:TEXT_CHARS]
