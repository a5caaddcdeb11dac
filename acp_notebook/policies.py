"""Permission policies: who answers the agent's permission requests when a person does not.

A policy looks at a request's *subject* (``protocol.subject``: the tool kind, the paths it
touches, the command it runs — never the title the agent wrote) and gives an answer: an
``optionId`` of the request, ``CANCEL`` (cancel the turn), or ``None`` (no answer: leave it to
the next policy, or to the user). ``a | b`` asks ``a`` first and ``b`` when ``a`` gives no
answer. A policy is a ``permission_handler`` (``session.permission_handler = allow(kinds=[...])``),
a ``prompt_sync(permissions=...)`` value and a ``%%acp --permissions NAME`` value.

- ``allow(kinds=, paths=, commands=, always=False)`` picks the request's own ``allow_once``
  option (``always=True``: ``allow_always``); a request without one gets no answer.
- ``reject(...)`` (same matchers) picks ``reject_once``, else ``reject_always``.
- ``ask()`` never answers: the user clicks (a blocking call, which cannot get a click, cancels).
- ``when_headless(policy)`` answers with ``policy`` only when no view has rendered (nbconvert,
  papermill, CI), so a person at the notebook still gets the buttons.
- named ones (``named("allow-once")``; plain strings work wherever a policy does): see ``NAMES``.

Elicitations (``elicitation/create``: a form or a URL the agent asks the user about) are answered
by ``answer_elicitation(elicitation, state)``: values (a dict: accept), ``"decline"``,
``"cancel"``, or None (leave it). ``decline_elicitations()`` and ``cancel_elicitations()`` answer
every one; ``named("cancel")`` / ``named("decline")`` do too, ``ask()`` never does, and
``when_headless`` and ``a | b`` pass them on; ``allow``/``reject`` and plain functions never answer
one. A policy set as ``session.permission_handler`` also answers elicitations unless
``session.elicitation_handler`` is set, so ``allow(kinds=["read"]) | decline_elicitations()``
covers both.

Matchers: every one given must match (``kinds`` any of; ``paths`` — every path of the request
under one of the roots, ``..`` resolved; ``commands`` — the command's words start with one of the
prefixes). An allow rule never matches a command that chains others (``;``, ``&&``, pipes,
redirections, ``$(...)``), and ``paths=`` alone never allows running a command.
"""

from __future__ import annotations

import asyncio
import inspect
import os
from collections.abc import Callable, Mapping
from typing import Any

from . import frontend
from .protocol.subject import Facts, command_words, facts_of, has_prefix, option_of, under


class _Cancel:
    def __repr__(self) -> str:
        return "CANCEL"


CANCEL: Any = _Cancel()  # an answer: cancel the turn (the request is answered ``cancelled``)
ELICITATION_ANSWERS = {"decline": "decline", "cancel": "cancel", "ask": None}  # by name
ENV = "ACP_AUTO_ANSWER"  # a named policy for every session with no handler (an older alias)
NAMES: dict[str, tuple[str, ...] | None] = {
    "allow-once": ("allow_once",),
    "allow-always": ("allow_always",),
    "reject": ("reject_once", "reject_always"),
    "reject-once": ("reject_once",),
    "reject-always": ("reject_always",),
    "cancel": None,
    "ask": (),
}


class Policy:
    """Base class: ``answer(request, state)`` gives an option id, ``CANCEL`` or ``None``."""

    def answer(self, request: Any, state: Any = None) -> Any:
        """The answer for ``request`` (may be awaitable); ``state`` is the session's state."""
        raise NotImplementedError

    def answer_elicitation(self, elicitation: Any, state: Any = None) -> Any:
        """Values, ``"decline"``, ``"cancel"`` or None (may be awaitable); None unless overridden."""
        return None

    def __call__(self, request: Any) -> Any:
        """As a plain ``permission_handler``: an option id or None (``CANCEL`` reads as None)."""
        return _plain(self.answer(request))

    def __or__(self, other: Any) -> Policy:
        return First([self, as_policy(other)])

    def __ror__(self, other: Any) -> Policy:
        return First([as_policy(other), self])


