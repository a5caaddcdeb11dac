"""The X-ray's index of a trace: one row per entry, request/response links, the filter. Pure, no I/O.

The X-ray panel lists the entries of the trace format (``protocol.trace``) — a live session's
ring or a replay's recording — one ``row`` each: its index, direction, time, what it is (a
method, a ``sessionUpdate`` kind, a response, stdout or stderr), its id, its size and the tool
call it names. ``Links`` pairs each request with its response (ids are per direction: a request
the client sent is answered by an entry coming in), and links a notification to the request it is
about: a ``$/cancel_request`` to the request it withdraws, an ``elicitation/complete`` to the URL
elicitation it completes (by ``elicitationId``) — so an elicitation's request, answer, completion
or withdrawal are ``related``, as a permission's request and answer are. ``matches`` is the
panel's filter: every word of the query must appear in the row's summary or in the message's
JSON, ignoring case.
"""

from __future__ import annotations

import json
from typing import Any

from ..protocol.tables import describe
from .findings import key, line_size

DETAIL_CHARS = 200_000  # pretty JSON longer than this is cut (the trace file has it whole)
OTHER = {"in": "out", "out": "in"}


def row(
    index: int, entry: dict[str, Any], link: int | None = None, related: list[int] | None = None
) -> dict[str, Any]:
    """The panel's summary of entry ``index`` (``link``: the index of its request or response, or
    of the request a notification is about; ``related``: every entry linked to it, when more)."""
    own = entry.get("kind", "message")
    info = describe(entry.get("message")) if own == "message" else {"kind": own}
    label = info.get("update") or info.get("method") or info.get("kind") or own
    out = {"i": index, "dir": entry.get("dir"), "t": entry.get("t"), "kind": info.get("kind", own)}
    out.update({"label": str(label), "id": info.get("id"), "size": line_size(entry)})
    out.update({"session": entry.get("session"), "tool": tool_call_of(entry.get("message"))})
    if link is not None:
        out["link"] = link
    if related and set(related) - {link}:
        out["related"] = related
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
    """Request <-> response pairs among entries, by id and direction, and the notifications about
    a request; fed entry by entry."""

    def __init__(self) -> None:
        self.pairs: dict[int, int] = {}
        self.about: dict[int, int] = {}  # a notification's index -> the request it is about
        self._related: dict[int, list[int]] = {}  # a request's index -> the notifications about it
        self._open: dict[tuple[str, Any], int] = {}  # (direction of the request, id) -> its index
        self._urls: dict[str, int] = {}  # a URL elicitation's ``elicitationId`` -> its request

    def add(self, index: int, entry: dict[str, Any]) -> None:
        """Take note of entry ``index``."""
        direction = entry.get("dir")
        if entry.get("kind", "message") != "message" or direction not in OTHER:
            return
        message = entry.get("message")
        for item in message if isinstance(message, list) else [message]:
            if isinstance(item, dict) and "id" in item:
                self._item(index, str(direction), item)
            elif isinstance(item, dict):
                self._notification(index, str(direction), item)

    def _item(self, index: int, direction: str, item: dict[str, Any]) -> None:
        ident = key(item["id"])
        if "method" in item:
            self._open[(direction, ident)] = index
            params = item.get("params") if isinstance(item.get("params"), dict) else {}
            url_id = params.get("elicitationId") if item["method"] == "elicitation/create" else None
            if isinstance(url_id, str) and direction == "in":
                self._urls[url_id] = index
            return
        request = self._open.pop((OTHER[direction], ident), None)
        if request is not None:
            self.pairs[request], self.pairs[index] = index, request

    def _notification(self, index: int, direction: str, item: dict[str, Any]) -> None:
        params = item.get("params") if isinstance(item.get("params"), dict) else {}
        request = None
        if item.get("method") == "$/cancel_request" and "requestId" in params:
            request = self._open.get((direction, key(params["requestId"])))  # its sender's request
        elif item.get("method") == "elicitation/complete" and direction == "in":
            request = self._urls.get(params.get("elicitationId"))  # type: ignore[arg-type]
        if request is not None:
            self.about[index] = request
            self._related.setdefault(request, []).append(index)

    def get(self, index: int) -> int | None:
        """The index paired with ``index`` (its response, or the request it answers), or the request
        a notification is about."""
        paired = self.pairs.get(index)
        return paired if paired is not None else self.about.get(index)

    def related(self, index: int) -> list[int]:
        """Every entry linked to entry ``index``, in order: its request, response and the
        notifications about that request (an elicitation's request, answer, completion)."""
        request = self.about.get(index)
        if request is None:
            request = min(index, self.pairs.get(index, index))  # a request comes before its answer
        found = {request, *self._related.get(request, ())}
        if request in self.pairs:
            found.add(self.pairs[request])
        found.discard(index)
        return sorted(found)

    def forget_before(self, index: int) -> None:
        """Drop links of entries before ``index`` (the ring forgot them)."""
        self.pairs = {a: b for a, b in self.pairs.items() if a >= index}
        self.about = {a: b for a, b in self.about.items() if a >= index and b >= index}
        self._related = {r: [n for n in ns if n >= index] for r, ns in self._related.items() if r >= index}
        self._open = {k: v for k, v in self._open.items() if v >= index}
        self._urls = {k: v for k, v in self._urls.items() if v >= index}


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
