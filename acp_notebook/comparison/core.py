"""``acp_notebook.compare``: several agents on one prompt, side by side.

Each agent gets its own copy of ``cwd`` (``workspace``: a ``git worktree`` of HEAD plus the
uncommitted changes inside a repository, else a copy of the tree) and one session there; they
start, and then run each prompt, concurrently (``entrants``). ``permissions=`` is one
``acp_notebook.policies`` policy for every session (None: the views' buttons answer).
``Comparison.view()`` is a grid of the sessions' views (``view``); ``records()`` /
``frame()`` one row per agent; ``close()`` closes the agents and removes the copies unless kept.
"""

from __future__ import annotations

import asyncio
import atexit
import shutil
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..client.registry import registry
from ..client.sync import run_sync
from .entrants import ROWS, Entry, check_permissions, copies_home, dirname, entrants
from .workspace import diff_text, remove_copy

START_TIMEOUT = 60.0
_open: weakref.WeakSet[Comparison] = weakref.WeakSet()  # removed at exit when not closed (and not kept)
_INTS = ("tool_calls", "files_touched", "lines_added", "lines_removed", "tokens_used", "context_size")


class Comparison:
    """Agents compared on the same prompts, each in its own copy of one working tree."""

    def __init__(self, entries: list[Entry], source: Path, home: Path, keep: bool = False) -> None:
        self.entries, self.source, self.home, self.keep = entries, source, home, keep
        self.closed = False
        self._listeners: list[Callable[[], None]] = []
        _open.add(self)

    # -- what it holds ------------------------------------------------------------------------------
    @property
    def labels(self) -> list[str]:
        """The agents' labels, in the order given."""
        return [e.label for e in self.entries]

    @property
    def sessions(self) -> dict[str, Any]:
        """Each agent's session by label (agents that failed to start are left out)."""
        return {e.label: e.session for e in self.entries if e.session is not None}

    @property
    def copies(self) -> dict[str, Path | None]:
        """Where each agent works: its copy of the tree."""
        return {e.label: e.path for e in self.entries}

    def __getitem__(self, label: str) -> Entry:
        for entry in self.entries:
            if entry.label == label:
                return entry
        raise KeyError(f"no agent {label!r} in this comparison: {', '.join(self.labels)}")

    # -- prompts ------------------------------------------------------------------------------------
    async def prompt(self, text: str, timeout: float | None = None) -> dict[str, str | None]:
        """Send ``text`` to every agent at once and wait for all; returns the stop reasons."""
        if self.closed:
            raise RuntimeError("this comparison is closed")
        if not isinstance(text, str) or not text.strip():
            raise ValueError("compare needs a non-empty prompt")
        tasks = [
            asyncio.ensure_future(self._one(e, text, timeout)) for e in self.entries if e.session is not None
        ]
        await asyncio.sleep(0)  # each turn has started: the headers say "running"
        self._changed()
        try:
            await asyncio.gather(*tasks)
        finally:
            self._changed()
        return {e.label: e.stop_reason for e in self.entries}

    async def _one(self, entry: Entry, text: str, timeout: float | None) -> None:
        await entry.prompt(text, timeout)
        self._changed()  # this agent's header, as soon as it is done

    def prompt_task(self, text: str, timeout: float | None = None) -> asyncio.Task:
        """``prompt`` as a task, returned at once (the views show it live)."""
        return asyncio.ensure_future(self.prompt(text, timeout))

    def on_change(self, callback: Callable[[], None]) -> None:
        """Call ``callback()`` whenever a prompt round ends (the grid's headers refresh)."""
        self._listeners.append(callback)

    def _changed(self) -> None:
        for callback in list(self._listeners):
            callback()

    # -- tables -------------------------------------------------------------------------------------
    def records(self) -> list[dict[str, Any]]:
        """One row per agent: stop reason, duration, tool calls, files and lines changed, usage."""
        return [entry.row() for entry in self.entries]

    def frame(self) -> Any:
        """``records()`` as a pandas DataFrame (counts ``Int64``, ``duration``/``cost`` float)."""
        try:
            import pandas as pd
        except ImportError as exc:
            raise ImportError("Comparison.frame() needs pandas: pip install 'acp_notebook[pandas]'") from exc
        df = pd.DataFrame(self.records(), columns=list(ROWS))
        for col in _INTS:
            df[col] = df[col].astype("Int64")
        for col in ("duration", "cost"):
            df[col] = df[col].astype("float64")
        return df.set_index("agent")

    def diff(self, label: str) -> str:
        """A unified diff of what agent ``label`` changed, against the original tree."""
        copy = self[label].copy
        return diff_text(copy) if copy is not None else ""

    # -- display ------------------------------------------------------------------------------------
    def view(self, title: str | None = None) -> Any:
        """A grid of the agents' live views, each under a header naming the agent."""
        from .view import CompareView  # the widgets load only when shown

        return CompareView(self, title=title)

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.view())

    # -- the end ------------------------------------------------------------------------------------
    async def close(self, keep: bool | None = None) -> None:
        """Close every agent; remove the copies unless ``keep`` (default: as ``compare(keep=)``)."""
        keep = self.keep if keep is None else keep
        self.closed = True
        await asyncio.gather(*(e.close(keep) for e in self.entries))
        for entry in self.entries:
            if entry.agent is not None and entry.agent in registry().agents:
                registry().forget(entry.agent)
        if not keep:
            shutil.rmtree(self.home, ignore_errors=True)

    def __repr__(self) -> str:
        parts = [f"{e.label}: {e.error or e.stop_reason or 'ready'}" for e in self.entries]
        return f"<Comparison of {len(self.entries)} agents in copies of {self.source} ({'; '.join(parts)})>"


