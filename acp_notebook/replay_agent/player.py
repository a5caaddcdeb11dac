"""The replay agent's player: the trace's agent side against a live client (see the package)."""

from __future__ import annotations

import argparse
import json
import os
import select
import sys
import time
from collections import Counter
from pathlib import Path
from typing import IO, Any

from ..protocol import trace

NOT_RECORDED = -32603


class Lines:
    """Lines from a file descriptor, with a timeout (select)."""

    def __init__(self, fd: int) -> None:
        self.fd, self.buffer, self.eof = fd, b"", False

    def read(self, timeout: float) -> bytes | None:
        """The next line, or None at end of input or after ``timeout`` s."""
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buffer and not self.eof:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.fd], [], [], left)[0]:
                return None
            chunk = os.read(self.fd, 65536)
            self.eof = not chunk
            self.buffer += chunk
        if b"\n" not in self.buffer:
            line, self.buffer = self.buffer, b""
            return line or None
        line, self.buffer = self.buffer.split(b"\n", 1)
        return line


def _kind(message: Any) -> str:
    if isinstance(message, list):
        return "batch"
    if not isinstance(message, dict):
        return "other"
    if "method" in message:
        return "request" if "id" in message else "notification"
    return "response"


class Player:
    """Walks a trace's entries; the client's lines come from ``stdin``."""

    def __init__(
        self, entries: list[dict[str, Any]], stdin: Lines, out: IO[bytes], err: IO[str], timeout: float
    ) -> None:
        self.entries, self.stdin, self.out, self.err, self.timeout = entries, stdin, out, err, timeout
        self.pool: list[Any] = []  # client messages received and not yet matched
        self.ids: dict[Any, Any] = {}  # recorded client request id -> live id
        self.divergences: list[str] = []
        self.expected = Counter(
            e["message"]["method"]
            for e in entries
            if e.get("dir") == "out" and _kind(e.get("message")) == "request"
        )

    def run(self, speed: float | None = None) -> int:
        """Play every entry, then read until the client closes; 1 if anything diverged."""
        previous = 0.0
        for index, entry in enumerate(self.entries):
            if speed and entry.get("dir") == "in":
                time.sleep(min(max(float(entry.get("t", 0)) - previous, 0.0), 2.0) / speed)
            previous = float(entry.get("t", previous))
            self.play(index, entry)
        while self._receive(self.timeout * 10):
            pass
        for message in self.pool:
            self.diverge(f"the client sent {_describe(message)}, which the recording does not have")
        if self.divergences:
            self.err.write(f"replay_agent: {len(self.divergences)} divergence(s) from the recording\n")
        self.err.flush()
        return 1 if self.divergences else 0

    def play(self, index: int, entry: dict[str, Any]) -> None:
        """One entry: write what the agent wrote, or wait for what the client sent."""
        kind, text = entry.get("kind"), str(entry.get("text", ""))
        if kind == "stderr":
            self.err.write(text + "\n")
            self.err.flush()
        elif kind == "stdout" and entry.get("dir") == "in":
            self._write(text)
        elif kind == "message" and entry.get("dir") == "in":
            self._write(json.dumps(self._remap(entry.get("message")), ensure_ascii=False))
        elif kind == "message" and entry.get("dir") == "out":
            self.expect(index, entry["message"])

    def _remap(self, message: Any) -> Any:
        if isinstance(message, list):
            return [self._remap(m) for m in message]
        if _kind(message) == "response":
            return {**message, "id": self.ids.get(_key(message.get("id")), message.get("id"))}
        params = message.get("params") if isinstance(message, dict) else None
        scoped = isinstance(params, dict) and "requestId" in params
        if scoped and message.get("method") == "elicitation/create":
            scope = self.ids.get(_key(params["requestId"]), params["requestId"])  # the client's live id
            return {**message, "params": {**params, "requestId": scope}}
        return message

    def expect(self, index: int, recorded: Any) -> None:
        """Wait for the client's message matching the recorded one (bounded by ``timeout``)."""
        deadline = time.monotonic() + self.timeout
        while True:
            found = next((m for m in self.pool if _matches(recorded, m)), None)
            if found is not None:
                self.pool.remove(found)
                return self._matched(index, recorded, found)
            left = deadline - time.monotonic()
            if left <= 0 or not self._receive(left):
                return self.diverge(f"entry {index + 1}: the client never sent {_describe(recorded)}")

    def _matched(self, index: int, recorded: Any, live: Any) -> None:
        kind = _kind(recorded)
        if kind == "request":
            self.ids[_key(recorded["id"])] = live.get("id")
            self.expected[recorded["method"]] -= 1
        elif kind == "response":
            want = {k: recorded.get(k) for k in ("result", "error")}
            got = {k: live.get(k) for k in ("result", "error")}
            if want != got:
                self.diverge(
                    f"entry {index + 1}: the client answered {json.dumps(got)}, recorded {json.dumps(want)}"
                )

    def _receive(self, timeout: float) -> bool:
        """Read one client line into the pool; False at end of input or on timeout."""
        line = self.stdin.read(timeout)
        if line is None:
            return False
        try:
            message = json.loads(line)
        except ValueError:
            self.diverge(f"the client sent a line that is not JSON: {line[:80]!r}")
            return True
        if _kind(message) == "request" and self._unexpected(message):
            self.diverge(f"the client sent {_describe(message)}, which the recording does not have")
            error = {
                "code": NOT_RECORDED,
                "message": f"replay_agent: {message['method']} is not in the recording",
            }
            self._write(json.dumps({"jsonrpc": "2.0", "id": message["id"], "error": error}))
        else:
            self.pool.append(message)
        return True

    def _unexpected(self, message: dict[str, Any]) -> bool:
        waiting = sum(1 for m in self.pool if _kind(m) == "request" and m.get("method") == message["method"])
        return waiting >= self.expected[message["method"]]

    def _write(self, text: str) -> None:
        self.out.write(text.encode("utf-8", "surrogatepass") + b"\n")
        self.out.flush()

    def diverge(self, text: str) -> None:
        """Report one divergence on stderr."""
        self.divergences.append(text)
        self.err.write(f"replay_agent: divergence: {text}\n")
        self.err.flush()


