"""Serving `session/request_permission`: record at once, answer later, never block the reader.

Every request goes into the session state (``pending_permissions``) the moment it arrives. A
``permission_handler(request) -> option_id | None`` (sync or async) runs as its own task, and
setting one offers it the requests already pending. A handler returning None, raising, or naming
an unknown option leaves the request pending, with a diagnostic. A policy (``acp_notebook.policies``)
is a handler that also sees the session state and may answer ``CANCEL`` (cancel the turn); with no
handler, ``$ACP_AUTO_ANSWER`` names one. Before any handler, remembered decisions
(``permission_memory``) answer what the user already answered "always". ``select``/``cancel`` on
the request send the response (through ``respond``); then the answer is logged, a user's
``*_always`` answer is remembered, and the state tells its observers. When the agent is gone,
``withdraw_all`` ends every pending request ``cancelled`` with nothing sent; answering one then
raises ``PermissionTooLate``.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
from collections.abc import Awaitable, Callable
from typing import Any

from .. import policies
from ..protocol.jsonrpc import Request
from ..protocol.permission import PermissionRequest
from ..protocol.state import SessionState
from ..protocol.turn import Turn
from .offering import Offering
from .permission_memory import ALWAYS, PermissionLog, PermissionRules, learn

PermissionHandler = Callable[[PermissionRequest], "str | Awaitable[str | None] | None"]
MakeRequest = Callable[[str, Request, Any], PermissionRequest]


class PermissionDesk:
    """The permission requests of one session: intake, handler tasks, answers."""

    def __init__(
        self,
        state: SessionState,
        make: MakeRequest,
        respond: Callable[[Any, Any], None],
        *,
        note_unannounced: bool = False,
        cancel_turn: Callable[[], Awaitable[None]] | None = None,
        note_decider: Callable[[Any, str], None] | None = None,
    ) -> None:
        self.state, self._make, self._respond = state, make, respond
        self._note_decider = note_decider  # the trace records who answered (replays show it)
        self._local: dict[str, asyncio.Future] = {}  # the client's own questions (``ask``)
        self._cancel_turn = cancel_turn
        self.rules = PermissionRules()
        self.log = PermissionLog()
        self._note_unannounced = note_unannounced  # v1: a tool call is announced before it is asked
        self._offering = Offering(self._run_handler)  # the handler, a stand-in, $ACP_AUTO_ANSWER
        self._count = 0
        self._by_request_id: dict[Any, PermissionRequest] = {}
        self._used: dict[str, Any] = {}  # request key -> the remembered rule that answered it
        self._subjects: dict[str, SessionState] = {}  # key -> a subagent's state holding its tool call

    @property
    def handler(self) -> PermissionHandler | None:
        """The handler run for each request; setting one also offers it the pending requests."""
        return self._offering.handler

    @handler.setter
    def handler(self, handler: PermissionHandler | str | None) -> None:
        self._offering.set(handler)
        for perm in self.pending():
            self._offer(perm)

    def pending(self) -> list[PermissionRequest]:
        """Every request still waiting, in arrival order: the session's own and its subagents'."""
        return self.state.pending_permissions

    def _state_of(self, perm: PermissionRequest) -> SessionState:
        """The state holding the request's tool call (a subagent's, or the session's)."""
        return self._subjects.get(perm.key, self.state)

    def standing_in(self, handler: PermissionHandler) -> contextlib.AbstractContextManager[None]:
        """While the body runs, ``handler`` is offered new requests in the handler's place (a
        blocking call answers them: its cell receives no click); ``handler`` stays as set."""
        return self._offering.standing_in(handler)

    def receive(
        self, request: Request, turn: Turn | None, subject_home: SessionState | None = None
    ) -> PermissionRequest:
        """Take an incoming request: record it, start the handler; the answer comes later. A
        subagent's request is recorded here too (its card, its answer) while its tool call subject
        goes to ``subject_home``, the child's state."""
        self._count += 1
        perm = self._make(f"perm_{self._count}", request, self._send_answer)
        self._by_request_id[request.id] = perm
        home = subject_home if subject_home is not None else self.state
        if subject_home is not None:
            self._subjects[perm.key] = subject_home
        unknown = perm.tool_call_id is not None and perm.tool_call_id not in home.tool_calls
        if unknown and self._note_unannounced:
            home.diagnose(
                "permission-unknown-tool-call",
                f"{perm.key} concerns unknown {perm.tool_call_id!r}",
                level="info",
            )
        if subject_home is not None:
            subject_home.apply_permission_subject(perm)
        self.state.add_permission(perm, subject=subject_home is None)
        if turn is not None and perm.tool_call_id is not None:
            turn.saw_tool_call(perm.tool_call_id)
        if turn is not None and turn.cancel_requested and not turn.ended:
            perm.cancel(by="cancel")  # the active work was cancelled: the protocol requires `cancelled`
        elif not self._remembered(perm):
            self._offer(perm)
        return perm

    def ask(self, params: dict[str, Any]) -> PermissionRequest:
        """A question of the client's own (no agent request behind it, v2-shaped ``params``): the
        same buttons, handler, memory and log; ``wait`` for its answer."""
        self._count += 1
        perm = PermissionRequest(f"perm_{self._count}", None, params, 2, on_answer=self._local_answer)
        self._local[perm.key] = asyncio.get_running_loop().create_future()
        self.state.add_permission(perm)
        if not self._remembered(perm):
            self._offer(perm)
        return perm

    async def wait(self, perm: PermissionRequest) -> None:
        """Until ``perm`` (from ``ask``) is answered."""
        future = self._local.get(perm.key)
        if future is not None and perm.pending:
            await asyncio.shield(future)

    def _local_answer(self, perm: PermissionRequest, outcome: dict[str, Any]) -> None:
        """``on_answer`` of a client question: nothing to send; observers hear of it just after."""
        future = self._local.pop(perm.key, None)
        loop = asyncio.get_running_loop()
        loop.call_soon(self._answered, perm)
        if future is not None and not future.done():
            loop.call_soon(future.set_result, None)

    def cancel_request(self, request_id: Any) -> bool:
        """Answer ``cancelled`` to the pending request the agent withdrew (``$/cancel_request``)."""
        perm = self._by_request_id.get(request_id)
        if perm is None or not perm.pending:
            return False
        perm.cancel(by="cancel")
        return True

    def cancel_all(self, spared: frozenset[str] = frozenset()) -> None:
        """Answer ``cancelled`` every pending request (the turn was cancelled) but those of the
        subagent sessions in ``spared`` (background ones and theirs keep working)."""
        for perm in self.pending():
            if perm.session_id not in spared:
                perm.cancel(by="cancel")

    def withdraw_all(self, reason: str, by: str) -> int:
        """The agent is gone: end every pending request ``cancelled``, sending nothing; how many."""
        count = 0
        for perm in self.pending():
            if perm.withdraw(reason, by=by):
                self._by_request_id.pop(perm.request_id, None)
                future = self._local.pop(perm.key, None)
                if future is not None and not future.done():
                    future.set_result(None)
                self._answered(perm)
                count += 1
        return count

    def _send_answer(self, perm: PermissionRequest, outcome: dict[str, Any]) -> None:
        """``on_answer``: send first (it raises, leaving the request pending, if it cannot); the
        request records its outcome after this returns, so observers hear of it just after."""
        if self._note_decider is not None and perm.decided_by:
            self._note_decider(perm.request_id, perm.decided_by)
        self._respond(perm.request_id, {"outcome": outcome})
        self._by_request_id.pop(perm.request_id, None)
        asyncio.get_running_loop().call_soon(self._answered, perm)

    def _answered(self, perm: PermissionRequest) -> None:
        """Log the answer; remember a user's ``*_always`` one; tell the state's observers."""
        entry = self.log.record(perm, self._used.pop(perm.key, None))
        if entry.who == "user" and entry.option_kind:
            rule = learn(perm.key, policies.facts_of(perm, self._state_of(perm)), entry.option_kind)
            if rule is not None:
                self.rules.add(rule)
                for other in self.pending():
                    self._remembered(other)
        self.state.permission_answered(perm)

    def _remembered(self, perm: PermissionRequest) -> bool:
        """Answer ``perm`` from a remembered decision, if one matches; True if it did."""
        rule = self.rules.find(policies.facts_of(perm, self._state_of(perm))) if self.rules else None
        choice = policies.option_of(perm, ALWAYS[rule.decision]) if rule is not None else None
        if choice is None or not perm.pending:
            return False
        self._used[perm.key] = rule
        perm.select(choice, by="memory")
        return True

    def _offer(self, perm: PermissionRequest) -> None:
        self._offering.offer(perm)

    async def _run_handler(self, perm: PermissionRequest, handler: PermissionHandler) -> None:
        diagnose = self.state.diagnose
        is_policy = isinstance(handler, policies.Policy)
        try:
            choice = handler.answer(perm, self._state_of(perm)) if is_policy else handler(perm)
            if inspect.isawaitable(choice):
                choice = await choice
        except Exception as exc:
            diagnose(
                "permission-handler-error", f"permission handler raised {exc!r}; {perm.key} left pending"
            )
            return
        if not perm.pending:
            return
        if choice is None:
            diagnose(
                "permission-unanswered", f"handler gave no answer; {perm.key} left pending", level="info"
            )
        elif choice is policies.CANCEL and is_policy:
            perm.cancel(by="policy")
            if self._cancel_turn is not None:
                await self._cancel_turn()
        elif choice not in perm.option_ids:
            diagnose("permission-unknown-option", f"handler chose unknown option {choice!r}; left pending")
        else:
            perm.select(choice, by="policy" if is_policy else "handler")
