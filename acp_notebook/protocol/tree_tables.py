"""The tables of a session tree: a session and its subagents, each a ``Member`` with its own state.
Pure, no I/O; the rows and columns are ``tables``'.

``tree_records``/``tree_frame`` give every member's rows, in tree order (the session's, then each
child's, depth first), each row led by ``session_id`` and ``parent_session_id``. A row's key is
its session plus its id (an agent message id, a tool call id is unique only within its
session). A permission request (an elicitation alike) is recorded in the root's state (the
``desk``) and names the session that asked (``PermissionRequest.session_id``): its row carries
that session, and only the requests of the tree's sessions are read; a tool call's
``permission``/``decision`` columns read the requests of its own session only. ``traffic`` rows
come from the entries given (those of the tree's sessions, in order), each with its ``session``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .tables import (
    BUILDERS,
    COLUMNS,
    KINDS,
    Row,
    Tabled,
    elicitation_row,
    permission_row,
    tool_call_row,
    traffic_pairs,
    typed_frame,
)

if TYPE_CHECKING:
    from .permission import PermissionRequest

TREE_COLUMNS = ("session_id", "parent_session_id")
Asked = tuple["PermissionRequest", str, tuple[float | None, float | None]]  # request, session, times


@dataclass(frozen=True)
class Member:
    """One session of a tree the tables read: its id, its parent's (None: the top) and its state."""

    session_id: str
    parent_session_id: str | None
    state: Tabled


def tree_records(
    members: Sequence[Member],
    kind: str,
    traffic: Iterable[dict[str, Any]] | None = None,
    desk: Tabled | None = None,
) -> list[Row]:
    """The rows of table ``kind`` for every member of a session tree, led by ``session_id`` and
    ``parent_session_id``; ``traffic``: the tree's entries (for ``kind="traffic"``); ``desk``: the
    state holding the permission requests (the root's; default: the first member's)."""
    if kind not in BUILDERS:
        raise ValueError(f"unknown table {kind!r}; choose one of {', '.join(KINDS)}")
    parents = parents_of(members)
    if kind == "traffic":
        return [_in_tree(row, e.get("session"), parents) for row, e in traffic_pairs(traffic or [])]
    asked = _asked_in_tree(members, desk if desk is not None else members[0].state)
    if kind == "permissions":
        return [_in_tree(permission_row(p, times), sid, parents) for p, sid, times in asked]
    if kind == "elicitations":
        return _elicitations_in_tree(members, desk if desk is not None else members[0].state, parents)
    if kind == "tool_calls":
        return _tree_tool_calls(members, asked, parents)
    build = BUILDERS[kind]
    return [_in_tree(row, m.session_id, parents) for m in members for row in build(m.state)]


def tree_frame(
    members: Sequence[Member],
    kind: str,
    traffic: Iterable[dict[str, Any]] | None = None,
    desk: Tabled | None = None,
) -> Any:
    """``tree_records`` as a pandas DataFrame, with typed columns."""
    rows = tree_records(members, kind, traffic, desk)
    return typed_frame(rows, kind, TREE_COLUMNS + COLUMNS[kind])


def _tree_tool_calls(
    members: Sequence[Member], asked: list[Asked], parents: Mapping[str, str | None]
) -> list[Row]:
    latest = {(sid, p.tool_call_id): p for p, sid, _ in asked if p.tool_call_id is not None}
    rows = []
    for m in members:
        for tc_id, tc in m.state.tool_calls.items():
            row = tool_call_row(tc, m.state.terminals, latest.get((m.session_id, tc_id)))
            rows.append(_in_tree(row, m.session_id, parents))
    return rows


def _elicitations_in_tree(
    members: Sequence[Member], desk: Tabled, parents: Mapping[str, str | None]
) -> list[Row]:
    """The elicitations on ``desk`` the tree's sessions asked (one naming no session: the first
    member's)."""
    rows = []
    for e in desk.elicitations.values():
        sid = e.session_id if e.session_id is not None else members[0].session_id
        if sid in parents:
            times = desk.elicitation_times.get(e.key, (None, None))
            rows.append(_in_tree(elicitation_row(e, times), sid, parents))
    return rows


def _in_tree(row: Row, session_id: Any, parents: Mapping[str, str | None]) -> Row:
    session_id = session_id if isinstance(session_id, str) else None
    return {"session_id": session_id, "parent_session_id": parents.get(session_id or ""), **row}


def _asked_in_tree(members: Sequence[Member], desk: Tabled) -> list[Asked]:
    """The requests on ``desk`` that sessions of the tree asked: (request, its session, times); a
    request naming no session is the first member's."""
    ids = set(parents_of(members))
    out: list[Asked] = []
    for perm in desk.permissions.values():
        sid = perm.session_id if isinstance(perm.session_id, str) else members[0].session_id
        if sid in ids:
            out.append((perm, sid, desk.permission_times.get(perm.key, (None, None))))
    return out


def parents_of(members: Sequence[Member]) -> dict[str, str | None]:
    """Each member's parent, by session id."""
    return {m.session_id: m.parent_session_id for m in members}
