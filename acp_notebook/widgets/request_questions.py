"""A question the agent asks while one of our requests waits (``initialize``, ``authenticate``,
``session/new``, ``session/resume``), shown in the cell that awaits it and answered by a click there.

``show(agent, elicitation)`` is the views' ``frontend.on_asked`` hook (``install``): the client runs
it in the awaiting caller's context, so that in a kernel the view is displayed in that cell. The
view is a ``SessionView`` over ``agent.elicitation_state`` (the agent's own desk of request-scoped
elicitations) from this elicitation on, that shows no later item (each question gets its own), with
``AgentQuestions`` as its actions: the agent's desk answers and tells the state. Outside a kernel
(a script) nothing is displayed: ``agent.pending_elicitations`` and ``agent.elicitation_handler``
answer there, and ``headless.starting_notices`` prints a line.
"""

from __future__ import annotations

from typing import Any

from IPython.display import display

from .. import frontend
from .actions import Actions
from .session_view import SessionView


class AgentQuestions(Actions):
    """A view's clicks on an agent's request-scoped elicitations: its desk answers them."""

    def __init__(self, agent: Any) -> None:
        super().__init__(agent.elicitation_state)
        self.agent = agent

    def _elicitation_answered(self, elicitation: Any) -> None:
        """The agent's desk tells the state."""

    def _dismiss(self, key: str) -> bool:
        """A waiting URL card closed by the user: the agent's desk."""
        return bool(self.agent.dismiss_elicitation(key))


def question_view(agent: Any, elicitation: Any) -> Any:
    """The view of one request-scoped elicitation (and nothing after it)."""
    state = agent.elicitation_state
    since = state.timeline.index(("elicitation", elicitation.key))
    method = (elicitation.scope_request or {}).get("method")
    title = f"{_name(agent)} asks while {method} waits" if method else f"{_name(agent)} asks"
    view = SessionView(state, since=since, title=title, actions=AgentQuestions(agent))
    view.stop_following()
    return view


def show(agent: Any, elicitation: Any) -> None:
    """Display the question in the current cell (only in a kernel with a frontend)."""
    if _in_kernel():
        display(question_view(agent, elicitation))


def install() -> None:
    """Register ``show`` as the ``frontend.asked`` hook (once)."""
    frontend.on_asked(show)


def _name(agent: Any) -> str:
    summary = agent.summary() if callable(getattr(agent, "summary", None)) else None
    info = getattr(summary, "agent", summary)
    return getattr(info, "title", None) or getattr(info, "name", None) or "The agent"


def _in_kernel() -> bool:
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None
