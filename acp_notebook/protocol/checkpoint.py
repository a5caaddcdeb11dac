"""Checkpoint rules, without I/O: which files a snapshot takes, what a turn changed, what a revert may do.

A checkpoint is a git tree of the session's working tree (``client.checkpoints`` takes them). A
turn has two: ``before`` (right before the prompt went out) and ``after`` (when the turn ended).
Rule 1: a snapshot takes every file git would (``.gitignore`` respected), except files over
``max_file_bytes`` and, past ``max_files`` files or ``max_total_bytes`` in all, the rest (in path
order); those are *skipped*, with
their size and mtime kept so that a skipped file the turn touched is still reported, as not
revertible. Rule 2: the turn's changes are ``diff(before, after)``. Rule 3: a revert puts back each
changed path as it was ``before``; a path whose content now differs from ``after`` was changed
again since the turn ended and is refused with the reason, unless forced; a path already as it
was ``before`` needs nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

MIB = 1024 * 1024
STATUS = {"A": "added", "M": "modified", "D": "deleted", "T": "modified"}
OPERATION = {"added": "add", "modified": "modify", "deleted": "delete"}


class NoCheckpoint(RuntimeError):
    """The turn has no checkpoint to compare with or revert to (the message says why)."""


@dataclass(frozen=True)
class Limits:
    """What a snapshot takes: files up to ``max_file_bytes``, at most ``max_files`` and
    ``max_total_bytes`` of them; ``timeout`` bounds each git call, ``slow`` says when to warn."""

    max_file_bytes: int = 10 * MIB
    max_files: int = 10_000
    max_total_bytes: int = 128 * MIB
    timeout: float = 30.0
    slow: float = 5.0


@dataclass(frozen=True)
class Snapshot:
    """One checkpoint: a git tree id, and the files left out of it (path → (reason, signature))."""

    tree: str
    skipped: Mapping[str, tuple[str, Any]] = field(default_factory=dict)


Skipped = dict[str, tuple[str, Any]]


def select(entries: Iterable[tuple[str, Any]], limits: Limits) -> tuple[list[str], Skipped]:
    """Split ``(path, stat)`` pairs (stat: ``(size, mtime_ns)`` or None if gone) into the paths
    to record (gone ones included: the snapshot drops them) and the skipped ones."""
    keep: list[str] = []
    skipped: Skipped = {}
    count = total = 0
    for path, stat in sorted(entries):
        if path.endswith("/"):
            skipped[path.rstrip("/")] = ("a nested git repository: not checkpointed", None)
        elif stat is not None and stat[0] > limits.max_file_bytes:
            skipped[path] = (f"larger than {_size(limits.max_file_bytes)}: not checkpointed", stat)
        elif stat is not None and count >= limits.max_files:
            skipped[path] = (f"over the cap of {limits.max_files} files: not checkpointed", stat)
        elif stat is not None and total + stat[0] > limits.max_total_bytes:
            skipped[path] = (
                f"over the cap of {_size(limits.max_total_bytes)} in all: not checkpointed",
                stat,
            )
        else:
            count += stat is not None
            total += stat[0] if stat is not None else 0
            keep.append(path)
    return keep, skipped


def parse_name_status(raw: str) -> dict[str, str]:
    """``git diff-tree -r -z --name-status --no-renames`` output → path → added/modified/deleted."""
    parts = raw.split("\0")
    out: dict[str, str] = {}
    for status, path in zip(parts[0::2], parts[1::2], strict=False):
        if path:
            out[path] = STATUS.get(status[:1], "modified")
    return out


def turn_changes(diff: Mapping[str, str], before: Snapshot, after: Snapshot) -> list[dict[str, Any]]:
    """What a turn changed: the checkpointed diff, then the skipped files that changed."""
    rows = []
    for path, change in sorted(diff.items()):
        skip = after.skipped.get(path) or before.skipped.get(path)  # crossed a cap: it exists
        rows.append(_row(path, "modified", False, skip[0]) if skip else _row(path, change, True, None))
    for path in sorted(set(before.skipped) | set(after.skipped)):
        was, now = before.skipped.get(path), after.skipped.get(path)
        if path in diff or (was is not None and now is not None and was[1] == now[1]):
            continue
        change = "added" if was is None else "deleted" if now is None else "modified"
        rows.append(_row(path, change, False, (now or was)[0]))  # type: ignore[index]
    return rows


def _row(path: str, change: str, revertible: bool, reason: str | None) -> dict[str, Any]:
    return {"path": path, "change": change, "revertible": revertible, "reason": reason}


def plan(
    changes: list[dict[str, Any]], since_end: Mapping[str, str], since_before: Mapping[str, str], force: bool
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[str]]:
    """Split a turn's changes into (to restore, refused with a reason, already as before)."""
    restore, refused, unchanged = [], [], []
    for row in changes:
        path = row["path"]
        if not row["revertible"]:
            refused.append({**row, "reason": row["reason"], "forceable": False})
        elif path not in since_before:
            unchanged.append(path)
        elif path in since_end and not force:
            why = f"{since_end[path]} since the turn ended (by a later turn, you or another program)"
            refused.append({**row, "reason": why, "forceable": True})
        else:
            restore.append({**row, "action": "delete" if row["change"] == "added" else "restore"})
    return restore, refused, unchanged


@dataclass(frozen=True)
class RevertResult:
    """What ``turn.revert()`` did (or, with ``preview``, would do)."""

    preview: bool
    restored: list[dict[str, Any]]
    refused: list[dict[str, Any]]
    unchanged: list[str]
    patch: str = ""
    patch_cut: bool = False
    note: str = ""  # what part of the changes background subagents made after the turn ended

    @property
    def paths(self) -> list[str]:
        """The paths restored (or to restore)."""
        return [r["path"] for r in self.restored]

    def files(self) -> list[dict[str, Any]]:
        """The restored files as the view's diff ``files`` (operation of the revert itself)."""
        undo = {"added": "delete", "deleted": "add", "modified": "modify"}
        return [{"operation": undo[r["change"]], "path": r["path"], "old_path": None} for r in self.restored]

    def to_dict(self) -> dict[str, Any]:
        """Plain data (for the view and for JSON)."""
        return {
            "preview": self.preview, "restored": self.restored, "refused": self.refused,
            "unchanged": self.unchanged, "patch": self.patch, "patch_cut": self.patch_cut,
            "files": self.files(), "note": self.note,
        }  # fmt: skip

    def __repr__(self) -> str:
        verb = "would restore" if self.preview else "restored"
        refused = f", refused {[r['path'] for r in self.refused]}" if self.refused else ""
        return f"<RevertResult {verb} {self.paths}{refused}>"


def _size(n: int) -> str:
    return f"{n / MIB:g} MiB" if n >= MIB else f"{n} bytes"
