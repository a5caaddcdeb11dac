"""A tiny ACP v2 agent that floods one tool call's display terminal (for bench/browser_terminal.py).

Usage: ``python terminal_flood.py --stats DIR [--chunk-kib K]``. Each prompt whose text is
``flood N`` makes a fresh tool call with a terminal and streams N MiB of ANSI-coloured text lines
into it as ``terminal_output_chunk`` updates of K KiB (default 16), then ends the turn. The payload
and its JSON lines are built before the first chunk, so only the streaming is timed; when done it
writes ``DIR/flood-<turn>.json``: bytes, SHA-256, chunk count, the wall-clock times of the first
and the last chunk, and the last line. No model, no network; it exits when stdin closes.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import sys
import time
from pathlib import Path

SESSION = "sess_flood"
LINES = [
    "\x1b[32mPASSED\x1b[0m tests/test_core.py::test_apply_{n}",
    "collecting ... collected {n} items",
    "\x1b[33mwarning\x1b[0m: src/module_{m}.py:12 unused import \u2014 os",
    "\x1b[1;34mCompiling\x1b[0m acp-notebook v0.1.{m} (/home/user/project)",
    "\x1b[31mFAILED\x1b[0m tests/test_view.py::test_patch_{n} - assert {m} == 0",
    "   {n:>8} lines \x1b[2mread from\x1b[0m /var/log/build-{m}.log",
]


def payload(mib: int) -> bytes:
    """``mib`` MiB of short (< 80 columns) coloured lines, ending with a plain marker line."""
    want = mib * 1024 * 1024
    out, n = bytearray(), 0
    while len(out) < want - 160:
        out += (LINES[n % len(LINES)].format(n=n, m=n % 997) + "\n").encode()
        n += 1
    tail = f"flood done: {n} lines".encode()
    out += b"." * (want - len(out) - len(tail) - 1) + b"\n" + tail
    return bytes(out)


def line(update: dict) -> bytes:
    """One ``session/update`` notification, as a JSON line."""
    msg = {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": SESSION, "update": update}}
    return json.dumps(msg, separators=(",", ":")).encode() + b"\n"


class Flood:
    """Answers initialize, session/new and session/prompt; floods a terminal per prompt."""

    def __init__(self, stats: Path, chunk: int) -> None:
        self.stats, self.chunk, self.turn = stats, chunk, 0
        self.out = sys.stdout.buffer

    def send(self, data: bytes) -> None:
        self.out.write(data)
        self.out.flush()

    def reply(self, req_id: object, result: dict) -> None:
        self.send(json.dumps({"jsonrpc": "2.0", "id": req_id, "result": result}).encode() + b"\n")

    def handle(self, msg: dict) -> None:
        method, req_id = msg.get("method"), msg.get("id")
        if method == "initialize":
            info = {"name": "terminal-flood", "title": "Terminal flood (bench)", "version": "1.0"}
            self.reply(req_id, {"protocolVersion": 2, "info": info, "capabilities": {}, "authMethods": []})
        elif method == "session/new":
            self.reply(req_id, {"sessionId": SESSION, "availableCommands": []})
        elif method == "session/prompt":
            self.prompt(req_id, msg.get("params", {}).get("prompt") or [])
        elif req_id is not None and method is not None:
            err = {"code": -32601, "message": f"Method not found: {method}"}
            self.send(json.dumps({"jsonrpc": "2.0", "id": req_id, "error": err}).encode() + b"\n")

    def prompt(self, req_id: object, prompt: list) -> None:
        self.turn += 1
        text = " ".join(b.get("text", "") for b in prompt if isinstance(b, dict))
        words = text.split()
        mib = int(words[1]) if len(words) > 1 and words[0] == "flood" and words[1].isdigit() else 1
        data = payload(mib)
        chunks = [line(self.chunk_update(data[i : i + self.chunk])) for i in range(0, len(data), self.chunk)]
        self.reply(req_id, {"messageId": f"user_{self.turn}"})
        self.send(
            line({"sessionUpdate": "user_message", "messageId": f"user_{self.turn}", "content": prompt})
        )
        self.send(line({"sessionUpdate": "state_update", "state": "running"}))
        self.start_terminal()
        first = time.time()
        for chunk in chunks:
            self.send(chunk)
        last = time.time()
        self.end_terminal()
        self.write_stats(data, len(chunks), first, last)
        self.send(line({"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"}))

    @property
    def ids(self) -> tuple[str, str]:
        return f"call_flood_{self.turn}", f"term_flood_{self.turn}"

    def chunk_update(self, data: bytes) -> dict:
        b64 = base64.b64encode(data).decode("ascii")
        return {"sessionUpdate": "terminal_output_chunk", "terminalId": self.ids[1], "data": b64}

    def start_terminal(self) -> None:
        call, term = self.ids
        self.send(
            line(
                {
                    "sessionUpdate": "tool_call_update",
                    "toolCallId": call,
                    "title": "Run the flood",
                    "kind": "execute",
                    "status": "in_progress",
                    "content": [{"type": "terminal", "terminalId": term}],
                }
            )
        )
        self.send(line({"sessionUpdate": "terminal_update", "terminalId": term, "command": "flood"}))

    def end_terminal(self) -> None:
        call, term = self.ids
        exit_status = {"exitCode": 0, "signal": None}
        self.send(line({"sessionUpdate": "terminal_update", "terminalId": term, "exitStatus": exit_status}))
        self.send(line({"sessionUpdate": "tool_call_update", "toolCallId": call, "status": "completed"}))

    def write_stats(self, data: bytes, chunks: int, first: float, last: float) -> None:
        stats = {
            "terminal_id": self.ids[1],
            "bytes": len(data),
            "sha256": hashlib.sha256(data).hexdigest(),
            "chunks": chunks,
            "first_chunk_at": first,
            "last_chunk_at": last,
            "last_line": data.rsplit(b"\n", 1)[-1].decode(),
        }
        (self.stats / f"flood-{self.turn}.json").write_text(json.dumps(stats))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stats", type=Path, required=True, help="directory for the per-turn stats")
    parser.add_argument("--chunk-kib", type=int, default=16, help="bytes per terminal chunk, KiB")
    args = parser.parse_args()
    agent = Flood(args.stats, args.chunk_kib * 1024)
    for raw in sys.stdin.buffer:
        try:
            msg = json.loads(raw)
        except ValueError:
            continue
        if isinstance(msg, dict):
            agent.handle(msg)


if __name__ == "__main__":
    main()
