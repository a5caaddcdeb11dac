"""How much of one entry's text a view sends and saves: at most ``ENTRY_TEXT`` characters.

A 50 MB agent message or inter-session message would otherwise travel whole to the page (and
into the saved notebook) to show its first screens. ``bounded`` cuts the entry's long strings to
a shared budget (strings of up to ``SHORT`` characters are kept whole) and marks the entry
``cut`` (``{"shown", "total"}`` characters); the page's "show all" asks for the whole entry
(``entry_full``, ``js/WIRE.md``), which the kernel still holds.
"""

from __future__ import annotations

from typing import Any

ENTRY_TEXT = 200_000  # characters of text per entry sent and saved; the rest on "show all"
SHORT = 1_000  # a string this short (a kind, a name, a URI) is never cut
TITLE_CHARS = 500  # of a name shown in a line: a subagent's title, a request's (cards, the header)


def clip(text: str | None, limit: int = TITLE_CHARS) -> str | None:
    """``text`` cut to ``limit`` characters, saying how many more there were (None stays None)."""
    if text is None or len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text) - limit:,} more characters)"


def bounded(entry: dict[str, Any], limit: int = ENTRY_TEXT) -> dict[str, Any]:
    """``entry`` with its strings cut to ``limit`` characters in all, marked ``cut`` if any were."""
    total = _chars(entry)
    if total <= limit:
        return entry
    if entry.get("kind") in ("message", "session_message"):  # text blocks repeat `markdown`: drawn
        entry = {**entry, "blocks": [b for b in entry.get("blocks", ()) if not _is_text(b)]}
        total = _chars(entry)
    budget = [limit]
    out = {k: _cut(entry[k], budget) for k in sorted(entry, key=lambda k: k != "markdown")}
    out["cut"] = {"shown": _chars(out), "total": total}
    return out


def _is_text(block: Any) -> bool:
    return isinstance(block, dict) and block.get("type") == "text"


def _chars(value: Any) -> int:
    if isinstance(value, str):
        return len(value)
    if isinstance(value, dict):
        return sum(_chars(v) for v in value.values())
    if isinstance(value, list):
        return sum(_chars(v) for v in value)
    return 0


def _cut(value: Any, budget: list[int]) -> Any:
    """A copy of ``value`` whose strings take at most ``budget[0]`` characters (spent as they go)."""
    if isinstance(value, str):
        kept = value if len(value) <= SHORT else value[: max(budget[0], 0)]
        budget[0] -= len(kept)
        return kept
    if isinstance(value, dict):
        return {k: _cut(v, budget) for k, v in value.items()}
    if isinstance(value, list):
        return [_cut(v, budget) for v in value]
    return value
