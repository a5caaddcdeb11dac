"""An elicitation form's ``requestedSchema``: its fields, their validation, the content sent.

``fields(schema)`` reads each property into a ``Field`` the view renders, by the schema's
``ElicitationPropertySchema`` variants: ``string`` (``minLength``/``maxLength`` in code points,
an ECMA-262 ``pattern`` searched unanchored — ``ecma_regex`` —, ``format`` email / uri / date /
date-time, any other format only a hint), single-select (``string`` with ``enum``, or titled
``oneOf``; ``oneOf`` wins when both are given; the legacy ``enumNames`` titles an ``enum``),
``number`` (double) and ``integer`` (int64) with inclusive ``minimum``/``maximum``, ``boolean``,
and multi-select (``array`` with ``items.enum`` or titled ``items.anyOf``, ``minItems``/
``maxItems``; a value chosen twice is an error). A property of any other ``type`` (or without a
readable one) is ``unsupported``: its raw schema kept, never a known control, any value accepted.
A constraint of the wrong type is ignored (noted in ``problems``); so is a ``default`` of the
wrong type, and a ``pattern`` that cannot be checked (``Field.pattern_problem``).

``validate(schema, values)`` gives ``{field name: message}`` for every problem: a missing
required field (``None`` counts as not given), a value of the wrong type or out of its
constraints, a name that is no field of the form. ``content(schema, values)`` is what an
``accept`` sends: exactly the fields given (not ``None``), integers as JSON integers.
The browser's validator follows the same rules (``FORMAT_PATTERNS`` are ECMA-262 sources), and
``tests/fixtures/elicitation_cases.json`` holds both to them.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from . import ecma_regex

KINDS = ("string", "single_select", "number", "integer", "boolean", "multi_select", "unsupported")
INT64 = (-(2**63), 2**63 - 1)
EMAIL = (
    r"^[a-zA-Z0-9.!#$%&'*+\/=?^_`{|}~-]+@[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?"
    r"(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*$"
)  # the WHATWG "valid e-mail address" (what <input type=email> checks)
FORMAT_PATTERNS = {
    "email": EMAIL,
    "uri": r"^[A-Za-z][A-Za-z0-9+.\-]*:[^\s]*$",  # an absolute URI: a scheme, then no whitespace
    "date": r"^(\d{4})-(\d{2})-(\d{2})$",  # and a real calendar date
    "date-time": (
        r"^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(?:[Zz]|[+\-](\d{2}):(\d{2}))$"
    ),
}  # RFC 3339: hours <= 23, minutes <= 59, seconds <= 60 (a leap second), offsets likewise


@functools.cache
def _format(name: str) -> Any:
    return ecma_regex.compile(FORMAT_PATTERNS[name])


@dataclass(frozen=True, slots=True)
class Option:
    """One choice of a select: the value sent, its title and description when the schema gives them."""

    value: str
    title: str | None = None
    description: str | None = None


@dataclass(frozen=True, slots=True)
class Field:
    """One form field as the view renders it (``kind`` one of ``KINDS``); ``raw`` is its schema."""

    name: str
    kind: str
    raw: Any
    title: str | None = None
    description: str | None = None
    required: bool = False
    default: Any = None
    options: tuple[Option, ...] = ()
    min_length: int | None = None
    max_length: int | None = None
    pattern: str | None = None
    pattern_problem: str | None = None  # why ``pattern`` is not checked (None: it is)
    format: str | None = None  # as given; only FORMAT_PATTERNS' are checked
    minimum: int | float | None = None
    maximum: int | float | None = None
    min_items: int | None = None
    max_items: int | None = None
    problems: tuple[str, ...] = field(default=(), compare=False)  # constraints ignored, and why

    @property
    def format_checked(self) -> bool:
        """Whether ``format`` is one this client checks (any other is only a hint)."""
        return self.format in FORMAT_PATTERNS

    def to_dict(self) -> dict[str, Any]:
        """A JSON-friendly description (what the view is sent)."""
        out = {k: getattr(self, k) for k in self.__slots__ if k not in ("options", "problems")}
        out["options"] = [
            {"value": o.value, "title": o.title, "description": o.description} for o in self.options
        ]
        out["format_checked"] = self.format_checked
        return out


def fields(schema: Any) -> list[Field]:
    """The form's fields, in the schema's order."""
    return read(schema)[0]


def read(schema: Any) -> tuple[list[Field], list[str]]:
    """The form's fields and what was wrong with the schema (each problem one line)."""
    problems: list[str] = []
    if not isinstance(schema, dict):
        return [], ["requestedSchema is not an object"]
    if schema.get("type") != "object":
        problems.append(f"requestedSchema type is {schema.get('type')!r}, not 'object'")
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return [], [*problems, "requestedSchema has no `properties` object"]
    required = _required(schema.get("required"), properties, problems)
    out = [_field(name, prop, name in required) for name, prop in properties.items()]
    problems += [f"{f.name}: {p}" for f in out for p in f.problems]
    return out, problems


