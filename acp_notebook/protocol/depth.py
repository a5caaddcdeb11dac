"""A bound on how deeply a received JSON value may nest: deeper parts are cut at intake.

Python recurses to parse, copy, encode and send a value (the JSON decoder, ``copy``, the Jupyter
message packer): a value nested about a thousand levels deep passes one of them and raises
``RecursionError`` in the next. So nothing nested deeper than ``MAX_DEPTH`` levels (the message
object itself is level 1) gets past intake: each container that would sit deeper is replaced by
the string ``CUT``, and the rest of the message is handled as usual (a request in it is answered).

- A line the decoder can parse is decoded, then walked without recursion; the walk only runs
  when the line holds more than ``MAX_DEPTH`` brackets (the common case costs two counts).
- A line too deep for the decoder (``RecursionError``) is cut in its text first: a scan of its
  strings and brackets finds each over-deep container and replaces it by ``CUT``, then it is
  decoded again.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

MAX_DEPTH = 64
CUT = f"<cut: nested deeper than {MAX_DEPTH} levels>"
_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]', re.DOTALL)
_CUT_JSON = json.dumps(CUT)
Decoded = tuple[Any, int]  # a decoded value and how many places were cut (``loads_bounded``)


def loads_bounded(text: str, loads: Callable[[str], Any] = json.loads) -> Decoded:
    """``(value, places cut)``: ``text`` decoded by ``loads`` with no part deeper than ``MAX_DEPTH``.

    Raises what ``loads`` raises for text that is not JSON (never ``RecursionError``).
    """
    try:
        value = loads(text)
    except RecursionError:
        shallow, cuts = cut_text(text)
        return loads(shallow), cuts
    return value, cut_deep(value, text)


def cut_deep(value: Any, text: str) -> int:
    """``clip_value`` of ``value`` decoded from ``text``, skipped (0) when ``text`` holds too few
    brackets to nest deeper than ``MAX_DEPTH`` (the common case costs two counts)."""
    return 0 if text.count("{") + text.count("[") <= MAX_DEPTH else clip_value(value)


def clip_value(value: Any, limit: int = MAX_DEPTH) -> int:
    """Replace, in place, each container nested deeper than ``limit`` by ``CUT``; how many."""
    cuts = 0
    stack = [(value, 1)] if isinstance(value, dict | list) else []
    while stack:
        node, depth = stack.pop()
        for key, child in list(node.items() if isinstance(node, dict) else enumerate(node)):
            if not isinstance(child, dict | list):
                continue
            if depth >= limit:
                node[key], cuts = CUT, cuts + 1
            else:
                stack.append((child, depth + 1))
    return cuts


def cut_text(text: str, limit: int = MAX_DEPTH) -> tuple[str, int]:
    """``text`` with each bracketed part that opens deeper than ``limit`` replaced by ``CUT``."""
    pieces: list[str] = []
    depth, kept_to, cut_at, cuts = 0, 0, -1, 0
    for match in _TOKEN.finditer(text):
        token = match.group()
        if token in "[{":
            depth += 1
            if depth == limit + 1:
                cut_at = match.start()
        elif token in "]}":
            depth -= 1
            if depth == limit and cut_at >= 0:
                pieces += [text[kept_to:cut_at], _CUT_JSON]
                kept_to, cut_at, cuts = match.end(), -1, cuts + 1
    if cut_at >= 0:  # never closed: the rest of the line goes
        pieces += [text[kept_to:cut_at], _CUT_JSON]
        return "".join(pieces), cuts + 1
    return "".join(pieces) + text[kept_to:], cuts


def depth_of(value: Any) -> int:
    """How many levels ``value`` nests (a scalar is 0, ``{}`` is 1); without recursion."""
    deepest = 0
    stack = [(value, 1)] if isinstance(value, dict | list) else []
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        children = node.values() if isinstance(node, dict) else node
        stack.extend((c, depth + 1) for c in children if isinstance(c, dict | list))
    return deepest
