"""Answering permission requests without a person: the ``permissions=`` of blocking calls.

A cell blocked in ``prompt_sync`` can never receive a click, so every request that arrives while
it blocks is answered here — first by the session's own ``permission_handler`` if it gives a valid
option, else by the policy:

- ``"cancel"`` (the default): cancel the turn (``session/cancel``; the request is answered
  ``cancelled``) and say how to answer instead;
- ``"reject"`` / ``"allow-once"`` / ``"allow-always"``: the first option of that kind
  (``reject`` takes ``reject_once``, else ``reject_always``); an option kind such as
  ``"allow_once"`` or an exact ``optionId`` works too;
- a callable ``policy(request) -> option_id | None`` (may be async); ``None`` cancels.

When the policy names nothing the request offers, the turn is cancelled, with a message.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from typing import Any

DEFAULT = "cancel"
KINDS: dict[str, tuple[str, ...]] = {
    "reject": ("reject_once", "reject_always"),
    "allow-once": ("allow_once",),
    "allow-always": ("allow_always",),
}
HINT = (
    "a blocked cell cannot receive a click, so {what}. Answer from code with "
    "prompt_sync(..., permissions='allow-once' | 'reject' | a function), or use "
    "`await session.prompt(...)` / `%%acp` and click."
)


def check(policy: Any) -> Any:
    """Validate a ``permissions=`` value (None means the default, ``"cancel"``)."""
    if policy is None:
        return DEFAULT
    if callable(policy) or isinstance(policy, str):
        return policy
    raise TypeError(f"permissions= takes a string or a function, not {type(policy).__name__}")


def option_for(request: Any, policy: str) -> str | None:
    """The ``optionId`` a string policy picks for ``request``; None if it picks nothing."""
    options = [o for o in request.options if isinstance(o, dict)]
    if policy in request.option_ids:
        return policy
    for kind in KINDS.get(policy, (policy,)):
        for option in options:
            if option.get("kind") == kind and option.get("optionId") in request.option_ids:
                return option["optionId"]
    return None


HANDLER_TIMEOUT = 10.0  # s an async handler may take while a cell blocks (no click can reach it)


async def decide(request: Any, policy: Any, handler: Callable | None, notes: list[str]) -> str | None:
    """The option to select: the session's handler first, then the policy; None means cancel.

    An async handler gets ``HANDLER_TIMEOUT`` seconds: one waiting for a button click would wait
    forever, since a blocked cell never receives the click.
    """
    for source in (handler, policy if callable(policy) else None):
        if source is None:
            continue
        try:
            choice = source(request)
            if inspect.isawaitable(choice):
                choice = await asyncio.wait_for(choice, HANDLER_TIMEOUT)
        except TimeoutError:
            notes.append(f"acp: the permission handler gave no answer within {HANDLER_TIMEOUT:g} s")
            continue
        except Exception as exc:
            notes.append(f"acp: the permission handler raised {exc!r}")
            continue
        if choice in request.option_ids:
            return choice
    if isinstance(policy, str) and policy != DEFAULT:
        return option_for(request, policy)
    return None


def cancelled_note(request: Any, policy: Any) -> str:
    """Why the turn was cancelled, and what to do instead."""
    if policy == DEFAULT or callable(policy):
        what = "the turn was cancelled"
    else:
        what = f"the turn was cancelled (permissions={policy!r} matches none of {request.option_ids})"
    return f"acp: the agent asked {request.title!r}, but " + HINT.format(what=what)
