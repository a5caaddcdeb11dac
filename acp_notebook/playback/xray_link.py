"""The kernel side of a view's X-ray panel: answers the panel's requests and pins past states.

The panel (``js/src/xray.js``) keeps only the rows it draws and asks for the rest
(``xray_rows``, ``xray_detail``, ``xray_card``); each answer is one ``xray_reply`` carrying the
request's ``req``. ``xray_select`` shows the state right after a message: a replay seeks (its
scrubber follows); a live session's view is pinned to a privately re-enacted state, read-only,
until ``xray_unpin``. Every patch and snapshot carries ``meta()``: how many entries there are,
the doctor's findings, and what is pinned.

The view hands the link the parts it uses (send to the page, read the live state, show a state,
stop observing, refresh), never itself.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from ..protocol.state import SessionState
from ..widgets.on_loop import running_loop
from .xray_source import XRaySource, card_keys

REQUESTS = ("xray_rows", "xray_detail", "xray_card", "xray_select", "xray_unpin")
SLOW = ("xray_card", "xray_select")  # a live session's re-enactment: off the kernel's loop


class XRayLink:
    """One view's X-ray: its source, its pinned message, its answers to the panel."""

    requests = REQUESTS

    def __init__(
        self,
        source: XRaySource,
        traffic: Any = None,
        *,
        send: Callable[[dict[str, Any]], None],
        live_state: Callable[[], SessionState],
        show: Callable[[SessionState, Any], None],
        detach: Callable[[], None],
        refresh: Callable[[], None],
        live: bool = False,
    ) -> None:
        self.source, self._traffic = source, traffic
        self._send, self._live_state, self._show, self._detach = send, live_state, show, detach
        self._refresh, self._live = refresh, live
        self.pinned: int | None = None
        self._pool: ThreadPoolExecutor | None = None  # one thread: re-enactments never overlap
        if traffic is not None:
            traffic.listeners.append(refresh)  # each new entry: the panel's count moves

    @classmethod
    def attach(cls, xray: bool | XRaySource, session: Any, **parts: Any) -> XRayLink | None:
        """The X-ray of a view of ``session``: ``xray`` itself (a source), a live session's (True), or None.

        ``parts`` are the view's: ``send``, ``live_state``, ``show``, ``detach``, ``refresh``.
        """
        if xray is False:
            return None
        if isinstance(xray, XRaySource):
            return cls(xray, live=session is not None, **parts)
        if session is None or not hasattr(session, "traffic_log"):
            raise ValueError("xray=True needs a live Session (for a replay: replay.view(xray=True))")
        return cls(XRaySource.live(session), session.traffic_log, live=True, **parts)

    @property
    def read_only(self) -> bool:
        """True while the view shows a replay or a pinned past state."""
        return self.pinned is not None or self.source.replay is not None

    @property
    def live_state(self) -> SessionState | None:
        """The state the view follows instead of its session's: a replay's current one."""
        replay = self.source.replay
        return replay.state if replay is not None else None

    def meta(self) -> dict[str, Any]:
        """What every patch tells the panel."""
        total = self.source.total()
        meta: dict[str, Any] = {"total": total, "first": self.source.first, "pinned": self.pinned}
        meta["findings"] = self.source.findings()
        meta["sessions"] = self.source.sessions()
        replay = self.source.replay
        meta["position"] = replay.position if replay is not None else None
        meta["live"] = replay is None and self._live
        return meta

    def handle(self, content: dict[str, Any]) -> None:
        """Answer one of the panel's requests (``REQUESTS``); a live session's slow ones in a task."""
        kind = content.get("type")
        loop = running_loop()
        if kind in SLOW and loop is not None and self.source.replay is None:
            loop.create_task(self._answer_later(loop, content))
            return
        self._reply(content, _guarded(self._answer, kind, content))

    def _reply(self, content: dict[str, Any], answer: dict[str, Any]) -> None:
        self._send({"type": "xray_reply", "req": content.get("req"), "of": content.get("type"), **answer})

    async def _answer_later(self, loop: asyncio.AbstractEventLoop, content: dict[str, Any]) -> None:
        self._pool = self._pool or ThreadPoolExecutor(1, thread_name_prefix="acp-xray")
        kind = content.get("type")
        keys = card_keys(str(content.get("key")), self._live_state())
        self.source.freeze()  # the thread reads a copy, never the ring the loop appends to
        try:
            if kind == "xray_card":
                work = lambda: _guarded(self._card, keys, content)  # noqa: E731
                self._reply(content, await loop.run_in_executor(self._pool, work))
                return
            self._detach()
            found = await loop.run_in_executor(self._pool, _guarded, self._state_after, kind, content)
        finally:
            self.source.thaw()
        self._reply(content, self._pin(int(content.get("index", -1)), found.pop("state", None), found))

    def _card(self, keys: list[str], content: dict[str, Any]) -> dict[str, Any]:
        key = str(content.get("key"))
        return {"key": key, "indices": self.source.built_by_keys(key, keys)}

    def _state_after(self, _kind: Any, content: dict[str, Any]) -> dict[str, Any]:
        return {"state": self.source.state_after(int(content["index"]))}

    def _answer(self, kind: Any, content: dict[str, Any]) -> dict[str, Any]:
        if kind == "xray_rows":
            query = str(content.get("query") or "")
            session = content.get("session") if isinstance(content.get("session"), str) else None
            start, count = int(content.get("start", 0)), int(content.get("count", 100))
            rows = self.source.rows(start, count, query, session)
            find = content.get("find")
            if isinstance(find, int):
                rows["found"] = self.source.position_of(find, query, session)
            return rows
        if kind == "xray_detail":
            return self.source.detail(int(content["index"]))
        if kind == "xray_card":
            key = str(content.get("key"))
            return {"key": key, "indices": self.source.built_by(key, self._live_state())}
        if kind == "xray_select":
            return self.select(int(content["index"]))
        return self.unpin()

    def select(self, index: int) -> dict[str, Any]:
        """Show the state right after entry ``index`` (here and now: see ``handle``)."""
        if self.source.replay is not None:
            self.source.state_after(index)  # the replay's own view follows its seek
            return {"index": index, "position": self.source.replay.position}
        self._detach()
        found = _guarded(self._state_after, "xray_select", {"index": index})
        return self._pin(index, found.pop("state", None), found)

    def _pin(self, index: int, state: Any, failed: dict[str, Any]) -> dict[str, Any]:
        if state is None:
            self.pinned = None
            self._show_live()
            return failed or {"index": index, "error": GONE}
        self.pinned = index
        self._show(state, self.source.pinned_session())  # its subagents: the re-enacted ones
        return {"index": index, "pinned": index}

    def _show_live(self) -> None:
        replay = self.source.replay
        self._show(self._live_state(), replay.session if replay is not None else None)

    def unpin(self) -> dict[str, Any]:
        """Back to the live state."""
        if self.pinned is not None:
            self.pinned = None
            self._show_live()
        return {"pinned": None}

    def close(self) -> None:
        """Stop listening to the traffic; end the source's private re-enactments."""
        if self._traffic is not None and self._refresh in self._traffic.listeners:
            self._traffic.listeners.remove(self._refresh)
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
        self.source.close()


GONE = "the traffic before this message is gone from the ring (start the agent with record= to keep it all)"


def _guarded(answer: Any, kind: Any, content: dict[str, Any]) -> dict[str, Any]:
    """``answer(kind, content)``, or the error the panel shows (the session goes on)."""
    try:
        return answer(kind, content)
    except (TypeError, ValueError, KeyError) as exc:
        return {"error": f"bad {kind}: {exc}"}
    except Exception as exc:
        return {"error": f"{kind} failed: {type(exc).__name__}: {exc}"}
