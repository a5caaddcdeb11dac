"""The protocol doctor: findings about an agent's behaviour in a trace's entries. Pure, no I/O.

``diagnose(entries)`` walks the entries of the trace format (``protocol.trace``) once, with the
version negotiated by the ``initialize`` answer among them (else the ``version`` given), and
returns ``Findings`` of ``Finding(code, severity, kind, message, index, cite)`` (``findings``):
``index`` is the entry's position in ``entries``, ``cite`` the spec sentence broken (file and
quote, ``doctor_spec``) or the breakage caused. The codes:

violations (``error``)
    ``reserved-value``: a tool call status or kind, a stop reason, a plan entry status or a v2
    session state outside the schema's enum and not ``_``-prefixed. ``cancel-not-cancelled``: a
    turn the client cancelled that ends another way (``end_turn``..., an error, no reason).
    ``unannounced-terminal``: a ``{"type": "terminal"}`` item naming a terminal no
    ``terminal/create`` returned (v1) / no ``terminal_update`` created (v2), once per id.
    ``mixed-version``: a shape of the other version, once per shape and session.
    ``non-json-stdout``: an agent stdout line that is not JSON. ``update-after-turn``: an update
    for a tool call of a cancelled turn after that turn ended, once per tool call. Updates after
    a turn that was not cancelled are not flagged: v1 does not forbid them, and v2 allows
    background activity while ``idle``. ``child-before-announcement``: a request or notification
    of the agent's bearing a child session's id (or naming it as a ``session_message``'s sender
    or recipient) before the ``subagent_update`` that announces it, once per child, at the first
    such entry. ``unannounced-session``: the same for a session id the client never opened and
    no ``subagent_update`` ever announced (``doctor_sessions``). Elicitations
    (``doctor_elicitations``): ``elicitation-mode-not-advertised``, ``elicitation-unknown-request``,
    ``elicitation-id-reused``, ``elicitation-complete-unknown``, ``elicitation-secret-in-form``.
interop hazards (``warning``)
    ``permission-before-tool-call``: a v1 permission for a tool call not announced yet.
    ``line-over-64k``: an agent line over 64 KiB (``findings.line_size``).
    ``elicitation-unknown-tool-call``: an elicitation naming a tool call its session never reports.
    ``permission-empties-card``: a permission whose ``tool_call`` subject empties the ``content``
    or ``rawInput`` its tool call showed (``[]``, ``{}``, v2 ``null``): the card loses what the
    user is asked about (Claude's plan mode), once per tool call.

A cancel crossing the agent's answer on the wire cannot be told from one it ignored; the
finding is still reported (the X-ray shows both times).
"""

from __future__ import annotations

from typing import Any

from . import doctor_spec as spec
from .doctor_elicitations import Elicitations
from .doctor_sessions import Announcements
from .findings import (
    HAZARD,
    Finding,
    Findings,
    as_dict,
    finding,
    key,
    line_size,
    messages,
    negotiated_version,
)

__all__ = ["Finding", "Findings", "diagnose", "negotiated_version"]


def diagnose(entries: list[dict[str, Any]], version: int | None = None) -> Findings:
    """The findings about ``entries``; ``version`` when no ``initialize`` answer is among them."""
    return _Doctor(entries, negotiated_version(entries) or version).run()


class _Session:
    def __init__(self) -> None:
        self.open = False  # a turn (v1) / foreground work (v2) is under way
        self.cancelled: int | None = None  # index of the session/cancel for it
        self.calls: set[str] = set()  # tool calls first seen in this turn
        self.known: set[str] = set()  # tool calls announced so far
        self.shown: dict[str, set[str]] = {}  # tool call -> its fields that show something
        self.ended: dict[str, int] = {}  # tool call of a cancelled turn -> index of its end

    def start(self) -> None:
        if not self.open:
            self.open, self.cancelled, self.calls = True, None, set()

    def end(self, index: int) -> None:
        if self.cancelled is not None:
            self.ended.update(dict.fromkeys(self.calls, index))
        self.open, self.cancelled = False, None


