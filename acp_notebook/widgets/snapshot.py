"""The ``snapshot`` a view saves (format: ``js/WIRE.md``), as a pure function of the state. No I/O.

``SessionView.flush_snapshot`` and ``acp_notebook.export_html`` both build it here, so a saved
notebook and an exported page draw the same tree. A saved snapshot keeps at most
``SAVED_TERMINAL_BYTES`` of each terminal (its newest bytes, from a line start when one is near):
a day's session (500 tool calls, 50 terminals) then saves to a notebook of a few MB, not 50 x 16 MiB.
A URL elicitation's URL is saved as ``scheme://host/path`` only, and a value typed into a
secret-looking form field not at all, wherever the snapshot quotes them
(``elicitation_records.scrub_for``): the live card shows them, a saved notebook or page never.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..protocol.content import terminal_refs
from ..protocol.elicitation_records import scrub_for
from ..protocol.state import SessionState
from . import tree_entries
from . import viewmodel as vm
from .header import header
from .subtree import Scope, ViewTree

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


Item = tuple[Scope, str, Any]  # (scope, kind, key): one entry of a view's tree


def tree_of(source: SessionState | ViewTree) -> ViewTree:
    """A view tree over ``source`` (a bare state: no subagent trees)."""
    return source if isinstance(source, ViewTree) else ViewTree(source)


def timeline_items(source: SessionState | ViewTree) -> tuple[dict[str, Item], dict[str, Terminal]]:
    """Every item of the tree (view key -> (scope, kind, key)), a child's right after its card, and
    the terminals they show (view id -> terminal)."""
    tree = tree_of(source)
    items: dict[str, Item] = {}
    terminals: dict[str, Terminal] = {}
    for view_key, scope, kind, key in tree.all_items():
        items[view_key] = (scope, kind, key)
        if kind == "tool_call":
            terminals.update(shown_terminals(scope, scope.state.tool_calls[key].content))
    return items, terminals


def shown_terminals(scope: Scope, content: list[Any]) -> dict[str, Terminal]:
    """The terminals a card's content shows, by view id (those the state has)."""
    found = ((scope.terminal(t), scope.state.terminals.get(t)) for t in terminal_refs(content))
    return {view_id: term for view_id, term in found if term is not None}


def snapshot_of(
    source: SessionState | ViewTree,
    summary: SessionSummary | None = None,
    title: str | None = None,
    *,
    items: Mapping[str, Item] | None = None,
    terminals: Mapping[str, Terminal] | None = None,
    seq: int = 0,
    interactive: Sequence[str] = (),
    root: str | None = None,
    cap: int = SAVED_TERMINAL_BYTES,
    waiting: Sequence[dict[str, Any]] = (),
) -> tuple[dict[str, Any], bytes]:
    """The snapshot dict and the terminal bytes it locates (``blob`` offsets); the whole tree by
    default; at most ``cap`` bytes of each terminal."""
    tree = tree_of(source)
    if items is None:
        items, all_terminals = timeline_items(tree)
        terminals = all_terminals if terminals is None else terminals
    blob, metas = bytearray(), {}
    for view_id, term in (terminals or {}).items():
        meta, data = saved_terminal(term, cap)
        named = {"id": view_id, "terminal_id": term.terminal_id}
        metas[view_id] = {**meta, **named, "blob": [len(blob), len(data)]}
        blob += data
    state = tree.root.state
    head = header(state, summary, title, interactive, waiting or tree_entries.waiting_list(tree))
    snapshot = {"seq": seq, "header": head, "order": list(items)}
    entries = {k: tree_entries.build(tree, *item, root, saved=True) for k, item in items.items()}
    snapshot.update({"entries": entries, "terminals": metas})
    return kept(snapshot, tree), bytes(blob)


def kept(value: Any, tree: ViewTree) -> Any:
    """``value`` (part of a saved snapshot) as records keep it: the tree's elicitation URLs only as
    ``scheme://host/path``, no value of a secret-looking field (a child's are on the root's desk)."""
    return scrub_for(value, tree.root.state.elicitations.values())
