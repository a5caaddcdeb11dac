"""Issue 12: ``fs/*`` reads off the loop (only regular files, capped, timed) and writes that follow
no link, refuse hard links and notebooks in any case."""

from __future__ import annotations

import asyncio
import os
import socket
import time

import pytest

from acp_notebook import SessionState
from acp_notebook.client.errors import RpcError
from acp_notebook.client.host import FilePolicy, Host, safe_open
from acp_notebook.client.host.fs import FS_DENIED, MAX_READ_BYTES

BOUND = 5  # seconds any one read here may take before the test fails instead of hanging


@pytest.fixture
def proj(tmp_path):
    (tmp_path / "proj").mkdir()
    (tmp_path / "outside").mkdir()
    return tmp_path / "proj"


def host(proj, **policy):
    return Host(SessionState(), [str(proj)], FilePolicy(**policy))


async def read(h, path, **params):
    return await asyncio.wait_for(h.serve("fs/read_text_file", {"path": str(path), **params}), BOUND)


async def refused(h, method, path, **params):
    with pytest.raises(RpcError) as info:
        await asyncio.wait_for(h.serve(method, {"path": str(path), **params}), BOUND)
    return info.value


async def test_fifo_read_is_refused_fast_and_the_loop_runs_on(proj):
    os.mkfifo(proj / "pipe")
    started = time.monotonic()
    error = await refused(host(proj), "fs/read_text_file", proj / "pipe")
    assert time.monotonic() - started < 2
    assert "FIFO" in error.message and "regular" in error.message
    await asyncio.sleep(0)  # the loop was never blocked: this test got here


async def test_fifo_write_is_refused(proj):
    os.mkfifo(proj / "pipe")
    error = await refused(host(proj), "fs/write_text_file", proj / "pipe", content="x")
    assert error.code == FS_DENIED and "regular" in error.message


async def test_directory_and_socket_reads_are_refused(proj, monkeypatch):
    (proj / "sub").mkdir()
    assert "directory" in (await refused(host(proj), "fs/read_text_file", proj / "sub")).message
    monkeypatch.chdir(proj)  # a relative name keeps the socket's address short
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind("sock")
        error = await refused(host(proj), "fs/read_text_file", proj / "sock")
    assert error.code == -32602 and "regular" in error.message


async def test_huge_sparse_file_reads_only_the_lines_asked_for(proj):
    big = proj / "big.txt"
    big.write_text("one\ntwo\nthree\nfour\n")
    os.truncate(big, 512 * 1024 * 1024)
    started = time.monotonic()
    assert await read(host(proj), big, line=2, limit=2) == {"content": "two\nthree\n"}
    assert time.monotonic() - started < 2


async def test_reply_over_the_cap_is_a_clear_error(proj):
    big = proj / "big.txt"
    big.write_text("one\ntwo\nthree\nfour\n")
    os.truncate(big, 512 * 1024 * 1024)
    for params in ({}, {"line": 4, "limit": 2}):  # the whole file; a 512 MB line of NULs
        error = await refused(host(proj), "fs/read_text_file", big, **params)
        assert "read limit" in error.message and "max_read_bytes" in error.message
    (proj / "small.txt").write_text("x" * 100 + "\n")
    assert (
        "read limit"
        in (await refused(host(proj, max_read_bytes=50), "fs/read_text_file", proj / "small.txt")).message
    )
    assert (await read(host(proj, max_read_bytes=101), proj / "small.txt"))["content"] == "x" * 100 + "\n"
    assert FilePolicy().max_read_bytes == MAX_READ_BYTES == 10 * 1024 * 1024


def test_a_read_past_its_deadline_stops(proj, monkeypatch):
    (proj / "a.txt").write_text("a\n" * 10)
    monkeypatch.setattr("acp_notebook.client.host.reading.CHUNK", 1)
    files = host(proj).files
    with pytest.raises(RpcError, match="longer than 10 s"):
        files.read_real(str(proj / "a.txt"), {"path": "a.txt", "line": 1}, time.monotonic() - 1)


