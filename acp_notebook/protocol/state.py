"""SessionState: the pure reducer of `session/update` notifications (v2 rules, v1 kinds too).

Theory of operation: ``apply`` looks ``sessionUpdate`` up in one dispatch table (``_HANDLERS``,
built in the class body). A handler finds or creates the item in its registry, lets the item's
module patch it — each rule is stated once, there: ``toolcall`` (omit keeps, null clears, a value
replaces, arrays replace whole, ``_meta`` patches by key), ``terminal`` (the same; a snapshot
replaces every byte, chunks append), ``content`` (the schema's skip-invalid-items), ``messages``
(chunks append by ``messageId``), ``plans`` (replaced by ``planId``), ``subagents`` and
``session_messages`` (the unstable schema's child sessions and messages between sessions),
``session_values`` (run state, session-wide values; the terminals and tool calls a
``background`` snapshot lists are marked ``background``) — then notes first sightings in
``timeline``, stamps when each item was first and last seen (the injectable ``clock``; tool
calls also count their ``updates``), and tells subscribers what changed. Bad input goes to
``diagnostics``, never raised; unknown kinds are kept in ``other_updates``. The reducer never
mutates what it is given, every ``to_dict`` is a deep copy, and nothing here does I/O.
``records``/``frame`` read the state as tables (``tables.py``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import Any, ClassVar, NamedTuple

from . import tables
from .auth_status import AuthStatus
from .changes import Change, Observer, Observers
from .content import clean_item, terminal_refs
from .diagnostics import Diagnostic
from .elicitation import Elicitation
from .messages import PLAN_KINDS, ROLES, Conversation, Message, Plan
from .patch import type_name
from .permission import SHOWN_FIELDS, PermissionRequest, emptied
from .session_messages import SessionMessage, append_chunk, apply_session_message, chunk_content
from .session_values import GENERIC_KINDS, SESSION_KINDS, background_ids, read_session_update
from .subagents import SubagentInfo, apply_subagent_update
from .terminal import DEFAULT_OUTPUT_CAP, Terminal, apply_terminal_fields, decode_base64
from .toolcall import ToolCall, apply_fields

Handler = Callable[["SessionState", dict[str, Any]], None]


class Incoming(NamedTuple):
    """One received update as a connection read it: the update in v2-rules form, the updates an
    offered extension implies, and the problems met reading it (``code, message, detail, level``)."""

    update: Any
    implied: tuple[dict[str, Any], ...] = ()
    problems: tuple[tuple[str, str, Any, str], ...] = ()


class SessionState:
    """Everything a session's updates said, as Python objects; ``apply`` never raises."""

    def __init__(
        self,
        *,
        terminal_output_cap: int = DEFAULT_OUTPUT_CAP,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.tool_calls: dict[str, ToolCall] = {}
        self.terminals: dict[str, Terminal] = {}
        self._conversation = Conversation()
        self.messages: dict[str, Message] = self._conversation.messages
        self.plans: dict[str, Plan] = self._conversation.plans
        self.permissions: dict[str, PermissionRequest] = {}
        self.permission_times: dict[str, tuple[float, float | None]] = {}  # key -> (asked, answered)
        self.elicitations: dict[str, Elicitation] = {}  # the agent's questions (form / URL), by key
        self.elicitation_times: dict[str, tuple[float, float | None]] = {}  # key -> (asked, answered)
        self.turn_times: dict[int, tuple[float, float | None]] = {}  # turn number -> (started, ended)
        self.timeline: list[tuple[str, Any]] = []
        self.file_writes: list[dict[str, Any]] = []
        self.diagnostics: list[Diagnostic] = []
        self.run_state = "idle"
        self.stop_reason: str | None = None
        self.stop_error: Any = None
        self.background: list[Any] | None = None  # None: not reported (``[]``: nothing runs)
        self.available_commands: list[Any] = []
        self.config_options: list[Any] = []
        self.current_mode_id: str | None = None
        self.session_info: dict[str, Any] = {}
        self.usage: dict[str, Any] | None = None
        self.notices: list[dict[str, Any]] = []
        self.auth_status: AuthStatus | None = None  # the agent's, kind and label only (``auth_status``)
        self.other_updates: list[dict[str, Any]] = []
        self.subagents: dict[str, SubagentInfo] = {}  # children this session announced, by id
        self.session_messages: dict[str, SessionMessage] = {}  # messages between sessions, by id
        self.terminal_output_cap = terminal_output_cap
        self.traffic_source: Callable[[], Iterable[dict[str, Any]]] | None = None  # the recorder's ring
        self._clock = clock
        self._observers = Observers(lambda text: self.diagnostics.append(Diagnostic("observer-error", text)))

    # -- observers and diagnostics -------------------------------------------------------------
    def subscribe(self, callback: Observer) -> Callable[[], None]:
        """Call ``callback(change)`` after every change; returns a function that unsubscribes."""
        return self._observers.subscribe(callback)

    def _changed(self, kind: str, key: str | None, *more: Any) -> None:
        """Tell observers about ``Change(kind, key, *more)`` (fields, created, data, replaced)."""
        if self._observers:
            self._observers.notify(Change(kind, key, *more))

    def diagnose(self, code: str, message: str, detail: Any = None, level: str = "warning") -> None:
        """Record a problem with received input (and tell observers)."""
        self.diagnostics.append(Diagnostic(code, message, detail, level))
        self._changed("diagnostic", None, (code,))

    # -- entry points --------------------------------------------------------------------------
    def take(self, incoming: Incoming) -> None:
        """Apply what a connection read from one ``session/update``: problems noted, the update
        applied, then what it implies."""
        for code, message, detail, level in incoming.problems:
            self.diagnose(code, message, detail, level)
        self.apply(incoming.update)
        for implied in incoming.implied:
            self.apply(implied)

    def apply(self, update: Any) -> None:
        """Apply the ``update`` object of one `session/update` notification."""
        if not isinstance(update, dict):
            self.diagnose("malformed-update", f"update is {type_name(update)}, not an object", update)
            return
        kind = update.get("sessionUpdate")
        handler = self._HANDLERS.get(kind) if isinstance(kind, str) else None
        if handler is None:
            self._other(kind, update)
        else:
            handler(self, update)

    def _id(self, update: dict[str, Any], key: str) -> str | None:
        value = update.get(key)
        if isinstance(value, str):
            return value
        kind = update["sessionUpdate"]
        self.diagnose("malformed-update", f"{kind} without a string `{key}`", update)
        return None

    def _note(self, kind: str, key: Any) -> None:
        self.timeline.append((kind, key))
        if kind != "message":
            self._conversation.interrupt()

    # -- tool calls ------------------------------------------------------------------------------
    def _tool_call_obj(self, tc_id: str, now: float, replace: bool = False) -> tuple[ToolCall, bool]:
        tc = self.tool_calls.get(tc_id)
        if tc is not None and not replace:
            tc.updates += 1
            return tc, False
        self.tool_calls[tc_id] = new = ToolCall(tc_id, now)
        new.updates = 1 if tc is None else tc.updates + 1
        new.background = self.in_background(tc_id, "tool_call")
        if tc is None:
            self._note("tool_call", tc_id)
        return new, tc is None

    def _tool_call(self, update: dict[str, Any], replace: bool = False) -> None:
        tc_id = self._id(update, "toolCallId")
        if tc_id is None:
            return
        now = self._clock()
        tc, created = self._tool_call_obj(tc_id, now, replace)
        changed = apply_fields(tc, update, self.diagnose, now)
        if "content" in changed:
            self._ensure_terminals(terminal_refs(tc.content), now)
        self._conversation.interrupt()
        self._changed("tool_call", tc_id, tuple(changed), created)

    def _v1_tool_call(self, update: dict[str, Any]) -> None:
        self._tool_call(update, replace=True)

    def _tool_call_chunk(self, update: dict[str, Any]) -> None:
        tc_id = self._id(update, "toolCallId")
        if tc_id is None:
            return
        if "content" not in update:
            self.diagnose("malformed-update", "content chunk without `content`", update)
            return
        item = clean_item(update["content"], self.diagnose)  # null or invalid: nothing appended
        if item is None:
            return
        now = self._clock()
        tc, created = self._tool_call_obj(tc_id, now)
        tc.content.append(item)
        tc.updated_at = now
        if item["type"] == "terminal":  # a clean terminal item has a string ``terminalId``
            self._ensure_terminals([item["terminalId"]], now)
        self._changed("tool_call", tc_id, ("content",), created)

    # -- terminals -------------------------------------------------------------------------------
    def _terminal(self, terminal_id: str, now: float) -> tuple[Terminal, bool]:
        term = self.terminals.get(terminal_id)
        if term is not None:
            term.last_seen = now
            return term, False
        term = self.terminals[terminal_id] = Terminal(terminal_id, self.terminal_output_cap, now)
        term.background = self.in_background(terminal_id, "terminal")
        return term, True

    def _ensure_terminals(self, ids: list[str], now: float) -> None:
        """Create the terminals a tool call references (a reference is not an update of one)."""
        for terminal_id in ids:
            if terminal_id not in self.terminals:
                self._terminal(terminal_id, now)
                self._changed("terminal", terminal_id, (), True)

    def _terminal_update(self, update: dict[str, Any]) -> None:
        terminal_id = self._id(update, "terminalId")
        if terminal_id is None:
            return
        now = self._clock()
        term, created = self._terminal(terminal_id, now)
        changed = apply_terminal_fields(term, update, self.diagnose)
        if "exitStatus" in changed and term.exit_status is None:
            term.exited_at = None
        elif "exitStatus" in changed and term.exited_at is None:
            term.exited_at = now  # the first exit status: the end of its duration
        if self._observers:
            replaced = "output" in changed
            data = term.output if replaced else None
            self._changed("terminal", terminal_id, tuple(changed), created, data, replaced)

    def _terminal_chunk(self, update: dict[str, Any]) -> None:
        terminal_id = self._id(update, "terminalId")
        if terminal_id is None:
            return
        data = decode_base64(update.get("data"))
        if data is None:
            self.diagnose("invalid-base64", "terminal output chunk is not valid base64 (skipped)", update)
            return
        self.append_output(terminal_id, data)

    def append_output(self, terminal_id: str, data: bytes) -> None:
        """Append bytes to a terminal (a decoded chunk, or a client-run terminal's output)."""
        term, created = self._terminal(terminal_id, self._clock())
        term.append(data)
        self._changed("terminal", terminal_id, ("output",), created, data)

    # -- messages, plans, run state and session-wide values ----------------------------------------
    def _conversation_update(self, update: dict[str, Any]) -> None:
        result = self._conversation.apply(update, self.diagnose)
        if result is None:
            return
        kind, key, fields, created = result
        if kind == "message":
            self._seen(self.messages[key], created)
        if created:
            self._note(kind, key)
        self._changed(kind, key, fields, created)

    def _seen(self, msg: Message, created: bool) -> None:
        msg.last_seen = now = self._clock()
        if created:
            msg.first_seen = now

    def _session_update(self, update: dict[str, Any]) -> None:
        records = {"session_info": self.session_info, "usage": self.usage, "run_state": self.run_state}
        values = read_session_update(update, records, self.diagnose)
        if values is None:
            return
        listed = background_ids(self.background)
        for attr, value in values.items():
            setattr(self, attr, value)
        kind = update["sessionUpdate"]
        if kind == "state_update":
            self._changed("run_state", self.run_state, ("state",))
            self._background_changed(listed ^ background_ids(self.background))
        else:
            self._changed("session", kind, tuple(values))

    def _background_changed(self, items: set[tuple[str, str]]) -> None:
        """Mark the terminals and tool calls that joined or left ``background`` and tell observers
        (about a terminal's tool calls too: their cards show it)."""
        for kind, item_id in sorted(items):
            known = self.terminals.get(item_id) if kind == "terminal" else self.tool_calls.get(item_id)
            if known is not None:
                known.background = self.in_background(item_id, kind)
                self._changed(kind, item_id, ("background",))
            if kind == "terminal":
                for tc in self.tool_calls.values():
                    if item_id in terminal_refs(tc.content):
                        self._changed("tool_call", tc.tool_call_id, ("background",))

    def in_background(self, item_id: str, kind: str | None = None) -> bool:
        """Whether the last ``background`` snapshot lists terminal or tool call ``item_id``
        (``kind``: ``"terminal"`` or ``"tool_call"`` to ask about one only); False when not reported."""
        return any(i == item_id and kind in (None, k) for k, i in background_ids(self.background))

    def _notice(self, update: dict[str, Any]) -> None:
        self.notices.append({k: v for k, v in update.items() if k != "sessionUpdate"})
        self._note("notice", len(self.notices) - 1)
        self._changed("notice", str(len(self.notices) - 1), (), True)

    def _other(self, kind: Any, update: dict[str, Any]) -> None:
        if not isinstance(kind, str):
            self.diagnose("malformed-update", "update without string `sessionUpdate`", update)
            return
        if kind not in GENERIC_KINDS and not kind.startswith("_"):
            self.diagnose("unknown-update", f"unknown update kind {kind!r} (kept raw)", update, "info")
        self._keep_raw(kind, update)

    def _keep_raw(self, kind: str, update: dict[str, Any]) -> None:
        self.other_updates.append(dict(update))
        self._note("other", len(self.other_updates) - 1)
        self._changed("other", str(len(self.other_updates) - 1), (kind,), True)

    def turn_changed(self, number: int, fields: tuple[str, ...] = (), created: bool = False) -> None:
        """Tell observers that turn ``number`` (from 1; the turns are the session's) started
        (``created``), ended (``ended``) or learnt where it came from (``origin_kind``); the times
        it started and ended are kept in ``turn_times`` (the state's clock)."""
        if created:
            self.turn_times[number] = (self._clock(), None)
        elif "ended" in fields and self.turn_times.get(number, (0.0, 0.0))[1] is None:
            self.turn_times[number] = (self.turn_times[number][0], self._clock())
        self._changed("turn", str(number), fields, created)

    def agent_ended(self) -> None:
        """Tell observers that the agent process ended (closed or exited): views say so at once."""
        self._changed("session", "agent", ("closed",))

    def set_auth_status(self, status: AuthStatus) -> None:
        """Record the agent's authentication status (agent-wide; the client tells every session)."""
        if status != self.auth_status:
            self.auth_status = status
            self._changed("session", "auth_status", ("auth_status",))

    # -- permissions and client-side file writes ---------------------------------------------------
    def add_permission(self, request: PermissionRequest, subject: bool = True) -> None:
        """Record a permission request; its ``tool_call`` subject is applied as an upsert here
        unless ``subject`` is False (a subagent's request: its tool call lives in the child's state,
        ``apply_permission_subject``).

        Whoever answers the request calls ``permission_answered``.
        """
        for diag in request.diagnostics:
            self.diagnose(diag.code, diag.message, diag.detail)
        if subject:
            self.apply_permission_subject(request)
        self.permission_times.setdefault(request.key, (self._clock(), None))
        self.permissions[request.key] = request
        self._note("permission", request.key)
        self._changed("permission", request.key, (), True)

    def apply_permission_subject(self, request: PermissionRequest) -> None:
        """Apply a request's ``tool_call`` subject as an upsert; what it emptied of the card is kept
        in ``request.shown_before``."""
        update = request.tool_call_update
        if update is None:
            return
        known = self.tool_calls.get(update["toolCallId"])
        before = known.to_dict() if known is not None and SHOWN_FIELDS & update.keys() else None
        self._tool_call(update)
        if before is not None:
            request.shown_before = emptied(before, self.tool_calls[update["toolCallId"]].to_dict())

    def permission_answered(self, request: PermissionRequest) -> None:
        """Note when ``request`` got its outcome (``permission_times``) and tell observers."""
        times = self.permission_times.get(request.key)
        if times is not None and times[1] is None and not request.pending:
            self.permission_times[request.key] = (times[0], self._clock())
        self._changed("permission", request.key, ("outcome",))

    @property
    def pending_permissions(self) -> list[PermissionRequest]:
        """Permission requests still waiting for an answer, oldest first."""
        return [p for p in self.permissions.values() if p.pending]

    # -- elicitations ----------------------------------------------------------------------------
    def add_elicitation(self, elicitation: Elicitation) -> None:
        """Record an elicitation (its problems as diagnostics); whoever answers, completes or
        dismisses it then calls ``elicitation_changed``."""
        for diag in elicitation.diagnostics:
            self.diagnose(diag.code, diag.message, diag.detail, diag.level)
        self.elicitation_times.setdefault(elicitation.key, (self._clock(), None))
        self.elicitations[elicitation.key] = elicitation
        self._note("elicitation", elicitation.key)
        self._changed("elicitation", elicitation.key, (), True)

    def elicitation_changed(self, elicitation: Elicitation, fields: tuple[str, ...] = ("outcome",)) -> None:
        """Note when ``elicitation`` got its answer (``elicitation_times``) and tell observers what
        changed (``outcome``, ``completed``, ``dismissed``)."""
        times = self.elicitation_times.get(elicitation.key)
        if times is not None and times[1] is None and not elicitation.pending:
            self.elicitation_times[elicitation.key] = (times[0], self._clock())
        self._changed("elicitation", elicitation.key, fields)

    @property
    def pending_elicitations(self) -> list[Elicitation]:
        """Elicitations still waiting for an answer, oldest first."""
        return [e for e in self.elicitations.values() if e.pending]

    def record_file_write(self, path: str, old_text: str | None, new_text: str) -> None:
        """Record a file the agent wrote through the client, as a v1-shaped diff."""
        self.file_writes.append({"path": path, "oldText": old_text, "newText": new_text})
        index = len(self.file_writes) - 1
        self._note("file_write", index)
        self._changed("file_write", str(index), (), True)

    def record_review(self, review: Any) -> int:
        """Record a write held for review (``protocol.review.Review``) as a ``file_write`` item
        whose ``review`` holds it; returns its index."""
        write = {"path": review.path, "oldText": review.old_text, "newText": review.proposed_text}
        self.file_writes.append({**write, "review": review})
        index = len(self.file_writes) - 1
        self._note("file_write", index)
        self._changed("file_write", str(index), (), True)
        return index

    def file_write_changed(self, index: int) -> None:
        """Tell observers that file write ``index`` changed (its review's decisions or outcome)."""
        self._changed("file_write", str(index), ("review",))

    def add_note(self, tool_call_id: str, note: dict[str, Any]) -> None:
        """Attach a note of the client's own to a tool call's card (``ToolCall.notes``)."""
        tc = self.tool_calls.get(tool_call_id)
        if tc is not None:
            tc.notes.append(note)
            self._changed("tool_call", tool_call_id, ("notes",))

    # -- tables ----------------------------------------------------------------------------------
    def records(self, kind: str) -> list[dict[str, Any]]:
        """The rows of table ``kind`` (``tables.KINDS``) as plain JSON-friendly dicts."""
        return tables.records(self, kind)

    def frame(self, kind: str) -> Any:
        """The rows of table ``kind`` as a pandas DataFrame (the ``[pandas]`` extra)."""
        return tables.frame(self, kind)

    # -- subagents -------------------------------------------------------------------------------
    def _subagent_update(self, update: dict[str, Any]) -> None:
        """A child session announced or patched (``subagents``); the raw update is also kept, in
        ``other_updates`` and the timeline, as the views show it."""
        child_id = self._id(update, "sessionId")
        if child_id is None:
            return
        info = self.subagents.get(child_id)
        created = info is None
        if info is None:
            info = self.subagents[child_id] = SubagentInfo(child_id)
        fields = apply_subagent_update(info, update, self.diagnose)
        self._keep_raw("subagent_update", update)
        self._changed("subagent", child_id, tuple(fields), created)

    # -- messages between sessions ---------------------------------------------------------------
    def _session_message(self, update: dict[str, Any]) -> None:
        """An inter-session message upserted or streamed (``session_messages``: this session's view
        of it only); the raw update is also kept, in ``other_updates`` and the timeline."""
        msg_id = self._id(update, "messageId")
        if msg_id is None:
            return
        chunk = update["sessionUpdate"] == "session_message_chunk"
        block = chunk_content(update, self.diagnose) if chunk else None
        if chunk and block is None:
            self._keep_raw("session_message_chunk", update)
            return
        now, msg = self._clock(), self.session_messages.get(msg_id)
        created = msg is None
        if msg is None:
            msg = self.session_messages[msg_id] = SessionMessage(msg_id, first_seen=now)
        fields = append_chunk(msg, block) if chunk else apply_session_message(msg, update, self.diagnose)
        msg.last_seen = now
        self._keep_raw(update["sessionUpdate"], update)
        self._changed("session_message", msg_id, tuple(fields), created)

    _HANDLERS: ClassVar[dict[str, Handler]] = {
        "tool_call_update": _tool_call,
        "tool_call": _v1_tool_call,
        "tool_call_content_chunk": _tool_call_chunk,
        "terminal_update": _terminal_update,
        "terminal_output_chunk": _terminal_chunk,
        **dict.fromkeys((*ROLES, *PLAN_KINDS), _conversation_update),
        **dict.fromkeys(SESSION_KINDS, _session_update),
        "notice": _notice,
        "subagent_update": _subagent_update,
        "session_message": _session_message,
        "session_message_chunk": _session_message,
    }
