"""A checkpoint per turn: the session's working tree right before the prompt and when the turn ends.

The ``TurnRunner`` calls ``begin`` before a prompt goes out and ``end`` when its turn is over; each
takes a snapshot (``shadow_git``). ``turn.changes()`` is the diff of the two, whoever wrote the
files (the agent through the client, the agent itself, a build, the user); ``turn.revert()`` puts
those files back as they were before the turn (rules in ``protocol.checkpoint``). A git failure or
timeout never breaks a turn: it becomes a ``checkpoint-failed`` diagnostic and that turn simply has
no checkpoint. Listeners (the views) hear about every checkpoint taken and every revert.

Background subagents: a turn that ends while subagents it started still work in the background
(the ``state_update`` ``background`` list names them) stays *open*: its changes are known at once,
and when the last of them finishes — or the next turn, a prompt's or one the agent started (e.g.
its task notification), begins — a new end checkpoint is taken and the turn's changes include what
was written meanwhile. Writes are thus the turn's in which they happened: the next turn's once it
has begun, else the turn whose background work was running. ``cp.background`` lists the paths
changed after the turn ended and ``cp.note()`` says so, naming the subagents (the revert bar and
``RevertResult.note`` show it); an open turn is not reverted until its subagents are done.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
import time
from collections.abc import Callable
from typing import Any

from ...protocol.changes import Change
from ...protocol.checkpoint import Limits, NoCheckpoint, RevertResult, Snapshot, plan, turn_changes
from ...protocol.session_values import background_sessions
from ...protocol.state import SessionState
from ...protocol.turn import Turn
from .shadow_git import GitError, ShadowRepo

Listener = Callable[["TurnCheckpoint"], None]


class TurnCheckpoint:
    """One turn's two checkpoints, and what the turn changed between them."""

    def __init__(self, owner: Checkpointer, number: int, timeline_start: int) -> None:
        self.owner, self.number, self.timeline_start = owner, number, timeline_start
        self.before: Snapshot | None = None
        self.after: Snapshot | None = None
        self.error: str | None = None
        self.reverted: RevertResult | None = None
        self.open = False  # ended while background subagents still work: the end is not final yet
        self.background: list[str] = []  # paths changed after the turn ended, while they worked
        self.subagents: dict[str, str] = {}  # those subagents: session id -> title (else the id)
        self._turn_end: Snapshot | None = None  # the end checkpoint taken when the turn ended
        self._changes: list[dict[str, Any]] | None = None

    @property
    def ready(self) -> bool:
        """True once the turn's changes are known."""
        return self._changes is not None

    def changes(self) -> list[dict[str, Any]]:
        """What the turn changed on disk: ``{path, change, revertible, reason}`` per file."""
        if self._changes is None:
            raise NoCheckpoint(self.why_not())
        return [dict(row) for row in self._changes]

    def why_not(self) -> str:
        """Why there are no changes to show (yet)."""
        if self.error:
            return f"turn {self.number} has no checkpoint: {self.error}"
        if self.before is None:
            return f"turn {self.number}: its checkpoint is still being taken"
        return f"turn {self.number} has not ended yet (its end checkpoint is taken when it does)"

    async def revert(self, force: bool = False, preview: bool = False) -> RevertResult:
        """Restore the files the turn changed; ``preview`` only says what would happen."""
        return await self.owner.revert(self, force=force, preview=preview)

    def note(self) -> str | None:
        """What part of the changes background subagents made after the turn ended, or None."""
        names = ", ".join(self.subagents.values())
        if self.open:
            return f"background subagents of this turn are still working ({names}): changes may follow"
        if not self.background:
            return None
        n = len(self.background)
        files = "1 of these files was" if n == 1 else f"{n} of these files were"
        return f"{files} changed after the turn ended, while its background subagents worked ({names})"

    def __repr__(self) -> str:
        state = f"{len(self._changes)} changed" if self._changes is not None else self.error or "pending"
        return f"<TurnCheckpoint turn {self.number}: {state}>"


def checkpoint_wanted(cwd: str, asked: bool | None) -> bool:
    """``asked`` when given; by default yes, except where a snapshot would sweep up unrelated files
    (the filesystem root, the home directory, the temp directory itself)."""
    if asked is not None:
        return asked
    broad = {os.path.realpath(p) for p in ("/", os.path.expanduser("~"), tempfile.gettempdir())}
    return os.path.realpath(cwd) not in broad


