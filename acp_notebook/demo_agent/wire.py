"""Newline-delimited JSON-RPC 2.0 over stdio: reader thread, dispatch, outgoing requests."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
import threading
from collections.abc import Awaitable, Callable
from typing import Any, BinaryIO

METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
RESOURCE_NOT_FOUND = -32002

RequestHandler = Callable[[Any, str, dict], Awaitable[Any]]
NotificationHandler = Callable[[str, dict], None]


class RpcError(Exception):
    """A JSON-RPC error, raised by handlers or returned for our own requests."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code, self.message, self.data = code, message, data

    def to_json(self) -> dict:
        """The `error` member of a JSON-RPC error response."""
        error = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error


class Deferred:
    """Returned by a request handler that will answer the request itself later."""


DEFERRED = Deferred()


class Wire:
    """One JSON-RPC peer on a pair of byte streams (stdin/stdout by default)."""

    def __init__(self, reader: BinaryIO | None = None, writer: BinaryIO | None = None) -> None:
        self._reader = reader or sys.stdin.buffer
        self._writer = writer or sys.stdout.buffer
        self._pending: dict[int, asyncio.Future] = {}
        self._next_id = 1
        self._tasks: set[asyncio.Task] = set()
        self.closed = False
        self.on_request: RequestHandler | None = None
        self.on_notification: NotificationHandler | None = None

    # -- output ---------------------------------------------------------------

    def write_line(self, line: str) -> None:
        """Write one raw line (no validation) and flush."""
        if self.closed:
            return
        try:
            self._writer.write(line.encode("utf-8") + b"\n")
            self._writer.flush()
        except (BrokenPipeError, ValueError, OSError):
            self._close_output()

    def _close_output(self) -> None:
        """The client stopped reading: drop further output (and the exit-time flush error)."""
        self.closed = True
        with contextlib.suppress(Exception):
            os.dup2(os.open(os.devnull, os.O_WRONLY), self._writer.fileno())

    def send(self, message: dict) -> None:
        """Serialise and write one JSON-RPC message."""
        message = {"jsonrpc": "2.0", **message}
        self.write_line(json.dumps(message, ensure_ascii=False, separators=(",", ":")))

    def notify(self, method: str, params: dict) -> None:
        """Send a notification."""
        self.send({"method": method, "params": params})

    def respond(self, req_id: Any, result: Any) -> None:
        """Send a successful response."""
        self.send({"id": req_id, "result": result})

    def respond_error(self, req_id: Any, error: RpcError) -> None:
        """Send an error response."""
        self.send({"id": req_id, "error": error.to_json()})

    def start_request(self, method: str, params: dict) -> tuple[int, asyncio.Future]:
        """Send a request; return its id and a future for the result (or RpcError)."""
        req_id = self._next_id
        self._next_id += 1
        future = asyncio.get_running_loop().create_future()
        self._pending[req_id] = future
        self.send({"id": req_id, "method": method, "params": params})
        return req_id, future

    async def request(self, method: str, params: dict) -> Any:
        """Send a request and wait for its result."""
        return await self.start_request(method, params)[1]

    # -- input ----------------------------------------------------------------

    async def run(self) -> None:
        """Read and dispatch messages until the input reaches EOF."""
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[bytes | None] = asyncio.Queue()
        thread = threading.Thread(target=self._pump, args=(loop, queue), daemon=True)
        thread.start()
        while (line := await queue.get()) is not None:
            self._dispatch_line(line)
        for future in self._pending.values():
            if not future.done():
                future.set_exception(RpcError(INTERNAL_ERROR, "connection closed"))

    def _pump(self, loop: asyncio.AbstractEventLoop, queue: asyncio.Queue) -> None:
        """Reader thread: forward each stdin line to the event loop; None at EOF."""
        with contextlib.suppress(RuntimeError):  # loop already closed at shutdown
            for line in iter(self._reader.readline, b""):
                loop.call_soon_threadsafe(queue.put_nowait, line)
            loop.call_soon_threadsafe(queue.put_nowait, None)

    def _dispatch_line(self, line: bytes) -> None:
        """Parse one line; answer parse errors; route each message (batches too)."""
        if not line.strip():
            return
        try:
            message = json.loads(line)
        except ValueError:
            self.respond_error(None, RpcError(PARSE_ERROR, "Parse error"))
            return
        for item in message if isinstance(message, list) else [message]:
            self._dispatch(item)

    def _dispatch(self, message: Any) -> None:
        """Route one decoded message to a response future or a handler."""
        if not isinstance(message, dict):
            self.respond_error(None, RpcError(INVALID_REQUEST, "Invalid request"))
        elif "method" in message and "id" in message:
            self._spawn(self._serve(message["id"], message["method"], message.get("params")))
        elif "method" in message:
            if self.on_notification:  # after the requests read before it have started (arrival order)
                notify = self.on_notification
                asyncio.get_running_loop().call_soon(notify, message["method"], message.get("params") or {})
        elif "id" in message:
            self._resolve(message)

    def _resolve(self, message: dict) -> None:
        """Complete the future of one of our own requests (unknown ids are ignored)."""
        future = self._pending.pop(message["id"], None)
        if future is None or future.done():
            return
        error = message.get("error")
        if isinstance(error, dict):
            code, text = error.get("code", INTERNAL_ERROR), error.get("message", "")
            future.set_exception(RpcError(code, str(text), error.get("data")))
        else:
            future.set_result(message.get("result"))

    async def _serve(self, req_id: Any, method: str, params: Any) -> None:
        """Run a request handler and send its result or error."""
        params = params if isinstance(params, dict) else {}
        try:
            if self.on_request is None:
                raise RpcError(METHOD_NOT_FOUND, f"Method not found: {method}")
            result = await self.on_request(req_id, method, params)
        except RpcError as error:
            self.respond_error(req_id, error)
        except Exception as exc:  # a bug in the demo must not kill the connection
            print(f"demo agent: error in {method}: {exc!r}", file=sys.stderr)
            self.respond_error(req_id, RpcError(INTERNAL_ERROR, str(exc)))
        else:
            # Sent in the same step the handler returned in, so a handler can
            # schedule follow-up notifications that are guaranteed to come after.
            if result is not DEFERRED:
                self.respond(req_id, result)

    def _spawn(self, coro: Awaitable) -> None:
        """Run a coroutine as a task, keeping a reference until it finishes."""
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