def _matches(recorded: Any, live: Any) -> bool:
    kind = _kind(recorded)
    if kind != _kind(live):
        return False
    if kind in ("request", "notification"):
        return recorded["method"] == live["method"]
    if kind == "response":
        return _key(recorded.get("id")) == _key(live.get("id"))
    return kind == "batch"


def _describe(message: Any) -> str:
    kind = _kind(message)
    if kind in ("request", "notification"):
        return f"a {message['method']} {kind}"
    if kind == "response":
        return f"a response to request {message.get('id')!r}"
    return f"a {kind}"


def _key(value: Any) -> Any:
    return json.dumps(value, sort_keys=True) if isinstance(value, dict | list) else value


def main(argv: list[str] | None = None) -> int:
    """Parse the command line and play the trace."""
    parser = argparse.ArgumentParser(prog="python -m acp_notebook.replay_agent", description=__doc__)
    parser.add_argument("trace", help="a trace file (start_agent(record=...)) or a shipped trace's name")
    parser.add_argument("--timeout", type=float, default=30.0, help="s to wait for each client message")
    parser.add_argument("--speed", type=float, default=None, help="pace agent lines at the recorded times")
    args = parser.parse_args(argv)
    path = Path(args.trace)
    if not path.exists():
        path = Path(__file__).parents[1] / "traces" / path.name
    _, entries = trace.parse(path.read_text(encoding="utf-8").splitlines())
    player = Player(entries, Lines(sys.stdin.fileno()), sys.stdout.buffer, sys.stderr, args.timeout)
    return player.run(args.speed)
