"""What a recorded v1 host answer did to the state, done again without running anything.

Live, ``host.terminals`` runs a ``terminal/create`` command in a PTY and its bytes fill
``state.terminals``. A replay runs nothing: it reads the same facts from the recorded answers —
the command from the request, the bytes from ``terminal/output``, the exit status from
``terminal/wait_for_exit`` or ``terminal/output`` — and applies them as terminal updates.
(File writes are not re-done: the trace does not hold the file's old text.)
"""

from __future__ import annotations

import base64
import shlex
from typing import Any

from ..protocol.state import SessionState


def display(params: dict[str, Any]) -> str:
    """The command line as the live host shows it."""
    command, args = params.get("command"), params.get("args") or []
    if not isinstance(command, str) or not all(isinstance(a, str) for a in args):
        return str(command)
    return shlex.join([command, *args]) if args else command


def apply_answer(state: SessionState, cwd: str, method: str, params: Any, result: Any) -> None:
    """Apply what the client's recorded answer to ``method`` showed of a terminal."""
    params = params if isinstance(params, dict) else {}
    result = result if isinstance(result, dict) else {}
    terminal_id = result.get("terminalId") if method == "terminal/create" else params.get("terminalId")
    if not isinstance(terminal_id, str):
        return
    update: dict[str, Any] = {"sessionUpdate": "terminal_update", "terminalId": terminal_id}
    if method == "terminal/create":
        update.update(command=display(params), cwd=params.get("cwd") or cwd)
    elif method == "terminal/output" and isinstance(result.get("output"), str):
        update["output"] = {"data": base64.b64encode(result["output"].encode("utf-8")).decode("ascii")}
        if isinstance(result.get("exitStatus"), dict):
            update["exitStatus"] = result["exitStatus"]
    elif method == "terminal/wait_for_exit":
        update["exitStatus"] = result
    else:
        return
    state.apply(update)
