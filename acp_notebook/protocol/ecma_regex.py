"""ECMA-262 patterns (with the ``u`` flag, as browsers run them) in Python, through ``regex``.

An elicitation form's string ``pattern`` is an ECMA-262 regular expression, unanchored (JSON
Schema: ``RegExp.prototype.test``). The browser checks it with ``new RegExp(pattern, "u")``;
``compile`` translates it token by token into a pattern of the ``regex`` package (``re``'s syntax,
plus Unicode properties and variable-length lookbehind, as JS has) that matches the same strings:

- ``\\d \\w \\b`` are ASCII in JS (``[0-9]``, ``[A-Za-z0-9_]``): written out, never Unicode;
  ``\\s`` is JS's whitespace set (``WHITESPACE``), ``\\D \\W \\S`` their complements, also inside
  ``[...]``; ``[\\b]`` is a backspace;
- ``.`` excludes JS's line terminators (``\\n \\r \\u2028 \\u2029``), ``$`` is the very end
  (``\\Z``: Python's ``$`` also matches before a final newline), ``^`` the very start;
- ``\\u{1F600}``, ``\\uD83D\\uDE00`` (a surrogate pair: one code point), ``\\cJ``, ``\\0``, ``\\/`` are
  rewritten; ``(?<name>…)`` / ``\\k<name>`` become Python's named groups; ``[^]`` is any
  character, ``[]`` none; ``[``, ``&``, ``~``, ``|`` inside a class are escaped (set syntax);
  ``\\p{…}`` / ``\\P{…}`` (``L``, ``Lu``, ``Script=Greek``, ``sc=Latin``, ``Emoji`` …) are kept.

Limits (``UnsupportedPattern``: the pattern is then not enforced, on purpose, and the field says
so): any pattern ``regex`` rejects. What is a syntax error with the ``u`` flag (so the browser does
not enforce it either) raises too: a lone ``{`` or ``}``, an escape that is not one (``\\A``,
``\\@``, ``\\-`` outside a class, an octal ``\\01``), a group that is not ECMA-262's (``(?i)``,
``(?P<n>…)``). Known
divergence: a backreference to a group that has not matched fails in Python (JS matches empty).
Known leniency: ``regex`` reads property names loosely (``\\p{letter}``), JS strictly. Lengths count
code points on both sides. Why a translation: ``js-regex`` (the only such package on PyPI) rewrites
``\\w`` as ``[A-Za-z]`` and breaks escapes inside classes; ``regex`` alone is not ECMA-262 (Unicode
``\\d \\w``, ``$`` before a final newline …). ``regex`` is imported on first use.
"""

from __future__ import annotations

import re
from typing import Any

WHITESPACE = "\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
_NOT_WHITESPACE = (
    "\x00-\x08\x0e-\x1f\x21-\x9f\u00a1-\u167f\u1681-\u1fff\u200b-\u2027\u202a-\u202e"
    "\u2030-\u205e\u2060-\u2fff\u3001-\ufefe\uff00-\U0010ffff"
)
_WORD = "A-Za-z0-9_"
_NOT_WORD = "\x00-/:-@\\[-^`{-\U0010ffff"
_IN_CLASS = {"d": "0-9", "D": "\x00-/:-\U0010ffff", "w": _WORD, "W": _NOT_WORD}
_IN_CLASS |= {"s": WHITESPACE, "S": _NOT_WHITESPACE}
_SHORTHAND = {k: f"[{v}]" for k, v in _IN_CLASS.items()}
_EDGE = f"(?:(?<=[{_WORD}])(?![{_WORD}])|(?<![{_WORD}])(?=[{_WORD}]))"
_NOT_EDGE = f"(?:(?<=[{_WORD}])(?=[{_WORD}])|(?<![{_WORD}])(?![{_WORD}]))"
_SYNTAX = set("^$\\.*+?()[]{}|/-")
_LETTERS = set("fnrtv")  # the control escapes both read alike (the others are handled above)
_HEX = re.compile(r"u([0-9A-Fa-f]{4})|u\{([0-9A-Fa-f]{1,6})\}|x([0-9A-Fa-f]{2})|c([A-Za-z])")


class UnsupportedPattern(ValueError):
    """The pattern uses what this translation cannot express, or is not a valid pattern."""


def compile(pattern: str) -> Any:
    """A compiled pattern matching what ``new RegExp(pattern, "u")`` matches: ``search`` it (unanchored)."""
    import regex  # a third-party package (C): loaded when a form first has a pattern

    try:
        return regex.compile(_translate(pattern), regex.V0)
    except (regex.error, OverflowError, ValueError) as exc:
        raise UnsupportedPattern(f"{pattern!r}: {exc}") from None


