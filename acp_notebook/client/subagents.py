"""Subagents: the child sessions an agent runs for a session (``subagent_update``), registered as
they are announced, each with its own state, asking through the root session's permission desk.

A child is read-only: it has no ``prompt``, ``set_mode``, ``set_config_option`` or ``close``; it
permits only what its own ``capabilities`` grant — today ``cancel``. Its updates go to its own
``SessionState`` (never to its parent's); its permission requests go to the root session's desk,
handler and policies (``session.pending_permissions``, ``request.session_id`` the child's), and so
do its elicitations (``session.pending_elicitations``).
Children nest: a child's own ``subagent_update`` registers a grandchild the same way. A later
update never moves a child to another parent. What the parent was told about the child (title,
state, capabilities …) is the parent state's record (``protocol.subagents``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

from ..protocol.jsonrpc import METHOD_NOT_FOUND, Request
from ..protocol.session_values import background_sessions
from ..protocol.state import SessionState
from ..protocol.subagents import SubagentInfo
from . import item_cancels, session_tables
from .connection import DEFERRED
from .elicitations import ElicitationDesk
from .errors import AgentExited, RpcError
from .exit_cleanup import end_tool_calls, exit_note
from .permissions import PermissionDesk
from .routing import Route, SessionParts
from .wire import AgentConnection

SUBAGENT_UPDATE = "subagent_update"


class Children:
    """The subagents one session announced, by id, in announcement order."""

    def __init__(
        self,
        state: SessionState,
        cwd: Callable[[], str | None],
        conn: AgentConnection,
        desk: PermissionDesk,
        elicit: ElicitationDesk,
        parts: SessionParts,
        parent_id: str,
    ) -> None:
        self._state, self._cwd, self._conn, self._desk, self._parts = state, cwd, conn, desk, parts
        self._elicit = elicit
        self._parent_id = parent_id
        self._by_id: dict[str, Subagent] = {}

    @property
    def view(self) -> MappingProxyType[str, Subagent]:
        """The children, read-only."""
        return MappingProxyType(self._by_id)

    def saw(self, update: dict[str, Any]) -> None:
        """A ``subagent_update`` this session's state applied: register a child it announces."""
        child_id = update.get("sessionId")
        if not isinstance(child_id, str) or child_id in self._by_id:
            return
        if self._parts.routed(child_id):
            message = (
                f"subagent_update for {child_id!r}, a session that is not a child of {self._parent_id!r}"
            )
            self._state.diagnose("subagent-not-moved", message, {"sessionId": child_id})
            return
        self._by_id[child_id] = Subagent(
            child_id, self._parent_id, self, self._conn, self._desk, self._elicit, self._parts
        )

    def info(self, child_id: str) -> SubagentInfo:
        """What this session was told about child ``child_id``."""
        return self._state.subagents[child_id]

    def cwd(self) -> str | None:
        """This session's effective working directory (what an unset child ``cwd`` inherits)."""
        return self._cwd()

    def tree(self) -> frozenset[str]:
        """The session ids of every descendant: these children, theirs, and so on."""
        return frozenset().union(*(child.tree() for child in self._by_id.values()))

    def spared(self, background: list[Any] | None) -> frozenset[str]:
        """The descendants a cancel of this session leaves working: each child listed in its
        ``background`` snapshot with all of its own, and what each foreground child spares in turn."""
        listed = background_sessions(background)
        spared = (
            child.tree() if child.session_id in listed else child.spared() for child in self._by_id.values()
        )
        return frozenset().union(*spared)

    def forget_all(self) -> None:
        """Drop every child (and theirs) from the agent's table: the session is closed."""
        for child in self._by_id.values():
            child.forget()

    def rejoin_all(self) -> None:
        """Put every child (and theirs) back in the agent's table (a failed resume undone)."""
        for child in self._by_id.values():
            child.rejoin()


