"""Answering permission requests without a person: the ``permissions=`` of blocking calls.

A cell blocked in ``prompt_sync`` can never receive a click, so every request that arrives while
it blocks is answered here — first by the session's own ``permission_handler`` if it gives a valid
option, else by ``permissions=``, any policy of ``acp_notebook.policies`` (the one home of
policies; this module only adapts them to a blocked cell):

- ``"cancel"`` (the default, also what ``ask()`` means here): cancel the turn (``session/cancel``;
  the request is answered ``cancelled``) and say how to answer instead;
- ``"reject"`` / ``"allow-once"`` / ``"allow-always"`` (named policies): the first option of that
  kind (``reject`` takes ``reject_once``, else ``reject_always``); an option kind such as
  ``"allow_once"`` or an exact ``optionId`` works too;
- ``allow(kinds=...)``, ``reject(...)``, ``a | b``, or a callable ``policy(request) -> option_id |
  None`` (may be async); no answer cancels.

When the policy names nothing the request offers, the turn is cancelled, with a message.
Elicitations that arrive meanwhile are answered the same way — the session's
``elicitation_handler``, then the policy's ``answer_elicitation`` — and otherwise ``cancel``
(that elicitation only: the turn goes on), with a message.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import AsyncIterator, Callable
from typing import Any

from .. import policies

DEFAULT = "cancel"
KINDS: dict[str, tuple[str, ...]] = {k: v for k, v in policies.NAMES.items() if v}
HINT = (
    "a blocked cell cannot receive a click, so {what}. Answer from code with "
    "prompt_sync(..., permissions='allow-once' | 'reject' | acp_notebook.policies.allow(kinds=[...]) "
    "| a function), or use `await session.prompt(...)` / `%%acp` and click."
)


def check(policy: Any) -> Any:
    """Validate a ``permissions=`` value (None means the default, ``"cancel"``)."""
    if policy is None:
        return DEFAULT
    if isinstance(policy, policies.Policy | str) or callable(policy):
        return policy
    raise TypeError(f"permissions= takes a policy, a string or a function, not {type(policy).__name__}")


HANDLER_TIMEOUT = 10.0  # s an async handler may take while a cell blocks (no click can reach it)


async def decide(
    request: Any, policy: Any, handler: Callable | None, notes: list[str], state: Any = None
) -> str | None:
    """The option to select: the session's handler first, then the policy; None means cancel."""
    choice, _who = await decide_by(request, policy, handler, notes, state)
    return choice


async def decide_by(
    request: Any, policy: Any, handler: Callable | None, notes: list[str], state: Any = None
) -> tuple[str | None, str]:
    """``decide``, also saying who decided (``"handler"`` or ``"policy"``).

    An async handler gets ``HANDLER_TIMEOUT`` seconds: one waiting for a button click would wait
    forever, since a blocked cell never receives the click.
    """

    def ask(source: Any) -> Any:
        return source.answer(request, state) if isinstance(source, policies.Policy) else source(request)

    async for choice, who in _answers(handler, policy, ask, notes, "permission"):
        if choice is policies.CANCEL:
            return None, who
        if choice in request.option_ids:
            return choice, who
    return None, "policy"


async def decide_elicitation(
    elicitation: Any, policy: Any, handler: Callable | None, notes: list[str], state: Any = None
) -> tuple[Any, str]:
    """The answer to an elicitation in a blocked cell (values, "decline" or "cancel") and who gave
    it: the session's handler, then the policy, else ``"cancel"``."""

    def ask(source: Any) -> Any:
        is_policy = isinstance(source, policies.Policy)
        return source.answer_elicitation(elicitation, state) if is_policy else source(elicitation)

    async for answer, who in _answers(handler, policy, ask, notes, "elicitation"):
        if answer is not None:
            return answer, who
    notes.append(
        f"acp: the agent asked {elicitation.message!r} ({elicitation.key}), but a blocked cell cannot show "
        "it, so it was answered `cancel`. Answer from code with session.elicitation_handler = a function "
        "returning values, 'decline' or 'cancel', or use `await session.prompt(...)` / `%%acp` and click."
    )
    return "cancel", "policy"


async def _answers(
    handler: Callable | None, policy: Any, ask: Callable[[Any], Any], notes: list[str], what: str
) -> AsyncIterator[tuple[Any, str]]:
    """Each answer in turn — the session's handler's, then the policy's — with who gave it; a
    source that raises or takes longer than ``HANDLER_TIMEOUT`` is skipped, with a note."""
    sources = [(handler, "policy" if isinstance(handler, policies.Policy) else "handler")]
    sources.append((policies.as_policy(policy), "policy"))
    for source, who in sources:
        if source is None:
            continue
        try:
            answer = ask(source)
            if inspect.isawaitable(answer):
                answer = await asyncio.wait_for(answer, HANDLER_TIMEOUT)
        except TimeoutError:
            notes.append(f"acp: the {what} handler gave no answer within {HANDLER_TIMEOUT:g} s")
            continue
        except Exception as exc:
            notes.append(f"acp: the {what} handler raised {exc!r}")
            continue
        yield answer, who


def cancelled_note(request: Any, policy: Any) -> str:
    """Why the turn was cancelled, and what to do instead."""
    if policy == DEFAULT or not isinstance(policy, str):
        what = "the turn was cancelled"
    else:
        what = f"the turn was cancelled (permissions={policy!r} matches none of {request.option_ids})"
    return f"acp: the agent asked {request.title!r}, but " + HINT.format(what=what)
