"""Benchmark: what a long session's view saves in a notebook, and its largest comm message.

A day's session: ``--calls`` tool calls (500), ``--terminals`` of them (50) each streaming
``--per-terminal`` MiB (2). Before: the old snapshot (every terminal's held bytes inline in one
``snapshot``/``terminal_bytes`` update; a resync answered by one patch). After: the view as it
is now (saved terminal bytes capped, paged snapshot, bounded messages), its saved widget state
rebuilt from the recorded comm messages as Lab stores it (buffers base64). Also times a refresh
after one card changed against a floor measured in the same run (rebuilding the old snapshot).

    python bench/saved_state.py [--calls 500] [--terminals 50] [--per-terminal 2]
"""

from __future__ import annotations

import argparse
import base64
import json
import sys
import time
from pathlib import Path
from typing import ClassVar

import comm

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout, like reducer.py

from acp_notebook import SessionState
from acp_notebook.widgets import Scheduler, SessionView
from acp_notebook.widgets import runtime as runtime_module
from acp_notebook.widgets.message_parts import MESSAGE_BOUND, json_size
from acp_notebook.widgets.snapshot import snapshot_of


class Recording(comm.base_comm.BaseComm):
    """Records every message instead of sending it."""

    log: ClassVar[list] = []

    def publish_msg(self, msg_type, data=None, metadata=None, buffers=None, **keys):
        Recording.log.append((self.comm_id, msg_type, data, list(buffers or [])))


def session(calls: int, terminals: int, per_terminal: int) -> SessionState:
    """``calls`` finished tool calls; the first ``terminals`` each show ``per_terminal`` bytes of output."""
    state = SessionState()
    line = b"%06d compiling module and running its tests ........................ ok\r\n"
    for i in range(calls):
        content = [{"type": "terminal", "terminalId": f"t{i}"}] if i < terminals else []
        content.append({"type": "content", "content": {"type": "text", "text": f"step {i} done. " * 30}})
        update = {"sessionUpdate": "tool_call", "toolCallId": f"c{i}", "title": f"run step {i}"}
        state.apply({**update, "kind": "execute", "status": "completed", "content": content})
    for t in range(terminals):
        data = b"".join(line % n for n in range(per_terminal // len(line % 0) + 1))[:per_terminal]
        for at in range(0, len(data), 64 * 1024):
            chunk = base64.b64encode(data[at : at + 64 * 1024]).decode()
            state.apply({"sessionUpdate": "terminal_output_chunk", "terminalId": f"t{t}", "data": chunk})
    return state


def saved_state(log, skip: str) -> int:
    """Bytes of the widget state Lab would save: each live model's state, buffers as base64."""
    models: dict[str, dict] = {}
    for cid, kind, data, bufs in log:
        if cid == skip or (data or {}).get("method") == "custom":
            continue
        if kind == "comm_close":
            models.pop(cid, None)
            continue
        state = dict(data.get("state", {}))
        for path, buf in zip(data.get("buffer_paths", []), bufs, strict=True):
            state[path[0]] = base64.b64encode(bytes(buf)).decode()
        models.setdefault(cid, {}).update(state)
    return len(json.dumps(models))


def before(state: SessionState) -> tuple[int, int]:
    """The old form: (saved bytes, largest message) — all held terminal bytes inline."""
    snapshot, blob = snapshot_of(state, cap=1 << 62)
    saved = json_size(snapshot) + len(base64.b64encode(blob))
    entries = sum(json_size(e) for e in snapshot["entries"].values())
    resync = entries + sum(len(state.terminals[t].output) for t in snapshot["terminals"])
    return saved, max(json_size(snapshot) + len(blob), resync)


def after(state: SessionState) -> tuple[int, int, float, float]:
    """The view now: (saved bytes, largest message, refresh s, floor s)."""
    Recording.log = []
    comm.create_comm = lambda *a, **k: Recording(*a, **k)
    runtime_module._runtime = None
    scheduler = Scheduler(clock=lambda: 0.0, call_later=lambda *_: None)
    view = SessionView(state, scheduler=scheduler)
    view._handle_browser_msg({"type": "resync"})
    runtime = runtime_module.get_runtime().comm.comm_id
    state.apply({"sessionUpdate": "tool_call_update", "toolCallId": "c250", "title": "changed"})
    start = time.perf_counter()
    view.flush_snapshot()
    refresh = time.perf_counter() - start
    start = time.perf_counter()
    snapshot_of(state, cap=1 << 62)  # floor: the old refresh rebuilt every entry and all the bytes
    floor = time.perf_counter() - start
    sizes = [
        json_size(d) + sum(len(b) for b in bufs) for cid, kind, d, bufs in Recording.log if cid != runtime
    ]
    return saved_state(Recording.log, runtime), max(sizes), refresh, floor


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=500)
    parser.add_argument("--terminals", type=int, default=50)
    parser.add_argument("--per-terminal", type=float, default=2.0, help="MiB each terminal streams")
    args = parser.parse_args()
    state = session(args.calls, args.terminals, int(args.per_terminal * 1024 * 1024))
    old_saved, old_max = before(state)
    new_saved, new_max, refresh, floor = after(state)
    held = sum(len(t.output) for t in state.terminals.values())
    print(f"session: {args.calls} tool calls, {args.terminals} terminals, {held / 2**20:.1f} MiB held")
    for name, saved in (("before", old_saved), ("after", new_saved)):
        per_call, per_term = saved / args.calls, saved / max(args.terminals, 1)
        print(f"saved widget state {name:6}: {saved / 2**20:8.2f} MiB = {per_call / 1024:8.1f} KiB"
              f" per tool call, {per_term / 1024:8.1f} KiB per terminal")  # fmt: skip
    print(f"saved state ratio after/before: {new_saved / old_saved:.3f}")
    print(f"largest comm message: before {old_max / 2**20:.2f} MiB, after {new_max / 1024:.1f} KiB"
          f" (bound {MESSAGE_BOUND / 1024:.0f} KiB)")  # fmt: skip
    print(f"refresh after one card changed: {refresh * 1000:.1f} ms, floor (old full rebuild)"
          f" {floor * 1000:.1f} ms, ratio {refresh / floor:.3f}")  # fmt: skip


if __name__ == "__main__":
    main()
