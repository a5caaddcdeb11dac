"""A hostile v2 agent for tests: a normal start, then on each prompt one kind of abuse, then idle.

Usage: python hostile.py MODE N LOG.jsonl — every received line is appended to LOG.
Modes (what a prompt makes it send, before ending the turn ``end_turn``):
  deep N      a tool call and an unknown request (id 77) whose ``_meta`` nests N levels deep
  flood N     N ``session/update``s and one request (id 78) for sessions that do not exist
  big N       an ``agent_message_chunk`` and a ``session_message`` of N bytes of text each
  eof N       closes its stdout and keeps running (N seconds), ignoring the client
"""

import json
import os
import sys
import time


def send(message: dict | str) -> None:
    sys.stdout.write((message if isinstance(message, str) else json.dumps(message)) + "\n")
    sys.stdout.flush()


def update(body: dict, session_id: str = "s1") -> dict:
    return {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": session_id, "update": body}}


def deep(n: int) -> None:
    meta = '{"a":' * n + "1" + "}" * n
    tool = '{"sessionUpdate":"tool_call","toolCallId":"c1","title":"deep","status":"in_progress","_meta":'
    send(
        '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":'
        + tool
        + meta
        + "}}}"
    )
    send('{"jsonrpc":"2.0","id":77,"method":"x/unknown","params":{"sessionId":"s1","_meta":' + meta + "}}")


def flood(n: int) -> None:
    body = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "boo " * 100}}
    for i in range(n):
        send(update({**body, "messageId": f"m{i}"}, f"ghost-{i % 1000}"))
    params = {"sessionId": "ghost", "toolCall": {"toolCallId": "t"}, "options": []}
    send({"jsonrpc": "2.0", "id": 78, "method": "session/request_permission", "params": params})


def big(n: int) -> None:
    text = ("0123456789abcdef" * (n // 16 + 1))[:n]
    send(
        update(
            {
                "sessionUpdate": "agent_message_chunk",
                "messageId": "m1",
                "content": {"type": "text", "text": text},
            }
        )
    )
    body = {"sessionUpdate": "session_message", "messageId": "sm1", "fromSessionId": "other"}
    send(update({**body, "content": {"type": "text", "text": text}}))


def eof(n: int) -> None:
    sys.stdout.flush()
    os.close(1)  # sys.stdout does not own the descriptor
    time.sleep(n)
    sys.exit(0)


def main() -> None:
    mode, n = sys.argv[1], int(sys.argv[2])
    log = open(sys.argv[3], "a", buffering=1)  # noqa: SIM115 - open for the whole run
    for line in sys.stdin:
        log.write(line)
        message = json.loads(line)
        method, request_id = message.get("method"), message.get("id")
        if method == "initialize":
            send(
                {
                    "jsonrpc": "2.0",
                    "id": request_id,
                    "result": {"protocolVersion": 2, "info": {"name": "hostile"}},
                }
            )
        elif method == "session/new":
            send({"jsonrpc": "2.0", "id": request_id, "result": {"sessionId": "s1"}})
        elif method == "session/prompt":
            send({"jsonrpc": "2.0", "id": request_id, "result": {}})
            send(update({"sessionUpdate": "state_update", "state": "running"}))
            {"deep": deep, "flood": flood, "big": big, "eof": eof}[mode](n)
            send(update({"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"}))


if __name__ == "__main__":
    main()
