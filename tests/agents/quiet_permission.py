"""A quiet v1 agent: each prompt asks one permission, then the agent sends nothing at all until
``session/cancel``, which ends the turn ``cancelled``; an answered permission ends it ``end_turn``.

Usage: python quiet_permission.py LOG.jsonl — every received line is appended to LOG.
"""

import itertools
import json
import sys

OPTIONS = [
    {"optionId": "allow-once", "name": "Allow", "kind": "allow_once"},
    {"optionId": "reject-once", "name": "Reject", "kind": "reject_once"},
]


def send(message: dict) -> None:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
    sys.stdout.flush()


def ask(request_id: int, session_id: str) -> None:
    tool_call = {"toolCallId": f"call-{request_id}", "title": "rm -rf build", "kind": "execute"}
    params = {"sessionId": session_id, "toolCall": tool_call, "options": OPTIONS}
    send({"id": request_id, "method": "session/request_permission", "params": params})


def selected(message: dict, prompt_of_request: object) -> bool:
    """True when ``message`` answers a permission request of the running prompt with an option."""
    outcome = (message.get("result") or {}).get("outcome") or {}
    return prompt_of_request is not None and outcome.get("outcome") == "selected"


def main() -> None:
    log = open(sys.argv[1], "a", buffering=1)  # noqa: SIM115 - open for the whole run
    ids = itertools.count(1)
    prompt_id = None
    asked: dict[int, object] = {}  # our permission request id -> the prompt it belongs to
    for line in sys.stdin:
        log.write(line)
        message = json.loads(line)
        method = message.get("method")
        if method == "initialize":
            send({"id": message["id"], "result": {"protocolVersion": 1, "agentCapabilities": {}}})
        elif method == "session/new":
            send({"id": message["id"], "result": {"sessionId": "s1"}})
        elif method == "session/prompt":
            prompt_id = message["id"]
            request_id = next(ids)
            asked[request_id] = prompt_id
            ask(request_id, message["params"]["sessionId"])
        elif method == "session/cancel" and prompt_id is not None:
            send({"id": prompt_id, "result": {"stopReason": "cancelled"}})
            prompt_id = None
        elif method is None and prompt_id is not None and selected(message, asked.get(message.get("id"))):
            send({"id": prompt_id, "result": {"stopReason": "end_turn"}})
            prompt_id = None


if __name__ == "__main__":
    main()
