"""Serving the ``notebook`` MCP server over streamable HTTP on 127.0.0.1, inside the kernel's loop.

A random port (bound here, so it is known before the agent is told), a bearer token per session
(checked in constant time on every request), and only local origins: a request with another
``Origin``, another ``Host`` or a wrong token is refused before it reaches the MCP server. uvicorn
normally installs its own SIGINT/SIGTERM handlers while it serves; here it does not
(``capture_signals`` is a no-op), so a kernel interrupt still interrupts the kernel — and cancels
the running turn — while the server lives.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import logging
import secrets
import socket
from collections.abc import Iterator
from typing import Any

import uvicorn
from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings

PATH = "/mcp"
STOP_WAIT = 5.0


class _QuietServer(uvicorn.Server):
    """uvicorn without its signal handlers (the kernel keeps SIGINT)."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


class HttpService:
    """One server's HTTP endpoint: ``await start()`` → URL; ``headers`` carry the token."""

    def __init__(self, server: MCPServer) -> None:
        self.server = server
        self.token = secrets.token_urlsafe(32)
        self.url: str | None = None
        self._uvicorn: _QuietServer | None = None
        self._task: asyncio.Task | None = None

    @property
    def headers(self) -> dict[str, str]:
        """What the agent must send (the server entry's ``headers``)."""
        return {"Authorization": f"Bearer {self.token}"}

    async def start(self) -> str:
        """Bind a free port on 127.0.0.1 and serve there (a task on the running loop)."""
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
        hosts = [f"127.0.0.1:{port}", f"localhost:{port}"]
        security = TransportSecuritySettings(
            allowed_hosts=hosts, allowed_origins=[f"http://{h}" for h in hosts]
        )
        app = self.server.streamable_http_app(
            streamable_http_path=PATH, json_response=True, transport_security=security
        )
        guarded = _Guard(app, self.token, hosts)
        config = uvicorn.Config(
            guarded, log_config=None, log_level="warning", access_log=False, lifespan="on"
        )
        logging.getLogger("uvicorn.error").setLevel(logging.WARNING)
        self._uvicorn = _QuietServer(config)
        self._task = asyncio.get_running_loop().create_task(self._uvicorn.serve(sockets=[sock]))
        for _ in range(500):
            if self._uvicorn.started or self._task.done():
                break
            await asyncio.sleep(0.01)
        if not self._uvicorn.started:
            await self.close()
            raise RuntimeError("the notebook MCP server did not start")
        self.url = f"http://127.0.0.1:{port}{PATH}"
        return self.url

    async def close(self) -> None:
        """Stop serving (open connections are closed); safe twice."""
        if self._uvicorn is not None:
            self._uvicorn.should_exit = True
        task, self._task = self._task, None
        if task is not None:
            try:
                await asyncio.wait_for(asyncio.shield(task), STOP_WAIT)
            except Exception:  # a stuck connection: cut it
                if self._uvicorn is not None:
                    self._uvicorn.force_exit = True
                task.cancel()
                with contextlib.suppress(BaseException):
                    await task


class _Guard:
    """ASGI middleware: the bearer token, a local Host and no foreign Origin, or 401/403."""

    def __init__(self, app: Any, token: str, hosts: list[str]) -> None:
        self.app, self._expected = app, f"Bearer {token}".encode()
        self._hosts = {h.encode() for h in hosts}
        self._origins = {f"http://{h}".encode() for h in hosts}

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope.get("type") != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        origin = headers.get(b"origin")
        if headers.get(b"host") not in self._hosts or (origin is not None and origin not in self._origins):
            await _refuse(send, 403, "forbidden: not a local request")
            return
        if not hmac.compare_digest(headers.get(b"authorization", b""), self._expected):
            await _refuse(send, 401, "unauthorized: a bearer token for this session is required")
            return
        await self.app(scope, receive, send)


async def _refuse(send: Any, status: int, message: str) -> None:
    error = {"jsonrpc": "2.0", "id": None, "error": {"code": -32001, "message": message}}
    body = json.dumps(error).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
