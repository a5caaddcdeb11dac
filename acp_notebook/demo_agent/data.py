"""Fixed data the demo story shows: file texts, terminal bytes, patch and shell builders."""

from __future__ import annotations

import difflib
import os
import re

AGENT_NAME = "acp-notebook-demo"
AGENT_TITLE = "ACP Notebook demo agent"
AGENT_VERSION = "0.1.0"

TEST_COMMAND = "pytest -q"
ALLOW_ONCE = "allow-once"
ALLOW_ALWAYS = "allow-always"
REJECT_ONCE = "reject-once"
ALLOW_OPTION_IDS = frozenset({ALLOW_ONCE, ALLOW_ALWAYS})

PERMISSION_OPTIONS = [
    {"optionId": ALLOW_ONCE, "name": "Allow once", "kind": "allow_once"},
    {"optionId": ALLOW_ALWAYS, "name": "Always allow", "kind": "allow_always"},
    {"optionId": REJECT_ONCE, "name": "Reject", "kind": "reject_once"},
]

PYPROJECT_TEXT = """\
[project]
name = "demo-app"
version = "0.1.0"
requires-python = ">=3.11"

[tool.pytest.ini_options]
addopts = "-q"
"""

APP_OLD = '''\
"""A tiny demo application."""


def greet(name: str) -> str:
    """Return a friendly greeting."""
    return f"Hello, {name}!"


def average(values: list[float]) -> float:
    """Return the mean of values (0.0 for an empty list)."""
    if not values:
        return 0.0
    return sum(values) / len(values) + 1


if __name__ == "__main__":
    print(greet("world"), average([1.0, 2.0, 3.0]))
'''

APP_NEW = APP_OLD.replace("sum(values) / len(values) + 1", "sum(values) / len(values)")

UTIL_NEW = '''\
"""Small helpers for the demo application."""


def clamp(value: float, low: float, high: float) -> float:
    """Limit value to the closed range [low, high]."""
    return max(low, min(high, value))
'''

# The exact bytes the test run prints, one entry per terminal_output_chunk.
# Chunk boundaries deliberately split an escape sequence (ESC[3 | 2m) and the
# UTF-8 bytes of "✓" (E2 9C | 93); the progress bar is redrawn with "\r".
TERMINAL_CHUNKS: list[bytes] = [
    b"\x1b[1m============ test session starts ============\x1b[0m\r\n",
    b"collected 3 items\r\n",
    b"\r[#####     ] 50%",
    b"\r[########  ] 80%",
    b"\r[##########] 100%\r\n",
    b"tests/test_app.py::test_greet \x1b[32mPASSED\x1b[0m\r\n",
    b"tests/test_app.py::test_average \x1b[3",
    b"2mPASSED\x1b[0m\r\n",
    b"tests/test_util.py::test_clamp \x1b[32mPASSED\x1b[0m \xe2\x9c",
    b"\x93\r\n",
    b"\x1b[31mwarning:\x1b[0m average([]) returns 0.0\r\n",
    b"\x1b[1;32m3 passed\x1b[0m, \x1b[31m1 warning\x1b[0m in 0.04s\r\n",
]

TERMINAL_OUTPUT: bytes = b"".join(TERMINAL_CHUNKS)

CHANGELOG_OLD = """\
# Changelog

## Unreleased

- Add `greet()`.
"""
CHANGELOG_NEW = CHANGELOG_OLD + "- Fix `average()`: it no longer adds 1 to the mean.\n"
LINT_COMMAND = "ruff check ."
LINT_CHUNKS: list[bytes] = [b"\x1b[1mChecking 2 files\x1b[0m\r\n", b"\x1b[32mAll checks passed!\x1b[0m\r\n"]

SEARCH_HITS = [
    "tests/test_app.py:8: # TODO: cover negative numbers",
    "docs/new.md:3: TODO: document clamp()",
    "pyproject.toml:6: # TODO: pin the test dependencies",
]

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def absolute(cwd: str, rel: str) -> str:
    """Join a story-relative path onto the session's absolute cwd."""
    return os.path.join(cwd, *rel.split("/"))


def git_patch(cwd: str) -> str:
    """Return the git patch (absolute paths) for the text edits of the story."""
    sections = [
        _section(absolute(cwd, "src/app.py"), APP_OLD, APP_NEW),
        _section(absolute(cwd, "src/util.py"), None, UTIL_NEW),
    ]
    return "".join(sections)


def _section(path: str, old: str | None, new: str) -> str:
    """One `diff --git` section; `old=None` means a newly added file."""
    header = [f"diff --git {path} {path}"]
    if old is None:
        header.append("new file mode 100644")
    before = "/dev/null" if old is None else path
    old_lines = (old or "").splitlines()
    body = difflib.unified_diff(old_lines, new.splitlines(), before, path, lineterm="")
    return "\n".join([*header, *body]) + "\n"


def shell_script(pause: float) -> str:
    """A `sh -c` snippet printing TERMINAL_CHUNKS byte for byte with printf."""
    steps = [f"printf '{_printf_escape(chunk)}'" for chunk in TERMINAL_CHUNKS]
    glue = f"; sleep {pause:.2f}; " if pause > 0 else "; "
    return glue.join(steps)


def _printf_escape(data: bytes) -> str:
    """Escape bytes for a single-quoted printf format (octal for anything unusual)."""
    out = []
    for byte in data:
        char = chr(byte)
        plain = 32 <= byte < 127 and char not in "%\\'"
        out.append(char if plain else f"\\{byte:03o}")
    return "".join(out)


def plain_text(data: bytes) -> str:
    """Decode terminal bytes into plain text: ANSI removed, `\\r` redraws collapsed."""
    text = _ANSI.sub("", data.decode("utf-8", errors="replace"))
    lines = text.replace("\r\n", "\n").split("\n")
    return "\n".join(line.rsplit("\r", 1)[-1] for line in lines)
