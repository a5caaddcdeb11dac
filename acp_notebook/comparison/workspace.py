"""Copies of a working tree, one per compared agent, and what each agent changed in its copy.

A directory inside a git repository with a HEAD gets a ``git worktree add --detach`` of that
commit, plus the original's uncommitted changes (``git diff HEAD --binary`` applied) and its
untracked, not ignored files; anything else is copied, leaving out ``.git`` and what a top-level
``.gitignore`` names (plain patterns, matched on names and relative paths). The agent's own cwd
is the copy of the directory given (a subdirectory of the repository stays one).

``changes(copy)`` compares the copy with the original tree as it is now, file by file: which files
were added, modified or deleted, and how many lines were added and removed (a binary file counts
as changed, with no lines).
"""

from __future__ import annotations

import difflib
import fnmatch
import os
import shutil
import subprocess
import threading
from dataclasses import dataclass, field
from pathlib import Path

GIT_TIMEOUT = 60.0
MAX_DIFF_BYTES = 2_000_000  # larger files count as changed without a line count
_WORKTREES = threading.Lock()  # git's worktree bookkeeping (.git/worktrees) races when added at once


@dataclass
class Copy:
    """One copy: where it is, what it copies and how (``worktree`` or ``copy``)."""

    original: Path  # the directory asked for
    path: Path  # its copy: the agent's cwd
    root: Path  # the copied tree's top (the worktree, or ``path`` itself)
    source_root: Path  # the original tree's top (the repository, or ``original``)
    kind: str
    commit: str | None = None  # the HEAD a worktree was made from
    ignore: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Changes:
    """What differs between a copy and the original: files by change, lines added and removed."""

    added: tuple[str, ...]
    modified: tuple[str, ...]
    deleted: tuple[str, ...]
    lines_added: int
    lines_removed: int

    @property
    def files(self) -> list[str]:
        """Every file touched, relative to the tree's top, sorted."""
        return sorted({*self.added, *self.modified, *self.deleted})


def make_copy(original: str | os.PathLike, destination: Path) -> Copy:
    """Copy ``original`` into ``destination`` (which must not exist): a worktree or a plain copy."""
    source = Path(original).resolve()
    if not source.is_dir():
        raise NotADirectoryError(f"cannot copy {source}: not a directory")
    top = _git_top(source)
    if top is not None:
        return _worktree(source, top, destination)
    ignore = _gitignore(source)
    shutil.copytree(source, destination, ignore=_ignorer(source, ignore), symlinks=True)
    return Copy(source, destination, destination, source, "copy", ignore=ignore)


def remove_copy(copy: Copy) -> None:
    """Delete a copy (a worktree is unregistered from its repository too)."""
    if copy.kind == "worktree":
        with _WORKTREES:
            _git(copy.source_root, "worktree", "remove", "--force", str(copy.root), check=False)
            _git(copy.source_root, "worktree", "prune", check=False)
    shutil.rmtree(copy.root, ignore_errors=True)


def changes(copy: Copy) -> Changes:
    """What the agent changed in ``copy``, compared with the original tree now."""
    before, after = _files(copy, copy.source_root), _files(copy, copy.root)
    added = sorted(after - before)
    deleted = sorted(before - after)
    modified, plus, minus = [], 0, 0
    for rel in added:
        plus += _line_delta(None, copy.root / rel)[0]
    for rel in deleted:
        minus += _line_delta(copy.source_root / rel, None)[1]
    for rel in sorted(before & after):
        a, b = copy.source_root / rel, copy.root / rel
        if _same(a, b):
            continue
        modified.append(rel)
        more, fewer = _line_delta(a, b)
        plus, minus = plus + more, minus + fewer
    return Changes(tuple(added), tuple(modified), tuple(deleted), plus, minus)


def diff_text(copy: Copy) -> str:
    """A unified diff of the copy against the original (text files only)."""
    found = changes(copy)
    out: list[str] = []
    for rel in found.files:
        old, new = _text(copy.source_root / rel), _text(copy.root / rel)
        if old is None and new is None and (copy.source_root / rel).exists() and (copy.root / rel).exists():
            out.append(f"Binary files a/{rel} and b/{rel} differ\n")
            continue
        out += difflib.unified_diff(
            (old or "").splitlines(True), (new or "").splitlines(True), f"a/{rel}", f"b/{rel}"
        )
    return "".join(line if line.endswith("\n") else line + "\n" for line in out)


