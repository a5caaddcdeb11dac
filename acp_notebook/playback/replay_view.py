"""A replay's view: a scrubber (slider, play/pause, step, speed) above the session view.

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
from .xray_source import XRaySource

SPEEDS = (("0.5x", 0.5), ("1x", 1.0), ("2x", 2.0), ("10x", 10.0), ("instant", None))


class ReplayView(w.VBox):
    """A ``SessionView`` of a replay under its scrubber."""

    def __init__(self, replay: Any, *, xray: bool = False, **view_options: Any) -> None:
        self.replay = replay
        self.slider = w.IntSlider(value=replay.position, min=0, max=len(replay), description="message")
        self.play_button = w.ToggleButton(value=False, description="Play", icon="play")
        self.back = w.Button(description="", icon="step-backward", tooltip="one message back")
        self.forward = w.Button(description="", icon="step-forward", tooltip="one message on")
        self.speed = w.Dropdown(options=SPEEDS, value=1.0, description="speed", layout={"width": "160px"})
        self.label = w.Label()
        source = XRaySource.of_replay(replay) if xray else False
        self.session_view = SessionView(replay.state, xray=source, past=True, **view_options)
        bar = w.HBox([self.back, self.play_button, self.forward, self.slider, self.speed, self.label])
        super().__init__([bar, self.session_view])
        self.slider.observe(self._on_slider, names="value")
        self.play_button.observe(self._on_play, names="value")
        self.back.on_click(lambda _b: replay.step(-1))
        self.forward.on_click(lambda _b: replay.step(1))
        replay.before_seek.append(self._before)
        replay.on_seek.append(self._after)
        self._after(replay)

    def _before(self, _replay: Any) -> None:
        self.session_view.detach()

    def _after(self, replay: Any) -> None:
        self.session_view.retarget(replay.state, replay.session)  # its subagents: the rebuilt ones
        if self.slider.value != replay.position:
            self.slider.value = replay.position
        self.label.value = f"{replay.position}/{len(replay)} · {replay.time_at(replay.position):.2f} s"
        if self.play_button.value and not replay.playing and replay.position >= len(replay):
            self.play_button.value = False

    def _on_slider(self, change: dict[str, Any]) -> None:
        if change["new"] != self.replay.position:
            self.replay.seek(change["new"])

    def _on_play(self, change: dict[str, Any]) -> None:
        if not change["new"]:
            self.replay.pause()
            self.play_button.description, self.play_button.icon = "Play", "play"
            return
        self.play_button.description, self.play_button.icon = "Pause", "pause"
        if self.replay.position >= len(self.replay):
            self.replay.seek(0)
        task = self.replay.play(self.speed.value)
        task.add_done_callback(self._played)

    def _played(self, task: asyncio.Task) -> None:
        if not task.cancelled() and self.play_button.value:
            self.play_button.value = False

    def close(self) -> None:
        """Stop observing the replay and close the views."""
        self.replay.pause()
        self.session_view.close()
        for hooks, hook in ((self.replay.before_seek, self._before), (self.replay.on_seek, self._after)):
            if hook in hooks:
                hooks.remove(hook)
        super().close()