class Rule(Policy):
    """``allow(...)`` / ``reject(...)``: an option kind for requests whose subject matches."""

    def __init__(self, verdict: str, kinds: Any, paths: Any, commands: Any, always: bool) -> None:
        self.verdict, self.always = verdict, always
        self.kinds = None if kinds is None else frozenset(_strings(kinds, "kinds"))
        self.paths = None if paths is None else tuple(os.path.normpath(p) for p in _strings(paths, "paths"))
        self.commands = None if commands is None else tuple(command_words(c) for c in _listed(commands))
        if verdict == "allow":
            self.option_kinds = ("allow_always",) if always else ("allow_once",)
        else:
            self.option_kinds = ("reject_always",) if always else ("reject_once", "reject_always")

    def matches(self, f: Facts) -> bool:
        """True when every matcher given accepts the facts."""
        if self.kinds is not None and f.kind not in self.kinds:
            return False
        if self.paths is not None:
            if not f.paths or not all(any(under(p, root) for root in self.paths) for p in f.paths):
                return False
            if self.verdict == "allow" and self.commands is None and f.kind == "execute":
                return self.kinds is not None  # paths= alone never allows running a command
        if self.commands is not None:
            if not any(has_prefix(f.command, prefix) for prefix in self.commands):
                return False
            if self.verdict == "allow" and not f.simple_command:
                return False
        return True

    def answer(self, request: Any, state: Any = None) -> Any:
        """The request's own option of this rule's kind when the subject matches."""
        return option_of(request, self.option_kinds) if self.matches(facts_of(request, state)) else None

    def __repr__(self) -> str:
        parts = [f"{k}={sorted(v) if k == 'kinds' else list(v)!r}" for k, v in self._given()]
        if self.always:
            parts.append("always=True")
        return f"{self.verdict}({', '.join(parts)})"

    def _given(self) -> list[tuple[str, Any]]:
        commands = None if self.commands is None else [" ".join(c) for c in self.commands]
        given = (("kinds", self.kinds), ("paths", self.paths), ("commands", commands))
        return [(k, v) for k, v in given if v is not None]


class Named(Policy):
    """A policy by name (``NAMES``); any other string is an option kind or an exact ``optionId``."""

    def __init__(self, name: str) -> None:
        self.name = name

    def answer(self, request: Any, state: Any = None) -> Any:
        """The option the name picks; ``CANCEL`` for ``"cancel"``; None for ``"ask"``."""
        if self.name == "cancel":
            return CANCEL
        if self.name in request.option_ids:
            return self.name
        return option_of(request, NAMES.get(self.name, (self.name,)) or ())

    def answer_elicitation(self, elicitation: Any, state: Any = None) -> Any:
        """``"cancel"`` for ``"cancel"``, ``"decline"`` for ``"decline"``, else None."""
        return ELICITATION_ANSWERS.get(self.name)

    def __repr__(self) -> str:
        return f"named({self.name!r})"


class ElicitationAnswer(Policy):
    """``decline_elicitations()`` / ``cancel_elicitations()``: one answer to every elicitation,
    none to a permission request."""

    def __init__(self, action: str) -> None:
        self.action = action

    def answer(self, request: Any, state: Any = None) -> Any:
        """No answer to a permission request."""
        return None

    def answer_elicitation(self, elicitation: Any, state: Any = None) -> Any:
        """This policy's action."""
        return self.action

    def __repr__(self) -> str:
        return f"{self.action}_elicitations()"


class Function(Policy):
    """A plain function ``request -> option_id | None`` (sync or async) used as a policy."""

    def __init__(self, function: Callable[[Any], Any]) -> None:
        self.function = function

    def answer(self, request: Any, state: Any = None) -> Any:
        """Whatever the function returns."""
        return self.function(request)

    def __repr__(self) -> str:
        return f"Function({getattr(self.function, '__name__', self.function)!r})"


class First(Policy):
    """``a | b | ...``: the first policy that gives a valid answer wins."""

    def __init__(self, parts: list[Policy]) -> None:
        self.parts = [q for p in parts for q in (p.parts if isinstance(p, First) else [p])]

    def answer(self, request: Any, state: Any = None) -> Any:
        """Ask each part in turn; awaits an async part before asking the next."""
        return _first(self.parts, request, state)

    def answer_elicitation(self, elicitation: Any, state: Any = None) -> Any:
        """The first part's answer that is not None."""
        return _first_elicitation(self.parts, elicitation, state)

    def __repr__(self) -> str:
        return " | ".join(map(repr, self.parts))


class WhenHeadless(Policy):
    """``policy`` when no view has rendered (nobody can click), else no answer."""

    def __init__(self, policy: Policy, grace: float | None = None) -> None:
        self.policy, self.grace = policy, grace

    def answer(self, request: Any, state: Any = None) -> Any:
        """Waits (at most ``grace`` s after the first view was shown) to know whether one renders."""
        if frontend.rendered():
            return None
        if frontend.undecided_for(self.grace) > 0:
            return self._later(request, state)
        return self.policy.answer(request, state)

    def answer_elicitation(self, elicitation: Any, state: Any = None) -> Any:
        """The policy's answer when nobody can click, as for a permission request."""
        if frontend.rendered():
            return None
        if frontend.undecided_for(self.grace) > 0:
            return self._later(elicitation, state, self.policy.answer_elicitation)
        return self.policy.answer_elicitation(elicitation, state)

    async def _later(self, request: Any, state: Any, ask: Any = None) -> Any:
        while (left := frontend.undecided_for(self.grace)) > 0:
            await asyncio.sleep(min(left, 0.1))
        ask = ask or self.policy.answer
        return None if frontend.rendered() else await resolve_answer(ask(request, state))

    def __repr__(self) -> str:
        return f"when_headless({self.policy!r})"