@atexit.register
def _remove_left_copies() -> None:
    """At exit (the kernel shuts down): the copies of comparisons nobody closed, unless kept."""
    for comparison in list(_open):
        if comparison.closed or comparison.keep:
            continue
        for entry in comparison.entries:
            if entry.copy is not None:
                remove_copy(entry.copy)
        shutil.rmtree(comparison.home, ignore_errors=True)


async def compare(
    agents: Any,
    prompt: str | None = None,
    *,
    cwd: Any = None,
    permissions: Any = None,
    timeout: float | None = None,
    start_timeout: float = START_TIMEOUT,
    keep: bool = False,
) -> Comparison:
    """Start each of ``agents`` in its own copy of ``cwd`` and send all of them ``prompt``.

    ``agents``: names (``"claude"``, ``"codex"``, ``"demo"``...), commands, dicts with ``command``
    and optional ``label``/``env``/``protocol``, or a mapping ``label -> command``. Without
    ``prompt`` the agents only start (``await comparison.prompt(...)`` later). ``timeout`` cancels
    a turn that takes longer; ``keep`` keeps the copies after ``close()``.
    """
    chosen = entrants(agents)
    policy = check_permissions(permissions)
    source, home = copies_home(cwd)
    entries = [Entry(e) for e in chosen]
    starts = (
        e.start(source, home / dirname(n, e.label), policy, start_timeout) for n, e in enumerate(entries, 1)
    )
    try:
        await asyncio.gather(*starts)
    except BaseException:  # interrupted while starting: no stray agent, no stray copy
        await asyncio.shield(asyncio.gather(*(e.close(False) for e in entries)))
        shutil.rmtree(home, ignore_errors=True)
        raise
    for entry in entries:
        if entry.agent is not None:
            registry().add_agent(entry.agent)  # ``%acp stop --all`` and kernel shutdown close it
    comparison = Comparison(entries, source, home, keep)
    if prompt is not None:
        await comparison.prompt(prompt, timeout)
    return comparison


def compare_sync(
    agents: Any, prompt: str | None = None, *, permissions: Any = "cancel", **options: Any
) -> Comparison:
    """``compare`` as a blocking call; a permission request no policy answers cancels that turn."""
    return run_sync(compare(agents, prompt, permissions=permissions, **options))
