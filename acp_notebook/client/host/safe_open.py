"""Open a file below a root without following symbolic links: a ``dir_fd`` walk from the root.

A path checked with ``realpath`` can change before it is opened: a parent directory swapped for a
link would let the open land outside the root. Walking component by component, each opened with
``O_NOFOLLOW`` relative to its parent's descriptor, refuses any link met on the way, whenever it
appeared. The file itself is opened ``O_NONBLOCK`` (a FIFO never blocks the open) and checked with
``fstat``: only regular files pass, and with ``allow_hard_links=False`` only files with one link.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat

DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
FILE_FLAGS = os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


class UnsafePath(OSError):
    """A path the walk refuses: a symbolic link on the way, or another hard link to the file."""


class NotRegular(UnsafePath):
    """The target is a FIFO, device, socket or directory, not a regular file."""


def parts_below(root: str, real: str) -> list[str]:
    """The components of ``real`` below ``root`` (both real, absolute paths)."""
    rel = os.path.relpath(real, root)
    parts = [] if rel == os.curdir else rel.split(os.sep)
    if any(p in ("", os.curdir, os.pardir) for p in parts):
        raise UnsafePath(errno.EXDEV, f"{real} is not below {root}")
    return parts


def open_dir(root: str, parts: list[str], create: bool = False) -> int:
    """A descriptor of ``root/parts...`` reached without following links (``create`` makes dirs)."""
    fd = os.open(root, DIR_FLAGS)
    for name in parts:
        fd = _step(fd, name, create)
    return fd


def _step(parent: int, name: str, create: bool) -> int:
    try:
        return _open_child(parent, name, create)
    finally:
        os.close(parent)


def _open_child(parent: int, name: str, create: bool) -> int:
    try:
        return os.open(name, DIR_FLAGS, dir_fd=parent)
    except FileNotFoundError:
        if not create:
            raise
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            raise UnsafePath(exc.errno, f"{name} is a symbolic link or not a directory") from None
        raise
    with contextlib.suppress(FileExistsError):  # made meanwhile: the open below checks what it is
        os.mkdir(name, dir_fd=parent)
    return _open_child(parent, name, False)


def open_file(
    root: str, real: str, flags: int, *, create_dirs: bool = False, allow_hard_links: bool = True
) -> int:
    """A blocking descriptor of the regular file ``real`` below ``root``, opened without links."""
    parts = parts_below(root, real)
    if not parts:
        raise NotRegular(errno.EISDIR, "is a directory, not a regular file")
    parent = open_dir(root, parts[:-1], create_dirs)
    try:
        fd = os.open(parts[-1], flags | FILE_FLAGS, 0o666, dir_fd=parent)
    except OSError as exc:
        raise _refusal(exc) from None
    finally:
        os.close(parent)
    try:
        check_regular(fd, allow_hard_links)
    except BaseException:
        os.close(fd)
        raise
    os.set_blocking(fd, True)
    return fd


def _refusal(exc: OSError) -> OSError:
    if exc.errno == errno.ELOOP:
        return UnsafePath(exc.errno, "is a symbolic link")
    if exc.errno in (errno.ENXIO, errno.EISDIR, errno.ENODEV, errno.EOPNOTSUPP):
        return NotRegular(exc.errno, "is not a regular file (a socket, FIFO, device or directory)")
    return exc


def check_regular(fd: int, allow_hard_links: bool = True) -> os.stat_result:
    """``fstat(fd)`` if it is a regular file (with one link unless allowed), else ``UnsafePath``."""
    return check_stat(os.fstat(fd), allow_hard_links)


def check_stat(st: os.stat_result, allow_hard_links: bool = True) -> os.stat_result:
    """``st`` if it is a regular file's (with one link unless allowed), else ``UnsafePath``."""
    if not stat.S_ISREG(st.st_mode):
        raise NotRegular(errno.EINVAL, f"is not a regular file (a {kind(st.st_mode)})")
    if st.st_nlink > 1 and not allow_hard_links:
        raise UnsafePath(
            errno.EMLINK, f"has {st.st_nlink - 1} other hard link(s); refused by the file policy"
        )
    return st


def kind(mode: int) -> str:
    """What a non-regular file is, in a word or two."""
    kinds = [(stat.S_ISFIFO, "FIFO"), (stat.S_ISDIR, "directory"), (stat.S_ISSOCK, "socket")]
    kinds += [
        (stat.S_ISCHR, "character device"),
        (stat.S_ISBLK, "block device"),
        (stat.S_ISLNK, "symbolic link"),
    ]
    return next((name for test, name in kinds if test(mode)), "special file")
