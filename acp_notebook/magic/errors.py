"""The magic's errors: one short message in the cell, never a traceback wall."""

from __future__ import annotations


class MagicError(Exception):
    """A problem the user can fix; IPython shows it as ``Name: message`` without a traceback."""

    def __init__(self, message: str, name: str = "AcpError") -> None:
        super().__init__(message)
        self.name = name

    @classmethod
    def from_exception(cls, exc: BaseException, lead: str = "") -> MagicError:
        """Wrap ``exc`` keeping its class name and its message (which may carry the stderr tail)."""
        return cls(f"{lead}{exc}", type(exc).__name__)

    def _render_traceback_(self) -> list[str]:  # IPython's hook for a custom traceback
        return [f"{self.name}: {self}"]


class HelpShown(Exception):
    """``-h`` printed a subcommand's help: nothing else to do."""