def _translate(src: str) -> str:
    out: list[str] = []
    i, in_class = 0, False
    while i < len(src):
        ch = src[i]
        if ch == "\\":
            text, i = _escape(src, i + 1, in_class)
        elif in_class:
            in_class = ch != "]"
            text, i = ("\\" + ch if ch in "[&~|" else ch), i + 1
        elif ch == "[":
            text, i, in_class = _open_class(src, i)
        else:
            text, i = _outside(src, i)
        out.append(text)
    return "".join(out)


_GROUPS = ("(?:", "(?=", "(?!", "(?<=", "(?<!")
_QUANTIFIER = re.compile(r"\{\d+(?:,\d*)?\}")
_PROPERTY = re.compile(r"\{[A-Za-z0-9_]+(?:=[A-Za-z0-9_]+)?\}")
_NAMED = re.compile(r"\(\?<([A-Za-z_$][A-Za-z0-9_$]*)>")


def _outside(src: str, i: int) -> tuple[str, int]:
    """The translation of the token at ``src[i]`` outside a class, and where the next one starts."""
    ch = src[i]
    if ch == ".":
        return "[^\n\r\u2028\u2029]", i + 1
    if ch == "$":
        return r"\Z", i + 1
    if ch == "(" and src.startswith("(?", i):
        named = _NAMED.match(src, i)
        if named is not None:
            return f"(?P<{named.group(1)}>", named.end()
        if not src.startswith(_GROUPS, i):
            raise UnsupportedPattern("not an ECMA-262 group (inline flags, Python's (?P...))")
    if ch == "{":
        quantifier = _QUANTIFIER.match(src, i)
        if quantifier is None:
            raise UnsupportedPattern("a lone '{' (a syntax error with the u flag)")
        return quantifier.group(0), quantifier.end()
    if ch == "}":
        raise UnsupportedPattern("a lone '}' (a syntax error with the u flag)")
    return ch, i + 1


def _open_class(src: str, i: int) -> tuple[str, int, bool]:
    if src.startswith("[^]", i):
        return "[\x00-\U0010ffff]", i + 3, False
    if src.startswith("[]", i):
        return "(?!)", i + 2, False
    if src.startswith("[^", i):
        return "[^", i + 2, True
    return "[", i + 1, True


def _escape(src: str, i: int, in_class: bool) -> tuple[str, int]:
    """The translation of the escape whose letter is at ``src[i]``, and where the next token starts."""
    if i >= len(src):
        raise UnsupportedPattern("a pattern may not end with a backslash")
    ch = src[i]
    if ch in _IN_CLASS:
        return (_IN_CLASS[ch] if in_class else _SHORTHAND[ch]), i + 1
    if ch in "bB" and not in_class:
        return (_EDGE if ch == "b" else _NOT_EDGE), i + 1
    if ch == "b":
        return "\\x08", i + 1  # a backspace inside a class
    if ch in "pP":
        prop = _PROPERTY.match(src, i + 1)
        if prop is None:
            raise UnsupportedPattern(f"'\\{ch}' without a {{property}} (a syntax error with the u flag)")
        return "\\" + ch + prop.group(0), prop.end()
    if ch == "k" and src.startswith("<", i + 1) and ">" in src[i:]:
        end = src.index(">", i)
        return f"(?P={src[i + 2 : end]})", end + 1
    if ch == "0":
        if src[i + 1 : i + 2].isdigit():
            raise UnsupportedPattern("an octal escape (a syntax error with the u flag)")
        return "\\x00", i + 1
    match = _HEX.match(src, i)
    if match is not None:
        return _code_point(src, match)
    if ch == "-" and not in_class:
        raise UnsupportedPattern("'\\-' outside a class (a syntax error with the u flag)")
    if ch in _SYNTAX:
        return ("\\" + ch if ch != "/" or in_class else ch), i + 1
    if ch in _LETTERS or ch in "123456789":
        return "\\" + ch, i + 1  # \n \t \f \v \r, a backreference: the same in both
    raise UnsupportedPattern(f"'\\{ch}' is not an escape with the u flag")


def _code_point(src: str, match: re.Match[str]) -> tuple[str, int]:
    four, braces, two, control = match.groups()
    end = match.end()
    if control is not None:
        return f"\\x{ord(control.upper()) - 64:02x}", end
    value = int(four or braces or two, 16)
    low = re.match(r"\\u([dD][c-fC-F][0-9A-Fa-f]{2})", src[end:])
    if four is not None and 0xD800 <= value <= 0xDBFF and low is not None:
        value = 0x10000 + ((value - 0xD800) << 10) + (int(low.group(1), 16) - 0xDC00)
        end += 6
    return f"\\U{value:08x}", end
