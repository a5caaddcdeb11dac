"""An agent's stdio in memory: the real client intake fed with recorded lines, no process.

``MemoryStream`` stands where ``transport.AgentProcess`` stands: ``Agent(MemoryStream())`` runs
the same connection, wire and sessions, while the caller plays the agent — ``push`` a line as if
the agent wrote it, read what the client wrote in ``sent`` (decoded), or answer it as it goes
out with ``on_sent``. ``end`` closes the agent's side (its stdout ends).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any


class MemoryStream:
    """An in-memory agent side for an ``Agent``."""

    def __init__(self, on_sent: Callable[[Any], None] | None = None, argv: list[str] | None = None) -> None:
        self.argv = argv or ["(memory)"]
        self.pid: int | None = None
        self.returncode: int | None = None
        self.sent: list[Any] = []
        self.raw: list[bytes] = []
        self.on_sent = on_sent
        self._lines: asyncio.Queue[bytes | None] = asyncio.Queue()
        self._idle = asyncio.Event()

    # -- the agent's side -------------------------------------------------------------------------
    def push(self, line: str | bytes | dict[str, Any]) -> None:
        """Deliver one line as if the agent had written it (a dict is encoded as JSON)."""
        if isinstance(line, dict):
            line = json.dumps(line)
        data = line.encode("utf-8", "surrogatepass") if isinstance(line, str) else line
        self._idle.clear()
        self._lines.put_nowait(data if data.endswith(b"\n") else data + b"\n")

    def end(self, returncode: int = 0) -> None:
        """The agent's stdout ends (it exited with ``returncode``)."""
        self.returncode = returncode
        self._lines.put_nowait(None)

    # -- what the connection uses -------------------------------------------------------------------
    async def idle(self) -> None:
        """Wait until the client has handled every line pushed so far."""
        await self._idle.wait()

    async def readline(self) -> bytes | None:
        """The next line the agent wrote, or None at the end."""
        if self._lines.empty():
            self._idle.set()
        line = await self._lines.get()
        if line is None:
            self._lines.put_nowait(None)
        return line

    def write(self, data: bytes) -> bool:
        """Take one line the client wrote."""
        if self.returncode is not None:
            return False
        self.raw.append(data)
        message = json.loads(data)
        self.sent.append(message)
        if self.on_sent is not None:
            self.on_sent(message)
        return True

    async def drain(self) -> None:
        """Nothing to flush."""

    async def wait(self) -> int:
        """The exit code (0 unless ``end`` said otherwise)."""
        return self.returncode or 0

    def stderr_tail(self, lines: int = 20) -> list[str]:
        """No stderr."""
        return []

    async def close(self, grace: float = 0.0) -> int:
        """End the stream."""
        if self.returncode is None:
            self.end(0)
        return self.returncode or 0
