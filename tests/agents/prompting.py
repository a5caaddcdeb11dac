"""A v1 agent that prints a login prompt on stdout without a newline, then waits (like Gemini's
Google login), and answers initialize. Usage: python prompting.py"""

import json
import sys

URL = "https://accounts.example.test/o/oauth2/auth?" + "x" * 500
for line in sys.stdin:
    message = json.loads(line)
    if message.get("method") == "initialize":
        print(
            json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": {"protocolVersion": 1}}), flush=True
        )
    elif message.get("method") == "authenticate":
        sys.stdout.write(f"Please visit the following URL to authorize:\n{URL}\n")
        sys.stdout.write("Enter the authorization code: ")
        sys.stdout.flush()
