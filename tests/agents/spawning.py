"""A v1 agent that leaves processes behind: a child in its process group and a daemon that
``setsid()``s away with a child of its own, all three ignoring SIGTERM and sleeping. Each writes
its pid to PIDDIR (``agent``, ``child``, ``daemon``, ``daemon-child``) once it runs.

Usage: python spawning.py PIDDIR [--hang | --exit CODE]
  default: answers ``initialize``, exits when stdin closes (its descendants stay);
  --hang: never answers ``initialize``; --exit CODE: exits with CODE before answering.
"""

import json
import os
import signal
import sys
import time

PIDDIR = sys.argv[1]
MODE = sys.argv[2:]


def note(name: str) -> None:
    """Write this process's pid to PIDDIR/name (whole: written aside, then renamed)."""
    path = os.path.join(PIDDIR, name)
    with open(path + ".tmp", "w") as f:
        f.write(str(os.getpid()))
    os.rename(path + ".tmp", path)


def linger(name: str) -> None:
    """Ignore TERM, say who we are, sleep until killed."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    note(name)
    time.sleep(600)
    os._exit(0)


def daemon() -> None:
    """Leave the group and the session, drop the agent's stdio, start a child of our own."""
    os.setsid()
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    if os.fork() == 0:
        linger("daemon-child")
    linger("daemon")


note("agent")
if os.fork() == 0:
    linger("child")  # keeps the agent's stdout and stderr open
if os.fork() == 0:
    daemon()
if MODE[:1] == ["--exit"]:
    deadline = time.monotonic() + 30
    while len([n for n in os.listdir(PIDDIR) if not n.endswith(".tmp")]) < 4 and time.monotonic() < deadline:
        time.sleep(0.01)  # the descendants are all there before the agent goes
    sys.exit(int(MODE[1]))
for line in sys.stdin:
    message = json.loads(line)
    if message.get("method") == "initialize" and "--hang" not in MODE:
        reply = {"jsonrpc": "2.0", "id": message["id"], "result": {"protocolVersion": 1}}
        print(json.dumps(reply), flush=True)