def defaults(schema: Any) -> dict[str, Any]:
    """The fields' defaults (what a pre-filled form holds), by name."""
    return {f.name: f.default for f in fields(schema) if f.default is not None}


def validate(schema: Any, values: Any) -> dict[str, str]:
    """``{field name: message}`` for each problem with ``values``; empty when they may be sent."""
    if not isinstance(values, Mapping):
        return {"": f"values must be a mapping of field name to value, not {type(values).__name__}"}
    known = {f.name: f for f in fields(schema)}
    errors = {name: "not a field of this form" for name in values if name not in known}
    for name, f in known.items():
        value = values.get(name)
        message = ("required" if f.required else None) if value is None else _check(f, value)
        if message is not None:
            errors[name] = message
    return errors


def content(schema: Any, values: Mapping[str, Any]) -> dict[str, Any]:
    """What ``accept`` sends: the fields given (not None), integers as JSON integers."""
    kinds = {f.name: f.kind for f in fields(schema)}
    out: dict[str, Any] = {}
    for name, value in values.items():
        if value is None:
            continue
        if kinds.get(name) == "integer" and isinstance(value, float):
            value = int(value)
        out[name] = list(value) if isinstance(value, list | tuple) else value
    return out


# -- reading one property ------------------------------------------------------------------------
def _required(value: Any, properties: dict[str, Any], problems: list[str]) -> set[str]:
    if value is None:
        return set()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        problems.append("`required` is not a list of names (ignored)")
        return set()
    problems += [f"required {v!r} is not a property (ignored)" for v in value if v not in properties]
    return set(value)


def _field(name: str, prop: Any, required: bool) -> Field:
    problems: list[str] = []
    if not isinstance(prop, dict):
        return Field(name, "unsupported", prop, required=required, problems=("not an object",))
    base: dict[str, Any] = {
        "title": _text(prop, "title", problems),
        "description": _text(prop, "description", problems),
        "required": required,
    }
    kind = prop.get("type")
    reader = _READERS.get(kind) if isinstance(kind, str) else None
    if reader is None:
        return Field(name, "unsupported", prop, **base, problems=tuple(problems))
    return Field(name, raw=prop, **base, **reader(prop, problems), problems=tuple(problems))


def _string(prop: dict[str, Any], problems: list[str]) -> dict[str, Any]:
    options = _titled(prop.get("oneOf"), "oneOf", problems) or _untitled(prop, problems)
    default = _typed(prop, "default", str, problems)
    if options:
        return {"kind": "single_select", "options": options, "default": default}
    pattern = _typed(prop, "pattern", str, problems)
    return {
        "kind": "string",
        "default": default,
        "min_length": _count(prop, "minLength", problems),
        "max_length": _count(prop, "maxLength", problems),
        "pattern": pattern,
        "pattern_problem": _pattern_problem(pattern),
        "format": _typed(prop, "format", str, problems),
    }


def _number(prop: dict[str, Any], problems: list[str]) -> dict[str, Any]:
    integer = prop["type"] == "integer"
    accepts = _is_integer if integer else _is_number
    bounds = {k: _bound(prop, k, accepts, problems) for k in ("minimum", "maximum", "default")}
    return {"kind": "integer" if integer else "number", **bounds}


def _boolean(prop: dict[str, Any], problems: list[str]) -> dict[str, Any]:
    return {"kind": "boolean", "default": _typed(prop, "default", bool, problems)}


def _multi(prop: dict[str, Any], problems: list[str]) -> dict[str, Any]:
    items = prop.get("items")
    items = items if isinstance(items, dict) else {}
    options = _titled(items.get("anyOf"), "items.anyOf", problems)
    if not options and items.get("type", "string") == "string":
        options = _untitled(items, problems)
    if not options:
        problems.append("multi-select without `items.enum` or `items.anyOf`")
        return {"kind": "unsupported"}
    default = prop.get("default")
    if default is not None and not (isinstance(default, list) and all(isinstance(v, str) for v in default)):
        problems.append("`default` is not a list of strings (ignored)")
        default = None
    return {
        "kind": "multi_select",
        "options": options,
        "default": default,
        "min_items": _count(prop, "minItems", problems),
        "max_items": _count(prop, "maxItems", problems),
    }


_READERS = {"string": _string, "number": _number, "integer": _number, "boolean": _boolean, "array": _multi}


def _titled(value: Any, where: str, problems: list[str]) -> tuple[Option, ...]:
    if value is None:
        return ()
    good = [_option(o) for o in value if _titled_option(o)] if isinstance(value, list) else []
    if not isinstance(value, list) or len(good) != len(value):
        problems.append(f"`{where}` options need a string `const` and `title` (others ignored)")
    return tuple(good)


def _titled_option(o: Any) -> bool:
    return isinstance(o, dict) and isinstance(o.get("const"), str) and isinstance(o.get("title"), str)


def _option(o: dict[str, Any]) -> Option:
    description = o.get("description")
    return Option(o["const"], o["title"], description if isinstance(description, str) else None)


