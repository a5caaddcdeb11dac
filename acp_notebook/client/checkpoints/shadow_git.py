"""A shadow git repository for one working tree: snapshots as trees, diffs, restores (git as a subprocess).

``GIT_DIR`` is a bare repository under the user's cache directory (``$ACP_NOTEBOOK_CHECKPOINTS``,
else ``$XDG_CACHE_HOME/acp_notebook/checkpoints``, else ``~/.cache/...``), one per working tree,
never inside the project; ``GIT_WORK_TREE`` is the session's cwd. The system and global git config
are not read (no hooks, fsmonitor, signing or autocrlf); the project's ``.gitignore`` files and its
``.git/info/exclude`` are. Each session has its own index, which is git's stat cache: an unchanged
file is not read again and an unchanged tree writes no object. Every git call is an asyncio
subprocess with a timeout (killed when it runs out); nothing here blocks the event loop.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import stat
from collections.abc import Iterable
from pathlib import Path

from ...protocol.checkpoint import Limits, Snapshot, parse_name_status, select

CACHE_ENV = "ACP_NOTEBOOK_CHECKPOINTS"
PATCH_LIMIT = 400_000  # characters of preview diff
CHUNK = 500  # paths per command line


class GitError(RuntimeError):
    """A git call failed or took too long (the message says which and why)."""


def shadow_root() -> Path:
    """Where the shadow repositories live (never inside a project)."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV])
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(cache) / "acp_notebook" / "checkpoints"


def _key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()[:16]


