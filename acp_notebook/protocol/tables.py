"""A session's state as tables: ``records(state, kind)`` (plain dicts) and ``frame`` (pandas).

One row per item, in first-seen order, with the columns of ``COLUMNS[kind]`` in that order. Rows
are JSON-friendly (str, int, float, bool, None, lists of those); times are the state's clock
(wall-clock seconds by default), durations are seconds (None while unfinished).

- ``tool_calls``: ``files`` lists the paths touched (``locations``, then v1 diff ``path``, v2
  diff ``changes[].path``/``oldPath``), each once; ``exit_code`` is the ``exitCode`` of the one
  terminal its content references, a list (in reference order) when it references several, None
  when none; ``permission`` says whether one was asked about it, and ``decision``/``decided_by``
  describe the latest such request (``decision``: the selected option's kind, ``"cancelled"``,
  or None while pending).
- ``terminals``: ``bytes`` counts every byte of the current output stream (since the last
  snapshot), including those the output cap dropped; ``duration`` runs from first sight to the
  exit status.
- ``permissions``: ``outcome`` is ``"selected"``, ``"cancelled"`` or None (pending); ``option``
  the selected id, ``decision`` its kind; ``decided_by`` as given to ``select``/``cancel`` (None:
  unknown); ``asked_at``/``answered_at`` from ``state.permission_times`` (``add_permission`` and
  ``permission_answered`` note them).
- ``elicitations``: one row per question the agent asked (``elicitation/create``): ``mode``
  (``form``/``url``), ``scope`` (the method of our request a request-scoped one belongs to, else
  None), ``fields`` (the form's field names), ``action`` (``accept``/``decline``/``cancel``, None
  while pending), ``values`` (what an accepted form sent, a secret-looking field as
  ``<redacted>``), ``url`` (only ``scheme://host/path``: never a query; so is the URL where
  ``message`` quotes it), ``status``
  (``Elicitation.status``), ``decided_by``, ``asked_at``/``answered_at`` from
  ``state.elicitation_times``. In a tree, an elicitation is recorded on the root's state (the desk)
  and names the session that asked, as permissions do.
- ``session_messages``: one row per message between sessions in this session's transcript (its
  own view: outgoing on the sender's session, incoming on the recipient's); ``text`` joins the
  text blocks, ``blocks`` counts the content blocks, ``chunks`` those that streamed.
- ``traffic``: one row per entry of ``state.traffic_source()`` (the recorder's ring, in the trace
  format of ``trace.py``; [] without a source): ``direction`` (``dir``: ``in``/``out``), ``time``
  (``t``: seconds since the recording started), ``kind`` (``request``, ``notification``,
  ``response``, ``error``, ``batch``; or the entry's own kind, e.g. ``stdout``/``stderr``),
  ``method``, ``update`` (the ``sessionUpdate`` kind of a ``session/update``), ``id`` (the JSON-RPC
  id) and ``size`` (bytes of the line). An entry's own ``index`` (else its position), ``size`` and
  any of these columns given outright win over what is derived from its ``message``.

The same tables over a session and its subagents: ``tree_tables``.

``frame`` builds a DataFrame with the same columns: times (not traffic's) become UTC datetimes,
counts and exit codes nullable ``Int64`` (a tool call's ``exit_code`` stays ``object`` when one row
holds a list), ``permission`` boolean, durations float; pandas is imported only there.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from .content import terminal_refs
from .elicitation_records import kept_values, scrub

if TYPE_CHECKING:
    from .elicitation import Elicitation
    from .messages import Message
    from .permission import PermissionRequest
    from .session_messages import SessionMessage
    from .terminal import Terminal
    from .toolcall import ToolCall

Row = dict[str, Any]


class Tabled(Protocol):
    """What the tables read of a state (``SessionState`` is one; this module never imports it)."""

    @property
    def tool_calls(self) -> Mapping[str, ToolCall]: ...
    @property
    def terminals(self) -> Mapping[str, Terminal]: ...
    @property
    def messages(self) -> Mapping[str, Message]: ...
    @property
    def permissions(self) -> Mapping[str, PermissionRequest]: ...
    @property
    def permission_times(self) -> Mapping[str, tuple[float, float | None]]: ...
    @property
    def elicitations(self) -> Mapping[str, Elicitation]: ...
    @property
    def elicitation_times(self) -> Mapping[str, tuple[float, float | None]]: ...
    @property
    def session_messages(self) -> Mapping[str, SessionMessage]: ...
    @property
    def traffic_source(self) -> Callable[[], Iterable[dict[str, Any]]] | None: ...
    @property
    def subagents(self) -> Mapping[str, Any]: ...


COLUMNS: dict[str, tuple[str, ...]] = {
    "tool_calls": (
        "id",
        "title",
        "kind",
        "status",
        "first_seen",
        "last_seen",
        "duration",
        "updates",
        "files",
        "exit_code",
        "permission",
        "decision",
        "decided_by",
    ),
    "messages": ("id", "role", "text", "blocks", "first_seen", "last_seen"),
    "terminals": (
        "id",
        "command",
        "cwd",
        "exit_code",
        "signal",
        "bytes",
        "first_seen",
        "last_seen",
        "duration",
    ),
    "permissions": (
        "key",
        "request_id",
        "tool_call_id",
        "title",
        "subject_type",
        "options",
        "outcome",
        "option",
        "decision",
        "decided_by",
        "asked_at",
        "answered_at",
    ),
    "traffic": ("index", "direction", "time", "kind", "method", "update", "id", "size"),
    "elicitations": (
        "key",
        "request_id",
        "tool_call_id",
        "mode",
        "scope",
        "message",
        "fields",
        "action",
        "values",
        "url",
        "status",
        "decided_by",
        "asked_at",
        "answered_at",
    ),
    "session_messages": (
        "id",
        "sender_session_id",
        "recipient_session_id",
        "sender_message_id",
        "recipient_message_id",
        "text",
        "blocks",
        "chunks",
        "first_seen",
        "last_seen",
    ),
}
KINDS = tuple(COLUMNS)
PANDAS_HINT = 'state.frame() needs pandas: pip install "acp_notebook[pandas]"'

# frame dtypes: (datetime columns, nullable integer columns, boolean columns, float columns)
_TYPES: dict[str, tuple[tuple[str, ...], ...]] = {
    "tool_calls": (("first_seen", "last_seen"), ("updates",), ("permission",), ("duration",)),
    "messages": (("first_seen", "last_seen"), ("blocks",), (), ()),
    "terminals": (("first_seen", "last_seen"), ("exit_code", "bytes"), (), ("duration",)),
    "permissions": (("asked_at", "answered_at"), (), (), ()),
    "traffic": ((), ("index", "size"), (), ("time",)),
    "elicitations": (("asked_at", "answered_at"), (), (), ()),
    "session_messages": (("first_seen", "last_seen"), ("blocks", "chunks"), (), ()),
}


def records(state: Tabled, kind: str) -> list[Row]:
    """The rows of table ``kind``; raises ``ValueError`` for an unknown kind."""
    build = BUILDERS.get(kind)
    if build is None:
        raise ValueError(f"unknown table {kind!r}; choose one of {', '.join(KINDS)}")
    return build(state)


def frame(state: Tabled, kind: str) -> Any:
    """The rows of table ``kind`` as a pandas DataFrame, with typed columns."""
    return typed_frame(records(state, kind), kind, COLUMNS[kind])


def typed_frame(rows: list[Row], kind: str, columns: tuple[str, ...]) -> Any:
    """``rows`` of table ``kind`` as a DataFrame of ``columns``, typed (see the module docstring)."""
    try:
        import pandas as pd
    except ImportError as exc:
        raise ImportError(PANDAS_HINT) from exc
    df = pd.DataFrame(rows, columns=list(columns))
    times, ints, bools, floats = _TYPES[kind]
    for col in times:
        df[col] = pd.to_datetime(df[col].astype("float64"), unit="s", utc=True)
    for col in ints:
        df[col] = df[col].astype("Int64")
    if kind == "tool_calls" and not any(isinstance(row["exit_code"], list) for row in rows):
        df["exit_code"] = df["exit_code"].astype("Int64")  # else object: ints, lists and None
    for col in bools:
        df[col] = df[col].astype("boolean")
    for col in floats:
        df[col] = df[col].astype("float64")
    return df


# -- tool calls ---------------------------------------------------------------------------------
def tool_call_rows(state: Tabled) -> list[Row]:
    """One row per tool call (a request a subagent of this session asked is not about these)."""
    children = state.subagents
    asked = {
        p.tool_call_id: p
        for p in state.permissions.values()
        if p.tool_call_id is not None and p.session_id not in children
    }
    return [
        tool_call_row(tc, state.terminals, asked.get(tc.tool_call_id)) for tc in state.tool_calls.values()
    ]


def tool_call_row(tc: ToolCall, terminals: Mapping[str, Terminal], perm: PermissionRequest | None) -> Row:
    """One tool call's row (``perm``: the latest request about it)."""
    return {
        "id": tc.tool_call_id,
        "title": tc.title,
        "kind": tc.kind,
        "status": tc.status,
        "first_seen": tc.created_at,
        "last_seen": tc.updated_at,
        "duration": tc.duration,
        "updates": tc.updates,
        "files": files_touched(tc),
        "exit_code": _exit_code(tc, terminals),
        "permission": perm is not None,
        "decision": None if perm is None else decision(perm),
        "decided_by": None if perm is None else perm.decided_by,
    }


