"""Diagnostics: problems met in received input, recorded instead of raised."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One problem with received input; ``detail`` holds the offending value as received."""

    code: str
    message: str
    detail: Any = None
    level: str = "warning"

    def __str__(self) -> str:
        return f"[{self.code}] {self.message}"


class Report(Protocol):
    """How the item modules record a problem (``SessionState.diagnose`` is one)."""

    def __call__(self, code: str, message: str, detail: Any = None, level: str = "warning") -> None: ...
