"""Terminal bytes in a ring of chunks: exact bytes against a reference model, bounded memory, and
view flushes that copy only the bytes they send (``protocol/byte_ring.py``, ``terminal_moves``)."""

from __future__ import annotations

import codecs
import tracemalloc
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from acp_notebook.protocol import SessionState
from acp_notebook.protocol.byte_ring import CHUNK_SIZE, ByteRing
from acp_notebook.protocol.terminal import Terminal
from acp_notebook.widgets import viewmodel as vm
from acp_notebook.widgets.terminal_moves import terminal_moves

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
PIECES = [b"a", b"\xc3\xa9", b"\xe2\x9c\x93", b"\x1b[32m", b"\r\n", b"\xff", b"0123456789"]


def newest(data: bytes, cap: int) -> bytes:
    """The reference rule: the newest ``cap`` bytes (none for cap 0)."""
    return data[max(0, len(data) - cap) :]


def _pattern(size: int) -> bytes:
    out, i = bytearray(), 1
    while len(out) < size:
        out += PIECES[i % len(PIECES)]
        i = (i * 7 + 3) % 1009
    return bytes(out)


PATTERN = _pattern(4 * 65536 + 2000)


def stream(seed: int, size: int) -> bytes:
    """``size`` bytes of terminal-like output (multi-byte characters, escapes, a stray byte)."""
    start = seed % 1000
    return PATTERN[start : start + size]


# -- the ring against a reference model -----------------------------------------------------------
ring_op = st.one_of(
    st.tuples(st.just("append"), st.integers(0, 60), st.integers(0, 1000)),
    st.tuples(st.just("read"), st.integers(-5, 400), st.just(0)),
    st.tuples(st.just("clear"), st.just(0), st.just(0)),
    st.tuples(st.just("cap"), st.integers(0, 50), st.just(0)),
)


@SETTINGS
@given(st.integers(0, 50), st.integers(1, 9), st.lists(ring_op, max_size=40))
def test_ring_holds_exactly_the_newest_cap_bytes(cap: int, chunk_size: int, ops: list[tuple]) -> None:
    ring, received, held = ByteRing(cap, chunk_size), 0, b""
    for op, a, b in ops:
        if op == "append":
            data = stream(b, a)
            ring.append(data)
            received, held = received + len(data), newest(held + data, cap)
        elif op == "clear":
            ring.clear()
            received, held = 0, b""
        elif op == "cap":
            cap = a
            ring.set_cap(cap)
            held = newest(held, cap)
        else:
            base = received - len(held)
            assert ring.read_from(a) == held[max(0, a - base) :]
        assert ring.read_from(0) == held
        assert (ring.end, ring.base, ring.held) == (received, received - len(held), len(held))
        assert ring.read_from(ring.end) == ring.read_from(ring.end + 3) == b""
        assert len(held) <= ring.stored < len(held) + chunk_size  # less than one dropped chunk kept


def test_ring_accepts_any_bytes_like_and_keeps_an_exact_chunk_without_copying() -> None:
    ring = ByteRing(10 * CHUNK_SIZE)
    exact = bytes(CHUNK_SIZE)
    ring.append(exact)
    ring.append(bytearray(b"ab"))
    ring.append(memoryview(b"xcd")[1:])
    assert ring._chunks[0] is exact
    assert ring.read_from(CHUNK_SIZE) == b"abcd"
    assert ByteRing(4).read_from(0) == b""
    with pytest.raises(ValueError):
        ByteRing(4, chunk_size=0)


def test_ring_does_not_pin_a_caller_bytearray() -> None:
    ring, data = ByteRing(100, 4), bytearray(b"abcdefgh")
    ring.append(data)
    assert ring.read_from(2) == b"cdefgh"
    data += b"resizable"  # a lingering export of ``data`` would raise BufferError here
    assert ring.read_from(0) == b"abcdefgh"


# -- the terminal against the same rules, with the real chunk size --------------------------------
term_op = st.one_of(
    st.tuples(st.just("append"), st.integers(0, 3 * CHUNK_SIZE), st.integers(0, 99)),
    st.tuples(st.just("replace"), st.integers(0, 3 * CHUNK_SIZE), st.integers(0, 99)),
    st.tuples(st.just("text"), st.just(0), st.just(0)),
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(1, 3 * CHUNK_SIZE), st.lists(term_op, min_size=1, max_size=12))
def test_terminal_bytes_and_text_follow_the_cap(cap: int, ops: list[tuple]) -> None:
    term, received, held, gen = Terminal("t", cap=cap), 0, b"", 0
    for op, size, seed in ops:
        data = stream(seed, size)
        if op == "append":
            term.append(data)
            received, held = received + size, newest(held + data, cap)
        elif op == "replace":
            term.replace(data)
            received, held, gen = size, newest(data, cap), gen + 1
        assert (term.output, term.generation, term.end_offset) == (held, gen, received)
        assert term.dropped_bytes == term.base_offset == received - len(held)
        assert term.held_bytes == len(held) <= cap
        assert term.read_from(received - 100) == held[-100:]
        if op == "text":
            expected = codecs.getincrementaldecoder("utf-8")("replace").decode(held)
            assert term.text == expected


