"""Is anyone looking? A kernel-wide record of whether a session view has rendered; and where a
question asked while one of our requests waits is shown.

A view's browser side sends ``{"type": "rendered"}`` once, when the page renders it; ``SessionView``
calls ``mark_rendered``. A run with no frontend (nbconvert, papermill, nbclient, a script) never
does, so its permission requests cannot be clicked: ``headless()`` says so, once a view has had
``GRACE`` seconds to render (or at once when no view was ever shown).

``asked(agent, elicitation, context)``: the client tells of an elicitation scoped to one of its
pending requests (``initialize``, ``session/new`` …); the hooks registered with ``on_asked`` (the
views': ``widgets.request_questions``) run in ``context``, the awaiting caller's (in a kernel, its
cell's: output goes there). A hook that raises is reported once per call as a warning, never to
the client.
"""

from __future__ import annotations

import contextvars
import time
import warnings
from collections.abc import Callable
from typing import Any

AskedHook = Callable[[Any, Any], None]  # (agent, elicitation)
_asked_hooks: list[AskedHook] = []

GRACE = 6.0  # s a shown view may take to render before the run counts as headless

_state = {"rendered": False, "first_shown": None}


def mark_shown() -> None:
    """A view was created (it may render soon)."""
    if _state["first_shown"] is None:
        _state["first_shown"] = time.monotonic()


def mark_rendered() -> None:
    """A view told the kernel it rendered: a person can see and click."""
    _state["rendered"] = True


def rendered() -> bool:
    """True once any view of this kernel has rendered."""
    return bool(_state["rendered"])


def undecided_for(grace: float | None = None) -> float:
    """Seconds left before a shown, unrendered view makes the run count as headless (0: decided)."""
    grace = GRACE if grace is None else grace
    first = _state["first_shown"]
    if _state["rendered"] or first is None:
        return 0.0
    return max(0.0, first + grace - time.monotonic())


def headless(grace: float | None = None) -> bool:
    """True when no view has rendered and none can still be expected to (see ``GRACE``)."""
    return not _state["rendered"] and undecided_for(grace) == 0.0


def on_asked(hook: AskedHook) -> None:
    """Register ``hook(agent, elicitation)`` for request-scoped elicitations (once per hook)."""
    if hook not in _asked_hooks:
        _asked_hooks.append(hook)


def asked(agent: Any, elicitation: Any, context: contextvars.Context | None = None) -> None:
    """Run the registered hooks for a request-scoped elicitation, in ``context`` when given."""
    for hook in list(_asked_hooks):
        try:
            (context or contextvars.copy_context()).run(hook, agent, elicitation)
        except Exception as exc:
            warnings.warn(f"acp: showing {getattr(elicitation, 'key', '?')} failed: {exc!r}", stacklevel=2)


def reset() -> None:
    """Forget what was seen (tests)."""
    _state.update(rendered=False, first_shown=None)
