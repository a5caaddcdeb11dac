"""SecretForm: password fields (API keys for a login) whose values go to a callback once, nowhere else.

Only the fields' names and labels, the title, the phase and a status line are synced traits, so a
saved notebook's widget state holds nothing secret. The page sends the values in one custom
message ``{"type": "submit", "values": {...}}`` and clears its inputs; here they are checked,
handed to ``on_submit`` as a fresh dict, and wiped from the received message (the kernel keeps
the last message it got as the "parent" of later output). Nothing here prints, logs or stores them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anywidget
import traitlets

from .on_loop import on_loop
from .runtime import static_file

MAX_VALUE = 64 * 1024  # characters in one value


class SecretForm(anywidget.AnyWidget):
    """One password input per field, Submit and Cancel; ``on_submit(values)`` gets what was typed."""

    _esm = static_file("secret_form.js")
    title = traitlets.Unicode("").tag(sync=True)
    fields = traitlets.List(traitlets.Dict()).tag(sync=True)  # [{"name", "label", "optional"}]
    phase = traitlets.Unicode("open").tag(sync=True)  # "open" | "submitted" | "cancelled"
    status = traitlets.Unicode("").tag(sync=True)  # plain text under the form

    def __init__(
        self,
        fields: list[dict[str, Any]],
        title: str,
        on_submit: Callable[[dict[str, str]], None],
        on_cancel: Callable[[], None] | None = None,
    ) -> None:
        super().__init__(title=str(title), fields=_fields(fields))
        self._on_submit, self._on_cancel = on_submit, on_cancel
        self.on_msg(on_loop(self._handle))

    def set_status(self, text: str) -> None:
        """Show ``text`` under the form (plain text: never put a secret in it)."""
        self.status = str(text)

    # -- from the page ------------------------------------------------------------------------------
    def _handle(self, content: Any) -> None:
        if not isinstance(content, dict):
            return
        try:
            if content.get("type") == "submit" and self.phase == "open":
                self._submit(content.get("values"))
            elif content.get("type") == "cancel" and self.phase == "open":
                self._finish("cancelled", self._on_cancel)
        finally:
            _wipe(content)

    def _submit(self, raw: Any) -> None:
        try:
            values = self._check(raw)
        except ValueError as exc:  # names a field, never a value
            self.send({"type": "rejected", "reason": str(exc)})
            return
        self._finish("submitted", lambda: self._on_submit(values))

    def _finish(self, phase: str, callback: Callable[[], None] | None) -> None:
        with self.hold_sync():
            self.phase, self.status = phase, phase
        if callback is None:
            return
        try:
            callback()
        except Exception as exc:  # no traceback: its frames (and a verbose one's locals) hold the values
            self.status = f"{phase}, but the handler failed ({type(exc).__name__})"

    def _check(self, raw: Any) -> dict[str, str]:
        """Known fields only, text only, required ones present; empty optional ones are left out."""
        if not isinstance(raw, dict):
            raise ValueError("no values")
        known = {f["name"]: f for f in self.fields}
        unknown = sorted(str(k) for k in raw if k not in known)
        if unknown:
            raise ValueError(f"unknown field {unknown[0]}")
        values = {}
        for name, field in known.items():
            value = raw.get(name, "")
            if not isinstance(value, str) or len(value) > MAX_VALUE:
                raise ValueError(f"{name} is not a text of at most {MAX_VALUE} characters")
            if value:
                values[name] = value
            elif not field["optional"]:
                raise ValueError(f"{name} is required")
        return values


def _fields(fields: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Names, labels and optional flags only (any other key, say a default value, is not synced)."""
    out, seen = [], set()
    for field in fields:
        name = field.get("name") if isinstance(field, dict) else None
        if not isinstance(name, str) or not name or name in seen:
            raise ValueError(f"each field needs a distinct non-empty 'name', got {name!r}")
        seen.add(name)
        label = field.get("label")
        out.append(
            {
                "name": name,
                "label": label if isinstance(label, str) else name,
                "optional": bool(field.get("optional")),
            }
        )
    return out


def _wipe(content: dict[str, Any]) -> None:
    """Empty the received message's values in place (the same dict the kernel still holds)."""
    values = content.get("values")
    if isinstance(values, dict):
        values.clear()
    content.pop("values", None)
