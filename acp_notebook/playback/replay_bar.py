"""ReplayBar: a replay's scrubber (step back, play/pause, step on, a slider, speed, where it is),
drawn by ``js/src/replay_bar.js`` in the session view's own style.

Synced traits: ``position`` and ``playing`` go both ways (the page sets them on a drag or a click,
the replay as it moves), ``speed`` is set by the page; ``total``, ``speeds`` and ``where`` (the
"position/total · time" label) come from here. A step is a custom message ``{"type": "step",
"by": ±1}``. Only numbers and our own labels travel: nothing here is agent text.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anywidget
import traitlets

from ..widgets.on_loop import on_loop
from ..widgets.runtime import static_file

SPEEDS = (("0.5x", 0.5), ("1x", 1.0), ("2x", 2.0), ("10x", 10.0), ("instant", None))


class ReplayBar(anywidget.AnyWidget):
    """The scrubber above a replay's session view; ``on_step(by)`` moves the replay by messages."""

    _esm = static_file("replay_bar.js")
    position = traitlets.Int(0).tag(sync=True)
    total = traitlets.Int(0).tag(sync=True)
    playing = traitlets.Bool(False).tag(sync=True)
    speed = traitlets.Unicode("1x").tag(sync=True)  # a label of ``speeds``
    speeds = traitlets.List(traitlets.Unicode()).tag(sync=True)
    where = traitlets.Unicode("").tag(sync=True)  # "position/total · time"

    def __init__(self, total: int, on_step: Callable[[int], None]) -> None:
        super().__init__(total=total, speeds=[label for label, _ in SPEEDS])
        self._on_step = on_step
        self.on_msg(on_loop(self._handle))

    @property
    def speed_value(self) -> float | None:
        """The chosen speed as the replay takes it (None: instant)."""
        return dict(SPEEDS).get(self.speed, 1.0)

    def step(self, by: int) -> None:
        """Move the replay ``by`` messages (as the page's step buttons do)."""
        self._on_step(1 if by > 0 else -1)

    def _handle(self, content: Any) -> None:
        if isinstance(content, dict) and content.get("type") == "step" and content.get("by") in (-1, 1):
            self.step(content["by"])
