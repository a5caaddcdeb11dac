"""The X-ray's index of a trace: one row per entry, request/response links, the filter. Pure, no I/O.

The X-ray panel lists the entries of the trace format (``protocol.trace``) — a live session's
ring or a replay's recording — one ``row`` each: its index, direction, time, what it is (a
method, a ``sessionUpdate`` kind, a response, stdout or stderr), its id, its size and the tool
call it names. ``Links`` pairs each request with its response (ids are per direction: a request
the client sent is answered by an entry coming in). ``matches`` is the panel's filter: every
word of the query must appear in the row's summary or in the message's JSON, ignoring case.
"""

from __future__ import annotations

import json
from typing import Any

from ..protocol.tables import describe
from .findings import key, line_size

DETAIL_CHARS = 200_000  # pretty JSON longer than this is cut (the trace file has it whole)
OTHER = {"in": "out", "out": "in"}


def row(index: int, entry: dict[str, Any], link: int | None = None) -> dict[str, Any]:
    """The panel's summary of entry ``index`` (``link``: the index of its request or response)."""
    own = entry.get("kind", "message")
    info = describe(entry.get("message")) if own == "message" else {"kind": own}
    label = info.get("update") or info.get("method") or info.get("kind") or own
    out = {"i": index, "dir": entry.get("dir"), "t": entry.get("t"), "kind": info.get("kind", own)}
    out.update({"label": str(label), "id": info.get("id"), "size": line_size(entry)})
    out.update({"session": entry.get("session"), "tool": tool_call_of(entry.get("message"))})
    if link is not None:
        out["link"] = link
    if own != "message":
        out["text"] = str(entry.get("text", ""))[:200]
    if entry.get("truncated"):
        out["truncated"] = True
    return out


def tool_call_of(message: Any) -> str | None:
    """The tool call a message names (an update's or a permission's ``toolCallId``), if any."""
    params = message.get("params") if isinstance(message, dict) else None
    if not isinstance(params, dict):
        return None
    for holder in (params.get("update"), params.get("toolCall"), params):
        if isinstance(holder, dict) and isinstance(holder.get("toolCallId"), str):
            return holder["toolCallId"]
    return None


class Links:
    """Request <-> response pairs among entries, by id and direction; fed entry by entry."""

    def __init__(self) -> None:
        self.pairs: dict[int, int] = {}
        self._open: dict[tuple[str, Any], int] = {}  # (direction of the request, id) -> its index

    def add(self, index: int, entry: dict[str, Any]) -> None:
        """Take note of entry ``index``."""
        direction = entry.get("dir")
        if entry.get("kind", "message") != "message" or direction not in OTHER:
            return
        message = entry.get("message")
        for item in message if isinstance(message, list) else [message]:
            if isinstance(item, dict) and "id" in item:
                self._item(index, str(direction), item)

    def _item(self, index: int, direction: str, item: dict[str, Any]) -> None:
        ident = key(item["id"])
        if "method" in item:
            self._open[(direction, ident)] = index
            return
        request = self._open.pop((OTHER[direction], ident), None)
        if request is not None:
            self.pairs[request], self.pairs[index] = index, request

    def get(self, index: int) -> int | None:
        """The index paired with ``index`` (its response, or the request it answers)."""
        return self.pairs.get(index)

    def forget_before(self, index: int) -> None:
        """Drop pairs of entries before ``index`` (the ring forgot them)."""
        self.pairs = {a: b for a, b in self.pairs.items() if a >= index}
        self._open = {k: v for k, v in self._open.items() if v >= index}


def search_text(entry: dict[str, Any]) -> str:
    """What the filter searches in an entry: its message's compact JSON (or its text), lowercased."""
    if entry.get("kind", "message") != "message":
        return str(entry.get("text", "")).lower()
    return json.dumps(entry.get("message"), ensure_ascii=False, separators=(",", ":")).lower()


def query_words(query: str | None) -> list[str]:
    """The words of a filter query, lowercased."""
    return [w for w in str(query or "").lower().split() if w]


def matches(summary: dict[str, Any], entry: dict[str, Any], words: list[str]) -> bool:
    """True when every word appears in the row's summary or in the entry's JSON."""
    if not words:
        return True
    head = " ".join(str(summary.get(k) or "") for k in ("dir", "kind", "label", "id", "tool", "session"))
    head = f"#{summary.get('i')} {head}".lower()
    body: str | None = None
    for word in words:
        if word in head:
            continue
        body = search_text(entry) if body is None else body
        if word not in body:
            return False
    return True


def pretty(entry: dict[str, Any], limit: int = DETAIL_CHARS) -> tuple[str, bool]:
    """The entry as indented JSON (text kinds: the text), and whether it was cut at ``limit``."""
    if entry.get("kind", "message") != "message":
        text = str(entry.get("text", ""))
    else:
        text = json.dumps(entry.get("message"), ensure_ascii=False, indent=2, default=repr)
    return (text[:limit], True) if len(text) > limit else (text, False)
