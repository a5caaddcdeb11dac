"""SessionState: the pure reducer of `session/update` notifications (v2 rules, v1 kinds too).

Every rule lives in the module that owns the item (``toolcall``, ``terminal``, ``messages``);
this module dispatches on ``sessionUpdate``, keeps arrival order, records diagnostics instead
of raising, and tells subscribers what changed. Unknown update kinds are kept raw in
``other_updates``. Nothing here does I/O.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from .changes import Change, Observer
from .content import content_problem, terminal_refs
from .diagnostics import Diagnostic
from .messages import Message, Plan
from .patch import type_name
from .permission import PermissionRequest
from .terminal import DEFAULT_OUTPUT_CAP, Terminal, apply_terminal_fields, decode_base64
from .toolcall import ToolCall, apply_fields
from .updates import UpdatesMixin


class SessionState(UpdatesMixin):
    """Everything a session's updates said, as Python objects; ``apply`` never raises."""

    def __init__(
        self,
        *,
        terminal_output_cap: int = DEFAULT_OUTPUT_CAP,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.tool_calls: dict[str, ToolCall] = {}
        self.terminals: dict[str, Terminal] = {}
        self.messages: dict[str, Message] = {}
        self.plans: dict[str, Plan] = {}
        self.permissions: dict[str, PermissionRequest] = {}
        self.timeline: list[tuple[str, Any]] = []
        self.file_writes: list[dict[str, Any]] = []
        self.diagnostics: list[Diagnostic] = []
        self.terminal_output_cap = terminal_output_cap
        self._clock = clock
        self._observers: list[Observer] = []
        self._last_entry: tuple[str, Any] | None = None
        self._synthetic_ids = 0
        self._init_updates()

    # -- observers ---------------------------------------------------------------------------
    def subscribe(self, callback: Observer) -> Callable[[], None]:
        """Call ``callback(change)`` after every change; returns a function that unsubscribes."""
        self._observers.append(callback)
        return lambda: self._observers.remove(callback) if callback in self._observers else None

    def _emit(self, change: Change) -> None:
        for callback in list(self._observers):
            try:
                callback(change)
            except Exception as exc:  # an observer must never break the reader
                self.diagnostics.append(Diagnostic("observer-error", f"observer {callback!r} raised {exc!r}"))

    def diagnose(self, code: str, message: str, detail: Any = None, level: str = "warning") -> None:
        """Record a problem with received input (and tell observers)."""
        self.diagnostics.append(Diagnostic(code, message, detail, level))
        if self._observers:
            self._emit(Change("diagnostic", None, (code,)))

    # -- entry point ---------------------------------------------------------------------------
    def apply(self, update: Any) -> None:
        """Apply the ``update`` object of one `session/update` notification."""
        if not isinstance(update, dict):
            self.diagnose("malformed-update", f"update is {type_name(update)}, not an object", update)
            return
        kind = update.get("sessionUpdate")
        handler = self._handlers.get(kind) if isinstance(kind, str) else None
        if handler is None:
            self._apply_other(kind, update)
            return
        handler(self, update)

    def _note(self, kind: str, key: Any) -> None:
        entry = (kind, key)
        self.timeline.append(entry)
        self._last_entry = entry

    # -- permissions -----------------------------------------------------------------------------
    def add_permission(self, request: PermissionRequest) -> None:
        """Record a permission request; a ``tool_call`` subject is applied as an upsert."""
        for diag in request.diagnostics:
            self.diagnose(diag.code, diag.message, diag.detail)
        if request.on_answer is None:  # no client to send it: still tell the observers
            request.on_answer = lambda answered, _outcome: self.permission_answered(answered)
        update = request.tool_call_update
        if update is not None:
            self._tool_call(update)
        self.permissions[request.key] = request
        self._note("permission", request.key)
        if self._observers:
            self._emit(Change("permission", request.key, (), True))

    def permission_answered(self, request: PermissionRequest) -> None:
        """Tell observers that ``request`` now has an outcome."""
        if self._observers:
            self._emit(Change("permission", request.key, ("outcome",)))

    @property
    def pending_permissions(self) -> list[PermissionRequest]:
        """Permission requests still waiting for an answer, oldest first."""
        return [p for p in self.permissions.values() if p.pending]

    # -- tool calls ------------------------------------------------------------------------------
    def _tool_call(self, update: dict[str, Any], *, replace: bool = False) -> None:
        tc_id = update.get("toolCallId")
        if not isinstance(tc_id, str):
            self.diagnose("malformed-update", "tool call update without string `toolCallId`", update)
            return
        now = self._clock()
        tc = self.tool_calls.get(tc_id)
        created = tc is None
        if created or replace:
            tc = self.tool_calls[tc_id] = ToolCall(tc_id, now)
            if created:
                self._note("tool_call", tc_id)
        changed = apply_fields(tc, update, self.diagnose, now)
        if "content" in changed:
            self._ensure_terminals(terminal_refs(tc.content))
        self._last_entry = ("tool_call", tc_id)
        if self._observers:
            self._emit(Change("tool_call", tc_id, tuple(changed), created))

    def _tool_call_chunk(self, update: dict[str, Any]) -> None:
        tc_id = update.get("toolCallId")
        if not isinstance(tc_id, str) or "content" not in update:
            self.diagnose("malformed-update", "content chunk needs `toolCallId` and `content`", update)
            return
        tc = self.tool_calls.get(tc_id)
        created = tc is None
        if created:
            tc = self.tool_calls[tc_id] = ToolCall(tc_id, self._clock())
            self._note("tool_call", tc_id)
        item = update["content"]
        problem = content_problem(item)
        if problem:
            self.diagnose("malformed-content", problem + " (kept as received)", item)
        tc.content.append(item)
        self._ensure_terminals(terminal_refs([item]))
        if self._observers:
            self._emit(Change("tool_call", tc_id, ("content",), created))

    # -- terminals -------------------------------------------------------------------------------
    def _terminal(self, terminal_id: str) -> tuple[Terminal, bool]:
        term = self.terminals.get(terminal_id)
        if term is not None:
            return term, False
        term = self.terminals[terminal_id] = Terminal(terminal_id, self.terminal_output_cap)
        return term, True

    def _ensure_terminals(self, ids: list[str]) -> None:
        for terminal_id in ids:
            _, created = self._terminal(terminal_id)
            if created and self._observers:
                self._emit(Change("terminal", terminal_id, (), True))

    def _terminal_update(self, update: dict[str, Any]) -> None:
        terminal_id = update.get("terminalId")
        if not isinstance(terminal_id, str):
            self.diagnose("malformed-update", "terminal_update without string `terminalId`", update)
            return
        term, created = self._terminal(terminal_id)
        changed = apply_terminal_fields(term, update, self.diagnose)
        if self._observers:
            replaced = "output" in changed
            data = term.output if replaced else None
            self._emit(Change("terminal", terminal_id, tuple(changed), created, data, replaced))

    def _terminal_chunk(self, update: dict[str, Any]) -> None:
        terminal_id = update.get("terminalId")
        if not isinstance(terminal_id, str):
            self.diagnose("malformed-update", "output chunk without string `terminalId`", update)
            return
        data = decode_base64(update.get("data"))
        if data is None:
            self.diagnose("invalid-base64", "terminal output chunk is not valid base64 (skipped)", update)
            return
        self.append_output(terminal_id, data)

    def append_output(self, terminal_id: str, data: bytes) -> None:
        """Append bytes to a terminal (a decoded chunk, or a client-run terminal's output)."""
        term, created = self._terminal(terminal_id)
        term.append(data)
        if self._observers:
            self._emit(Change("terminal", terminal_id, ("output",), created, data))

    # -- client-side file writes (v1 fs/write_text_file) -------------------------------------------
    def record_file_write(self, path: str, old_text: str | None, new_text: str) -> None:
        """Record a file the agent wrote through the client, as a v1-shaped diff."""
        self.file_writes.append({"path": path, "oldText": old_text, "newText": new_text})
        index = len(self.file_writes) - 1
        self._note("file_write", index)
        if self._observers:
            self._emit(Change("file_write", str(index), (), True))


SessionState._handlers = {
    "tool_call_update": SessionState._tool_call,
    "tool_call": SessionState._v1_tool_call,
    "tool_call_content_chunk": SessionState._tool_call_chunk,
    "terminal_update": SessionState._terminal_update,
    "terminal_output_chunk": SessionState._terminal_chunk,
    "user_message_chunk": SessionState._message_chunk,
    "agent_message_chunk": SessionState._message_chunk,
    "agent_thought_chunk": SessionState._message_chunk,
    "user_message": SessionState._message,
    "agent_message": SessionState._message,
    "agent_thought": SessionState._message,
    "state_update": SessionState._state_update,
    "plan_update": SessionState._plan_update,
    "plan": SessionState._v1_plan,
    "available_commands_update": SessionState._session_value,
    "config_option_update": SessionState._session_value,
    "session_info_update": SessionState._session_value,
    "usage_update": SessionState._session_value,
    "current_mode_update": SessionState._session_value,
    "notice": SessionState._notice,
}
