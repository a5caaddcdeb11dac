"""What an X-ray panel reads: a live session's traffic ring, or a replay's recording.

Entries keep the index they have in their traffic (a live agent's ring counts from its first
line, so indices stay put while the ring forgets old ones). A live session's entries are its
own, its subagents' (every session under it, ``protocol.session_tree``: a child's messages that
came before its announcement join when it is announced) and those of no session. ``rows``
pages through the entries that match a filter — words, and optionally one ``session`` —;
``sessions`` lists the sessions met (id, parent, depth, title) for the panel's session column
and filter, ``detail`` gives one entry's pretty JSON, its link and its
findings, ``built_by`` the entries that built a view entry (``xray_built``), and ``state_after``
the session state right after an entry — through the replay machinery: a replay seeks, a live
session re-enacts its traffic privately (possible while the ring still holds it from the start,
or from the trace file when it records).
"""

from __future__ import annotations

import bisect
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from ..client.agent import Agent
from ..protocol import trace
from ..protocol.content import terminal_refs
from ..protocol.session_tree import SessionTree
from ..protocol.state import SessionState
from . import doctor_rules
from . import xray as rows_of
from .trace_replay import TraceReplay, init_params
from .xray_built import BuiltBy

FINDINGS_EVERY = 1.0  # s: a live session's findings are recomputed at most this often
FINDINGS_SHOWN = 200
MAX_ROWS = 500  # per request
CARD_INDICES = 2_000


