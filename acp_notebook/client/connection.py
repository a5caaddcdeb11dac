"""A JSON-RPC connection over an agent process: request ids, futures, in-order dispatch.

The reader handles every received message strictly in arrival order and never waits on a user:
notification and request handlers are plain synchronous callables. A request handler returns a
result, raises ``RpcError``, or returns ``DEFERRED`` and answers later with ``respond``. When
the process ends, every pending future fails with ``AgentExited``.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any

from ..protocol.diagnostics import Diagnostic
from ..protocol.jsonrpc import (
    AUTH_REQUIRED,
    INTERNAL_ERROR,
    METHOD_NOT_FOUND,
    ErrorObject,
    Notification,
    Request,
    Response,
    encode,
    parse_line,
)
from .errors import AgentExited, AuthRequired, RpcError
from .transport import AgentProcess

DEFERRED = object()
RequestHandler = Callable[[Request], Any]
NotificationHandler = Callable[[Notification], None]
ResponseHook = Callable[[Any], None]


class _Pending:
    __slots__ = ("future", "hook", "method")

    def __init__(self, method: str, future: asyncio.Future, hook: ResponseHook | None) -> None:
        self.method, self.future, self.hook = method, future, hook


class Connection:
    """Sends requests and notifications, and dispatches what the agent sends, in order."""

    def __init__(
        self,
        process: AgentProcess,
        on_request: RequestHandler,
        on_notification: NotificationHandler,
        on_diagnostic: Callable[[Diagnostic], None],
    ) -> None:
        self.process = process
        self._on_request, self._on_notification = on_request, on_notification
        self._on_diagnostic = on_diagnostic
        self.auth_methods: Callable[[], list[Any]] = list
        self._pending: dict[int, _Pending] = {}
        self._next_id = 0
        self.closed: asyncio.Future[AgentExited] = asyncio.get_running_loop().create_future()
        self._reader = asyncio.get_running_loop().create_task(self._read_loop())

    # -- sending ------------------------------------------------------------------------------
    def request(self, method: str, params: Any = None, hook: ResponseHook | None = None) -> asyncio.Future:
        """Send a request; the future resolves to its result or fails with ``RpcError``.

        ``hook(result)`` runs in the reader the moment a successful response arrives, before any
        later message is handled (turn tracking needs that ordering).
        """
        future: asyncio.Future = asyncio.get_running_loop().create_future()
        if self.closed.done():
            future.set_exception(self.closed.result())
            return future
        self._next_id += 1
        self._pending[self._next_id] = _Pending(method, future, hook)
        self._send(Request(self._next_id, method, params))
        return future

    def notify(self, method: str, params: Any = None) -> None:
        """Send a notification (fire and forget)."""
        self._send(Notification(method, params))

    def respond(self, request_id: Any, result: Any) -> None:
        """Answer an incoming request with a result."""
        self._send(Response(request_id, result))

    def respond_error(self, request_id: Any, code: int, message: str, data: Any = None) -> None:
        """Answer an incoming request with a JSON-RPC error."""
        self._send(Response(request_id, error=ErrorObject(code, message, data)))

    def _send(self, message: Any) -> None:
        self.process.write(encode(message))

    # -- receiving ----------------------------------------------------------------------------
    async def _read_loop(self) -> None:
        try:
            while True:
                try:
                    line = await self.process.readline()
                except ValueError as exc:
                    self._on_diagnostic(Diagnostic("line-too-long", f"skipped an overlong line ({exc})"))
                    continue
                if line is None:
                    break
                self._handle_line(line)
        finally:
            self._fail_all(AgentExited(await self._exit_code(), self.process.stderr_tail()))

    async def _exit_code(self) -> int | None:
        if self.process.returncode is not None:
            return self.process.returncode
        try:
            return await asyncio.wait_for(self.process.wait(), 5.0)
        except (TimeoutError, asyncio.CancelledError):
            return None

    def _handle_line(self, line: bytes) -> None:
        parsed = parse_line(line)
        for diag in parsed.diagnostics:
            self._on_diagnostic(diag)
        for reply in parsed.replies:
            self._send(reply)
        for message in parsed.messages:
            try:
                self._dispatch(message)
            except Exception as exc:  # a bug in a handler must not stop the reader
                self._on_diagnostic(Diagnostic("handler-error", f"error handling {message!r}: {exc!r}"))

    def _dispatch(self, message: Any) -> None:
        if isinstance(message, Response):
            self._resolve(message)
        elif isinstance(message, Request):
            self._serve(message)
        else:
            self._on_notification(message)

    def _resolve(self, response: Response) -> None:
        pending = self._pending.pop(response.id, None) if isinstance(response.id, int) else None
        if pending is None:
            self._on_diagnostic(Diagnostic("unknown-response", f"response to unknown id {response.id!r}"))
            return
        if response.error is not None:
            err = response.error
            if not pending.future.done():
                pending.future.set_exception(self._error(err, pending.method))
            return
        if pending.hook is not None:
            pending.hook(response.result)
        if not pending.future.done():
            pending.future.set_result(response.result)

    def _error(self, err: ErrorObject, method: str) -> RpcError:
        if err.code == AUTH_REQUIRED:
            return AuthRequired(err.message, err.data, method, self.auth_methods())
        return RpcError(err.code, err.message, err.data, method)

    def _serve(self, request: Request) -> None:
        try:
            result = self._on_request(request)
        except RpcError as exc:
            self.respond_error(request.id, exc.code, exc.message, exc.data)
            return
        except Exception as exc:
            self._on_diagnostic(Diagnostic("handler-error", f"error serving {request.method}: {exc!r}"))
            self.respond_error(request.id, INTERNAL_ERROR, f"client error: {exc}")
            return
        if result is DEFERRED:
            return
        if result is NotImplemented:
            self.respond_error(request.id, METHOD_NOT_FOUND, f"Method not found: {request.method}")
            return
        self.respond(request.id, result)

    def _fail_all(self, error: AgentExited) -> None:
        if not self.closed.done():
            self.closed.set_result(error)
        pending, self._pending = self._pending, {}
        for item in pending.values():
            if not item.future.done():
                item.future.set_exception(error)
                item.future.exception()  # mark retrieved: nobody may be awaiting it

    async def aclose(self) -> None:
        """Stop reading (after the process has been closed)."""
        if not self._reader.done():
            with contextlib.suppress(asyncio.TimeoutError, asyncio.CancelledError):
                await asyncio.wait_for(asyncio.shield(self._reader), 5.0)
        if not self._reader.done():
            self._reader.cancel()
