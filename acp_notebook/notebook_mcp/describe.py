"""What a shared object is, as text an agent can read: one-line summaries and capped descriptions.

Pure: no I/O, no imports of pandas or numpy (duck typing: ``shape``/``dtypes``/``head``/
``describe`` for DataFrames and Series, ``shape``/``dtype`` for arrays). Every text is capped so
a huge object never becomes a huge answer.
"""

from __future__ import annotations

import reprlib
from typing import Any

SUMMARY_CHARS = 160
TEXT_CHARS = 4_000  # one section of a description
HEAD_ROWS = 5
MAX_COLUMNS = 50


def type_name(obj: Any) -> str:
    """``module.Class`` of an object (builtins without the module)."""
    kind = type(obj)
    module = kind.__module__
    return kind.__qualname__ if module == "builtins" else f"{module.split('.')[0]}.{kind.__qualname__}"


def shape_of(obj: Any) -> list[int] | int | None:
    """The shape (arrays, frames) or the length (sized containers), else None."""
    shape = getattr(obj, "shape", None)
    if isinstance(shape, tuple) and all(isinstance(n, int) for n in shape):
        return list(shape)
    if isinstance(obj, str | bytes | list | tuple | dict | set | frozenset):
        return len(obj)
    return None


def summary(obj: Any) -> str:
    """One line: a frame's columns, an array's dtype, a container's first items, else its repr."""
    if _is_frame(obj):
        columns = [str(c) for c in list(obj.columns)[:8]]
        more = "…" if len(obj.columns) > 8 else ""
        return clip(f"DataFrame: columns {', '.join(columns)}{more}", SUMMARY_CHARS)
    dtype = getattr(obj, "dtype", None)
    if dtype is not None and getattr(obj, "shape", None) is not None:
        return clip(f"{type(obj).__name__} of {dtype}", SUMMARY_CHARS)
    return clip(_short_repr(obj), SUMMARY_CHARS)


def listing(name: str, obj: Any) -> dict[str, Any]:
    """A ``list_variables`` row."""
    return {"name": name, "type": type_name(obj), "shape": shape_of(obj), "summary": summary(obj)}


def describe(name: str, obj: Any) -> str:
    """A ``describe_variable`` answer: type and shape, then what fits the kind of object."""
    lines = [f"{name}: {type_name(obj)}", f"shape: {shape_of(obj)}"]
    if _is_frame(obj):
        lines += _frame(obj)
    elif getattr(obj, "dtype", None) is not None and getattr(obj, "shape", None) is not None:
        lines += [f"dtype: {obj.dtype}", "values:", clip(_safe(repr, obj), TEXT_CHARS)]
    else:
        lines += ["repr:", clip(_safe(repr, obj), TEXT_CHARS)]
        doc = getattr(type(obj), "__doc__", None)
        if doc and type(obj).__module__ != "builtins":
            lines += ["doc:", clip(doc.strip().splitlines()[0], SUMMARY_CHARS)]
    return "\n".join(lines)


def _frame(frame: Any) -> list[str]:
    dtypes = getattr(frame, "dtypes", None)
    out = []
    if dtypes is not None and hasattr(dtypes, "items"):
        pairs = [f"  {col}: {kind}" for col, kind in list(dtypes.items())[:MAX_COLUMNS]]
        more = len(frame.columns) - MAX_COLUMNS if hasattr(frame, "columns") else 0
        out += ["dtypes:", *pairs] + ([f"  … {more} more columns"] if more > 0 else [])
    out += ["head:", clip(_safe(lambda f: f.head(HEAD_ROWS).to_string(), frame), TEXT_CHARS)]
    out += ["describe():", clip(_safe(lambda f: f.describe().to_string(), frame), TEXT_CHARS)]
    return out


def _is_frame(obj: Any) -> bool:
    return all(hasattr(obj, a) for a in ("columns", "dtypes", "head", "describe"))


_REPR = reprlib.Repr()  # Python 3.11 has no keyword arguments for these
_REPR.maxlist = _REPR.maxtuple = _REPR.maxset = _REPR.maxdict = 6
_REPR.maxstring, _REPR.maxother = 60, SUMMARY_CHARS


def _short_repr(obj: Any) -> str:
    return _safe(_REPR.repr, obj)


def _safe(render: Any, obj: Any) -> str:
    try:
        return str(render(obj))
    except Exception as exc:  # an object whose repr fails is still listed
        return f"<{type(obj).__name__}: repr failed: {type(exc).__name__}>"


def clip(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, saying how much was left out."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text) - limit} more characters)"