class XRaySource:
    """The traffic of one session (or a replay), indexed for the X-ray panel."""

    def __init__(
        self,
        entries: Callable[[], tuple[int, Sequence[dict[str, Any]]]],
        header: dict[str, Any],
        agent_class: type,
        *,
        session_id: str | None = None,
        replay: TraceReplay | None = None,
        full_trace: Callable[[], list[dict[str, Any]] | None] | None = None,
    ) -> None:
        self._entries, self.header, self.session_id, self.replay = entries, header, session_id, replay
        self._full_trace = full_trace or (lambda: None)
        self.agent_class = agent_class  # the client class that re-enacts (the session's own)
        self.links = rows_of.Links()
        self._seen = 0  # absolute index of the next entry to index
        self._mine: list[int] = []  # absolute indices of this session's (and its subagents') entries
        self.tree = SessionTree()
        self._family: set[str] = {session_id} if session_id is not None else set()
        self._others: dict[str, list[int]] = {}  # another session's indices (it may be announced ours)
        self._query: tuple[tuple[str, ...], str | None, int, list[int]] = ((), None, 0, [])
        self._findings: tuple[int, float, list[dict[str, Any]]] = (-1, 0.0, [])
        self._built: BuiltBy | None = None
        self._pinner: TraceReplay | None = None
        self._lock = threading.Lock()  # the panel's answers on the loop, re-enactments in a thread
        self._frozen: list[dict[str, Any]] | None = None

    @classmethod
    def live(cls, session: Any) -> XRaySource:
        """The X-ray of a live ``Session``: its agent's ring (and trace file, when recording)."""
        log = session.traffic_log
        head = trace.header("", log.command)

        def entries() -> tuple[int, Sequence[dict[str, Any]]]:
            return log.ring.seen - len(log.ring), log.ring.entries

        def full() -> list[dict[str, Any]] | None:
            if log.ring.seen == len(log.ring) and not any(e.get("truncated") for e in log.ring.entries):
                return list(log.ring.entries)
            if log.recorder is not None:
                with open(log.recorder.path, encoding="utf-8") as file:
                    return trace.parse(file.read().splitlines())[1]
            return None

        return cls(entries, head, Agent, session_id=session.session_id, full_trace=full)

    @classmethod
    def of_replay(cls, replay: TraceReplay) -> XRaySource:
        """The X-ray of a ``Replay``: all its entries; selecting one seeks the replay."""
        entries, head = (lambda: (0, replay.entries)), replay.header
        return cls(entries, head, replay.agent_class, replay=replay, full_trace=lambda: replay.entries)

    # -- indexing ---------------------------------------------------------------------------------
    def refresh(self) -> None:
        """Index the entries added since the last call (and forget those the ring dropped)."""
        with self._lock:
            self._refresh()

    def _refresh(self) -> None:
        first, entries = self._entries()
        end = first + len(entries)
        if self._mine and self._mine[0] < first:
            self._mine = [i for i in self._mine if i >= first]
            self.links.forget_before(first)
        for index in range(max(self._seen, first), end):
            entry = entries[index - first]
            self.links.add(index, entry)
            session = entry.get("session")
            if self.tree.add(index, entry) is not None and self.session_id is not None:
                self._adopt()
            if self.session_id is None or session is None or session in self._family:
                self._mine.append(index)
            elif isinstance(session, str):
                self._others.setdefault(session, []).append(index)
        self._seen = end

    def _adopt(self) -> None:
        """A child was announced: the sessions now under ours bring the entries they already had."""
        family = self.tree.family(str(self.session_id))
        joined = family - self._family
        self._family = family
        earlier = [i for s in joined for i in self._others.pop(s, [])]
        if earlier:
            self._mine = sorted({*self._mine, *earlier})
            self._query = ((), None, 0, [])

    def entry(self, index: int) -> dict[str, Any] | None:
        """The entry at absolute ``index``, while it is kept."""
        first, entries = self._entries()
        return entries[index - first] if first <= index < first + len(entries) else None

    @property
    def first(self) -> int:
        """The absolute index of the oldest entry still kept."""
        return self._entries()[0]

    def total(self) -> int:
        """How many entries of this session are kept."""
        self.refresh()
        return len(self._mine)

    def sessions(self) -> list[dict[str, Any]]:
        """The sessions met among the entries read (id, parent, depth, title): this session's
        tree for a live one, every session of a replay."""
        self.refresh()
        met = self.tree.summary()
        return met if self.session_id is None else [s for s in met if s["id"] in self._family]

    # -- what the panel asks for ------------------------------------------------------------------
    def rows(
        self, start: int, count: int, query: str | None = None, session: str | None = None
    ) -> dict[str, Any]:
        """Rows ``start``..``start+count`` of the entries matching ``query`` (and of ``session``
        only, when given) and how many match."""
        self.refresh()
        matched = self._matching(tuple(rows_of.query_words(query)), session)
        start, count = max(0, int(start)), max(0, min(int(count), MAX_ROWS))
        out = []
        for index in matched[start : start + count]:
            entry = self.entry(index)
            if entry is not None:
                out.append(self._row(index, entry))
        return {"total": len(matched), "start": start, "rows": out}

    def _row(self, index: int, entry: dict[str, Any]) -> dict[str, Any]:
        kept = [i for i in self.links.related(index) if self.entry(i) is not None]
        return rows_of.row(index, entry, self.links.get(index), kept)

    def _matching(self, words: tuple[str, ...], session: str | None = None) -> list[int]:
        if not words and not session:
            return self._mine
        cached_words, cached_session, upto, found = self._query
        if (cached_words, cached_session) != (words, session) or (found and found[0] < self.first):
            upto, found = 0, []
        for position in range(upto, len(self._mine)):
            index = self._mine[position]
            entry = self.entry(index)
            if entry is None or (session and entry.get("session") != session):
                continue
            if rows_of.matches(rows_of.row(index, entry), entry, list(words)):
                found.append(index)
        self._query = (words, session, len(self._mine), found)
        return found

    def position_of(self, index: int, query: str | None = None, session: str | None = None) -> int | None:
        """Where entry ``index`` is among the rows matching ``query`` (and ``session``; None: not
        among them)."""
        matched = self._matching(tuple(rows_of.query_words(query)), session)
        at = bisect.bisect_left(matched, index)
        return at if at < len(matched) and matched[at] == index else None

    def detail(self, index: int) -> dict[str, Any]:
        """One entry: its row, pretty JSON (cut when huge), link and findings."""
        self.refresh()
        entry = self.entry(index)
        if entry is None:
            return {"index": index, "gone": True}
        text, cut = rows_of.pretty(entry)
        found = [f for f in self.findings() if f["index"] == index]
        row = self._row(index, entry)
        return {"index": index, "row": row, "json": text, "cut": cut, "findings": found}

    def findings(self) -> list[dict[str, Any]]:
        """The doctor's findings over the kept traffic (indices absolute), recomputed now and then."""
        seen, at, found = self._findings
        if seen == self._seen or (
            seen >= 0 and self.replay is None and time.monotonic() - at < FINDINGS_EVERY
        ):
            return found
        first, entries = self._entries()
        result = doctor_rules.diagnose(list(entries))
        found = [{**f.to_dict(), "index": f.index + first} for f in result][:FINDINGS_SHOWN]
        self._findings = (self._seen, time.monotonic(), found)
        return found

    def built_by(self, key: str, state: SessionState) -> list[int]:
        """The indices of the entries that built view entry ``key`` (a card: with its terminals,
        permissions and elicitations, and each one's request, response and related notifications)."""
        return self.built_by_keys(key, card_keys(key, state))

    def built_by_keys(self, key: str, keys: list[str]) -> list[int]:
        """``built_by`` with the card's keys already read (``card_keys``, on the state's thread)."""
        if self._frozen is None:
            self.refresh()
        built = self._tracker()
        if built is not None:  # a subagent's card: its keys are read from the re-enacted tree
            keys = list(dict.fromkeys([*keys, *built.card_keys(key)]))
        found: set[int] = set()
        for each in keys:
            found.update(built.of(each) if built is not None else [])
        if built is None and key.startswith("tool_call:"):  # no re-enactment: the ids they name
            found.update(i for i in self._mine if _names(self.entry(i), key[10:]))
        found.update(r for i in list(found) for r in self.links.related(i))
        mine = set(self._mine)
        return sorted(i for i in found if i in mine)[:CARD_INDICES]

    def freeze(self) -> None:
        """Copy the whole traffic now, for a re-enactment in another thread (``thaw`` after)."""
        self.refresh()
        self._frozen = self._full_trace()

    def thaw(self) -> None:
        """Read the live traffic again."""
        self._frozen = None

    def _trace(self) -> list[dict[str, Any]] | None:
        return self._frozen if self._frozen is not None else self._full_trace()

    def _tracker(self) -> BuiltBy | None:
        entries = self._trace()
        if entries is None:
            return None
        if self._built is None:
            self._built = BuiltBy(self.agent_class, self.header, init_params(entries), self.session_id)
        self._built.catch_up(entries)
        return self._built

    def state_after(self, index: int) -> SessionState | None:
        """The session's state right after entry ``index`` (None: the traffic before it is gone)."""
        if self.replay is not None:
            return self.replay.seek(index + 1)
        entries = self._trace()
        if entries is None or not 0 <= index < len(entries):
            return None
        if self._pinner is None:
            self._pinner = TraceReplay(self.header, entries, self.agent_class, session_id=self.session_id)
        else:
            self._pinner.entries[len(self._pinner.entries) :] = entries[len(self._pinner.entries) :]
        return self._pinner.seek(index + 1)

    def pinned_session(self) -> Any:
        """The re-enacted session whose state ``state_after`` last gave (its subagents with it)."""
        replay = self.replay if self.replay is not None else self._pinner
        return replay.session if replay is not None else None

    def close(self) -> None:
        """End the private re-enactments (a replay source's own replay stays open)."""
        for each in (self._built, self._pinner):
            if each is not None:
                each.close()
        self._built = self._pinner = None


def card_keys(key: str, state: SessionState) -> list[str]:
    """``key`` and, for a card, the keys of the terminals, permissions and elicitations it shows."""
    keys = [key]
    call_id = key[len("tool_call:") :] if key.startswith("tool_call:") else None
    if call_id is not None and call_id in state.tool_calls:
        keys += [f"terminal:{t}" for t in terminal_refs(state.tool_calls[call_id].content)]
        keys += [f"permission:{k}" for k, p in state.permissions.items() if p.tool_call_id == call_id]
        keys += [f"elicitation:{k}" for k, e in state.elicitations.items() if e.tool_call_id == call_id]
    return keys


def _names(entry: dict[str, Any] | None, call_id: str) -> bool:
    return entry is not None and rows_of.tool_call_of(entry.get("message")) == call_id