def test_cap_can_be_lowered_on_a_live_terminal() -> None:
    term = Terminal("t", cap=8)
    term.append(b"0123456789")
    term.cap = 4
    assert (term.cap, term.output, term.dropped_bytes) == (4, b"6789", 6)
    assert repr(term).endswith("bytes=4)")


def test_raising_the_cap_brings_no_dropped_byte_back() -> None:
    ring = ByteRing(2, chunk_size=2)  # the dropped byte "a" is still stored in the front chunk
    ring.append(b"ab")
    ring.append(b"c")
    ring.set_cap(3)
    assert (ring.read_from(0), ring.base) == (b"bc", 1)
    ring.append(b"d")
    assert (ring.read_from(0), ring.base) == (b"bcd", 1)


# -- memory: at most about one cap, however much is streamed --------------------------------------
def traced_peak(work: Callable[[], Any]) -> int:
    """Peak Python allocation, in bytes, while ``work`` runs (above what was allocated before)."""
    tracemalloc.start()
    try:
        start = tracemalloc.get_traced_memory()[0]
        work()
        return tracemalloc.get_traced_memory()[1] - start
    finally:
        tracemalloc.stop()


CAP = 1 << 20
CHUNK = stream(1, 16 * 1024)


def test_streaming_eight_caps_stays_under_a_quarter_over_the_cap() -> None:
    """The bytearray it replaces trimmed at 1.25 x cap and regrew: its peak was ~2.7 x cap."""
    term = Terminal("t", cap=CAP)

    def work() -> None:
        for _ in range(8 * CAP // len(CHUNK)):
            term.append(CHUNK)

    assert traced_peak(work) <= 1.25 * CAP
    assert term.output == newest(CHUNK * (8 * CAP // len(CHUNK)), CAP)


def test_streaming_with_a_view_flushing_stays_under_a_quarter_over_the_cap() -> None:
    """Each flush used to copy the whole buffer twice (peak ~3.7 x cap); now it copies what it sends."""
    state = SessionState(terminal_output_cap=CAP)
    state.apply({"sessionUpdate": "terminal_update", "terminalId": "t1"})
    term, sent = state.terminals["t1"], {}
    flush_every = 16  # 256 KiB between flushes

    def work() -> None:
        for i in range(8 * CAP // len(CHUNK)):
            term.append(CHUNK)
            if i % flush_every == flush_every - 1:
                terminal_moves(state.terminals, ["t1"], sent)

    assert traced_peak(work) <= 1.25 * CAP + flush_every * len(CHUNK)
    assert sent["t1"] == (0, 8 * CAP)


# -- flushes: O(new bytes) --------------------------------------------------------------------------
class NoWholeCopy(Terminal):
    """A terminal whose whole-buffer copy fails: a flush of new bytes must not need it."""

    __slots__ = ()

    @property
    def output(self) -> bytes:
        raise AssertionError("a flush of new bytes copied the whole terminal")


def full_state(term: Terminal, size: int) -> SessionState:
    state = SessionState()
    state.terminals[term.terminal_id] = term
    term.append((PATTERN * (size // len(PATTERN) + 1))[:size])
    return state


def test_flush_of_new_bytes_never_copies_the_whole_terminal() -> None:
    term = NoWholeCopy("t1", cap=4 * CAP)
    state = full_state(term, 5 * CAP)
    sent = {"t1": (0, term.end_offset)}
    term.append(b"x" * 100)
    metas, moves, buffers = terminal_moves(state.terminals, ["t1"], sent)
    assert buffers == [b"x" * 100]
    assert moves == [{"id": "t1", "gen": 0, "at": 5 * CAP, "buf": 0, "reset": False}]
    assert (metas["t1"]["base"], metas["t1"]["end"]) == (CAP + 100, 5 * CAP + 100)
    assert vm.terminal_meta(term)["base"] == term.base_offset


def test_flush_allocates_about_what_it_sends() -> None:
    term = Terminal("t1", cap=4 * CAP)
    state = full_state(term, 4 * CAP)
    sent = {"t1": (0, term.end_offset)}
    term.append(b"y" * 100)
    captured: list[Any] = []
    peak = traced_peak(lambda: captured.append(terminal_moves(state.terminals, ["t1"], sent)))
    assert captured[0][2] == [b"y" * 100]
    assert peak < 16 * 1024  # the old path copied 8 MiB here


def test_flush_after_a_reset_or_a_drop_sends_every_held_byte() -> None:
    term = Terminal("t1", cap=3 * CHUNK_SIZE)
    state = full_state(term, 5 * CHUNK_SIZE + 7)
    for sent_before in ({}, {"t1": (0, 10)}, {"t1": (5, term.end_offset)}):
        sent = dict(sent_before)
        _, moves, buffers = terminal_moves(state.terminals, ["t1"], sent)
        assert buffers == [term.output] and len(buffers[0]) == 3 * CHUNK_SIZE
        assert moves[0]["reset"] and moves[0]["at"] == 2 * CHUNK_SIZE + 7
        assert sent == {"t1": (0, 5 * CHUNK_SIZE + 7)}
    _, moves, buffers = terminal_moves(state.terminals, ["t1"], sent)
    assert (moves, buffers) == ([], [])  # nothing new: nothing sent