class Subagent:
    """One child session: read-only, with its own state; ``cancel()`` where it allows it."""

    def __init__(
        self,
        session_id: str,
        parent_id: str,
        siblings: Children,
        conn: AgentConnection,
        desk: PermissionDesk,
        elicit: ElicitationDesk,
        parts: SessionParts,
    ) -> None:
        self.session_id, self.parent_id = session_id, parent_id
        self.state = SessionState()
        self.state.traffic_source = lambda: parts.traffic.ring.list(session_id)  # its `traffic` table
        self._siblings, self._conn, self._desk, self._elicit, self._parts = (
            siblings,
            conn,
            desk,
            elicit,
            parts,
        )
        self._children = Children(self.state, lambda: self.cwd, conn, desk, elicit, parts, session_id)
        parts.register(session_id, self._route())

    def _route(self) -> Route:
        return Route(
            self.state, self._take_update, self._take_permission, _no_host,
            self._withdrawn, self._exited, _nothing, self._take_elicitation, self._elicit.complete,
        )  # fmt: skip

    def _withdrawn(self, request_id: Any) -> bool:
        return self._desk.cancel_request(request_id) or self._elicit.cancel_request(request_id)

    def _take_elicitation(self, request: Request) -> object:
        self._elicit.receive(request)  # asked on the root session's desk, like its permissions
        return DEFERRED

    # -- what the parent was told ---------------------------------------------------------------
    @property
    def info(self) -> SubagentInfo:
        """The parent's record of this child (title, description, state, capabilities, placement)."""
        return self._siblings.info(self.session_id)

    @property
    def title(self) -> str | None:
        """The parent's display title for this child."""
        return self.info.title

    @property
    def description(self) -> str | None:
        """The parent's description of this child's task."""
        return self.info.description

    @property
    def run_state(self) -> str:
        """The child's activity as last reported (``unknown`` when unconfirmed)."""
        return self.info.run_state

    @property
    def cwd(self) -> str | None:
        """Where the child works: its own ``cwd``, else its parent's."""
        return self.info.effective_cwd(self._siblings.cwd())

    @property
    def subagents(self) -> MappingProxyType[str, Subagent]:
        """This child's own children."""
        return self._children.view

    @property
    def traffic(self) -> list[dict[str, Any]]:
        """This child's recent messages (the agent's traffic entries tagged with its id)."""
        return self._parts.traffic.ring.list(self.session_id)

    @property
    def traffic_log(self) -> Any:
        """The agent's traffic recorder (ring and trace file): ``doctor(child)`` reads it."""
        return self._parts.traffic

    def records(self, kind: str, descendants: bool = False) -> list[dict[str, Any]]:
        """Table ``kind`` of this child (``descendants=True``: and of every session under it)."""
        return session_tables.records(self, self._parts.traffic, self._desk.state, kind, descendants)

    def frame(self, kind: str, descendants: bool = False) -> Any:
        """``records`` as a pandas DataFrame."""
        return session_tables.frame(self, self._parts.traffic, self._desk.state, kind, descendants)

    # -- what the agent sends for it -------------------------------------------------------------
    def _take_update(self, update: Any) -> None:
        incoming = self._conn.read_update(update, self.state.tool_calls.get)
        self.state.take(incoming)
        if isinstance(incoming.update, dict) and incoming.update.get("sessionUpdate") == SUBAGENT_UPDATE:
            self._children.saw(incoming.update)

    def _take_permission(self, request: Request) -> object:
        self._desk.receive(request, None, self.state)  # asked on the root session's desk; its tool call here
        return DEFERRED

    def _exited(self, error: AgentExited, expected: bool) -> None:
        end_tool_calls(
            self.state, "cancelled" if expected else "failed", None if expected else exit_note(error)
        )

    # -- what the client may do --------------------------------------------------------------------
    async def cancel(self) -> None:
        """Cancel the child's current work (``session/cancel`` with its id), where its
        ``capabilities.cancel`` allows it; the pending permission requests of its foreground work
        (its own and its foreground children's) are answered ``cancelled``."""
        if not self.info.cancellable:
            raise ValueError(f"subagent {self.session_id!r} does not advertise capabilities.cancel")
        sent = self._conn.cancel(self.session_id)
        foreground = self.tree() - self.spared()
        for request in self._desk.pending():
            if request.session_id in foreground:
                request.cancel(by="cancel")
        await sent

    async def cancel_tool_call(self, tool_call_id: str) -> Any:
        """Ask the agent to cancel one of the child's tool calls (its ``capabilities.cancel``)."""
        return await item_cancels.cancel_tool_call(self._conn, self.state, self.session_id, tool_call_id)

    async def cancel_terminal(self, terminal_id: str) -> Any:
        """Ask the agent to cancel one of the child's terminals (its ``capabilities.cancel``)."""
        return await item_cancels.cancel_terminal(self._conn, self.state, self.session_id, terminal_id)

    def tree(self) -> frozenset[str]:
        """This child's session id and every descendant's."""
        return frozenset({self.session_id}) | self._children.tree()

    def spared(self) -> frozenset[str]:
        """The descendants a cancel of this child leaves working (its background ones)."""
        return self._children.spared(self.state.background)

    def forget(self) -> None:
        """Leave the agent's table, with every child of this one."""
        self._children.forget_all()
        self._parts.forget(self.session_id)

    def rejoin(self) -> None:
        """Be routed again, with every child of this one (after ``forget``)."""
        self._parts.register(self.session_id, self._route())
        self._children.rejoin_all()

    def __repr__(self) -> str:
        return f"<Subagent {self.session_id} of {self.parent_id} {self.run_state}>"


def descendant(subagents: Mapping[str, Subagent], session_id: str) -> Subagent | None:
    """The subagent ``session_id`` anywhere under ``subagents`` (a session's, or a child's)."""
    for child in subagents.values():
        found = child if child.session_id == session_id else descendant(child.subagents, session_id)
        if found is not None:
            return found
    return None


def _no_host(request: Request) -> object:
    raise RpcError(METHOD_NOT_FOUND, f"Method not found: {request.method} (a subagent session)")


async def _nothing() -> None:
    return None
