"""Bounded comm messages, each JSON-encoded once: a big patch becomes several patches, any big
message becomes parts. No I/O.

No message a view sends (its JSON, envelope included, plus its binary buffers) exceeds
``MESSAGE_BOUND``: jupyter_server, the browser and the saved notebook all handle many small
messages better than one huge one. Every message travels packed (``js/WIRE.md``, Bounded messages):
its UTF-8 JSON, made once by ``encode``, is its last binary buffer and the comm's own JSON is only
``{"type", "json": index}``, so the size is measured on the bytes that are sent and nothing encodes
the message again. ``split_patch`` cuts a patch along its structure (the head and each entry encoded
once, pieces joined as bytes; terminal bytes cut into pieces, each its own move with the right
``at``); a message whose JSON alone is still too big (one multi-MB entry, a big X-ray answer)
travels as ``part`` messages whose buffers carry slices of that same JSON.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

MESSAGE_BOUND = 256 * 1024  # bytes: the JSON of a comm message's data plus its buffers
ENVELOPE = 1024  # bytes kept for the comm envelope (method, buffer_paths) and a part's header
BUDGET = MESSAGE_BOUND - ENVELOPE  # what the content's JSON plus its buffers may take
MOVE_ROOM = 256  # bytes of JSON one terminal byte move takes at most (ids are short)
FRAME_ROOM = 64  # bytes of a patch piece's own JSON: braces, ``"seq"``, ``"entries"``, ``"bytes"``

Message = tuple[dict[str, Any], list[bytes]]


def encode(value: Any) -> bytes:
    """``value`` as the page receives it: compact UTF-8 JSON (the one encode of a view's message).

    Strict like the comm's own packer (no ``NaN``: the page's ``JSON.parse`` could not read it)."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=repr, allow_nan=False)
    return text.encode("utf-8", "surrogatepass")


def json_size(value: Any) -> int:
    """Bytes of ``value`` as jupyter_client packs a comm message (UTF-8 JSON, ``ensure_ascii=False``)."""
    return len(json.dumps(value, ensure_ascii=False, default=repr).encode("utf-8", "surrogatepass"))


def packed(kind: Any, data: bytes, buffers: list[bytes], part_id: int, budget: int = BUDGET) -> list[Message]:
    """The comm messages carrying JSON ``data`` (a message of type ``kind``) and its ``buffers``.

    One message ``{"type": kind, "json": i}`` with ``data`` as ``buffers[i]`` (the last) when it fits
    ``budget`` (messages with buffers are bounded by ``split_patch``), else ``part`` messages."""
    if buffers or len(data) <= budget:
        return [({"type": kind, "json": len(buffers)}, [*buffers, data])]
    count = -(-len(data) // budget)
    return [
        ({"type": "part", "id": part_id, "i": i, "n": count}, [data[i * budget : (i + 1) * budget]])
        for i in range(count)
    ]


def _members(value: dict[str, Any]) -> bytes:
    """The JSON of a dict without its braces (``"k":v,...``), to join into a bigger object."""
    return encode(value)[1:-1]


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


class Piece:
    """One patch message being filled: its head's JSON members, its entries' and its byte moves."""

    def __init__(self, head: bytes) -> None:
        self.head, self.entries, self.moves, self.buffers = head, [], [], []
        self.used = FRAME_ROOM + len(head)

    def json(self, seq: int) -> bytes:
        """This piece's UTF-8 JSON, numbered ``seq`` (joined from bytes encoded once)."""
        moves = encode(self.moves) if self.moves else b"[]"
        body = b",".join([b'"seq":%d' % seq, self.head, b'"entries":{' + b",".join(self.entries) + b"}"])
        return b"{" + body + b',"bytes":' + moves + b"}"


NEXT_HEAD = b'"type":"patch","full":false'  # the head of every piece after the first
PIECE_OVERHEAD = FRAME_ROOM + len(NEXT_HEAD) + MOVE_ROOM  # a piece of one byte move: all but its bytes


class _Packer:
    """Fills patch pieces in order, starting a new one when the next item would not fit."""

    def __init__(self, head: bytes, budget: int) -> None:
        self.budget = budget
        self.out: list[Piece] = []
        self._start(head, empty=False)  # the head always goes

    def _start(self, head: bytes, empty: bool = True) -> None:
        self.piece = Piece(head)
        self.empty = empty

    def _next(self) -> None:
        self.out.append(self.piece)
        self._start(NEXT_HEAD)

    def _room(self, size: int) -> None:
        if self.piece.used + size > self.budget and not self.empty:
            self._next()

    def entry(self, member: bytes) -> None:
        self._room(len(member) + 1)
        self.piece.entries.append(member)
        self.piece.used += len(member) + 1
        self.empty = False
        if self.piece.used > self.budget:
            self._next()  # an oversized entry travels alone (as parts)

    def move(self, move: dict[str, Any], data: bytes) -> None:
        self._room(MOVE_ROOM + len(data))
        self.piece.moves.append({**move, "buf": len(self.piece.buffers)})
        self.piece.buffers.append(data)
        self.piece.used += MOVE_ROOM + len(data)
        self.empty = False

    def done(self) -> list[Piece]:
        if not self.empty:
            self.out.append(self.piece)
        return self.out


def split_patch(content: dict[str, Any], buffers: list[bytes], budget: int = BUDGET) -> list[Piece]:
    """A patch as pieces that each fit ``budget`` (or hold one item too big for it, to go as parts).

    The first keeps the head (``full``, ``header``, ``order``, terminal metadata, X-ray); the others
    are ``full: false`` patches carrying the rest of the entries and the bytes, in order. The head
    and each entry are encoded once, here; a piece's JSON is joined from those bytes."""
    head = _members({k: v for k, v in content.items() if k not in ("entries", "bytes", "seq")})
    packer = _Packer(head, budget)  # a head too big on its own goes alone, as parts
    for key, entry in (content.get("entries") or {}).items():
        packer.entry(_members({key: entry}))
    for move in content.get("bytes") or []:
        for piece, data in cut_move(move, bytes(buffers[move["buf"]]), budget - PIECE_OVERHEAD):
            packer.move(piece, data)
    return packer.done()


class BoundedSender:
    """Sends one view's custom messages through ``send(content, buffers)``, packed, none over the bound."""

    def __init__(self, send: Callable[[dict[str, Any], list[bytes]], None]) -> None:
        self._send = send
        self._parts = 0

    def send(self, content: dict[str, Any], buffers: list[bytes]) -> int:
        """Send ``content`` (encoded once; as parts when too big); returns the messages sent."""
        return self._send_json(content.get("type"), encode(content), buffers)

    def _send_json(self, kind: Any, data: bytes, buffers: list[bytes]) -> int:
        self._parts += 1
        messages = packed(kind, data, buffers, self._parts)
        for part, bufs in messages:
            self._send(part, bufs)
        return len(messages)

    def patch(self, content: dict[str, Any], buffers: list[bytes], seq: int) -> tuple[int, int]:
        """Send a patch as bounded patches numbered after ``seq``; returns (messages sent, last seq)."""
        sent = 0
        for piece in split_patch(content, buffers):
            seq += 1
            sent += self._send_json("patch", piece.json(seq), piece.buffers)
        return sent, seq
