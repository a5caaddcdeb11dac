"""SessionView: the live widget of one session (or one turn), fed by state changes.

It never touches the connection: state changes mark entries dirty, the kernel-wide scheduler
decides when a coalesced patch goes out (the header only when it changed, terminal bytes as binary
buffers, only the new ones; each message JSON-encoded once, by ``message_parts.BoundedSender``),
and the saved snapshot (``snapshot_pages``) is refreshed more slowly so that a reload or a saved
notebook shows the same tree. No message exceeds ``message_parts.MESSAGE_BOUND``. Clicks come
back as messages and go to ``actions``; the browser's ``rendered`` (sent once, when the page
renders the view) tells ``client.frontend`` someone looks.
"""

from __future__ import annotations

from typing import Any

import anywidget
import traitlets
from ipywidgets import widget_serialization

from .. import frontend
from ..protocol.state import SessionState
from . import browser_inbox, extensions, tree_entries
from . import viewmodel as vm
from .actions import Actions, actions_for
from .checkpoint_view import CheckpointBar
from .extensions import ViewFeature
from .header import header, state_time
from .header_view import anchor_of
from .message_parts import BoundedSender
from .on_loop import on_loop
from .runtime import Runtime, get_runtime, static_file
from .scheduler import Scheduler, default_scheduler
from .snapshot import SAVED_TERMINAL_BYTES
from .snapshot_pages import SavedSnapshot, SnapshotPage
from .subtree import ViewTree
from .terminal_moves import terminal_moves
from .turn_scope import scoped
from .view_items import ViewItems


