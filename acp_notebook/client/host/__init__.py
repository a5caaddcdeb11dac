"""What a v1 client offers its agent: file access and terminals (``fs/*``, ``terminal/*``)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from ...protocol.jsonrpc import INTERNAL_ERROR, METHOD_NOT_FOUND, Request
from ...protocol.state import SessionState
from ..errors import RpcError
from .fs import FileAccess, FilePolicy
from .review import REVIEW_CONFLICT, REVIEW_REJECTED, ReviewDesk
from .terminals import TerminalHost

__all__ = ["HOST_METHODS", "REVIEW_CONFLICT", "REVIEW_REJECTED", "FilePolicy", "Host"]

HOST_METHODS = frozenset(
    {
        "fs/read_text_file",
        "fs/write_text_file",
        "terminal/create",
        "terminal/output",
        "terminal/wait_for_exit",
        "terminal/kill",
        "terminal/release",
    }
)


class Responder(Protocol):
    """Where answers go (the connection)."""

    def answer(self, request_id: Any, result: Any) -> None: ...
    def respond_error(self, request_id: Any, code: int, message: str, data: Any = None) -> None: ...


class Host:
    """The v1 host capabilities of one session, limited to its roots."""

    def __init__(self, state: SessionState, roots: list[str], policy: FilePolicy | None = None) -> None:
        self.state = state
        self.files = FileAccess(roots, policy or FilePolicy(), on_write=state.record_file_write)
        self.terminals = TerminalHost(state, self.files, roots[0] if roots else None)
        self.reviews = ReviewDesk(state, self.files)  # writes held for review (``policy.review``)
        self._methods: dict[str, Callable[[dict[str, Any]], Awaitable[Any]]] = {
            "fs/read_text_file": self._read,
            "fs/write_text_file": self._write,
            "terminal/create": self.terminals.create,
            "terminal/output": self.terminals.output,
            "terminal/wait_for_exit": self.terminals.wait_for_exit,
            "terminal/kill": self.terminals.kill,
            "terminal/release": self.terminals.release,
        }

    async def serve(self, method: str, params: dict[str, Any]) -> Any:
        """Run one host method; errors are ``RpcError``s for the agent."""
        handler = self._methods.get(method)
        if handler is None:
            raise RpcError(METHOD_NOT_FOUND, f"Method not found: {method}")
        return await handler(params)

    async def answer(self, request: Request, to: Responder) -> None:
        """Serve one request and send its answer: a result, or the error it met."""
        params = request.params if isinstance(request.params, dict) else {}
        try:
            result = await self.serve(request.method, params)
        except RpcError as exc:
            to.respond_error(request.id, exc.code, exc.message, exc.data)
        except Exception as exc:
            self.state.diagnose("host-error", f"{request.method} failed: {exc!r}")
            to.respond_error(request.id, INTERNAL_ERROR, f"client error: {exc}")
        else:
            to.answer(request.id, result)

    async def _read(self, params: dict[str, Any]) -> Any:
        return await self.files.read(params)

    async def _write(self, params: dict[str, Any]) -> Any:
        if self.files.policy.review:
            return await self.reviews.write(params)
        self.files.write(params)
        return {}

    async def close(self) -> None:
        """Answer pending reviews rejected; kill and release every terminal."""
        self.reviews.cancel_all("the session closed")
        await self.terminals.close()
