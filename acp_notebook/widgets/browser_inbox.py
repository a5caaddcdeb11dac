"""What a view does with a message from its page: resync, rendered, stderr lines, clicks, keys.

A function of the view (no state of its own), which it reads through ``Page``; the features a view
attaches (X-ray, revert bar) answer their own messages before these. A replay or a pinned past
state is read-only: its clicks and keys are dropped. Terminal keystrokes and sizes are checked
(``inbound``) and only reach an interactive terminal of this view; a failure is a diagnostic that
never quotes them.
"""

from __future__ import annotations

from typing import Any, Protocol

from .. import frontend
from ..client.registry import agent_of
from ..protocol.state import SessionState
from . import inbound, review_entry


class Page(Protocol):
    """What the inbox reads of a view (``SessionView`` is one)."""

    state: SessionState
    session: Any
    actions: Any

    @property
    def read_only(self) -> bool: ...

    @property
    def terminal_ids(self) -> dict[str, None]: ...

    def flush_full(self) -> int: ...

    def send(self, content: Any, buffers: Any = None) -> None: ...

    def whole_entry(self, view_key: str) -> dict[str, Any] | None: ...


def dispatch(view: Page, content: Any) -> None:
    """Handle one message from the view's page."""
    if not isinstance(content, dict):
        return
    kind = content.get("type")
    if kind == "resync":
        view.flush_full()
    elif kind == "rendered":
        frontend.mark_rendered()
    elif kind == "stderr_line":
        stderr_reply(view, content.get("n"))
    elif kind == "entry_full":
        entry_reply(view, content.get("key"))
    elif view.read_only:
        return  # a replay or a past state: nothing to answer or cancel
    elif kind == "select":
        view.actions.select(str(content.get("key")), str(content.get("option")))
    elif kind == "cancel_turn":
        view.actions.cancel_turn()
    elif kind == "cancel_tool_call":
        view.actions.cancel_tool_call(str(content.get("id")))
    elif kind == "cancel_terminal":
        view.actions.cancel_terminal(str(content.get("id")))
    elif kind in ("terminal_input", "terminal_resize"):
        terminal_message(view, kind, content)
    elif kind == "review":
        review_message(view, content)


def stderr_reply(view: Any, number: Any) -> None:
    """Send stderr line ``number`` as the agent kept it (``text`` null once it fell off the tail).

    ``view`` has ``state``, ``session`` and ``send`` (a ``Page``, or the ``%acp start`` header view).
    """
    if not isinstance(number, int) or isinstance(number, bool):
        view.state.diagnose("view-bad-message", "stderr_line needs an integer `n`")
        return
    agent = agent_of(view.session) if view.session is not None else None
    line = agent.stderr_line(number) if agent is not None else None
    view.send({"type": "stderr_line", "n": number, "text": line})


def review_message(view: Page, content: dict[str, Any]) -> None:
    """Accept or reject hunks of a write held for review (bad messages become diagnostics)."""
    try:
        review_entry.decide(view.state, content)
    except ValueError as exc:
        view.state.diagnose("view-bad-message", str(exc))
    except Exception as exc:  # the write or the answer failed: the review says why
        view.state.diagnose("view-action-error", f"review: {type(exc).__name__}: {exc}")


def terminal_message(view: Page, kind: str, content: dict[str, Any]) -> None:
    """Keystrokes or a size for an interactive terminal of this view (others are dropped)."""
    check, act = (
        (inbound.terminal_input, view.actions.terminal_input)
        if kind == "terminal_input"
        else (inbound.terminal_resize, view.actions.terminal_resize)
    )
    try:
        args = check(content)
    except ValueError as exc:
        view.state.diagnose("view-bad-message", str(exc))
        return
    if args[0] not in view.terminal_ids or args[0] not in view.actions.interactive_terminals():
        return  # not ours, or no longer running: a keystroke racing the exit
    try:
        act(*args)
    except Exception as exc:  # the message names the failure, never the keystrokes
        view.state.diagnose("view-action-error", f"{kind} for {args[0]}: {type(exc).__name__}")


def entry_reply(view: Page, key: Any) -> None:
    """Send entry ``key`` whole ("show all" of a cut message; ``entry`` null for an unknown key)."""
    entry = view.whole_entry(key) if isinstance(key, str) else None
    view.send({"type": "entry_full", "key": key, "entry": entry})
