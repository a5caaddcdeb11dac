"""Make ``%acp`` / ``%%acp`` cells *awaiting* cells (an IPython input transformer).

IPython runs a magic synchronously, and a cell that blocks never receives a click (ipykernel
processes comm messages only while a cell awaits). So after IPython has translated the magics,
this transformer rewrites every top-level call — a line starting with
``get_ipython().run_line_magic('acp', ...)`` or a cell starting with
``get_ipython().run_cell_magic('acp', ...)`` — into ``await`` of the same call to ``acp_await``,
which returns a coroutine. The cell becomes a top-level-``await`` cell: it runs on the kernel's
loop, clicks arrive while it waits, and a kernel interrupt reaches it as ``CancelledError``.

Only top-level statements are rewritten (an indented ``%acp`` in a function, or ``x = %acp ...``,
stays a plain call, which blocks); nothing is rewritten when ``%autoawait`` is off or not asyncio.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

LINE = re.compile(r"^get_ipython\(\)\.run_line_magic\('acp', ")
CELL = re.compile(r"^get_ipython\(\)\.run_cell_magic\('acp', ")
AWAIT_LINE = "await get_ipython().run_line_magic('acp_await', "
AWAIT_CELL = "await get_ipython().run_cell_magic('acp_await', "


def can_await(shell: Any) -> bool:
    """True when top-level ``await`` runs on asyncio in this shell."""
    return bool(getattr(shell, "autoawait", False)) and str(getattr(shell, "loop_runner", "")) == "asyncio"


def rewrite(lines: list[str]) -> list[str]:
    """The cell's lines with top-level ``acp`` magic calls awaited."""
    out = []
    for index, line in enumerate(lines):
        if index == 0 and CELL.match(line):
            line = CELL.sub(AWAIT_CELL, line, count=1)
        else:
            line = LINE.sub(AWAIT_LINE, line, count=1)
        out.append(line)
    return out


def make_transformer(shell: Any) -> Callable[[list[str]], list[str]]:
    """The transformer to append to ``shell.input_transformers_post``."""

    def acp_awaiting(lines: list[str]) -> list[str]:
        return rewrite(lines) if can_await(shell) else lines

    acp_awaiting.acp_notebook = True  # type: ignore[attr-defined]  # found again by unload
    return acp_awaiting