def files_touched(tc: ToolCall) -> list[str]:
    """The paths a tool call touched: its locations, then its diffs' paths; each once, in order."""
    paths = [loc.get("path") for loc in tc.locations if isinstance(loc, dict)]
    for item in tc.content:
        if isinstance(item, dict) and item.get("type") == "diff":
            paths.append(item.get("path"))
            changes = item.get("changes")
            for change in changes if isinstance(changes, list) else []:
                if isinstance(change, dict):
                    paths += [change.get("path"), change.get("oldPath")]
    return [p for p in dict.fromkeys(paths) if isinstance(p, str)]


def _exit_code(tc: ToolCall, terminals: Mapping[str, Terminal]) -> Any:
    codes = [_code(terminals.get(t)) for t in dict.fromkeys(terminal_refs(tc.content))]
    return codes if len(codes) > 1 else (codes[0] if codes else None)


def _code(term: Terminal | None) -> int | None:
    code = ((term.exit_status if term is not None else None) or {}).get("exitCode")
    return code if isinstance(code, int) else None


# -- messages and terminals ---------------------------------------------------------------------
def message_rows(state: Tabled) -> list[Row]:
    """One row per message (user, agent, thought)."""
    return [_message_row(msg) for msg in state.messages.values()]


def _message_row(msg: Message) -> Row:
    return {
        "id": msg.message_id,
        "role": msg.role,
        "text": msg.text,
        "blocks": len(msg.content),
        "first_seen": msg.first_seen,
        "last_seen": msg.last_seen,
    }