class _Doctor:
    def __init__(self, entries: list[dict[str, Any]], version: int | None) -> None:
        self.entries, self.v = entries, version
        self.other = 3 - version if version in (1, 2) else None
        self.found = Findings()
        self.sessions: dict[str, _Session] = {}
        self.asked: dict[tuple[str, Any], str] = {}  # (who asked, id) -> method
        self.prompts: dict[Any, Any] = {}  # open session/prompt id -> session
        self.announced: set[str] = set()
        self.terminal_output = False  # the client offered `_meta.terminal_output` in initialize
        self.referenced: dict[str, tuple[int, str, dict[str, Any]]] = {}  # id -> first index, call, update
        self.once: dict[tuple[str, str, str], list[Any]] = {}  # (code, sid, what) -> [finding, n]
        self.named = Announcements(lambda i, code, text, cite: self.add(i, code, text, cite))
        self.elicitations = Elicitations(self.add, self.v)

    def run(self) -> Findings:
        for i, entry in enumerate(self.entries):
            if entry.get("dir") == "in":
                self._line(i, entry)
            self.named.entry(i, entry)
            for m in messages(entry):
                (self._agent if entry.get("dir") == "in" else self._client)(i, m)
        self.named.finish()
        self.elicitations.finish(lambda sid: self.session(sid).known)
        how = "created by `terminal/create`" if self.v == 1 else "created by a `terminal_update`"
        for tid, (i, cid, update) in self.referenced.items():
            if tid not in self.announced:
                text = f"tool call {cid!r} shows terminal {tid!r}, never {how}{_extension(update, tid)}"
                self.add(i, "unannounced-terminal", text, spec.TERMINAL[self.v or 2])
        self.found += [f.counted(n) for f, n in self.once.values()]
        self.found.sort(key=lambda f: f.index)
        return self.found

    def add(self, i: int, code: str, message: str, cite: str, kind: str = "violation") -> None:
        self.found.append(finding(i, code, message, cite, kind))

    def add_once(
        self, i: int, code: str, where: tuple[Any, str], message: str, cite: str, kind: str = "violation"
    ) -> None:
        first = finding(i, code, message, cite, kind)
        slot = self.once.setdefault((code, str(where[0]), where[1]), [first, 0])
        slot[1] += 1

    def session(self, sid: Any) -> _Session:
        return self.sessions.setdefault(sid if isinstance(sid, str) else "", _Session())

    def _line(self, i: int, entry: dict[str, Any]) -> None:
        size = line_size(entry)
        if size > spec.LINE_LIMIT:
            text = f"a {size:,}-byte line from the agent (over 64 KiB)"
            self.add(i, "line-over-64k", text, spec.LONG_LINE.format(v=self.v or 1), HAZARD)
        if entry.get("kind") == "stdout":
            text = f"stdout line is not JSON: {str(entry.get('text', ''))[:80]!r}"
            self.add(i, "non-json-stdout", text, spec.STDOUT.format(v=self.v or 1))

    # -- the client's messages: prompts, cancels, answers to the agent's requests ----------------
    def _client(self, i: int, m: dict[str, Any]) -> None:
        method, params = m.get("method"), as_dict(m.get("params"))
        self.elicitations.client(m)
        if method is None:
            asked = self.asked.pop(("in", key(m.get("id"))), None)
            terminal = as_dict(m.get("result")).get("terminalId")
            if asked == "terminal/create" and isinstance(terminal, str):
                self.announced.add(terminal)
            return
        self.named.client_names(method, params.get("sessionId"))
        if "id" in m:
            self.asked[("out", key(m["id"]))] = method
        if method == "initialize":
            caps = as_dict(as_dict(params.get("clientCapabilities")).get("_meta"))
            self.terminal_output = caps.get("terminal_output") is True
        s = self.session(params.get("sessionId"))
        if method == "session/prompt":
            self.prompts[key(m.get("id"))] = params.get("sessionId")
            s.start()
        elif method == "session/cancel" and s.open and s.cancelled is None:
            s.cancelled = i

    # -- the agent's messages ---------------------------------------------------------------------
    def _agent(self, i: int, m: dict[str, Any]) -> None:
        method, params = m.get("method"), as_dict(m.get("params"))
        self.elicitations.agent(i, m)
        if method is None:
            asked = self.asked.pop(("out", key(m.get("id"))), None)
            if asked == "session/prompt":
                self._prompt_answer(i, m, self.prompts.pop(key(m.get("id")), None))
            elif asked == "session/new":
                self.named.created(as_dict(m.get("result")).get("sessionId"))
            return
        if "id" in m:
            self.asked[("in", key(m["id"]))] = method
        sid = params.get("sessionId")
        self.named.agent_names(i, sid)
        if self.other and method in spec.ONLY_METHODS[self.other]:
            text = f"a v{self.v} agent calls `{method}`, a v{self.other} method"
            self.add_once(i, "mixed-version", (sid, method), text, spec.MIXED)
        if method == "session/request_permission":
            subject = as_dict(params.get("subject"))
            call = as_dict(subject.get("toolCall")) if subject.get("type") == "tool_call" else {}
            self._permission(i, as_dict(params.get("toolCall")) or call, sid)
        elif method == "session/update":
            self._update(i, as_dict(params.get("update")), sid)

    def _prompt_answer(self, i: int, m: dict[str, Any], sid: Any) -> None:
        s, result = self.session(sid), as_dict(m.get("result"))
        if self.v == 2:
            if "stopReason" in result:
                text = "a v2 `session/prompt` response carries v1's `stopReason`"
                self.add_once(i, "mixed-version", (sid, "stopReason"), text, spec.MIXED)
            return
        self._reserved(i, "StopReason", result.get("stopReason"), "the prompt response's stopReason")
        if s.cancelled is not None:
            errored = "error" in m
            reason = "an error" if errored else result.get("stopReason")
            self._not_cancelled(i, s, reason, spec.CANCEL_ERROR[1] if errored else spec.CANCEL[1])
        s.end(i)

    def _not_cancelled(self, i: int, s: _Session, reason: Any, cite: str) -> None:
        if reason != "cancelled":
            how = reason if reason == "an error" else f"`{reason}`" if reason else "no stop reason"
            text = f"the turn cancelled at entry {s.cancelled} ended with {how}, not `cancelled`"
            self.add(i, "cancel-not-cancelled", text, cite)

    def _permission(self, i: int, call: dict[str, Any], sid: Any) -> None:
        cid = call.get("toolCallId")
        if self.v != 2 and isinstance(cid, str) and cid not in self.session(sid).known:
            text = f"permission asked for tool call {cid!r} before any update announced it"
            self.add(i, "permission-before-tool-call", text, spec.EARLY_PERMISSION, HAZARD)
        if call:
            self._emptied(i, call, sid, str(cid))
            self._tool_fields(i, call, str(cid))

    def _emptied(self, i: int, call: dict[str, Any], sid: Any, cid: str) -> None:
        s = self.session(sid)
        cleared = [f for f in ("content", "rawInput") if f in call and _empty(call[f], self.v)]
        lost = [f for f in cleared if f in s.shown.get(cid, set())]
        if lost:
            text = f"permission for tool call {cid!r} empties its {' and '.join(f'`{f}`' for f in lost)}"
            self.add_once(i, "permission-empties-card", (sid, cid), text, spec.EMPTIED_CARD, HAZARD)
        self._showing(call, s.shown.setdefault(cid, set()), False)

    def _update(self, i: int, u: dict[str, Any], sid: Any) -> None:
        s, kind = self.session(sid), u.get("sessionUpdate")
        if self.other and kind in spec.ONLY_UPDATES[self.other]:
            text = f"a v{self.v} agent sends `{kind}`, a v{self.other} session update"
            self.add_once(i, "mixed-version", (sid, str(kind)), text, spec.MIXED)
        cid = u.get("toolCallId")
        if kind in spec.TOOL_UPDATES and isinstance(cid, str):
            if cid in s.ended:
                text = f"tool call {cid!r} updated after its cancelled turn ended (entry {s.ended[cid]})"
                self.add_once(i, "update-after-turn", (sid, cid), text, spec.AFTER_TURN[self.v or 1])
            elif s.open and cid not in s.known:
                s.calls.add(cid)
            s.known.add(cid)
            self._showing(u, s.shown.setdefault(cid, set()), kind == "tool_call_content_chunk")
            self._tool_fields(i, u, cid)
        elif kind in ("plan", "plan_update"):
            plan = u.get("entries") if kind == "plan" else as_dict(u.get("plan")).get("entries")
            for entry in plan if isinstance(plan, list) else []:
                self._reserved(i, "PlanEntryStatus", as_dict(entry).get("status"), "a plan entry's status")
        elif kind == "terminal_update" and isinstance(u.get("terminalId"), str):
            self.announced.add(u["terminalId"])
        elif kind == "state_update":
            self._state(i, u, s)
        elif kind == "session_message":
            for field in ("senderSessionId", "recipientSessionId"):
                self.named.agent_names(i, u.get(field))

    def _state(self, i: int, u: dict[str, Any], s: _Session) -> None:
        state = u.get("state")
        self._reserved(i, "SessionState", state, "the state_update's state")
        if state in ("running", "requires_action"):
            s.start()
        if state == "idle":
            self._reserved(i, "StopReason", u.get("stopReason"), "the idle state_update's stopReason")
        if state == "idle" and s.open:
            if s.cancelled is not None:
                self._not_cancelled(i, s, u.get("stopReason"), spec.CANCEL[2])
            s.end(i)

    def _showing(self, u: dict[str, Any], shown: set[str], chunk: bool) -> None:
        """Track which of a tool call's ``content`` and ``rawInput`` show something."""
        if chunk and u.get("content") is not None:
            shown.add("content")
            return
        for name in ("content", "rawInput") if not chunk else ():
            if name in u and not (u[name] is None and self.v == 1):  # v1: null is "unchanged"
                (shown.discard if _empty(u[name], self.v) else shown.add)(name)

    def _tool_fields(self, i: int, u: dict[str, Any], cid: str) -> None:
        self._reserved(i, "ToolCallStatus", u.get("status"), f"tool call {cid!r}'s status")
        self._reserved(i, "ToolKind", u.get("kind"), f"tool call {cid!r}'s kind")
        info = as_dict(as_dict(u.get("_meta")).get("terminal_info"))
        if self.terminal_output and isinstance(info.get("terminal_id"), str):
            self.announced.add(info["terminal_id"])  # the extension the client offered announces it
        content = u.get("content")
        for item in content if isinstance(content, list) else [content]:
            tid = as_dict(item).get("terminalId")
            if as_dict(item).get("type") == "terminal" and isinstance(tid, str):
                self.referenced.setdefault(tid, (i, cid, u))

    def _reserved(self, i: int, name: str, value: Any, where: str) -> None:
        if not isinstance(value, str) or value.startswith("_"):
            return
        if self.v in spec.ENUMS:
            allowed = spec.ENUMS[self.v].get(name)
        else:  # version unknown: only what neither version has
            allowed = spec.ENUMS[1].get(name, frozenset()) | spec.ENUMS[2].get(name, frozenset())
        if allowed is not None and value not in allowed:
            text = f"{where} {value!r} is no {name} value, and custom ones must begin with `_`"
            self.add(i, "reserved-value", text, spec.reserved_cite(self.v if self.v == 1 else 2, name))


def _empty(value: Any, version: int | None) -> bool:
    """Whether a sent ``content``/``rawInput`` clears the field (v1 null means "unchanged")."""
    return value in ([], {}) or (value is None and version != 1)


def _extension(update: dict[str, Any], tid: str) -> str:
    """claude-agent-acp's own terminal extension, named so the finding explains itself."""
    info = as_dict(as_dict(update.get("_meta")).get("terminal_info"))
    if info.get("terminal_id") != tid:
        return ""
    return " (announced only by the `_meta.terminal_info` extension, which this client did not offer)"
