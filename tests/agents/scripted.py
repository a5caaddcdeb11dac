"""A scripted ACP peer for tests: plays a JSON list of steps, records what the client sent.

Usage: python scripted.py SCRIPT.json LOG.jsonl
Steps: {"expect": METHOD, "reply": RESULT} | {"expect": METHOD, "error": {...}} |
{"expect": METHOD} (no reply) | {"send": OBJECT_OR_RAW_STRING} | a bare JSON-RPC message (sent) |
{"await_response": true} | {"sleep": SECONDS} | {"exit": CODE} | {"stderr": TEXT}.
Every received line is appended to LOG.
"""

import json
import sys
import time


def main() -> None:
    with open(sys.argv[1]) as f:
        steps = json.load(f)
    log = open(sys.argv[2], "a", buffering=1)  # noqa: SIM115 - open for the whole run
    last_id = None

    def receive():
        line = sys.stdin.readline()
        if not line:
            sys.exit(0)
        log.write(line if line.endswith("\n") else line + "\n")
        return json.loads(line)

    def send(obj):
        sys.stdout.write((obj if isinstance(obj, str) else json.dumps(obj)) + "\n")
        sys.stdout.flush()

    for step in steps:
        if "expect" in step:
            msg = receive()
            while msg.get("method") != step["expect"]:
                msg = receive()
            last_id = msg.get("id")
            if "reply" in step:
                send({"jsonrpc": "2.0", "id": last_id, "result": step["reply"]})
            elif "error" in step:
                send({"jsonrpc": "2.0", "id": last_id, "error": step["error"]})
        elif "send" in step:
            send(step["send"])
        elif "jsonrpc" in step:  # a bare message: send it
            send(step)
        elif "await_response" in step:
            msg = receive()
            while "method" in msg:
                msg = receive()
        elif "sleep" in step:
            time.sleep(step["sleep"])
        elif "stderr" in step:
            sys.stderr.write(step["stderr"] + "\n")
            sys.stderr.flush()
        elif "exit" in step:
            sys.exit(step["exit"])
    for line in sys.stdin:  # keep reading until the client closes stdin
        log.write(line)


if __name__ == "__main__":
    main()
