"""Which terminal bytes a view patch carries: only the new ones, or all after a reset. No I/O.

A flush costs what it sends: the terminal's ring is read from the browser's end offset on, and
its metadata uses byte counters, so a full 16 MiB terminal with 100 new bytes copies 100 bytes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..protocol.terminal import Terminal
from . import viewmodel as vm


def terminal_moves(
    terminals: Mapping[str, Terminal], ids: list[str], sent: dict[str, tuple[int, int]]
) -> tuple[dict[str, Any], list[dict[str, Any]], list[bytes]]:
    """Metadata, byte moves and buffers for terminals ``ids`` (view ids, looked up in ``terminals``);
    ``sent`` (id -> (generation, end)) says what the browser has, and is updated to what it will have."""
    metas: dict[str, Any] = {}
    moves: list[dict[str, Any]] = []
    buffers: list[bytes] = []
    for terminal_id in ids:
        term = terminals.get(terminal_id)
        if term is None:
            continue
        metas[terminal_id] = {**vm.terminal_meta(term), "id": terminal_id, "terminal_id": term.terminal_id}
        gen, end = sent.get(terminal_id, (-1, 0))
        reset = gen != term.generation or end < metas[terminal_id]["base"]
        at = metas[terminal_id]["base"] if reset else end
        data = term.read_from(at)  # joins only the chunks from ``at`` on: O(bytes sent)
        if data or reset:
            moves.append(
                {"id": terminal_id, "gen": term.generation, "at": at, "buf": len(buffers), "reset": reset}
            )
            buffers.append(data)
        sent[terminal_id] = (term.generation, term.end_offset)
    return metas, moves, buffers
