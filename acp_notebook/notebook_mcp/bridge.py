"""``python -m acp_notebook.notebook_mcp.bridge``: the ``notebook`` server for stdio-only agents.

The agent starts this process (the ``mcpServers`` stdio entry); it relays each JSON-RPC line from
stdin to the kernel's streamable-HTTP endpoint (``ACP_NOTEBOOK_MCP_URL``, with the bearer token
``ACP_NOTEBOOK_MCP_TOKEN`` from its environment, never its argv) and writes each answer back as a
line on stdout. The MCP protocol itself is the SDK server's, in the kernel: this only moves
bytes. Requests run concurrently (one thread each: a ``run_code`` waiting for approval blocks
nothing else); one that cannot be relayed is answered with a JSON-RPC error, never dropped.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import urllib.error
import urllib.request
from typing import Any

TIMEOUT = 3600.0  # s: a run_code may wait for a person's approval


class Bridge:
    """stdin lines → POST to the endpoint → stdout lines."""

    def __init__(self, url: str, token: str, out: Any = sys.stdout) -> None:
        self.url, self.token, self.out = url, token, out
        self.session_id: str | None = None
        self.protocol: str | None = None
        self._lock = threading.Lock()
        self._ready = threading.Event()  # set once initialize is answered (its session id known)
        self._threads: list[threading.Thread] = []

    def run(self, lines: Any) -> None:
        """Relay every line until the input ends, then wait for the answers in flight."""
        for line in lines:
            line = line.strip()
            if not line:
                continue
            message = _decode(line)
            if isinstance(message, dict) and message.get("method") == "initialize":
                self.relay(line, message)  # first, alone: later requests need its session id
                continue
            self._ready.wait(30)
            thread = threading.Thread(target=self.relay, args=(line, message), daemon=True)
            thread.start()
            self._threads.append(thread)
        for thread in self._threads:
            thread.join(TIMEOUT)

    def relay(self, line: str, message: Any) -> None:
        """POST one line; write what comes back."""
        try:
            body, headers = self._post(line.encode())
        except Exception as exc:  # the kernel is gone or refused: answer, never drop
            self._fail(message, f"the notebook server could not be reached: {exc}")
            return
        finally:
            if isinstance(message, dict) and message.get("method") == "initialize":
                self._ready.set()
        if headers.get("mcp-session-id"):
            self.session_id = headers["mcp-session-id"]
        text = body.decode("utf-8", "replace").strip()
        if text:
            self._note_protocol(text)
            self._write(text)

    def _post(self, data: bytes) -> tuple[bytes, dict[str, str]]:
        headers = {
            "Authorization": f"Bearer {self.token}",
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
        }
        if self.session_id:
            headers["Mcp-Session-Id"] = self.session_id
        if self.protocol:
            headers["Mcp-Protocol-Version"] = self.protocol
        request = urllib.request.Request(self.url, data=data, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=TIMEOUT) as response:  # 127.0.0.1 only
                return response.read(), {k.lower(): v for k, v in response.headers.items()}
        except urllib.error.HTTPError as exc:
            body = exc.read()
            if body.strip().startswith(b"{"):
                return body, {k.lower(): v for k, v in exc.headers.items()}
            raise

    def _note_protocol(self, text: str) -> None:
        reply = _decode(text)
        result = reply.get("result") if isinstance(reply, dict) else None
        if isinstance(result, dict) and isinstance(result.get("protocolVersion"), str):
            self.protocol = result["protocolVersion"]

    def _fail(self, message: Any, why: str) -> None:
        if isinstance(message, dict) and "id" in message and "method" in message:
            error = {"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32603, "message": why}}
            self._write(json.dumps(error))
        else:
            print(f"notebook bridge: {why}", file=sys.stderr, flush=True)

    def _write(self, text: str) -> None:
        with self._lock:
            self.out.write(text.replace("\n", " ") + "\n")
            self.out.flush()


def _decode(line: str) -> Any:
    try:
        return json.loads(line)
    except ValueError:
        return None


def main() -> int:
    """Run the bridge on this process's stdio."""
    url, token = os.environ.get("ACP_NOTEBOOK_MCP_URL"), os.environ.get("ACP_NOTEBOOK_MCP_TOKEN")
    if not url or not token:
        print("notebook bridge: ACP_NOTEBOOK_MCP_URL and ACP_NOTEBOOK_MCP_TOKEN must be set", file=sys.stderr)
        return 2
    Bridge(url, token).run(sys.stdin)
    return 0


if __name__ == "__main__":
    sys.exit(main())
