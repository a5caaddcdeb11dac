"""Bounded comm messages: a big patch becomes several patches, any big message becomes parts. No I/O.

No message a view sends (its JSON, envelope included, plus its binary buffers) exceeds
``MESSAGE_BOUND``: jupyter_server, the browser and the saved notebook all handle many small
messages better than one huge one. ``split_patch`` cuts a patch along its structure (entries
grouped, terminal bytes cut into pieces, each its own move with the right ``at``); a message whose
JSON alone is still too big (one multi-MB entry, a big X-ray answer) travels as ``part`` messages
whose buffers carry slices of its UTF-8 JSON (``js/WIRE.md``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

MESSAGE_BOUND = 256 * 1024  # bytes: the JSON of a comm message's data plus its buffers
ENVELOPE = 1024  # bytes kept for the comm envelope (method, buffer_paths) and a part's header
BUDGET = MESSAGE_BOUND - ENVELOPE  # what the content's JSON plus its buffers may take
MOVE_ROOM = 256  # bytes of JSON one terminal byte move takes at most (ids are short)

Message = tuple[dict[str, Any], list[bytes]]


def json_size(value: Any) -> int:
    """Bytes of ``value`` as the kernel sends it (UTF-8 JSON, ``ensure_ascii=False``)."""
    return len(json.dumps(value, ensure_ascii=False, default=repr).encode("utf-8", "surrogatepass"))


def message_size(content: dict[str, Any], buffers: list[bytes] = ()) -> int:
    """Bytes of a message: its content's JSON plus its buffers."""
    return json_size(content) + sum(len(b) for b in buffers)


def as_parts(
    content: dict[str, Any], buffers: list[bytes], part_id: int, budget: int = BUDGET
) -> list[Message]:
    """``[(content, buffers)]`` when it fits ``budget``, else ``part`` messages carrying its JSON."""
    if buffers or message_size(content) <= budget:
        return [(content, list(buffers))]  # messages with buffers are bounded by split_patch
    data = json.dumps(content, ensure_ascii=False, default=repr).encode("utf-8", "surrogatepass")
    count = -(-len(data) // budget)
    return [
        ({"type": "part", "id": part_id, "i": i, "n": count}, [data[i * budget : (i + 1) * budget]])
        for i in range(count)
    ]


def cut_move(move: dict[str, Any], data: bytes, piece: int) -> Iterator[tuple[dict[str, Any], bytes]]:
    """One terminal byte move as moves of at most ``piece`` bytes (only the first one resets)."""
    if len(data) <= piece:
        yield move, data
        return
    for start in range(0, len(data), piece):
        yield (
            {**move, "at": move["at"] + start, "reset": move["reset"] and start == 0},
            data[start : start + piece],
        )


class _Packer:
    """Fills patch messages in order, starting a new one when the next item would not fit."""

    def __init__(self, head: dict[str, Any], budget: int) -> None:
        self.budget = budget
        self.out: list[Message] = []
        self._start({**head, "entries": {}, "bytes": []}, empty=False)  # the head always goes

    def _start(self, content: dict[str, Any], empty: bool = True) -> None:
        self.content, self.buffers = content, []
        self.used = json_size(content)
        self.empty = empty

    def _next(self) -> None:
        self.out.append((self.content, self.buffers))
        self._start({"type": "patch", "full": False, "entries": {}, "bytes": []})

    def _room(self, size: int) -> None:
        if self.used + size > self.budget and not self.empty:
            self._next()

    def entry(self, key: str, entry: Any, size: int) -> None:
        self._room(size)
        self.content["entries"][key] = entry
        self.used += size
        self.empty = False
        if self.used > self.budget:
            self._next()  # an oversized entry travels alone (as parts)

    def move(self, move: dict[str, Any], data: bytes) -> None:
        self._room(MOVE_ROOM + len(data))
        self.content["bytes"].append({**move, "buf": len(self.buffers)})
        self.buffers.append(data)
        self.used += MOVE_ROOM + len(data)
        self.empty = False

    def done(self) -> list[Message]:
        if not self.empty:
            self.out.append((self.content, self.buffers))
        return self.out


def split_patch(content: dict[str, Any], buffers: list[bytes], budget: int = BUDGET) -> list[Message]:
    """A patch as patches that each fit ``budget`` (or hold one item too big for it, to go as parts).

    The first keeps the head (``full``, ``header``, ``order``, terminal metadata, X-ray); the others
    are ``full: false`` patches carrying the rest of the entries and the bytes, in order."""
    entries = content.get("entries") or {}
    moves = content.get("bytes") or []
    sizes = {key: json_size(key) + json_size(entry) + 4 for key, entry in entries.items()}
    head = {k: v for k, v in content.items() if k not in ("entries", "bytes")}
    total = json_size(head) + sum(sizes.values()) + sum(MOVE_ROOM + len(b) for b in buffers)
    if total <= budget:
        return [(content, list(buffers))]
    packer = _Packer(head, budget)  # a head too big on its own goes alone, as parts
    for key, entry in entries.items():
        packer.entry(key, entry, sizes[key])
    for move in moves:
        for piece, data in cut_move(move, bytes(buffers[move["buf"]]), budget - MOVE_ROOM):
            packer.move(piece, data)
    return packer.done()


class BoundedSender:
    """Sends one view's custom messages through ``send(content, buffers)``, none over the bound."""

    def __init__(self, send: Callable[[dict[str, Any], list[bytes]], None]) -> None:
        self._send = send
        self._parts = 0

    def send(self, content: dict[str, Any], buffers: list[bytes]) -> int:
        """Send ``content`` (as parts when too big); returns the messages sent."""
        self._parts += 1
        messages = as_parts(content, buffers, self._parts)
        for part, bufs in messages:
            self._send(part, bufs)
        return len(messages)

    def patch(self, content: dict[str, Any], buffers: list[bytes], seq: int) -> tuple[int, int]:
        """Send a patch as bounded patches numbered after ``seq``; returns (messages sent, last seq)."""
        sent = 0
        for piece, bufs in split_patch(content, buffers):
            seq += 1
            piece["seq"] = seq
            sent += self.send(piece, bufs)
        return sent, seq
