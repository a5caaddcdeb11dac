"""Change records: what one applied update changed, for observers and views."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Change:
    """What one applied update changed; ``data`` holds bytes appended to a terminal.

    ``kind`` is one of ``tool_call``, ``terminal``, ``message``, ``plan``, ``permission``,
    ``run_state``, ``session``, ``notice``, ``other``, ``diagnostic``; ``id`` names the item.
    ``replaced`` marks a terminal snapshot (``data`` is then the whole new output).
    """

    kind: str
    id: str | None = None
    fields: tuple[str, ...] = ()
    created: bool = False
    data: bytes | None = None
    replaced: bool = False


Observer = Callable[[Change], None]