async def test_a_stuck_read_times_out_and_the_session_goes_on(proj, monkeypatch):
    (proj / "a.txt").write_text("a\n")
    h = host(proj, read_timeout=0.2)
    real_read = h.files.read_real
    monkeypatch.setattr(h.files, "read_real", lambda *args: time.sleep(2))
    started = time.monotonic()
    error = await refused(h, "fs/read_text_file", proj / "a.txt")
    assert "longer than 0.2 s" in error.message and time.monotonic() - started < 1.9
    monkeypatch.setattr(h.files, "read_real", real_read)
    assert (await read(h, proj / "a.txt"))["content"] == "a\n"


def test_the_walk_refuses_a_symlink_swapped_in_for_a_parent(proj, tmp_path):
    h = host(proj).files
    (proj / "sub").mkdir()
    real = h.resolve(str(proj / "sub" / "x.txt"), "write")  # checked while sub is a directory
    (proj / "sub").rmdir()
    os.symlink(tmp_path / "outside", proj / "sub")  # ... then swapped for a link outside
    with pytest.raises(safe_open.UnsafePath, match="symbolic link"):
        h.put(real, "escaped")
    assert not (tmp_path / "outside" / "x.txt").exists()
    (tmp_path / "outside" / "x.txt").write_text("secret")
    with pytest.raises(RpcError, match="symbolic link") as info:
        h.read_real(real, {"path": real})  # a read checked before the swap does not escape either
    assert info.value.code == FS_DENIED


async def test_write_through_a_swapped_parent_is_an_rpc_error(proj, tmp_path, monkeypatch):
    h = host(proj)
    (proj / "sub").mkdir()
    checked = h.files.write_target

    def swap_after_check(params):
        answer = checked(params)
        (proj / "sub").rmdir()
        os.symlink(tmp_path / "outside", proj / "sub")
        return answer

    monkeypatch.setattr(h.files, "write_target", swap_after_check)
    error = await refused(h, "fs/write_text_file", proj / "sub" / "x.txt", content="escaped")
    assert error.code == FS_DENIED and "not written" in error.message
    assert not (tmp_path / "outside" / "x.txt").exists()


async def test_write_creates_missing_directories_and_keeps_bytes(proj):
    await host(proj).serve(
        "fs/write_text_file", {"path": str(proj / "a" / "b" / "c.txt"), "content": "x\r\ny\n"}
    )
    assert (proj / "a" / "b" / "c.txt").read_bytes() == b"x\r\ny\n"


async def test_hard_linked_target_is_refused_unless_the_policy_allows(proj):
    (proj / "nb.json").write_text("keep")
    os.link(proj / "nb.json", proj / "alias.txt")
    error = await refused(host(proj), "fs/write_text_file", proj / "alias.txt", content="clobber")
    assert error.code == FS_DENIED and "hard link" in error.message
    assert (proj / "nb.json").read_text() == "keep"
    with pytest.raises(safe_open.UnsafePath, match="hard link"):
        host(proj).files.put(str(proj / "alias.txt"), "clobber")  # the open checks again
    assert (proj / "nb.json").read_text() == "keep"
    await host(proj, allow_hard_links=True).serve(
        "fs/write_text_file", {"path": str(proj / "alias.txt"), "content": "shared"}
    )
    assert (proj / "nb.json").read_text() == "shared"


@pytest.mark.parametrize("name", ["x.IPYNB", "x.Ipynb", "x.ipynb"])
async def test_notebooks_are_refused_in_any_case(proj, name):
    error = await refused(host(proj), "fs/write_text_file", proj / name, content="{}")
    assert error.code == FS_DENIED and "notebooks" in error.message
    assert not (proj / name).exists()


async def test_reads_still_refuse_a_link_that_escapes_and_follow_one_inside(proj, tmp_path):
    (tmp_path / "outside" / "s.txt").write_text("secret")
    (proj / "in.txt").write_text("inside")
    os.symlink(tmp_path / "outside" / "s.txt", proj / "out-link")
    os.symlink(proj / "in.txt", proj / "in-link")
    assert (await refused(host(proj), "fs/read_text_file", proj / "out-link")).code == FS_DENIED
    assert (await read(host(proj), proj / "in-link"))["content"] == "inside"