def terminal_rows(state: Tabled) -> list[Row]:
    """One row per terminal."""
    return [_terminal_row(term) for term in state.terminals.values()]


def _terminal_row(term: Terminal) -> Row:
    status = term.exit_status or {}
    signal = status.get("signal")
    return {
        "id": term.terminal_id,
        "command": term.command,
        "cwd": term.cwd,
        "exit_code": _code(term),
        "signal": signal if isinstance(signal, str) else None,
        "bytes": term.end_offset,
        "first_seen": term.first_seen,
        "last_seen": term.last_seen,
        "duration": term.duration,
    }


def session_message_rows(state: Tabled) -> list[Row]:
    """One row per message between sessions, as this session's transcript holds it."""
    return [_session_message_row(msg) for msg in state.session_messages.values()]


def _session_message_row(msg: SessionMessage) -> Row:
    return {
        "id": msg.message_id,
        "sender_session_id": msg.sender_session_id,
        "recipient_session_id": msg.recipient_session_id,
        "sender_message_id": msg.sender_message_id,
        "recipient_message_id": msg.recipient_message_id,
        "text": msg.text,
        "blocks": len(msg.content or ()),
        "chunks": msg.chunks,
        "first_seen": msg.first_seen,
        "last_seen": msg.last_seen,
    }


# -- permissions --------------------------------------------------------------------------------
def permission_rows(state: Tabled) -> list[Row]:
    """One row per permission request, in arrival order."""
    times = state.permission_times
    return [permission_row(perm, times.get(perm.key, (None, None))) for perm in state.permissions.values()]


def permission_row(perm: PermissionRequest, times: tuple[float | None, float | None]) -> Row:
    """One request's row (``times``: asked, answered)."""
    outcome = (perm.outcome or {}).get("outcome")
    return {
        "key": perm.key,
        "request_id": perm.request_id,
        "tool_call_id": perm.tool_call_id,
        "title": perm.title,
        "subject_type": perm.subject_type,
        "options": perm.option_ids,
        "outcome": outcome if isinstance(outcome, str) else None,
        "option": perm.selected_option,
        "decision": decision(perm),
        "decided_by": perm.decided_by,
        "asked_at": times[0],
        "answered_at": times[1],
    }


