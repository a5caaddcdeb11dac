"""A replay's view: a scrubber (``ReplayBar``: step, play/pause, slider, speed) above the session view.

The session view observes one ``SessionState``; a replay's state is rebuilt when it seeks
backwards, and is changed on the replay's worker thread. So the view stops observing before
every seek (``detach``) and is pointed at the state after it (``retarget``): nothing observes
a state while it changes, the view always shows the replay's current state — with its subagents'
cards holding their own rebuilt states (``replay.session``) — and its X-ray panel
(``xray=True``) keeps its place. Selecting a message in the X-ray seeks there.
"""

from __future__ import annotations

import asyncio
from typing import Any

import ipywidgets as w

from ..widgets.session_view import SessionView
from .replay_bar import ReplayBar
from .xray_source import XRaySource


class ReplayView(w.VBox):
    """A ``SessionView`` of a replay under its scrubber (``bar``, a ``ReplayBar``)."""

    def __init__(self, replay: Any, *, xray: bool = False, **view_options: Any) -> None:
        self.replay = replay
        self.bar = ReplayBar(len(replay), replay.step)
        source = XRaySource.of_replay(replay) if xray else False
        self.session_view = SessionView(replay.state, xray=source, past=True, **view_options)
        super().__init__([self.bar, self.session_view])
        self.bar.observe(self._on_position, names="position")
        self.bar.observe(self._on_play, names="playing")
        replay.before_seek.append(self._before)
        replay.on_seek.append(self._after)
        self._after(replay)

    def _before(self, _replay: Any) -> None:
        self.session_view.detach()

    def _after(self, replay: Any) -> None:
        self.session_view.retarget(replay.state, replay.session)  # its subagents: the rebuilt ones
        with self.bar.hold_sync():
            self.bar.position = replay.position
            self.bar.where = f"{replay.position}/{len(replay)} · {replay.time_at(replay.position):.2f} s"
        if self.bar.playing and not replay.playing and replay.position >= len(replay):
            self.bar.playing = False

    def _on_position(self, change: dict[str, Any]) -> None:
        if change["new"] != self.replay.position:
            self.replay.seek(change["new"])

    def _on_play(self, change: dict[str, Any]) -> None:
        if not change["new"]:
            self.replay.pause()
            return
        if self.replay.position >= len(self.replay):
            self.replay.seek(0)
        task = self.replay.play(self.bar.speed_value)
        task.add_done_callback(self._played)

    def _played(self, task: asyncio.Task) -> None:
        if not task.cancelled() and self.bar.playing:
            self.bar.playing = False

    def close(self) -> None:
        """Stop observing the replay and close the views."""
        self.replay.pause()
        self.session_view.close()
        for hooks, hook in ((self.replay.before_seek, self._before), (self.replay.on_seek, self._after)):
            if hook in hooks:
                hooks.remove(hook)
        super().close()
