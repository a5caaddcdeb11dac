"""A v1 agent that needs a login, offering a terminal method and an env_var one.

``python login_agent.py STATE_DIR``: answers ``initialize`` with both methods (the terminal one
only when the client advertises ``auth.terminal``); ``session/new`` needs a login first.
``python login_agent.py STATE_DIR --login``: the terminal login — asks for a code on the
terminal, exits 0 and writes STATE_DIR/token when it is "1234", exits 3 otherwise.
``authenticate`` with the env_var method succeeds when FAKE_KEY is in the environment.
``--open``: ``session/new`` needs no login, ``session/prompt`` does (then answers ``end_turn``).
``--cache``: the token file is read once, at start (a restart is needed after the login).
"""

import json
import os
import sys
from pathlib import Path

state = Path(sys.argv[1])
if "--login" in sys.argv:
    sys.stdout.write(f"Fake login ({os.environ.get('LOGIN_MODE', '?')}). Enter the code: ")
    sys.stdout.flush()
    code = sys.stdin.readline().strip()
    if code == "1234":
        (state / "token").write_text("ok")
        print("Logged in.")
        sys.exit(0)
    print("Wrong code.")
    sys.exit(3)


def send(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


authed = False
cached = (state / "token").exists()


def logged_in():
    return cached if "--cache" in sys.argv else (state / "token").exists()


for line in sys.stdin:
    msg = json.loads(line)
    method, rid = msg.get("method"), msg.get("id")
    if method == "initialize":
        caps = msg["params"].get("clientCapabilities", {})
        methods = [
            {"type": "env_var", "id": "key", "name": "Use FAKE_KEY", "vars": [{"name": "FAKE_KEY"}]},
        ]
        if caps.get("auth", {}).get("terminal"):
            methods.insert(
                0,
                {
                    "type": "terminal",
                    "id": "tui",
                    "name": "Log in here",
                    "args": ["--login"],
                    "env": {"LOGIN_MODE": "tui"},
                },
            )
        send({"jsonrpc": "2.0", "id": rid, "result": {"protocolVersion": 1, "authMethods": methods}})
    elif method == "authenticate":
        if msg["params"]["methodId"] == "key" and os.environ.get("FAKE_KEY"):
            authed = True
            send({"jsonrpc": "2.0", "id": rid, "result": {}})
        else:
            send(
                {
                    "jsonrpc": "2.0",
                    "id": rid,
                    "error": {
                        "code": -32000,
                        "message": "no key",
                        "data": {"details": "FAKE_KEY is not set"},
                    },
                }
            )
    elif method == "session/prompt":
        if authed or logged_in():
            send({"jsonrpc": "2.0", "id": rid, "result": {"stopReason": "end_turn"}})
        else:
            send(
                {"jsonrpc": "2.0", "id": rid, "error": {"code": -32000, "message": "Authentication required"}}
            )
    elif method == "session/new":
        if authed or logged_in() or "--open" in sys.argv:
            send({"jsonrpc": "2.0", "id": rid, "result": {"sessionId": "s1"}})
        else:
            send(
                {"jsonrpc": "2.0", "id": rid, "error": {"code": -32000, "message": "Authentication required"}}
            )
