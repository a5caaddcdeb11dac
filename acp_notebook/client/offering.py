"""Who is offered each new question of the agent's: one handler slot, shared by the desks.

A desk (permissions, elicitations) holds one ``Offering``: the handler as set (a name becomes a
policy), a stand-in that goes first for a while (a blocking call, a turn's ``%%acp`` option),
and the fallbacks the desk names (a policy elsewhere, ``$ACP_AUTO_ANSWER``). ``offer`` hands a
question to the first of them that is set, once per question key, as its own task — the reader
never waits for an answer. The desk says what running a handler means (``run``).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

from .. import policies

Run = Callable[[Any, Any], Awaitable[None]]  # (question, handler) -> the handler's answer given


class Offering:
    """A handler, a stand-in and fallbacks; each question offered to the first set, once."""

    def __init__(self, run: Run, fallbacks: Callable[[], tuple[Any, ...]] = tuple) -> None:
        self._run, self._fallbacks = run, fallbacks
        self.handler: Any = None
        self._stand_in: Any = None
        self._offered: set[str] = set()
        self._tasks: set[asyncio.Task] = set()

    def set(self, handler: Any) -> None:
        """Set the handler (a policy name becomes that policy)."""
        self.handler = policies.as_policy(handler) if isinstance(handler, str) else handler

    @contextlib.contextmanager
    def standing_in(self, handler: Any, again: bool = False) -> Iterator[None]:
        """While the body runs, ``handler`` goes first; ``again``: questions already offered may be
        offered once more (to it)."""
        previous, self._stand_in = self._stand_in, handler
        if again:
            self._offered.clear()
        try:
            yield
        finally:
            self._stand_in = previous

    def offer(self, question: Any) -> None:
        """Run the first handler set on ``question`` as its own task (once per question key)."""
        candidates = (self._stand_in, self.handler, *self._fallbacks(), policies.from_env())
        handler = next((h for h in candidates if h is not None), None)
        if handler is None or question.key in self._offered:
            return
        self._offered.add(question.key)
        task = asyncio.get_running_loop().create_task(self._run(question, handler))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