# -- git ----------------------------------------------------------------------------------------
def _git(cwd: Path, *args: str, check: bool = True, stdin: bytes | None = None) -> bytes:
    done = subprocess.run(
        ["git", "-C", str(cwd), *args], input=stdin, capture_output=True, timeout=GIT_TIMEOUT, check=False
    )
    if check and done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise OSError(f"git {args[0]} failed in {cwd}: {message[-1] if message else done.returncode}")
    return done.stdout


def _git_top(source: Path) -> Path | None:
    """The repository's top when ``source`` is inside one with a HEAD commit; else None."""
    if shutil.which("git") is None:
        return None
    try:
        top = _git(source, "rev-parse", "--show-toplevel").decode().strip()
        _git(source, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
    except (OSError, subprocess.TimeoutExpired):
        return None
    return Path(top).resolve()


def _worktree(source: Path, top: Path, destination: Path) -> Copy:
    commit = _git(top, "rev-parse", "HEAD").decode().strip()
    with _WORKTREES:
        _git(top, "worktree", "add", "--detach", str(destination), commit)
    patch = _git(top, "diff", "HEAD", "--binary")
    if patch.strip():
        _git(destination, "apply", "--whitespace=nowarn", "-", stdin=patch)
    for rel in _git(top, "ls-files", "--others", "--exclude-standard", "-z").decode().split("\0"):
        if rel:
            target = destination / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(top / rel, target, follow_symlinks=False)
    path = destination / source.relative_to(top)
    return Copy(source, path, destination, top, "worktree", commit)


# -- files --------------------------------------------------------------------------------------
def _files(copy: Copy, top: Path) -> set[str]:
    """The files of one tree: git's view (tracked and untracked, not ignored), else a walk."""
    if copy.kind == "worktree":
        listed = _git(top, "ls-files", "--cached", "--others", "--exclude-standard", "-z").decode()
        return {rel for rel in listed.split("\0") if rel and (top / rel).is_file()}
    skip = _ignorer(top, copy.ignore)
    found = set()
    for directory, dirs, names in os.walk(top):
        dirs[:] = [d for d in dirs if d not in skip(directory, [d])]
        for name in set(names) - set(skip(directory, names)):
            found.add(os.path.relpath(os.path.join(directory, name), top).replace(os.sep, "/"))
    return found


def _gitignore(source: Path) -> list[str]:
    try:
        lines = (source / ".gitignore").read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return []
    return [ln.strip().rstrip("/") for ln in lines if ln.strip() and not ln.startswith(("#", "!"))]


def _ignorer(top: Path, patterns: list[str]):
    """A ``copytree`` ignore function: ``.git`` and the ``.gitignore`` patterns."""

    def ignore(directory: str, names: list[str]) -> list[str]:
        rel_dir = os.path.relpath(directory, top).replace(os.sep, "/")
        out = []
        for name in names:
            rel = name if rel_dir == "." else f"{rel_dir}/{name}"
            if name == ".git" or any(_matches(p, name, rel) for p in patterns):
                out.append(name)
        return out

    return ignore


def _matches(pattern: str, name: str, rel: str) -> bool:
    if pattern.startswith("/"):
        return fnmatch.fnmatch(rel, pattern[1:])
    return fnmatch.fnmatch(name, pattern) or ("/" in pattern and fnmatch.fnmatch(rel, pattern))


def _same(a: Path, b: Path) -> bool:
    try:
        if a.is_symlink() or b.is_symlink():
            return a.is_symlink() and b.is_symlink() and os.readlink(a) == os.readlink(b)
        return a.stat().st_size == b.stat().st_size and a.read_bytes() == b.read_bytes()
    except OSError:
        return False


def _text(path: Path) -> str | None:
    """A text file's content; None when missing, binary or too large."""
    try:
        if path.is_symlink() or path.stat().st_size > MAX_DIFF_BYTES:
            return None
        data = path.read_bytes()
    except OSError:
        return None
    if b"\0" in data:
        return None
    return data.decode("utf-8", "replace")


def _line_delta(a: Path | None, b: Path | None) -> tuple[int, int]:
    """Lines added and removed from ``a`` to ``b`` (None: the file is absent)."""
    old = _text(a) if a is not None else ""
    new = _text(b) if b is not None else ""
    if old is None or new is None:
        return 0, 0
    plus = minus = 0
    matcher = difflib.SequenceMatcher(None, old.splitlines(), new.splitlines(), autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "equal":
            minus, plus = minus + i2 - i1, plus + j2 - j1
    return plus, minus
