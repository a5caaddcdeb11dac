"""A JSON-RPC connection over an agent's stdio: request ids, futures, in-order dispatch.

The reader handles every received message strictly in arrival order and never waits on a user:
handlers are plain synchronous callables found in the wire's routing table (``Routes``). A
request handler returns a result, raises ``RpcError``, or returns ``DEFERRED`` and answers later
with ``respond``. Nothing either side sent is left unsettled: every request gets exactly one
answer (``-32601`` when nothing routes it), every response to a known id settles its future
(a malformed error settles it as an error), the replies to a batch go out as one array once all
its requests are answered, and when the agent's stdout ends every pending future fails with
``AgentExited``. Encoding is checked before anything is recorded: a value that cannot be sent
raises for the caller.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
from collections.abc import Callable
from typing import Any, Protocol

from ..protocol.depth import Decoded
from ..protocol.diagnostics import Diagnostic
from ..protocol.jsonrpc import (
    INTERNAL_ERROR,
    METHOD_NOT_FOUND,
    ErrorObject,
    Notification,
    Request,
    Response,
    encode_plain,
    parse_line,
)
from .errors import AgentExited, RpcError
from .replies import BatchReplies

DEFERRED = object()
EXIT_WAIT = 5.0  # s an agent whose stdout ended has to exit before it counts as still running
ResponseHook = Callable[[Any], None]
Tap = Callable[[str, bytes, Decoded | None], None]  # (direction "in"/"out", line, its JSON if read)


class Routes(Protocol):
    """Incoming method name → handler (an ``AgentConnection``'s routing table)."""

    requests: dict[str, Callable[[Request], Any]]
    notifications: dict[str, Callable[[Notification], None]]


class _NoRoutes:
    """Before ``initialize`` has answered: nothing is routed."""

    def __init__(self) -> None:
        self.requests: dict[str, Callable[[Request], Any]] = {}
        self.notifications: dict[str, Callable[[Notification], None]] = {}


def _generic_error(err: ErrorObject, method: str) -> RpcError:
    return RpcError(err.code, err.message, err.data, method)


class Stream(Protocol):
    """What the connection needs of the agent process (``transport.AgentProcess``)."""

    returncode: int | None

    async def readline(self) -> bytes | None: ...
    def write(self, data: bytes) -> bool: ...
    def pending_method(self, request_id: Any) -> str | None:
        """The method of our request ``request_id`` while it waits for its answer; else None."""
        known = isinstance(request_id, int) and not isinstance(request_id, bool)
        pending = self._pending.get(request_id) if known else None
        return pending.method if pending is not None and not pending.future.done() else None

    async def drain(self) -> None: ...
    async def wait(self) -> int: ...
    def stderr_tail(self, lines: int = 20) -> list[str]: ...


class _Pending:
    __slots__ = ("context", "future", "hook", "method")

    def __init__(self, method: str, future: asyncio.Future, hook: ResponseHook | None) -> None:
        self.method, self.future, self.hook = method, future, hook
        self.context = contextvars.copy_context()  # the caller's (a cell's output goes there)


def _retrieved(future: asyncio.Future) -> None:
    if not future.cancelled():
        future.exception()  # nobody awaits a withdrawn request any more


class Connection:
    """Sends requests and notifications, and dispatches what the agent sends, in order."""

    def __init__(self, process: Stream, on_diagnostic: Callable[[Diagnostic], None]) -> None:
        self.process = process
        self.routes: Routes = _NoRoutes()
        self.null_ids = True
        self.typed_error: Callable[[ErrorObject, str], RpcError] = _generic_error  # the version's errors
        self.on_stdout: Callable[[str], None] = lambda _text: None  # a line that is not JSON
        self.taps: list[Tap] = []  # observers of every line, handed its JSON when already read
        self._on_diagnostic = on_diagnostic
        self._pending: dict[int, _Pending] = {}
        self._batches = BatchReplies(self._write)
        self._next_id = 0
        loop = asyncio.get_running_loop()
        self.closed: asyncio.Future[AgentExited] = loop.create_future()
        self._reader = loop.create_task(self._read_loop())

    def route(self, routes: Routes, *, null_ids: bool) -> None:
        """Adopt a version's routing table and id rule (after ``initialize``)."""
        self.routes, self.null_ids = routes, null_ids

    # -- sending ------------------------------------------------------------------------------
    def request(self, method: str, params: Any = None, hook: ResponseHook | None = None) -> asyncio.Future:
        """Send a request; the future resolves to its result or fails with ``RpcError``.

        ``hook(result)`` runs in the reader the moment a successful response arrives, before any
        later message is handled (turn tracking needs that ordering). Raises ``ValueError`` at
        once for params that cannot be encoded (NaN, infinity); nothing is sent then.
        """
        future: asyncio.Future = asyncio.get_running_loop().create_future()
        if self.closed.done():
            future.set_exception(self.closed.result())
            return future
        data, plain = encode_plain(Request(self._next_id + 1, method, params))
        self._next_id += 1
        self._pending[self._next_id] = _Pending(method, future, hook)
        self._write(data, plain)
        return future

    def pending_id(self, future: asyncio.Future) -> int | None:
        """The id of the request whose answer ``future`` waits for, while it waits; else None.
        Its late answer then settles it quietly (nobody awaits it any more)."""
        for request_id, pending in self._pending.items():
            if pending.future is future and not future.done():
                future.add_done_callback(_retrieved)
                return request_id
        return None

    def pending_method(self, request_id: Any) -> str | None:
        """The method of our request ``request_id`` while it waits for its answer; else None."""
        pending = self._waiting(request_id)
        return pending.method if pending is not None else None

    def pending_context(self, request_id: Any) -> contextvars.Context | None:
        """The context our request ``request_id`` was sent from (its cell's), while it waits."""
        pending = self._waiting(request_id)
        return pending.context if pending is not None else None

    def _waiting(self, request_id: Any) -> _Pending | None:
        known = isinstance(request_id, int) and not isinstance(request_id, bool)
        pending = self._pending.get(request_id) if known else None
        return pending if pending is not None and not pending.future.done() else None

    async def drain(self) -> None:
        """Wait until what was written has gone to the agent."""
        await self.process.drain()

    def notify(self, method: str, params: Any = None) -> None:
        """Send a notification (fire and forget); raises ``ValueError`` if it cannot be encoded."""
        self._write(*encode_plain(Notification(method, params)))

    def respond(self, request_id: Any, result: Any) -> None:
        """Answer an incoming request with a result (``ValueError``, nothing sent, if unencodable)."""
        self._reply(Response(request_id, result))

    def respond_error(self, request_id: Any, code: int, message: str, data: Any = None) -> None:
        """Answer an incoming request with a JSON-RPC error."""
        self._reply(Response(request_id, error=ErrorObject(code, message, data)))

    def _reply(self, response: Response) -> None:
        data, plain = encode_plain(response)  # raises before anything is recorded
        if not self._batches.answer(response):
            self._write(data, plain)

    def _write(self, data: bytes, plain: Decoded | None = None) -> None:
        self._tap("out", data, plain)
        self.process.write(data)

    def _tap(self, direction: str, line: bytes, plain: Decoded | None) -> None:
        for tap in self.taps:
            try:
                tap(direction, line, plain)
            except Exception as exc:  # a recorder's failure never stops the traffic
                self._on_diagnostic(Diagnostic("tap-error", f"traffic tap failed: {exc!r}"))

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
                self.feed(line)
        finally:
            code = await self._exit_code()
            what = "(it closed its stdout but kept running)" if self.process.returncode is None else ""
            self._fail_all(AgentExited(code, self.process.stderr_tail(), what))

    async def _exit_code(self) -> int | None:
        if self.process.returncode is not None:
            return self.process.returncode
        try:
            return await asyncio.wait_for(self.process.wait(), EXIT_WAIT)
        except (TimeoutError, asyncio.CancelledError):
            return None

    def feed(self, line: bytes) -> None:
        """Handle one received line (the reader calls this; so can a replay): decoded once, the
        taps handed what was decoded."""
        parsed = parse_line(line, null_ids=self.null_ids)
        self._tap("in", line, parsed.plain)
        for diag in parsed.diagnostics:
            self._on_diagnostic(diag)
        if not parsed.messages and any(d.code == "invalid-json" for d in parsed.diagnostics):
            self.on_stdout(line.decode("utf-8", "replace").rstrip("\r\n"))
        requests = [m for m in parsed.messages if isinstance(m, Request)]
        if parsed.batch:
            self._batches.open([r.id for r in requests], parsed.replies)
        else:
            for reply in parsed.replies:
                self._write(*encode_plain(reply))
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
            handler = self.routes.notifications.get(message.method)
            if handler is None and message.method.startswith("_"):
                return  # an extension notification nobody here handles: ignored, as the docs say
            if handler is None:
                self._on_diagnostic(
                    Diagnostic("unknown-notification", f"no handler for {message.method!r}", level="info")
                )
                return
            handler(message)

    def _resolve(self, response: Response) -> None:
        pending = self._pending.pop(response.id, None) if isinstance(response.id, int) else None
        if pending is None:
            self._on_diagnostic(Diagnostic("unknown-response", f"response to unknown id {response.id!r}"))
            return
        if response.error is not None:
            if not pending.future.done():
                pending.future.set_exception(self.typed_error(response.error, pending.method))
            return
        try:
            if pending.hook is not None:
                pending.hook(response.result)
        finally:  # a failing hook still settles the request
            if not pending.future.done():
                pending.future.set_result(response.result)

    def _serve(self, request: Request) -> None:
        handler = self.routes.requests.get(request.method)
        if handler is None:
            self.respond_error(request.id, METHOD_NOT_FOUND, f"Method not found: {request.method}")
            return
        try:
            result = handler(request)
        except RpcError as exc:
            self.respond_error(request.id, exc.code, exc.message, exc.data)
            return
        except Exception as exc:
            self._on_diagnostic(Diagnostic("handler-error", f"error serving {request.method}: {exc!r}"))
            self.respond_error(request.id, INTERNAL_ERROR, f"client error: {exc}")
            return
        if result is not DEFERRED:
            self.answer(request.id, result)

    def answer(self, request_id: Any, result: Any) -> None:
        """``respond``, falling back to an internal error when the result cannot be encoded."""
        try:
            self.respond(request_id, result)
        except ValueError as exc:
            self.respond_error(request_id, INTERNAL_ERROR, f"client error: unencodable result ({exc})")

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