def decision(perm: PermissionRequest) -> str | None:
    """The kind of the selected option, ``"cancelled"``, or None (pending, or a kindless option)."""
    if (perm.outcome or {}).get("outcome") == "cancelled":
        return "cancelled"
    chosen = perm.selected_option
    for option in perm.options:
        if isinstance(option, dict) and chosen is not None and option.get("optionId") == chosen:
            kind = option.get("kind")
            return kind if isinstance(kind, str) else None
    return None


# -- elicitations -------------------------------------------------------------------------------
def elicitation_rows(state: Tabled) -> list[Row]:
    """One row per elicitation, in arrival order."""
    times = state.elicitation_times
    return [elicitation_row(e, times.get(e.key, (None, None))) for e in state.elicitations.values()]


def elicitation_row(e: Elicitation, times: tuple[float | None, float | None]) -> Row:
    """One elicitation's row (``times``: asked, answered)."""
    scope = (e.scope_request or {}).get("method")
    return {
        "key": e.key,
        "request_id": e.request_id,
        "tool_call_id": e.tool_call_id,
        "mode": e.mode,
        "scope": scope if isinstance(scope, str) else None,
        "message": scrub(e.message, [e.url] if e.url else []),  # quoting the URL: as ``url``
        "fields": [f.name for f in e.fields],
        "action": e.action,
        "values": json.loads(json.dumps(kept_values(e))) if e.values is not None else None,
        "url": e.redacted_url,
        "status": e.status,
        "decided_by": e.decided_by,
        "asked_at": times[0],
        "answered_at": times[1],
    }


# -- traffic ------------------------------------------------------------------------------------
def traffic_rows(state: Tabled) -> list[Row]:
    """One row per recorded entry of ``state.traffic_source`` ([] when there is none)."""
    source = state.traffic_source
    return [row for row, _ in traffic_pairs(source() if source is not None else [])]


def traffic_pairs(entries: Iterable[Any]) -> list[tuple[Row, dict[str, Any]]]:
    """Each entry's traffic row, with the entry."""
    return [(_traffic_row(i, e), e) for i, e in enumerate(entries) if isinstance(e, dict)]


def _traffic_row(index: int, entry: dict[str, Any]) -> Row:
    own = entry.get("kind", "message")
    derived = describe(entry.get("message")) if own == "message" else {"kind": own}
    row: Row = {"index": index, "direction": entry.get("dir"), "time": entry.get("t"), **derived}
    row["size"] = _size(entry)
    row.update({k: entry[k] for k in _GIVEN if k in entry})
    return {col: row.get(col) for col in COLUMNS["traffic"]}


_GIVEN = ("index", "direction", "time", "method", "update", "id", "size")


def describe(message: Any) -> Row:
    """kind, method, update and id of a JSON-RPC message (or a batch of them)."""
    if isinstance(message, list):
        return {"kind": "batch", "method": None, "update": None, "id": None}
    if not isinstance(message, dict):
        return {}
    method = message.get("method")
    if isinstance(method, str):
        kind = "request" if "id" in message else "notification"
    else:
        method, kind = None, "error" if "error" in message else "response"
    params = message.get("params")
    update = params.get("update") if method == "session/update" and isinstance(params, dict) else None
    sub = update.get("sessionUpdate") if isinstance(update, dict) else None
    return {"kind": kind, "method": method, "update": sub, "id": message.get("id")}


def _size(entry: dict[str, Any]) -> int | None:
    for key in ("line", "text"):
        value = entry.get(key)
        if isinstance(value, str | bytes):
            return len(value.encode("utf-8") if isinstance(value, str) else value)
    if "message" in entry:
        text = json.dumps(entry["message"], ensure_ascii=False, separators=(",", ":"))
        return len(text.encode("utf-8"))
    return None


BUILDERS: dict[str, Callable[[Tabled], list[Row]]] = {
    "tool_calls": tool_call_rows,
    "messages": message_rows,
    "terminals": terminal_rows,
    "permissions": permission_rows,
    "traffic": traffic_rows,
    "session_messages": session_message_rows,
    "elicitations": elicitation_rows,
}
