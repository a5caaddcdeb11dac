"""What an agent's ``Sessions`` table routes to, and the parts it hands each session it opens.

A ``Route`` is one session id's entry: its state and where its updates, permission requests,
elicitations (and their completions), host requests and withdrawn requests go. A root session
registers its own; a child session (a subagent, registered at run time) is a route too — its own
state, the root's permission and elicitation desks — so routing any message is a table lookup,
never a new path.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from ..protocol.elicitation import Elicitation
from ..protocol.jsonrpc import Request
from ..protocol.state import SessionState
from .elicitations import show_url
from .errors import AgentExited
from .recorder import Traffic
from .summary import AgentSummary


@dataclass(frozen=True)
class Route:
    """Where the messages for one session id go."""

    state: SessionState
    update: Callable[[Any], None]  # one ``session/update``'s ``update``
    permission: Callable[[Request], object]  # ``session/request_permission`` (answered later)
    host_request: Callable[[Request], object]  # v1 ``fs/*`` / ``terminal/*``
    withdrawn: Callable[[Any], bool]  # ``$/cancel_request`` for one of its requests
    exited: Callable[[AgentExited, bool], None]  # the agent is gone (expected or not)
    release: Callable[[], Awaitable[None]]  # free what it holds (terminals, its notebook server)
    elicitation: Callable[[Request], object]  # ``elicitation/create`` scoped to it (answered later)
    elicitation_done: Callable[[str], bool]  # ``elicitation/complete``: True if one waited for that id


@dataclass(frozen=True)
class SessionParts:
    """What a session gets from its agent: the traffic recorder, the agent's summary, and its
    entries in the table (``register`` its route and its subagents', ``forget`` them when closed,
    ``routed``: whether an id has one already), and what its elicitation desk does with a URL
    accepted by code (``url_shown``)."""

    traffic: Traffic
    agent_summary: Callable[[], AgentSummary]
    register: Callable[[str, Route], None]
    forget: Callable[[str], None]
    routed: Callable[[str], bool]
    url_shown: Callable[[Elicitation], None] = show_url  # a URL accepted by code: printed (a replay: not)