class Checkpointer:
    """The checkpoints of one session (``enabled = False`` stops taking them)."""

    def __init__(
        self,
        state: SessionState,
        cwd: str,
        session_id: str,
        busy: Callable[[], bool],
        limits: Limits | None = None,
    ) -> None:
        self.state, self.busy = state, busy
        self.limits = limits or Limits()
        self.repo = ShadowRepo(cwd, session_id, self.limits)
        self.enabled = True
        self.listeners: list[Listener] = []
        self._said: set[str] = set()
        self._open: TurnCheckpoint | None = None  # the turn whose background subagents still work
        self._closing: asyncio.Task | None = None
        state.subscribe(self._state_changed)

    async def begin(self, turn: Turn, number: int, timeline_start: int) -> None:
        """Right before the prompt goes out (or as the agent's own turn starts): snapshot the
        working tree (never raises). An earlier turn still open is closed first."""
        await self._close_open()
        cp = turn.checkpoint = TurnCheckpoint(self, number, timeline_start)
        if not self.enabled:
            cp.error = "checkpoints are off for this session"
            return
        cp.before = await self._snapshot(cp)
        self._tell(cp)

    async def end(self, turn: Turn) -> None:
        """The turn is over: snapshot again and work out what changed (never raises)."""
        cp = turn.checkpoint
        if not isinstance(cp, TurnCheckpoint) or cp.before is None:
            return
        after = await self._snapshot(cp)
        if after is not None:
            try:
                diff = await self.repo.diff(cp.before.tree, after.tree)
            except Exception as exc:  # git failing (or anything else) never breaks the turn
                self._failed(cp, exc)
            else:
                cp.after, cp._changes = after, turn_changes(diff, cp.before, after)
                self._keep_open(cp)
        self._tell(cp)

    # -- background subagents: a turn stays open while they work -----------------------------------
    def _working(self) -> set[str]:
        """The background subagents the agent lists now."""
        return set(background_sessions(self.state.background))

    def _keep_open(self, cp: TurnCheckpoint) -> None:
        working = self._working()
        if working and self._open is None:
            cp.open, cp._turn_end, self._open = True, cp.after, cp
            self._name(cp, working)

    def _name(self, cp: TurnCheckpoint, working: set[str]) -> None:
        for child_id in sorted(working - set(cp.subagents)):
            info = self.state.subagents.get(child_id)
            cp.subagents[child_id] = info.title if info is not None and info.title else child_id

    def _state_changed(self, change: Change) -> None:
        """Background work changed: note who works; none left, close the open turn."""
        cp = self._open
        if cp is None or change.kind != "run_state":
            return
        working = self._working()
        self._name(cp, working)
        if not working and self._closing is None:
            self._closing = asyncio.get_running_loop().create_task(self._close_open())
            self._closing.add_done_callback(self._closed)

    def _closed(self, task: asyncio.Task) -> None:
        self._closing = None
        if not task.cancelled():
            task.exception()  # retrieved: _close never raises but for a cancel

    async def _close_open(self) -> None:
        """Take the open turn's final end checkpoint (its subagents are done, or a turn begins)."""
        closing = self._closing
        if closing is not None and closing is not asyncio.current_task():
            await asyncio.shield(closing)  # already under way: it closes the open turn
        cp, self._open = self._open, None
        if cp is not None:
            await self._close(cp)

    async def _close(self, cp: TurnCheckpoint) -> None:
        final = await self._snapshot(cp)
        if final is not None and cp.before is not None and cp._turn_end is not None:
            try:
                diff = await self.repo.diff(cp.before.tree, final.tree)
                late = await self.repo.diff(cp._turn_end.tree, final.tree)
            except Exception as exc:  # git failing never breaks a turn: the turn-end changes stay
                self._failed(cp, exc)
            else:
                cp.after, cp._changes = final, turn_changes(diff, cp.before, final)
                cp.background = sorted(late)
        cp.open = False
        self._tell(cp)

    async def revert(self, cp: TurnCheckpoint, *, force: bool, preview: bool) -> RevertResult:
        """Plan a revert against the disk as it is now; unless ``preview``, carry it out."""
        if cp._changes is None or cp.before is None or cp.after is None:
            raise NoCheckpoint(cp.why_not())
        if not preview and self.busy():
            raise RuntimeError("a turn is running: revert once it has ended (the agent may still be writing)")
        if not preview and cp.open:
            raise RuntimeError(
                "background subagents of this turn are still working: revert once they have finished"
            )
        now = await self.repo.snapshot()
        since_end = await self.repo.diff(cp.after.tree, now.tree)
        since_before = await self.repo.diff(cp.before.tree, now.tree)
        restore, refused, unchanged = plan(cp._changes, since_end, since_before, force)
        patch, cut = await self.repo.patch(now.tree, cp.before.tree, [r["path"] for r in restore])
        result = RevertResult(preview, restore, refused, unchanged, patch, cut, cp.note() or "")
        if not preview:
            await self._carry_out(cp.before.tree, restore)
            cp.reverted = result
            self._tell(cp)
        return result

    async def _carry_out(self, tree: str, restore: list[dict[str, Any]]) -> None:
        added = [r["path"] for r in restore if r["action"] == "delete"]
        await self.repo.restore(tree, [r["path"] for r in restore if r["action"] == "restore"])
        if added:
            await self.repo.remove(added, await self.repo.directories(tree))

    async def _snapshot(self, cp: TurnCheckpoint) -> Snapshot | None:
        started = time.monotonic()
        try:
            snapshot = await self.repo.snapshot()
        except Exception as exc:  # git failing (or anything else) never breaks the turn
            self._failed(cp, exc)
            return None
        took = time.monotonic() - started
        if took > self.limits.slow and "slow" not in self._said:
            self._said.add("slow")
            skipped = f", {len(snapshot.skipped)} files skipped" if snapshot.skipped else ""
            self.state.diagnose(
                "checkpoint-slow",
                f"the checkpoint of {self.repo.cwd} took {took:.1f} s{skipped}: add a .gitignore, open the "
                "session on a smaller directory, or pass checkpoints=False",
                level="info",
            )
        return snapshot

    def _failed(self, cp: TurnCheckpoint, exc: BaseException) -> None:
        cp.error = str(exc) if isinstance(exc, GitError) else f"{type(exc).__name__}: {exc}"
        if cp.error not in self._said:  # once per distinct reason, not once per turn
            self._said.add(cp.error)
            self.state.diagnose("checkpoint-failed", f"no checkpoint for turn {cp.number}: {cp.error}")

    def _tell(self, cp: TurnCheckpoint) -> None:
        for listener in list(self.listeners):
            try:
                listener(cp)
            except Exception as exc:  # a view's trouble is not the turn's
                self.state.diagnose("checkpoint-listener", f"{type(exc).__name__}: {exc}")