def allow(kinds: Any = None, paths: Any = None, commands: Any = None, *, always: bool = False) -> Rule:
    """Allow matching requests with their ``allow_once`` option (``allow_always`` if ``always``)."""
    return Rule("allow", kinds, paths, commands, always)


def reject(kinds: Any = None, paths: Any = None, commands: Any = None, *, always: bool = False) -> Rule:
    """Reject matching requests (``reject_once``, else ``reject_always``; ``always``: the latter)."""
    return Rule("reject", kinds, paths, commands, always)


def ask() -> Policy:
    """Leave every request to the user (in a blocking call: cancel the turn)."""
    return Named("ask")


def decline_elicitations() -> ElicitationAnswer:
    """Decline every elicitation (forms and URLs); no answer to permission requests."""
    return ElicitationAnswer("decline")


def cancel_elicitations() -> ElicitationAnswer:
    """Cancel every elicitation (dismissed without a choice); no answer to permission requests."""
    return ElicitationAnswer("cancel")


def elicitations_named(name: str) -> Policy:
    """``%%acp --elicitations decline|cancel|ask``: the policy of that name."""
    if name not in ELICITATION_ANSWERS:
        raise KeyError(f"no elicitation policy {name!r}: one of {', '.join(ELICITATION_ANSWERS)}")
    return Named(name)


def named(name: str) -> Named:
    """A built-in policy by name: ``allow-once``, ``allow-always``, ``reject``, ``cancel``, ``ask`` ..."""
    return Named(name)


def when_headless(policy: Any, grace: float | None = None) -> Policy:
    """Answer with ``policy`` only in a run nobody watches (no view rendered)."""
    return WhenHeadless(as_policy(policy), grace)


def as_policy(value: Any) -> Policy:
    """A policy from a policy, a name, or a function ``request -> option_id | None``."""
    if isinstance(value, Policy):
        return value
    if isinstance(value, str):
        return Named(value)
    if callable(value):
        return Function(value)
    raise TypeError(f"a permission policy is a policy, a name or a function, not {type(value).__name__}")


def lookup(name: str, namespace: Mapping[str, Any] | None = None) -> Policy:
    """``%%acp --permissions NAME``: a built-in name, else a variable of ``namespace``."""
    if name in NAMES:
        return Named(name)
    value = (namespace or {}).get(name)
    if value is None:
        raise KeyError(f"no permission policy {name!r}: one of {', '.join(NAMES)} or a variable holding one")
    return as_policy(value)


def from_env() -> Policy | None:
    """The policy ``$ACP_AUTO_ANSWER`` names (an older alias), if set."""
    value = os.environ.get(ENV, "").strip()
    return Named(value) if value else None


def valid(request: Any, answer: Any) -> bool:
    """True for ``CANCEL`` or one of the request's option ids."""
    return answer is CANCEL or (isinstance(answer, str) and answer in request.option_ids)


async def resolve_answer(answer: Any) -> Any:
    """Await an answer if it is awaitable."""
    return await answer if inspect.isawaitable(answer) else answer


def _first(parts: list[Policy], request: Any, state: Any) -> Any:
    for index, part in enumerate(parts):
        answer = part.answer(request, state)
        if inspect.isawaitable(answer):
            return _first_async(answer, parts[index + 1 :], request, state)
        if valid(request, answer):
            return answer
    return None


async def _first_async(pending: Any, rest: list[Policy], request: Any, state: Any) -> Any:
    answer = await pending
    return answer if valid(request, answer) else await resolve_answer(_first(rest, request, state))


def _first_elicitation(parts: list[Policy], elicitation: Any, state: Any) -> Any:
    for index, part in enumerate(parts):
        answer = part.answer_elicitation(elicitation, state)
        if inspect.isawaitable(answer):
            return _first_elicitation_async(answer, parts[index + 1 :], elicitation, state)
        if answer is not None:
            return answer
    return None


async def _first_elicitation_async(pending: Any, rest: list[Policy], elicitation: Any, state: Any) -> Any:
    answer = await pending
    if answer is not None:
        return answer
    return await resolve_answer(_first_elicitation(rest, elicitation, state))


def _plain(answer: Any) -> Any:
    if inspect.isawaitable(answer):
        return _plain_async(answer)
    return None if answer is CANCEL else answer


async def _plain_async(answer: Any) -> Any:
    value = await answer
    return None if value is CANCEL else value


def _listed(value: Any) -> list[Any]:
    return [value] if isinstance(value, str) else list(value)


def _strings(value: Any, what: str) -> list[str]:
    items = _listed(value)
    if not all(isinstance(v, str) for v in items):
        raise TypeError(f"{what}= takes strings")
    return items