def _untitled(prop: dict[str, Any], problems: list[str]) -> tuple[Option, ...]:
    values = prop.get("enum")
    if values is None:
        return ()
    if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
        problems.append("`enum` is not a list of strings (non-strings ignored)")
        values = [v for v in values if isinstance(v, str)] if isinstance(values, list) else []
    names = prop.get("enumNames")
    if not (isinstance(names, list) and len(names) == len(values) and all(isinstance(n, str) for n in names)):
        names = [None] * len(values)
    return tuple(Option(v, title) for v, title in zip(values, names, strict=True))


def _text(prop: dict[str, Any], key: str, problems: list[str]) -> str | None:
    return _typed(prop, key, str, problems)


def _typed(prop: dict[str, Any], key: str, kind: type, problems: list[str]) -> Any:
    value = prop.get(key)
    if value is None or (isinstance(value, kind) and not (kind is not bool and isinstance(value, bool))):
        return value
    problems.append(f"`{key}` is not a {kind.__name__} (ignored)")
    return None


def _count(prop: dict[str, Any], key: str, problems: list[str]) -> int | None:
    value = prop.get(key)
    if value is None or (_is_integer(value) and value >= 0):
        return None if value is None else int(value)
    problems.append(f"`{key}` is not a non-negative integer (ignored)")
    return None


def _bound(prop: dict[str, Any], key: str, accepts: Any, problems: list[str]) -> Any:
    value = prop.get(key)
    if value is None or accepts(value):
        return int(value) if value is not None and accepts is _is_integer else value
    problems.append(f"`{key}` is not {'an integer' if accepts is _is_integer else 'a number'} (ignored)")
    return None


def _pattern_problem(pattern: str | None) -> str | None:
    if pattern is None:
        return None
    try:
        ecma_regex.compile(pattern)
    except ecma_regex.UnsupportedPattern as exc:
        return f"not checked: {exc}"
    return None


# -- checking one value --------------------------------------------------------------------------
def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _is_integer(value: Any) -> bool:
    if isinstance(value, float):
        return math.isfinite(value) and value.is_integer()
    return isinstance(value, int) and not isinstance(value, bool)


def _check(f: Field, value: Any) -> str | None:
    return _CHECKS.get(f.kind, _anything)(f, value)


def _anything(f: Field, value: Any) -> str | None:
    return None  # an unsupported field: kept as given, the agent validates it


def _check_string(f: Field, value: Any) -> str | None:
    if not isinstance(value, str):
        return "must be text"
    if f.min_length is not None and len(value) < f.min_length:
        return f"must be at least {f.min_length} characters long"
    if f.max_length is not None and len(value) > f.max_length:
        return f"must be at most {f.max_length} characters long"
    if (
        f.pattern is not None
        and f.pattern_problem is None
        and not ecma_regex.compile(f.pattern).search(value)
    ):
        return f"must match the pattern {f.pattern}"
    if f.format in FORMAT_PATTERNS and not _formatted(f.format, value):
        return f"must be a valid {f.format}"
    return None


def _formatted(fmt: str, value: str) -> bool:
    match = _format(fmt).search(value)
    if match is None or fmt in ("email", "uri"):
        return match is not None
    year, month, day, *rest = (int(g) if g is not None else 0 for g in match.groups())
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    days = (31, 29 if leap else 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
    if not (1 <= month <= 12 and 1 <= day <= days[month - 1]):
        return False
    if fmt == "date":
        return True
    hour, minute, second, off_hour, off_minute = rest
    return hour <= 23 and minute <= 59 and second <= 60 and off_hour <= 23 and off_minute <= 59


def _check_select(f: Field, value: Any) -> str | None:
    allowed = [o.value for o in f.options]
    return None if isinstance(value, str) and value in allowed else f"must be one of {allowed}"


def _check_number(f: Field, value: Any) -> str | None:
    integer = f.kind == "integer"
    if not (_is_integer(value) if integer else _is_number(value)):
        return "must be a whole number" if integer else "must be a number"
    if integer and not INT64[0] <= value <= INT64[1]:
        return "is out of the 64-bit integer range"
    if f.minimum is not None and value < f.minimum:
        return f"must be at least {f.minimum}"
    if f.maximum is not None and value > f.maximum:
        return f"must be at most {f.maximum}"
    return None


def _check_boolean(f: Field, value: Any) -> str | None:
    return None if isinstance(value, bool) else "must be true or false"


def _check_multi(f: Field, value: Any) -> str | None:
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        return "must be a list of choices"
    allowed = [o.value for o in f.options]
    unknown = [v for v in value if v not in allowed]
    if unknown:
        return f"{unknown} not among {allowed}"
    if len(set(value)) != len(value):
        return "a choice is selected twice"
    if f.min_items is not None and len(value) < f.min_items:
        return f"choose at least {f.min_items}"
    if f.max_items is not None and len(value) > f.max_items:
        return f"choose at most {f.max_items}"
    return None


_CHECKS = {
    "string": _check_string,
    "single_select": _check_select,
    "number": _check_number,
    "integer": _check_number,
    "boolean": _check_boolean,
    "multi_select": _check_multi,
}
