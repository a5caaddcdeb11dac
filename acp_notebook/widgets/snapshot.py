"""The ``snapshot`` a view saves (format: ``js/WIRE.md``), as a pure function of the state. No I/O.

``SessionView.flush_snapshot`` and ``acp_notebook.export_html`` both build it here, so a saved
notebook and an exported page draw the same tree. A saved snapshot keeps at most
``SAVED_TERMINAL_BYTES`` of each terminal (its newest bytes, from a line start when one is near):
a day's session (500 tool calls, 50 terminals) then saves to a notebook of a few MB, not 50 x 16 MiB.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..protocol.content import terminal_refs
from ..protocol.state import SessionState
from . import viewmodel as vm
from .header import header

if TYPE_CHECKING:
    from ..client.summary import SessionSummary
    from ..protocol.terminal import Terminal

SAVED_TERMINAL_BYTES = 128 * 1024  # bytes of each terminal a saved snapshot keeps (~1,600 lines)
LINE_START_WITHIN = 4096  # a trimmed tail starts after the first newline this near its start


def saved_terminal(term: Terminal, cap: int = SAVED_TERMINAL_BYTES) -> tuple[dict[str, Any], bytes]:
    """A terminal's metadata and bytes as a snapshot saves them: its newest ``cap`` bytes at most.

    ``base`` is then the offset of the first byte saved and ``trimmed`` how many held bytes before
    it were left out (the page says "earlier output trimmed")."""
    meta = vm.terminal_meta(term)
    held = meta["end"] - meta["base"]
    if held <= cap:
        return {**meta, "trimmed": 0}, term.output
    data = term.read_from(meta["end"] - cap)
    newline = data.find(b"\n", 0, LINE_START_WITHIN)
    if 0 <= newline < len(data) - 1:
        data = data[newline + 1 :]
    base = meta["end"] - len(data)
    return {**meta, "base": base, "trimmed": base - meta["base"]}, data


def timeline_items(state: SessionState) -> tuple[dict[str, tuple[str, Any]], list[str]]:
    """Every item of the state's timeline (view key -> (kind, key)) and the terminals they show."""
    items: dict[str, tuple[str, Any]] = {}
    terminals: dict[str, None] = {}
    for kind, key in state.timeline:
        view_key = vm.entry_key(kind, key)
        if view_key in items:
            continue
        items[view_key] = (kind, key)
        if kind == "tool_call":
            terminals.update(dict.fromkeys(terminal_refs(state.tool_calls[key].content)))
    return items, list(terminals)


def snapshot_of(
    state: SessionState,
    summary: SessionSummary | None = None,
    title: str | None = None,
    *,
    items: Mapping[str, tuple[str, Any]] | None = None,
    terminals: Iterable[str] | None = None,
    seq: int = 0,
    interactive: Sequence[str] = (),
    root: str | None = None,
    cap: int = SAVED_TERMINAL_BYTES,
) -> tuple[dict[str, Any], bytes]:
    """The snapshot dict and the terminal bytes it locates (``blob`` offsets); whole timeline by
    default; at most ``cap`` bytes of each terminal."""
    if items is None:
        items, all_terminals = timeline_items(state)
        terminals = all_terminals if terminals is None else terminals
    blob, metas = bytearray(), {}
    for terminal_id in terminals or ():
        term = state.terminals.get(terminal_id)
        if term is None:
            continue
        meta, data = saved_terminal(term, cap)
        metas[terminal_id] = {**meta, "blob": [len(blob), len(data)]}
        blob += data
    snapshot = {"seq": seq, "header": header(state, summary, title, interactive), "order": list(items)}
    entries = {k: vm.build_entry(state, kind, key, root) for k, (kind, key) in items.items()}
    snapshot.update({"entries": entries, "terminals": metas})
    return snapshot, bytes(blob)