class SessionView(anywidget.AnyWidget):
    """A live view of a session's state: conversation, tool-call cards, terminals, permissions."""

    _esm = static_file("loader.js")
    runtime = traitlets.Instance(Runtime).tag(sync=True, **widget_serialization)
    snapshot = traitlets.Dict().tag(sync=True)
    terminal_bytes = traitlets.Bytes().tag(sync=True)
    pages = traitlets.List(traitlets.Instance(SnapshotPage)).tag(sync=True, **widget_serialization)
    saved_terminal_bytes = SAVED_TERMINAL_BYTES  # bytes of each terminal the saved snapshot keeps
    anchor = traitlets.Unicode("").tag(sync=True)  # the page's data-acp-anchor (a turn's cell)

    def __init__(
        self,
        source: Any,
        *,
        since: int = 0,
        title: str | None = None,
        scheduler: Scheduler | None = None,
        actions: Actions | None = None,
        root: str | None = None,
        xray: Any = False,
        anchor: str = "",
        turn: int | None = None,
        past: bool = False,
    ) -> None:
        super().__init__(runtime=get_runtime(), anchor=anchor)
        self.past = past  # the state is a past one (a replay's): its clocks stop at its own time
        frontend.mark_shown()
        self.session = None if isinstance(source, SessionState) else source
        self.state: SessionState = source if isinstance(source, SessionState) else source.state
        self._home = self.state
        named = getattr(self.session, "title", None)  # a Subagent's, shown alone
        self.title = title if title is not None else named if isinstance(named, str) else None
        self.root = root if root is not None else vm.server_root()
        self.actions = actions or actions_for(self.session, self.state)
        self.scheduler = scheduler or default_scheduler()
        self._sent_terms: dict[str, tuple[int, int]] = {}
        self._seq = 0
        self._full_pending = False
        self._bounded = BoundedSender(super().send)
        self._saved = SavedSnapshot(self.saved_terminal_bytes)
        mark = lambda: self.scheduler.mark(self)  # noqa: E731
        self.items = ViewItems(ViewTree(self.state, self.session), since, self._saved.touch, mark)
        self._sent_header: dict[str, Any] | None = None  # the header the page has (None: send it)
        self.turn_scope = scoped(self.session, turn, on_change=mark, on_bound=self._bound)
        self._attach_features(xray)
        self.on_msg(on_loop(self._handle_browser_msg))
        self.flush_snapshot()
        self._mark_sent()  # the first snapshot carries everything so far

    def _attach_features(self, xray: Any) -> None:
        """The X-ray (registered by ``acp_notebook.playback``) and the revert bar, each handed the
        parts it uses; the browser's messages of the kinds they list go to them (``_features``)."""
        self.xray = extensions.attach(
            "xray", xray, self.session, send=self.send, live_state=lambda: self.live_state,
            show=self.retarget, detach=self.detach, refresh=self.refresh,
        )  # fmt: skip
        self.revert_bar = CheckpointBar(
            self.session, send=self.send, entry_keys=lambda: self.entry_keys, state=lambda: self.state,
            read_only=lambda: self.read_only, is_open=lambda: self.comm is not None,
        )  # fmt: skip
        self._attached: list[ViewFeature] = [f for f in (self.xray, self.revert_bar) if f is not None]
        self._features = extensions.handler_table(self._attached)

    @property
    def live_state(self) -> SessionState:
        """The state the view follows when nothing is pinned (a replay's current one)."""
        shown = self.xray.live_state if self.xray is not None else None
        return shown if shown is not None else self._home

    @property
    def read_only(self) -> bool:
        """True while the view shows a replay or a pinned past state: its buttons do nothing."""
        return self.xray is not None and self.xray.read_only

    def detach(self) -> None:
        """Stop observing the state (before a seek changes it on another thread)."""
        self.items.detach()

    def retarget(self, state: SessionState, source: Any = None) -> None:
        """Show ``state`` from now on, whole (a replay's after a seek, or a pinned past state);
        ``source``: the session (or rebuilt one) whose ``subagents`` hold its children's states."""
        self.state = state
        self._sent_terms = {}
        if source is None and state is self._home:
            source = self.session
        self.items.follow(ViewTree(state, source))
        self._full_pending = True  # the next patch replaces what the browser shows
        self.scheduler.mark(self)

    def _mark_sent(self) -> None:
        self.items.take()
        for view_id, term in self.items.terminal_objects().items():
            self._sent_terms[view_id] = (term.generation, term.end_offset)

    # -- what the view holds ----------------------------------------------------------------------
    @property
    def tree(self) -> ViewTree:
        """The sessions the view draws: its own and the subagents it reached."""
        return self.items.tree

    @property
    def entry_keys(self) -> list[str]:
        """The entry keys shown, in order."""
        return list(self.items.keys)

    @property
    def terminal_ids(self) -> dict[str, Any]:
        """The terminals this view shows (in its cards), by view id."""
        return self.items.terminals

    @property
    def following(self) -> bool:
        """False once the view shows no new items (``stop_following``)."""
        return self.items.following

    def refresh(self) -> None:
        """Send the header again soon, e.g. when ``actions.interactive_terminals()`` changed on its own."""
        self.scheduler.mark(self)

    def stop_following(self) -> None:
        """Show no new items from now on (updates to the shown ones still arrive)."""
        self.items.stop_following()
        self.scheduler.mark(self)

    # -- flushing (called by the scheduler) -------------------------------------------------------
    def flush_patch(self) -> int:
        """Send one coalesced patch with what changed since the last one; returns messages sent."""
        self.items.reach_late()
        if self._full_pending:
            return self.flush_full()
        return self._send_patch(full=False)

    def flush_full(self) -> int:
        """Send the whole view as one patch (the answer to a browser's ``resync``)."""
        self._full_pending = False
        self._sent_terms.clear()
        self.items.all_dirty()
        return self._send_patch(full=True)

    def _send_patch(self, *, full: bool) -> int:
        if self.comm is None:
            return 0
        dirty, new, dirty_terms = self.items.take()
        entries = {k: self._entry(k) for k in dirty}
        metas, moves, buffers = terminal_moves(self.items.terminal_objects(), dirty_terms, self._sent_terms)
        message: dict[str, Any] = {"type": "patch", "full": full}
        header = self._header()
        if full or header != self._sent_header:  # only when it changed (js/WIRE.md, Patches)
            message["header"] = self._sent_header = header
        if self.xray is not None:
            message["xray"] = self.xray.meta()
        elif not (full or entries or metas or moves or new or "header" in message):
            return 0  # nothing changed that the page shows
        message.update({"order": new, "entries": entries, "terminals": metas, "bytes": moves})
        sent, self._seq = self._bounded.patch(message, buffers, self._seq)  # pieces: a seq each
        return sent

    def send(self, content: Any, buffers: Any = None) -> None:
        """Send a custom message; one over the bound goes as ``part`` messages (``js/WIRE.md``)."""
        self._bounded.send(content, list(buffers or []))

    def flush_snapshot(self) -> int:
        """Refresh the saved snapshot (``snapshot``, ``terminal_bytes``, ``pages``: what reloads show)."""
        if self.comm is None:
            return 0
        self.items.reach_late()
        head = {"seq": self._seq, "header": self._header(), "saved_at": state_time(self.state)}
        if self.xray is not None:
            head["xray"] = self.xray.meta()
        traits = self._saved.build(self.tree, head, self.items.keys, self.items.terminal_objects(), self.root)
        with self.hold_sync():
            self.snapshot, self.terminal_bytes = traits["snapshot"], traits["terminal_bytes"]
            self.pages = traits["pages"]
        return 1 + self._saved.opened + self._saved.release()

    def whole_entry(self, view_key: str) -> dict[str, Any] | None:
        """Entry ``view_key`` uncut ("show all"), or None if the view does not show it."""
        item = self.items.keys.get(view_key)
        return tree_entries.build(self.tree, *item, self.root, whole=True) if item is not None else None

    def terminal_target(self, view_id: Any) -> tuple[str, str | None]:
        """``(terminal id, session id)`` of a terminal this view shows (the session None for its own)."""
        return self.items.terminal_target(view_id)

    def _entry(self, view_key: str) -> dict[str, Any]:
        return tree_entries.build(self.tree, *self.items.keys[view_key], self.root)

    def _header(self) -> dict[str, Any]:
        waiting = tree_entries.waiting_list(self.tree)
        if self.turn_scope is not None:  # a view of one turn: that turn's own header
            return self.turn_scope.header(self.title, self.actions.interactive_terminals(), waiting)
        summarize = getattr(self.session, "summary", None)  # a Subagent has none
        summary = summarize() if callable(summarize) else None
        frozen_at = state_time(self.state) if self.past or self.read_only else None  # a past state
        terminals = self.actions.interactive_terminals()
        return header(self.state, summary, self.title, terminals, waiting, frozen_at)

    def _bound(self, number: int) -> None:
        """The view's turn started as turn ``number``: the start cell's line for it points here."""
        self.anchor = anchor_of(self.session, number)

    def cancel_turn(self, number: Any = None) -> None:
        """The Stop of the page: a view of one turn cancels only that turn, and only while it runs."""
        if self.turn_scope is None:
            self.actions.cancel_turn()
        elif self.turn_scope.cancels(number):
            self.actions.cancel_turn(self.turn_scope.turn())

    # -- from the browser ---------------------------------------------------------------------------
    def _handle_browser_msg(self, content: Any) -> None:
        kind = content.get("type") if isinstance(content, dict) else None
        feature = self._features.get(kind) if isinstance(kind, str) else None
        if feature is not None:  # the X-ray's and the revert bar's (each minds read-only itself)
            feature(content)
        else:
            browser_inbox.dispatch(self, content)

    def close(self) -> None:
        """Stop observing the state and close the widget."""
        self.detach()
        if self.turn_scope is not None:
            self.turn_scope.close()
        self.scheduler.forget(self)
        for feature in self._attached:
            feature.close()
        self._saved.close()
        super().close()
