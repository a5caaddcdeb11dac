"""Change records: what one applied update changed, for observers and views."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Change:
    """What one applied update changed; ``data`` holds bytes appended to a terminal.

    ``kind`` is one of ``tool_call``, ``terminal``, ``message``, ``plan``, ``permission``,
    ``run_state``, ``session``, ``notice``, ``other``, ``diagnostic``, ``subagent``,
    ``session_message``, ``turn`` (``id``: its number from 1), ``elicitation``; ``id`` names the item.
    ``replaced`` marks a terminal snapshot (``data`` is then the whole new output).
    """

    kind: str
    id: str | None = None
    fields: tuple[str, ...] = ()
    created: bool = False
    data: bytes | None = None
    replaced: bool = False


Observer = Callable[[Change], None]


class Observers(list[Observer]):
    """The subscribers of one state (a list); an observer that raises is reported, not propagated."""

    __slots__ = ("_report",)

    def __init__(self, report: Callable[[str], None]) -> None:
        super().__init__()
        self._report = report

    def subscribe(self, callback: Observer) -> Callable[[], None]:
        """Add ``callback``; returns a function that removes it."""
        self.append(callback)
        return lambda: self.remove(callback) if callback in self else None

    def notify(self, change: Change) -> None:
        """Call every subscriber with ``change``."""
        for callback in list(self):
            try:
                callback(change)
            except Exception as exc:  # an observer must never break the reader
                self._report(f"observer {callback!r} raised {exc!r}")
