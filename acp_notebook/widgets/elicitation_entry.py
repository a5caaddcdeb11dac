"""The entry of an elicitation (format: ``js/WIRE.md``, Elicitations), and how a view's clicks on
it are answered. No I/O.

A live entry carries the form's fields (``Field.to_dict``) and, for a URL, the whole URL with its
``url_view`` (host, registrable domain, warnings): the consent card shows them as text. A saved
entry (a saved notebook, an HTML export: ``saved``) keeps the URL only as ``scheme://host/path``
and is drawn inert. Agent text passes through as data: the page inserts it as text.

A click (``{"type": "elicitation", "key", "action", "values"}``) is read by ``answer_click``:
``accept`` (the form's values; an integer typed beyond a JS number's precision arrives as the
digits' text and is read back into an int here), ``decline``, ``cancel``, ``dismiss`` (a URL card
waiting for the agent). Values the kernel refuses (``ElicitationInvalid``) come back as errors.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from ..protocol.elicitation import Elicitation, ElicitationInvalid

ACTIONS = ("accept", "decline", "cancel", "dismiss")
_INTEGER = re.compile(r"[-+]?\d+\Z")


def elicitation_entry(e: Elicitation, agent: str | None = None) -> dict[str, Any]:
    """A live elicitation card: the question, its fields or URL, its status and answer."""
    out = e.to_dict()
    out.update(
        kind="elicitation",
        agent=agent,
        actionable=e.pending and e.too_late is None,
        values=e.values,
        url=e.url,
        redacted_url=e.redacted_url,
        values_text={name: as_text(value) for name, value in (e.values or {}).items()},
    )
    return out


def as_text(value: Any) -> str:
    """A sent value as the answered card shows it (an int64 exactly: JSON numbers lose digits in JS)."""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return ", ".join(value)
    return json.dumps(value, ensure_ascii=False, default=repr)  # a value given from code may be no JSON


def saved_entry(entry: dict[str, Any]) -> dict[str, Any]:
    """What a saved view keeps of an elicitation entry: inert, its URL only ``scheme://host/path``."""
    if entry.get("kind") != "elicitation":
        return entry
    out = {**entry, "saved": True, "actionable": False}
    view = entry.get("url_view")
    if entry.get("url") is not None:
        out["url"] = entry.get("redacted_url")
        out["url_view"] = {k: v for k, v in (view or {}).items() if k != "url"} | {"openable": False}
    return out


def answer_click(
    e: Elicitation, content: dict[str, Any], dismiss: Callable[[str], bool]
) -> dict[str, str] | None:
    """Answer ``e`` as the click says (by the user); the kernel's errors for refused values, else None."""
    action = content.get("action")
    if action not in ACTIONS:
        raise ValueError(f"elicitation click: unknown action {action!r}")
    if action == "dismiss":
        dismiss(e.key)
        return None
    if not e.pending:
        return None  # answered meanwhile (a handler, another view): the card will say so
    if action != "accept":
        getattr(e, action)(by="user")
        return None
    values = content.get("values")
    try:
        e.accept(typed(e, values) if e.mode == "form" else None, by="user")
    except ElicitationInvalid as exc:
        return exc.errors
    return None


def typed(e: Elicitation, values: Any) -> dict[str, Any]:
    """The page's values with each integer field's digits (a JS BigInt's text) read as an int."""
    if not isinstance(values, dict):
        raise ValueError("elicitation click: `values` must be an object")
    integers = {f.name for f in e.fields if f.kind == "integer"}
    return {
        name: int(value) if name in integers and isinstance(value, str) and _INTEGER.match(value) else value
        for name, value in values.items()
    }
