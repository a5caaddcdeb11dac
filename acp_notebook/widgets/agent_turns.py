"""The views of the turns an agent starts by itself (e.g. Claude's task notification).

Such a turn has no cell of its own, and must never show in an unrelated cell (an earlier turn's):
the start cell holds them. ``AgentTurnViews.box`` (an ipywidgets ``VBox``, shown by ``on_first`` when
the first one starts: ``%acp start`` then updates its cell's output to the header and the box) gets,
for each turn with ``origin == "agent"``, a ``SessionView`` of that turn from where it began
(``turn.timeline_start``), titled with where it came from and anchored where the start cell's
turn line points (``header_view.anchor_of``); when the turn ends the view stops following, like a
cell's. It hears of turns through the session state's ``turn`` changes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ipywidgets

from ..protocol.changes import Change
from .header_view import anchor_of
from .session_view import SessionView


def agent_turn_title(name: str | None, turn: Any) -> str:
    """``"<name>: agent · task notification"`` (where the turn came from, when the agent said)."""
    said = getattr(turn, "origin_label", None)
    label = f"agent · {said}" if isinstance(said, str) and said else "agent"
    return f"{name}: {label}" if name else label


class AgentTurnViews:
    """A box of views, one per turn the agent started, for a place with no cell per turn."""

    def __init__(
        self,
        session: Any,
        name: str | None = None,
        make: Callable[..., Any] = SessionView,
        on_first: Callable[[ipywidgets.VBox], Any] | None = None,
    ) -> None:
        self.session, self.name, self._make, self._on_first = session, name, make, on_first
        self.box = ipywidgets.VBox([])
        self.views: dict[int, Any] = {}
        self._unsubscribe = session.state.subscribe(self._on_change)

    def _on_change(self, change: Change) -> None:
        if change.kind != "turn" or not str(change.id).isdigit():
            return
        number = int(str(change.id))
        turns = self.session.turns
        turn = turns[number - 1] if 0 < number <= len(turns) else None
        if turn is None or getattr(turn, "origin", "user") != "agent":
            return
        view = self.views.get(number)
        if view is None and change.created:
            self._show(number, turn)
        elif view is not None and "origin_kind" in change.fields:
            view.title = agent_turn_title(self.name, turn)
            view.refresh()
        elif view is not None and "ended" in change.fields:
            view.stop_following()

    def _show(self, number: int, turn: Any) -> None:
        since = getattr(turn, "timeline_start", None)
        since = since if isinstance(since, int) else len(self.session.state.timeline)
        title, anchor = agent_turn_title(self.name, turn), anchor_of(self.session, number)
        view = self._make(self.session, since=since, title=title, anchor=anchor, turn=number)
        self.views[number] = view
        self.box.children = (*self.box.children, view)
        if len(self.views) == 1 and self._on_first is not None:
            self._on_first(self.box)  # the place shows the box from now on

    def close(self) -> None:
        """Stop hearing of turns and close the views."""
        self._unsubscribe()
        for view in self.views.values():
            view.close()
        self.box.close()
