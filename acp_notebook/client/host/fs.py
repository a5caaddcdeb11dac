"""v1 ``fs/read_text_file`` and ``fs/write_text_file``, limited to the session's roots.

Paths must be absolute; symlinks are resolved before the check, so a link inside a root that
points outside it is refused, and the checked path is then opened by a walk from the root that
follows no link (``safe_open``): a link swapped in after the check is refused too. Only regular
files are read or written. Reads run in a worker thread, stream ``line``/``limit`` and are capped
in size and time. Raw writes to ``.ipynb`` files (any case) and writes to files with other hard
links are refused by default. ``FilePolicy`` widens or narrows this per session.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ...protocol.jsonrpc import INTERNAL_ERROR, INVALID_PARAMS, RESOURCE_NOT_FOUND
from ..errors import RpcError
from . import safe_open
from .reading import ReadTimeout, TooLarge, read_text

FS_DENIED = -32001  # an application error code: outside the roots, read-only, notebook, link
MAX_READ_BYTES = 10 * 1024 * 1024  # the default cap on the text of one read (UTF-8 bytes)
READ_TIMEOUT = 10.0  # seconds one read may take by default


@dataclass
class FilePolicy:
    """What the agent may read and write through the client.

    ``extra_roots`` adds directories; ``read_only`` refuses every write; ``allow_notebooks`` permits
    raw ``.ipynb`` writes; ``check(op, path)`` returning False refuses one operation; ``review``
    holds every write for the user to accept or reject hunk by hunk (``host.review``);
    ``max_read_bytes`` caps the text one read returns; ``read_timeout`` bounds a read in seconds;
    ``allow_hard_links`` permits writes to files that have other hard links.
    """

    extra_roots: Sequence[str] = ()
    read_only: bool = False
    allow_notebooks: bool = False
    check: Callable[[str, str], bool] | None = None
    review: bool = False
    max_read_bytes: int = MAX_READ_BYTES
    read_timeout: float = READ_TIMEOUT
    allow_hard_links: bool = False


@dataclass
class FileAccess:
    """The file methods of one session."""

    roots: list[str]
    policy: FilePolicy = field(default_factory=FilePolicy)
    on_write: Callable[[str, str | None, str], None] | None = None

    def real_roots(self) -> list[str]:
        """The real paths of the session's roots and the policy's extra roots."""
        return [os.path.realpath(r) for r in [*self.roots, *self.policy.extra_roots]]

    def root_of(self, real: str) -> str | None:
        """The deepest root holding the real path ``real``, or None."""
        inside = [r for r in self.real_roots() if real == r or real.startswith(r.rstrip(os.sep) + os.sep)]
        return max(inside, key=len, default=None)

    def resolve(self, path: Any, op: str) -> str:
        """The real path of ``path`` if the agent may ``op`` it, else an ``RpcError``."""
        if not isinstance(path, str) or not os.path.isabs(path):
            raise RpcError(INVALID_PARAMS, f"{op}: path must be absolute, got {path!r}")
        if "\x00" in path:
            raise RpcError(INVALID_PARAMS, f"{op}: path contains a NUL byte, which no file name may hold")
        real = os.path.realpath(path)
        if self.root_of(real) is None:
            roots = ", ".join(self.real_roots())
            raise RpcError(FS_DENIED, f"{op}: {path} is outside the session's roots ({roots})")
        if self.policy.check is not None and not self.policy.check(op, real):
            raise RpcError(FS_DENIED, f"{op}: {path} refused by the session's file policy")
        return real

    async def read(self, params: dict[str, Any]) -> dict[str, Any]:
        """Serve ``fs/read_text_file`` in a worker thread, within the policy's size and time caps."""
        real = self.resolve(params.get("path"), "read")
        timeout = self.policy.read_timeout
        work = asyncio.to_thread(self.read_real, real, params, time.monotonic() + timeout)
        try:
            return await asyncio.wait_for(work, timeout + 1)
        except TimeoutError:
            raise _timed_out(params.get("path"), timeout) from None

    def read_real(self, real: str, params: dict[str, Any], deadline: float | None = None) -> dict[str, Any]:
        """The blocking core of ``read`` for the checked path ``real`` (run it off the loop)."""
        path, cap = params.get("path"), self.policy.max_read_bytes
        try:
            fd = safe_open.open_file(self.root_of(real) or real, real, os.O_RDONLY)
            with os.fdopen(fd, "rb", buffering=0) as f:
                text = read_text(f.fileno(), params.get("line"), params.get("limit"), cap, deadline)
        except FileNotFoundError:
            raise RpcError(RESOURCE_NOT_FOUND, f"read: {path} does not exist") from None
        except TooLarge:
            raise RpcError(INVALID_PARAMS, _too_large(path, cap)) from None
        except ReadTimeout:
            raise _timed_out(path, self.policy.read_timeout) from None
        except safe_open.NotRegular as exc:
            raise RpcError(
                INVALID_PARAMS, f"read: {path} {exc.strerror}; only regular files are read"
            ) from None
        except safe_open.UnsafePath as exc:
            raise RpcError(FS_DENIED, f"read: {path}: {exc.strerror}; refused") from None
        except OSError as exc:
            raise RpcError(INVALID_PARAMS, f"read: {exc.strerror}: {path}") from None
        return {"content": text}

    def write(self, params: dict[str, Any]) -> None:
        """Serve ``fs/write_text_file``; the write is reported through ``on_write``."""
        path, real, content = self.write_target(params)
        old = read_or_none(real)
        try:
            self.put(real, content)
        except safe_open.UnsafePath as exc:
            raise RpcError(FS_DENIED, f"write: {path} {exc.strerror}; not written") from None
        except FileNotFoundError:
            message = f"write: {path} (or its directory) vanished during the write; not written"
            raise RpcError(RESOURCE_NOT_FOUND, message) from None
        except OSError as exc:
            raise RpcError(FS_DENIED, f"write: {path}: {exc.strerror or exc}; not written") from None
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
        if _is_notebook(real, path) and not self.policy.allow_notebooks:
            raise RpcError(FS_DENIED, f"write: raw writes to notebooks are refused ({path})")
        self._check_existing(path, real)
        return str(path), real, content

    def _check_existing(self, path: Any, real: str) -> None:
        try:
            safe_open.check_stat(os.lstat(real), self.policy.allow_hard_links)
        except FileNotFoundError:
            return
        except OSError as exc:
            raise RpcError(FS_DENIED, f"write: {path} {exc.strerror}; not written") from None

    def put(self, real: str, content: str) -> None:
        """Write ``content`` to the checked path ``real`` exactly (no newline translation, no links)."""
        data = content.encode("utf-8")
        fd = safe_open.open_file(
            self.root_of(real) or real,
            real,
            os.O_WRONLY | os.O_CREAT,
            create_dirs=True,
            allow_hard_links=self.policy.allow_hard_links,
        )
        with os.fdopen(fd, "wb") as f:
            f.truncate(0)
            f.write(data)


def _is_notebook(real: str, path: Any) -> bool:
    return any(str(p).lower().endswith(".ipynb") for p in (real, path))


def _too_large(path: Any, cap: int) -> str:
    return (
        f"read: {path} is larger than the session's read limit ({cap} bytes, "
        "FilePolicy.max_read_bytes); read it in parts with `line` and `limit`"
    )


def _timed_out(path: Any, timeout: float) -> RpcError:
    return RpcError(INTERNAL_ERROR, f"read: {path} took longer than {timeout:g} s; the read was abandoned")


def read_or_none(path: str) -> str | None:
    """The text of the regular file ``path`` (no link followed), or None when it cannot be read."""
    try:
        fd = os.open(path, os.O_RDONLY | safe_open.FILE_FLAGS)
    except OSError:
        return None
    with os.fdopen(fd, "rb", buffering=0) as f:
        try:
            safe_open.check_regular(fd)
            os.set_blocking(fd, True)
            return f.read().decode("utf-8", errors="replace")
        except OSError:
            return None
