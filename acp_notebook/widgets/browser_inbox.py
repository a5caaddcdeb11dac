"""What a view does with a message from its page: resync, rendered, stderr lines, clicks, keys.

A handler table (``ANYTIME``, ``LIVE``: message type to a function of the view, read through
``Page``; no state of its own); the features a view attaches (X-ray, revert bar) answer their own
messages before these, through the view's table (``extensions.handler_table``). A replay or a pinned past
state is read-only: its clicks and keys are dropped. Terminal keystrokes and sizes are checked
(``inbound``) and only reach an interactive terminal of this view; a failure is a diagnostic that
never quotes them.
"""

from __future__ import annotations

from collections.abc import Callable
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

    def terminal_target(self, view_id: Any) -> tuple[str, str | None]: ...

    def cancel_turn(self, number: Any = None) -> None: ...


Handler = Callable[[Page, dict[str, Any]], None]


def dispatch(view: Page, content: Any) -> None:
    """Handle one message from the view's page (``ANYTIME``, or ``LIVE`` unless read-only)."""
    kind = content.get("type") if isinstance(content, dict) else None
    if not isinstance(kind, str):
        return
    handler = ANYTIME.get(kind) or (None if view.read_only else LIVE.get(kind))
    if handler is not None:  # read-only (a replay, a past state): nothing to answer or cancel
        handler(view, content)


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


def terminal_message(view: Page, content: dict[str, Any]) -> None:
    """Keystrokes or a size for an interactive terminal of this view (others are dropped)."""
    kind = content["type"]
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


def elicitation_click(view: Page, content: dict[str, Any]) -> None:
    """Accept, decline, cancel or dismiss an elicitation; values the kernel refuses go back."""
    key = content.get("key")
    if not isinstance(key, str):
        view.state.diagnose("view-bad-message", "elicitation click without a `key`")
        return
    errors = view.actions.elicitation(key, content)
    if errors:
        view.send({"type": "elicitation_refused", "key": key, "errors": errors})


def entry_reply(view: Page, key: Any) -> None:
    """Send entry ``key`` whole ("show all" of a cut message; ``entry`` null for an unknown key)."""
    entry = view.whole_entry(key) if isinstance(key, str) else None
    view.send({"type": "entry_full", "key": key, "entry": entry})


def _cancel(action: Callable[..., None], item_id: str, session: Any) -> None:
    """Cancel an item of the view's own session, or (``session``: a subagent's id) of a subagent."""
    if isinstance(session, str):
        action(item_id, session)
    else:
        action(item_id)  # any actions object takes this form (a login's too)


ANYTIME: dict[str, Handler] = {  # answered even by a replay or a pinned past state
    "resync": lambda view, _: view.flush_full(),
    "rendered": lambda _view, _: frontend.mark_rendered(),
    "stderr_line": lambda view, content: stderr_reply(view, content.get("n")),
    "entry_full": lambda view, content: entry_reply(view, content.get("key")),
}
LIVE: dict[str, Handler] = {  # clicks and keys: dropped while the view is read-only
    "select": lambda view, content: view.actions.select(str(content.get("key")), str(content.get("option"))),
    "cancel_turn": lambda view, content: view.cancel_turn(content.get("turn")),
    "cancel_tool_call": lambda view, content: _cancel(
        view.actions.cancel_tool_call, str(content.get("id")), content.get("session")
    ),
    "cancel_terminal": lambda view, content: _cancel(
        view.actions.cancel_terminal, *view.terminal_target(content.get("id"))
    ),
    "cancel_subagent": lambda view, content: view.actions.cancel_subagent(str(content.get("session"))),
    "terminal_input": terminal_message,
    "terminal_resize": terminal_message,
    "review": review_message,
    "elicitation": elicitation_click,
}
