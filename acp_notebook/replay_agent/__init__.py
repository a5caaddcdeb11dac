"""``python -m acp_notebook.replay_agent TRACE``: play the agent side of a recorded trace.

A stand-in agent for CI and classrooms (no model, no key, no node): it reads the client's lines
on stdin and walks the trace in order. A recorded agent line (``in``) is written to stdout — a
response gets the id the live client used for the request it answers, and so does the
``requestId`` of a request-scoped ``elicitation/create``; a recorded client line
(``out``) is awaited: the player reads stdin until the client sends the matching message (a
request or notification by method, in order; a response by the agent's request id), so it waits
where the recorded agent waited (a permission answer, an elicitation's, the next prompt).
Recorded stderr lines go to stderr. Every divergence — an answer that differs, a message the
recording does not have, one it has that never comes within ``--timeout`` — is reported on
stderr; the exit code is 1 if any.
"""

from .player import Player, main

__all__ = ["Player", "main"]
