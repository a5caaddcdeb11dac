"""Serving ``elicitation/create``: record at once, answer later, never block the reader.

The elicitation desk is the permission desk's twin (``permissions``): every elicitation goes
into a state (``pending_elicitations``) the moment it arrives, and an ``elicitation_handler(e)``
(sync or async) runs as its own task — it returns values (a dict: ``accept``), ``"decline"``,
``"cancel"``, or None (left to the user, with a diagnostic; so are an answer that does not
validate and a handler that raises). With no handler of its own, a policy set as the permission
handler answers (``Policy.answer_elicitation``: ``decline_elicitations()``, ``when_headless``,
``named("cancel")`` …), else ``$ACP_AUTO_ANSWER``. The answer is sent (``respond``), logged in the
decision log (who, when, action, values; a URL only as ``scheme://host/path``), and the state
tells its observers. A URL accepted by anyone but a click (``by="user"``) opens nothing: its URL
is printed once for the user to open.

Nothing is left unanswered: ``cancel_request`` answers ``cancel`` to one the agent withdrew
(``$/cancel_request``), ``cancel_all`` answers every pending one ``cancel`` (the session closes),
``withdraw_all`` ends them with nothing sent (the agent is gone). Cancelling a turn answers none:
scope alone does not tie an elicitation to a turn. ``complete(elicitation_id)`` is the agent's
``elicitation/complete`` (unknown or repeated ids change nothing).
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import sys
from collections.abc import Callable, Iterator
from typing import Any

from .. import policies
from ..protocol.elicitation import Elicitation
from ..protocol.jsonrpc import INVALID_PARAMS, Request
from ..protocol.state import SessionState
from .errors import RpcError
from .offering import Offering
from .permission_memory import PermissionLog

ElicitationHandler = Callable[[Elicitation], Any]  # -> values | "decline" | "cancel" | None (or awaitable)
ANSWERS = ("decline", "cancel")


def show_url(elicitation: Elicitation) -> None:
    """Print an accepted URL for the user to open (code accepted it: nothing is opened)."""
    print(
        f"acp: {elicitation.key} accepted; open this URL yourself to continue "
        f"(nothing was opened): {elicitation.url}",
        file=sys.stdout,
        flush=True,
    )


def unshown(elicitation: Elicitation) -> None:
    """Print nothing for an accepted URL (a replay's client: the user is not being asked)."""


class ElicitationDesk:
    """The elicitations of one session (its subagents' too), or an agent's request-scoped ones."""

    def __init__(
        self,
        state: SessionState,
        respond: Callable[[Any, Any], None],
        modes: tuple[str, ...],
        log: PermissionLog,
        *,
        fallback: Callable[[], Any] = lambda: None,
        note_decider: Callable[[Any, str], None] | None = None,
        url_shown: Callable[[Elicitation], None] = show_url,
    ) -> None:
        self.state, self._respond, self.modes, self.log = state, respond, modes, log
        self._fallback = fallback  # the permission handler: a policy there answers elicitations too
        self._note_decider = note_decider  # the trace records who answered (replays show it)
        self.url_shown = url_shown  # what an accept by anyone but a click does with the URL
        self._offering = Offering(self._run, lambda: (_policy(self._fallback()),))
        self._count = 0
        self._by_request_id: dict[Any, Elicitation] = {}

    @property
    def handler(self) -> ElicitationHandler | None:
        """The handler run for each elicitation; setting one also offers it the pending ones."""
        return self._offering.handler

    @handler.setter
    def handler(self, handler: ElicitationHandler | str | None) -> None:
        self._offering.set(handler)
        for elicitation in self.pending():
            self._offer(elicitation)

    def pending(self) -> list[Elicitation]:
        """Every elicitation still waiting, in arrival order."""
        return self.state.pending_elicitations

    @contextlib.contextmanager
    def standing_in(self, handler: ElicitationHandler) -> Iterator[None]:
        """While the body runs, ``handler`` is asked first (a blocked cell), then the handler as
        set; the pending ones are offered to it at once."""
        with self._offering.standing_in(handler, again=True):
            for elicitation in self.pending():
                self._offer(elicitation)
            yield

    # -- intake -----------------------------------------------------------------------------------
    def receive(self, request: Request, scope_request: dict[str, Any] | None = None) -> Elicitation:
        """Take an incoming ``elicitation/create`` (checked by the caller): record it, start the
        handler; the answer comes later."""
        params = request.params if isinstance(request.params, dict) else {}
        if params.get("mode") == "url" and self._waiting_id(params.get("elicitationId")):
            message = f"elicitationId {params.get('elicitationId')!r} is already outstanding"
            raise RpcError(INVALID_PARAMS, message)
        self._count += 1
        elicitation = Elicitation(
            f"elic_{self._count}", request.id, params, scope_request=scope_request, on_answer=self._send
        )
        self._by_request_id[request.id] = elicitation
        self.state.add_elicitation(elicitation)
        self._offer(elicitation)
        return elicitation

    def _waiting_id(self, elicitation_id: Any) -> bool:
        return any(
            e.elicitation_id == elicitation_id and e.mode == "url" and e.status in ("pending", "waiting")
            for e in self.state.elicitations.values()
        )

    def cancel_request(self, request_id: Any) -> bool:
        """Answer ``cancel`` to the pending elicitation the agent withdrew (``$/cancel_request``)."""
        elicitation = self._by_request_id.get(request_id)
        if elicitation is None or not elicitation.pending:
            return False
        elicitation.cancel(by="withdrawn")
        return True

    def complete(self, elicitation_id: str) -> bool:
        """``elicitation/complete``: the accepted URL elicitation with this id is done; False if
        none waits for it (unknown, not accepted, or already completed)."""
        for elicitation in self.state.elicitations.values():
            if elicitation.elicitation_id == elicitation_id and elicitation.complete():
                self.state.elicitation_changed(elicitation, ("completed",))
                return True
        return False

    def dismiss(self, key: str) -> bool:
        """The user closed a URL card waiting for the agent; False if it was not waiting."""
        elicitation = self.state.elicitations.get(key)
        if elicitation is None or not elicitation.dismiss():
            return False
        self.state.elicitation_changed(elicitation, ("dismissed",))
        return True

    def cancel_all(self, by: str) -> int:
        """Answer every pending elicitation ``cancel`` (the session closes); how many."""
        pending = self.pending()
        for elicitation in pending:
            elicitation.cancel(by=by)
        return len(pending)

    def withdraw_all(self, reason: str, by: str) -> int:
        """The agent is gone: end every pending elicitation ``cancel``, sending nothing; how many."""
        count = 0
        for elicitation in self.pending():
            if elicitation.withdraw(reason, by=by):
                self._by_request_id.pop(elicitation.request_id, None)
                self._answered(elicitation)
                count += 1
        return count

    # -- answering --------------------------------------------------------------------------------
    def _send(self, elicitation: Elicitation, outcome: dict[str, Any]) -> None:
        """``on_answer``: send first (raises, leaving it pending, if it cannot); observers and the
        log hear of it just after the outcome is recorded."""
        if self._note_decider is not None and elicitation.decided_by:
            self._note_decider(elicitation.request_id, elicitation.decided_by)
        self._respond(elicitation.request_id, outcome)
        self._by_request_id.pop(elicitation.request_id, None)
        if (
            elicitation.mode == "url"
            and outcome.get("action") == "accept"
            and elicitation.decided_by != "user"
        ):
            self.url_shown(elicitation)
        asyncio.get_running_loop().call_soon(self._answered, elicitation)

    def _answered(self, elicitation: Elicitation) -> None:
        self.log.record_elicitation(elicitation)
        self.state.elicitation_changed(elicitation)

    def _offer(self, elicitation: Elicitation) -> None:
        self._offering.offer(elicitation)

    async def _run(self, elicitation: Elicitation, handler: ElicitationHandler) -> None:
        is_policy = isinstance(handler, policies.Policy)
        try:
            answer = (
                handler.answer_elicitation(elicitation, self.state) if is_policy else handler(elicitation)
            )
            if inspect.isawaitable(answer):
                answer = await answer
        except Exception as exc:
            self._note("elicitation-handler-error", f"elicitation handler raised {exc!r}", elicitation)
            return
        if elicitation.pending:
            self.answer(elicitation, answer, "policy" if is_policy else "handler")

    def answer(self, elicitation: Elicitation, answer: Any, by: str) -> bool:
        """Give a handler's or a policy's ``answer`` (values, ``"decline"``, ``"cancel"``, None);
        True if it was sent, else a diagnostic says why it stays pending."""
        if answer is None:
            self._note("elicitation-unanswered", "the handler gave no answer", elicitation, "info")
        elif answer in ANSWERS:
            getattr(elicitation, answer)(by=by)
            return True
        elif isinstance(answer, dict) or (answer == "accept" and elicitation.mode == "url"):
            try:
                elicitation.accept(answer if isinstance(answer, dict) else None, by=by)
            except ValueError as exc:
                self._note("elicitation-invalid-answer", str(exc), elicitation)
                return False
            return True
        else:
            self._note("elicitation-unknown-answer", f"the handler answered {answer!r}", elicitation)
        return False

    def _note(self, code: str, text: str, elicitation: Elicitation, level: str = "warning") -> None:
        self.state.diagnose(code, f"{text}; {elicitation.key} left pending", level=level)


def _policy(handler: Any) -> Any:
    """The permission handler when it is a policy (it may answer elicitations), else None."""
    return handler if isinstance(handler, policies.Policy) else None