class ShadowRepo:
    """Snapshots of ``cwd`` kept in a bare repository outside it; ``index_name`` keys the stat cache."""

    def __init__(self, cwd: str, index_name: str, limits: Limits, root: Path | None = None) -> None:
        self.cwd = os.path.realpath(cwd)
        self.git_dir = (root or shadow_root()) / _key(self.cwd)
        self.index = self.git_dir / "indexes" / _key(index_name)
        self.limits = limits
        self._ready = False
        self._lock: asyncio.Lock | None = None  # one snapshot at a time on this index

    # -- git --------------------------------------------------------------------------------
    def _env(self, work_tree: bool = True) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
        env.update(GIT_DIR=str(self.git_dir), GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull)
        env.update(GIT_TERMINAL_PROMPT="0", GIT_LITERAL_PATHSPECS="1", LC_ALL="C")
        if work_tree:
            env.update(GIT_WORK_TREE=self.cwd, GIT_INDEX_FILE=str(self.index))
        return env

    async def git(self, *args: str, stdin: bytes | None = None, work_tree: bool = True) -> bytes:
        """Run one git command; its stdout, or ``GitError``."""
        options = ["-c", "core.quotePath=false"]
        exclude = os.path.join(self.cwd, ".git", "info", "exclude")
        if os.path.isfile(exclude):
            options += ["-c", f"core.excludesFile={exclude}"]
        proc = await asyncio.create_subprocess_exec(
            "git", *options, *args, env=self._env(work_tree), cwd=self.cwd if work_tree else None,
            stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
        try:
            out, err = await asyncio.wait_for(proc.communicate(stdin), self.limits.timeout)
        except (TimeoutError, asyncio.CancelledError) as exc:
            proc.kill()
            await asyncio.shield(proc.wait())
            if isinstance(exc, asyncio.CancelledError):
                raise
            raise GitError(f"git {args[0]} took longer than {self.limits.timeout:g} s (stopped)") from None
        if proc.returncode != 0:
            why = err.decode(errors="replace").strip().splitlines()
            raise GitError(
                f"git {args[0]} failed (exit {proc.returncode}): {why[-1] if why else 'no message'}"
            )
        return out

    async def ensure(self) -> None:
        """Create the shadow repository the first time."""
        if self._ready:
            return
        if not os.path.isdir(self.cwd):
            raise GitError(f"the session's directory {self.cwd} does not exist")
        if not (self.git_dir / "acp-ready").exists():  # set up last: a half-made one is finished
            self.git_dir.mkdir(parents=True, exist_ok=True)
            if not (self.git_dir / "HEAD").exists():
                await self.git("init", "-q", "--bare", str(self.git_dir), work_tree=False)
            for key, value in (("gc.auto", "0"), ("core.autocrlf", "false"), ("core.fsmonitor", "false")):
                await self.git("config", key, value, work_tree=False)
            (self.git_dir / "info").mkdir(exist_ok=True)
            (self.git_dir / "info" / "exclude").write_text(".git/\n")
            (self.git_dir / "description").write_text(f"acp_notebook checkpoints of {self.cwd}\n")
            (self.git_dir / "acp-ready").write_text("1\n")
        self.index.parent.mkdir(parents=True, exist_ok=True)
        self._ready = True

    # -- what the checkpoints do -------------------------------------------------------------
    async def snapshot(self) -> Snapshot:
        """Record the working tree (within the limits) as a tree; returns it and what was skipped."""
        self._lock = self._lock or asyncio.Lock()
        async with self._lock:
            await self.ensure()
            listed = await self.git("ls-files", "-z", "-t", "--cached", "--others", "--exclude-standard")
            tagged = [os.fsdecode(e) for e in listed.split(b"\0") if e]
            cached = {e[2:] for e in tagged if not e.startswith("? ")}
            paths = list(dict.fromkeys(e[2:] for e in tagged))
            keep, skipped = await asyncio.to_thread(_choose, self.cwd, paths, self.limits)
            drop = [p for p in skipped if p in cached]
            if drop:
                await self.git("update-index", "--force-remove", "-z", "--stdin", stdin=_nul(drop))
            if keep:
                await self.git(
                    "update-index", "--add", "--remove", "--replace", "-z", "--stdin", stdin=_nul(keep)
                )
            tree = (await self.git("write-tree")).decode().strip()
            return Snapshot(tree, skipped)

    async def diff(self, a: str, b: str) -> dict[str, str]:
        """Path → added/modified/deleted from tree ``a`` to tree ``b``."""
        if a == b:
            return {}
        raw = await self.git("diff-tree", "-r", "-z", "--no-renames", "--name-status", a, b)
        return parse_name_status(os.fsdecode(raw))

    async def patch(self, a: str, b: str, paths: list[str]) -> tuple[str, bool]:
        """The unified diff from ``a`` to ``b`` for ``paths`` (cut at ``PATCH_LIMIT``; True if cut)."""
        text = ""
        for i in range(0, len(paths), CHUNK):
            raw = await self.git(
                "diff-tree", "-r", "-p", "--no-renames", "--no-color", a, b, "--", *paths[i : i + CHUNK]
            )
            text += raw.decode("utf-8", errors="replace")
            if len(text) > PATCH_LIMIT:
                return text[:PATCH_LIMIT].rsplit("\n", 1)[0] + "\n", True
        return text, False

    async def restore(self, tree: str, paths: list[str]) -> None:
        """Write ``paths`` as they are in ``tree`` into the working tree (the index is left alone)."""
        if paths:
            args = (
                "restore",
                f"--source={tree}",
                "--worktree",
                "--pathspec-from-file=-",
                "--pathspec-file-nul",
            )
            await self.git(*args, stdin=_nul(paths))

    async def directories(self, tree: str) -> set[str]:
        """Every directory that holds a file in ``tree``."""
        raw = await self.git("ls-tree", "-r", "-d", "-z", "--name-only", tree)
        return {os.fsdecode(p) for p in raw.split(b"\0") if p}

    async def remove(self, paths: list[str], keep_dirs: set[str]) -> None:
        """Delete files the turn added, and the directories they leave empty (unless in ``keep_dirs``)."""
        await asyncio.to_thread(_remove, self.cwd, paths, keep_dirs)


def _nul(paths: Iterable[str]) -> bytes:
    return b"".join(os.fsencode(p) + b"\0" for p in paths)


def _choose(cwd: str, paths: list[str], limits: Limits) -> tuple[list[str], dict[str, tuple[str, object]]]:
    entries, unreadable = _stat_all(cwd, paths)
    keep, skipped = select(entries, limits)
    skipped.update(unreadable)
    return keep, skipped


def _stat_all(cwd: str, paths: list[str]) -> tuple[list[tuple[str, object]], dict[str, tuple[str, object]]]:
    entries: list[tuple[str, object]] = []
    unreadable: dict[str, tuple[str, object]] = {}
    for path in paths:
        full = os.path.join(cwd, path)
        try:
            st = None if path.endswith("/") else os.lstat(full)  # "dir/": a nested repository
        except OSError:
            st = None
        if st is None or stat.S_ISDIR(st.st_mode):
            entries.append((path, None))
        elif not stat.S_ISLNK(st.st_mode) and not os.access(full, os.R_OK):
            unreadable[path] = ("not readable: not checkpointed", (st.st_size, st.st_mtime_ns))
        else:
            entries.append((path, (st.st_size, st.st_mtime_ns)))
    return entries, unreadable


def _remove(cwd: str, paths: list[str], keep_dirs: set[str]) -> None:
    for path in paths:
        full = os.path.join(cwd, path)
        if os.path.lexists(full) and not (os.path.isdir(full) and not os.path.islink(full)):
            os.unlink(full)
        parent = os.path.dirname(path)
        while parent and parent not in keep_dirs:
            try:
                os.rmdir(os.path.join(cwd, parent))  # only if empty
            except OSError:
                break
            parent = os.path.dirname(parent)
