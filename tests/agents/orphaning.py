"""A v1 agent whose child ignores SIGTERM and outlives it, like a launcher that does not forward
signals to the native binary it started. Usage: python orphaning.py PIDFILE"""

import json
import os
import signal
import sys
import time

if os.fork() == 0:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    with open(sys.argv[1], "w") as f:
        f.write(str(os.getpid()))
    time.sleep(600)
    sys.exit(0)
signal.signal(signal.SIGTERM, signal.SIG_IGN)  # the leader ignores it too: only KILL works
for line in sys.stdin:
    message = json.loads(line)
    if message.get("method") == "initialize":
        reply = {"jsonrpc": "2.0", "id": message["id"], "result": {"protocolVersion": 1}}
        print(json.dumps(reply), flush=True)
time.sleep(600)  # stdin closed: keep running until killed
