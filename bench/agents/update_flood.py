"""A tiny ACP v2 agent that floods a session with mixed ``session/update``s (for bench/flood.py).

Usage: ``python update_flood.py --updates N [--seed S]``. It builds N lines of the reducer
benchmark's mix (``bench/reducer.py``: tool calls, content chunks, terminals and their base64
output, message chunks, plans; its ``state_update``s all say ``running``) before it reads stdin,
so only the streaming is timed. Each prompt acknowledges, echoes the prompt, says ``running``,
writes the N lines as fast as the pipe takes them, then ends the turn (``idle``, ``end_turn``).
No model, no network; it exits when stdin closes.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/: the reducer's trace builder

from reducer import SESSION_ID, TraceBuilder


def flood_lines(updates: int, seed: int) -> list[bytes]:
    """The reducer's mix, its run-state changes all ``running`` (an ``idle`` would end the turn)."""
    builder = TraceBuilder(1_000, seed)
    lines = []
    for _ in range(updates):
        update = builder.event()
        if update["sessionUpdate"] == "state_update":
            update = {"sessionUpdate": "state_update", "state": "running"}
        lines.append(builder.line(update))
    return lines


class Flood:
    """Answers initialize, session/new and session/prompt; floods the session per prompt."""

    def __init__(self, lines: list[bytes]) -> None:
        self.lines, self.turn = lines, 0
        self.out = sys.stdout.buffer

    def send(self, message: dict) -> None:
        self.out.write(json.dumps(message, separators=(",", ":")).encode() + b"\n")
        self.out.flush()

    def update(self, update: dict) -> None:
        self.send(
            {
                "jsonrpc": "2.0",
                "method": "session/update",
                "params": {"sessionId": SESSION_ID, "update": update},
            }
        )

    def handle(self, msg: dict) -> None:
        method, req_id = msg.get("method"), msg.get("id")
        if method == "initialize":
            info = {"name": "update-flood", "title": "Update flood (bench)", "version": "1.0"}
            result = {"protocolVersion": 2, "info": info, "capabilities": {}, "authMethods": []}
            self.send({"jsonrpc": "2.0", "id": req_id, "result": result})
        elif method == "session/new":
            self.send({"jsonrpc": "2.0", "id": req_id, "result": {"sessionId": SESSION_ID}})
        elif method == "session/prompt":
            self.prompt(req_id, msg.get("params", {}).get("prompt") or [])
        elif req_id is not None and method is not None:
            err = {"code": -32601, "message": f"Method not found: {method}"}
            self.send({"jsonrpc": "2.0", "id": req_id, "error": err})

    def prompt(self, req_id: object, prompt: list) -> None:
        self.turn += 1
        message_id = f"user_{self.turn}"
        self.send({"jsonrpc": "2.0", "id": req_id, "result": {"messageId": message_id}})
        self.update({"sessionUpdate": "user_message", "messageId": message_id, "content": prompt})
        self.update({"sessionUpdate": "state_update", "state": "running"})
        self.out.writelines(self.lines)
        self.update({"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--updates", type=int, default=200_000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    flood = Flood(flood_lines(args.updates, args.seed))
    for raw in sys.stdin.buffer:
        if raw.strip():
            flood.handle(json.loads(raw))


if __name__ == "__main__":
    main()
