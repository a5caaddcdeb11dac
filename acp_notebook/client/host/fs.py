"""v1 ``fs/read_text_file`` and ``fs/write_text_file``, limited to the session's roots.

Paths must be absolute; symlinks are resolved before the check, so a link inside a root that
points outside it is refused. Raw writes to ``.ipynb`` files are refused by default (they corrupt
notebooks open in Jupyter). ``FilePolicy`` widens or narrows this per session.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ...protocol.jsonrpc import INVALID_PARAMS, RESOURCE_NOT_FOUND
from ..errors import RpcError

FS_DENIED = -32001  # an application error code: outside the roots, read-only, notebook


@dataclass
class FilePolicy:
    """What the agent may read and write through the client.

    ``extra_roots`` adds directories; ``read_only`` refuses every write; ``allow_notebooks`` permits
    raw ``.ipynb`` writes; ``check(op, path)`` returning False refuses one operation; ``review``
    holds every write for the user to accept or reject hunk by hunk (``host.review``).
    """

    extra_roots: Sequence[str] = ()
    read_only: bool = False
    allow_notebooks: bool = False
    check: Callable[[str, str], bool] | None = None
    review: bool = False


@dataclass
class FileAccess:
    """The file methods of one session."""

    roots: list[str]
    policy: FilePolicy = field(default_factory=FilePolicy)
    on_write: Callable[[str, str | None, str], None] | None = None

    def resolve(self, path: Any, op: str) -> str:
        """The real path of ``path`` if the agent may ``op`` it, else an ``RpcError``."""
        if not isinstance(path, str) or not os.path.isabs(path):
            raise RpcError(INVALID_PARAMS, f"{op}: path must be absolute, got {path!r}")
        real = os.path.realpath(path)
        roots = [os.path.realpath(r) for r in [*self.roots, *self.policy.extra_roots]]
        if not any(real == root or real.startswith(root.rstrip(os.sep) + os.sep) for root in roots):
            raise RpcError(FS_DENIED, f"{op}: {path} is outside the session's roots ({', '.join(roots)})")
        if self.policy.check is not None and not self.policy.check(op, real):
            raise RpcError(FS_DENIED, f"{op}: {path} refused by the session's file policy")
        return real

    def read(self, params: dict[str, Any]) -> dict[str, Any]:
        """Serve ``fs/read_text_file`` (optional 1-based ``line`` and ``limit`` in lines)."""
        real = self.resolve(params.get("path"), "read")
        try:
            with open(real, encoding="utf-8", errors="replace", newline="") as f:
                text = f.read()
        except FileNotFoundError:
            raise RpcError(RESOURCE_NOT_FOUND, f"read: {params.get('path')} does not exist") from None
        except OSError as exc:
            raise RpcError(INVALID_PARAMS, f"read: {exc.strerror}: {params.get('path')}") from None
        return {"content": _slice_lines(text, params.get("line"), params.get("limit"))}

    def write(self, params: dict[str, Any]) -> None:
        """Serve ``fs/write_text_file``; the write is reported through ``on_write``."""
        path, real, content = self.write_target(params)
        old = read_or_none(real)
        self.put(real, content)
        if self.on_write is not None:
            self.on_write(path, old, content)

    def write_target(self, params: dict[str, Any]) -> tuple[str, str, str]:
        """``(path, real path, content)`` of a write the agent may make, else an ``RpcError``."""
        path, content = params.get("path"), params.get("content")
        if not isinstance(content, str):
            raise RpcError(INVALID_PARAMS, "write: `content` must be a string")
        if self.policy.read_only:
            raise RpcError(FS_DENIED, f"write: the session is read-only; {path} not written")
        real = self.resolve(path, "write")
        if real.endswith(".ipynb") and not self.policy.allow_notebooks:
            raise RpcError(FS_DENIED, f"write: raw writes to notebooks are refused ({path})")
        return str(path), real, content

    @staticmethod
    def put(real: str, content: str) -> None:
        """Write ``content`` to the checked path ``real`` exactly (no newline translation)."""
        os.makedirs(os.path.dirname(real), exist_ok=True)
        with open(real, "w", encoding="utf-8", newline="") as f:
            f.write(content)


def _slice_lines(text: str, line: Any, limit: Any) -> str:
    if not isinstance(line, int) and not isinstance(limit, int):
        return text
    lines = text.splitlines(keepends=True)
    start = max(line - 1, 0) if isinstance(line, int) else 0
    end = start + limit if isinstance(limit, int) and limit >= 0 else len(lines)
    return "".join(lines[start:end])


def read_or_none(path: str) -> str | None:
    """The text of ``path``, or None when it cannot be read (it does not exist)."""
    try:
        with open(path, encoding="utf-8", errors="replace", newline="") as f:
            return f.read()
    except OSError:
        return None
