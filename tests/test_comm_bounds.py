"""No comm message of a view exceeds the bound, the saved snapshot is capped, and what the page
puts back together (a Python model of mount.js here, the real js/src/parts.js and pages.js under
node) is exactly the state: a 2,000-card session, a resync, a 5 MB text, a 5 MB raw_output, a
20 MB terminal stream. Uses the recording comm and fake clock of ``test_widgets``."""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
from pathlib import Path

import pytest
from jupyter_client.session import json_packer

from acp_notebook import SessionState
from acp_notebook.widgets import runtime as runtime_module
from acp_notebook.widgets import viewmodel as vm
from acp_notebook.widgets.entry_bound import ENTRY_TEXT
from acp_notebook.widgets.message_parts import MESSAGE_BOUND, json_size, split_patch
from acp_notebook.widgets.snapshot import SAVED_TERMINAL_BYTES, saved_terminal, snapshot_of

from .support import recording as recording  # the autouse recording comm
from .support import unpack
from .test_widgets import chunk, make_view, tool

JS_SRC = Path(__file__).resolve().parents[1] / "js" / "src"
MB = 1024 * 1024


def big_state(cards: int = 2000, terminals: int = 100, per_terminal: int = 300 * 1024) -> SessionState:
    """A long session: ``cards`` tool calls, the first ``terminals`` each with a terminal."""
    state = SessionState()
    for i in range(cards):
        content = (
            [{"type": "terminal", "terminalId": f"t{i}"}]
            if i < terminals
            else [{"type": "content", "content": {"type": "text", "text": f"result {i} " * 20}}]
        )
        state.apply(tool(f"c{i}", title=f"step {i}", kind="execute", status="completed", content=content))
    for t in range(terminals):
        state.apply(
            chunk(f"t{t}", (f"t{t} line of output\r\n" * (per_terminal // 20))[:per_terminal].encode())
        )
    return state


def size_of(data, bufs) -> int:
    return json_size(data) + sum(len(b) for b in bufs)


def view_messages(log, start: int = 0):
    """Every message after ``start`` but the runtime's open (its bundle is no view's message)."""
    runtime = runtime_module.get_runtime().comm.comm_id
    return [r for r in log[start:] if not (r[0] == runtime and r[1] == "comm_open")]


def assert_bounded(log, start: int = 0) -> int:
    records = view_messages(log, start)
    biggest = max(size_of(d, b) for _, _, d, b in records)
    assert biggest <= MESSAGE_BOUND, biggest
    return biggest


def page_bytes(log) -> dict[str, bytes]:
    """IPY_MODEL ref -> data of every SnapshotPage opened."""
    out = {}
    for cid, kind, data, _bufs in log:
        if kind == "comm_open" and data["state"].get("_model_name") == "WidgetModel":
            out[f"IPY_MODEL_{cid}"] = base64.b64decode(data["state"]["data"])
    return out


class Page:
    """What a browser builds from the view's custom messages (the rules of mount.js and terminals.js)."""

    def __init__(self, snapshot: dict | None = None) -> None:
        """Start from an inline ``snapshot`` (what the view drew first), or from nothing."""
        snapshot = snapshot or {"seq": -1, "order": [], "entries": {}}
        self.seq = snapshot["seq"]
        self.order: list[str] = list(snapshot["order"])
        self.entries: dict = dict(snapshot["entries"])
        self.terms: dict[str, tuple[int, int, bytearray]] = {}
        self.parts: list[bytes] = []
        self.stale = 0

    def feed(self, content, buffers) -> None:
        content, buffers = unpack(content, buffers)
        if content["type"] == "part":
            assert content["i"] == len(self.parts), "parts arrive in order"
            self.parts.append(bytes(buffers[0]))
            if len(self.parts) < content["n"]:
                return
            content, buffers, self.parts = json.loads(b"".join(self.parts)), [], []
        if content["type"] != "patch":
            return
        if not content["full"] and content["seq"] <= self.seq:
            self.stale += 1
            return
        self.seq = content["seq"]
        self.order = list(content["order"]) if content["full"] else self.order + content.get("order", [])
        self.entries.update(content.get("entries", {}))
        for move in content.get("bytes", []):
            data = bytes(buffers[move["buf"]])
            if move["reset"]:
                self.terms[move["id"]] = (move["gen"], move["at"], bytearray(data))
                continue
            gen, base, held = self.terms[move["id"]]
            assert gen == move["gen"] and move["at"] == base + len(held), "no gap"
            held += data

    def feed_log(self, log, view, start: int = 0) -> Page:
        for cid, kind, data, bufs in log[start:]:
            if cid == view.comm.comm_id and kind == "comm_msg" and data.get("method") == "custom":
                self.feed(data["content"], bufs)
        return self


def assert_page_is(page: Page, view) -> None:
    state = view.state
    assert page.order == view.entry_keys and page.stale == 0
    for key, (_scope, kind, item) in view.items.keys.items():
        assert page.entries[key] == json.loads(json.dumps(vm.build_entry(state, kind, item, view.root)))
    for tid in view.terminal_ids:
        term = state.terminals[tid]
        gen, base, held = page.terms[tid]
        assert (gen, base, bytes(held)) == (term.generation, term.end_offset - len(term.output), term.output)


def paged_snapshot(view, pages: dict[str, bytes]) -> tuple[dict, dict[str, bytes]]:
    """The entries and terminal bytes a paged snapshot holds (read as pages.js reads them)."""
    snap, refs = view.snapshot, [f"IPY_MODEL_{p.model_id}" for p in view.pages]
    assert "entries" not in snap and view.terminal_bytes == b""

    def read(indices):
        return b"".join(pages[refs[i]] for i in indices)

    entries = {}
    for group in snap["groups"]:
        entries.update(json.loads(read(group)))
    metas = json.loads(read(snap["metas"]))
    return entries, {tid: (meta, read(meta["pages"])) for tid, meta in metas.items()}


# -- the bound --------------------------------------------------------------------------------------
def test_a_2000_card_session_its_resync_and_refreshes_stay_under_the_bound(recording):
    state = big_state()
    view, fake, _ = make_view(state)
    assert view.snapshot["groups"] and view.pages, "a session this big saves its snapshot in pages"
    start = len(recording)
    view._handle_browser_msg({"type": "resync"})
    customs = [r for r in recording[start:] if r[2].get("method") == "custom"]
    assert len(customs) > 100  # 100 terminals x 300 KB: many messages, none too big
    assert_page_is(Page().feed_log(recording, view, start), view)
    for i in range(0, 2000, 97):
        state.apply(tool(f"c{i}", title=f"changed {i}"))
        state.apply(chunk(f"t{i % 100}", b"more\r\n" * 1000))
        fake.advance(0.3)
    fake.advance(5)
    assert_bounded(recording)
    entries, terms = paged_snapshot(view, page_bytes(recording))
    assert list(entries) == view.entry_keys and entries["tool_call:c1940"]["title"] == "changed 1940"
    meta, data = terms["t3"]
    assert data == state.terminals["t3"].output[-len(data) :] and meta["trimmed"] > 0


def test_a_refresh_after_one_card_changes_sends_only_that_cards_page(recording):
    state = big_state(terminals=10, per_terminal=10_000)
    view, fake, _ = make_view(state)
    fake.advance(5)
    start = len(recording)
    state.apply(tool("c1234", title="only this one"))
    fake.advance(5)
    opened = [r for r in recording[start:] if r[1] == "comm_open"]
    closed = [r for r in recording[start:] if r[1] == "comm_close"]
    assert len(opened) == 1 and len(closed) == 1
    group = json.loads(base64.b64decode(opened[0][2]["state"]["data"]))
    assert list(group) == [f"tool_call:c{i}" for i in range(1225, 1250)]
    assert group["tool_call:c1234"]["title"] == "only this one"
    update = [r for r in recording[start:] if r[0] == view.comm.comm_id and r[2].get("method") == "update"]
    assert len(update) == 1 and size_of(update[0][2], update[0][3]) < 20_000


def test_no_change_no_page_and_a_new_card_fills_the_last_group(recording):
    state = big_state(cards=1010, terminals=5, per_terminal=1000)
    view, fake, _ = make_view(state)
    fake.advance(5)
    start = len(recording)
    view.flush_snapshot()
    assert [r[1] for r in recording[start:]] == []  # nothing changed: nothing sent
    state.apply(tool("new", title="appended"))
    fake.advance(5)
    opened = [
        json.loads(base64.b64decode(r[2]["state"]["data"])) for r in recording[start:] if r[1] == "comm_open"
    ]
    assert [list(g)[-1] for g in opened] == ["tool_call:new"]


def test_a_5mb_text_and_a_5mb_raw_output_travel_as_parts(recording):
    state = SessionState()
    state.apply(tool("small", title="small"))
    view, fake, _ = make_view(state)
    fake.advance(1)
    start, drawn = len(recording), view.snapshot
    text = "é" * (5 * MB // 2)  # 5 MB of UTF-8, 2.5 M characters
    message = {
        "sessionUpdate": "agent_message_chunk",
        "messageId": "m",
        "content": {"type": "text", "text": text},
    }
    state.apply(message)
    state.apply(tool("small", rawOutput={"log": "x" * 5 * MB}))
    fake.advance(1)
    assert_bounded(recording, start)
    customs = [unpack(r[2]["content"], r[3])[0] for r in recording[start:] if r[2].get("method") == "custom"]
    assert sum(c["type"] == "part" for c in customs) >= 20
    page = Page(drawn).feed_log(recording, view, start)
    assert_page_is(page, view)
    assert page.entries["message:m"]["markdown"] == text[:ENTRY_TEXT]  # the rest on "show all"
    assert page.entries["message:m"]["cut"]["total"] >= len(text)
    assert page.entries["tool_call:small"]["raw_output"] == {"log": "x" * 5 * MB}


def test_a_20mb_terminal_stream_is_bounded_exact_and_saved_capped(recording):
    state = SessionState()
    state.apply(tool("c", content=[{"type": "terminal", "terminalId": "t"}]))
    view, fake, _ = make_view(state)
    for i in range(320):  # 20 MB in 64 KiB chunks, a few per patch
        state.apply(chunk("t", bytes([65 + i % 26]) * 65535 + b"\n"))
        fake.advance(0.02)
    fake.advance(5)
    start = len(recording)
    view._handle_browser_msg({"type": "resync"})
    assert_bounded(recording)
    term = state.terminals["t"]
    assert term.dropped_bytes > 0  # the kernel's own cap (16 MiB) dropped the oldest
    assert_page_is(Page().feed_log(recording, view, start), view)
    snap = view.snapshot
    meta = snap["terminals"]["t"]
    saved = view.terminal_bytes[meta["blob"][0] : sum(meta["blob"])]
    assert len(saved) <= SAVED_TERMINAL_BYTES and saved == term.output[-len(saved) :]
    assert meta["base"] == term.end_offset - len(saved) and meta["trimmed"] == len(term.output) - len(saved)


def test_split_patch_cuts_bytes_at_the_right_offsets_and_keeps_the_head_first():
    moves = [{"id": "t", "gen": 2, "at": 100, "buf": 0, "reset": True}]
    data = bytes(range(256)) * 4000  # ~1 MB
    out = split_patch(
        {"type": "patch", "full": True, "order": ["a"], "entries": {}, "bytes": moves}, [data], 300_000
    )
    messages = [(json.loads(piece.json(seq)), piece.buffers) for seq, piece in enumerate(out, 1)]
    assert messages[0][0]["full"] and all(not m["full"] for m, _ in messages[1:])
    assert [m["seq"] for m, _ in messages] == list(range(1, len(out) + 1))
    got, at = b"", 100
    for piece, (message, bufs) in zip(out, messages, strict=True):
        assert len(piece.json(1)) + sum(len(b) for b in bufs) <= 300_000
        for move in message["bytes"]:
            assert move["at"] == at and move["reset"] == (at == 100)
            got += bufs[move["buf"]]
            at += len(bufs[move["buf"]])
    assert got == data


def test_a_patch_is_encoded_once_on_its_way_to_the_page(recording, monkeypatch):
    """Its header and its entry are JSON-encoded exactly once, the comm's own packing included."""
    state = SessionState()
    view, _, _ = make_view(state, title="HEADER-MARK")
    encodes: list[str] = []
    real = json.dumps

    def counting(value, *args, **kwargs):
        encodes.append(real(value, *args, **kwargs))
        return encodes[-1]

    monkeypatch.setattr(json, "dumps", counting)  # message_parts' and jupyter_client's encoder
    start = len(recording)
    state.apply(tool("c1", title="ENTRY-MARK"))
    assert view.flush_patch() == 1
    for cid, _kind, data, _bufs in recording[start:]:  # what the kernel's session then does
        json_packer({"comm_id": cid, "data": data})
    assert sum("ENTRY-MARK" in text for text in encodes) == 1
    assert sum("HEADER-MARK" in text for text in encodes) == 1
    ((message, _),) = [unpack(d["content"], b) for _, _, d, b in recording[start:]]
    assert message["entries"]["tool_call:c1"]["title"] == "ENTRY-MARK"
    assert message["header"]["title"] == "HEADER-MARK"


# -- the saved snapshot -----------------------------------------------------------------------------
def test_saved_snapshot_keeps_the_newest_bytes_from_a_line_start():
    state = SessionState()
    state.apply(tool("c", content=[{"type": "terminal", "terminalId": "t"}]))
    lines = b"".join(b"line %06d\r\n" % i for i in range(40_000))  # 520 KB
    state.apply(chunk("t", lines))
    meta, data = saved_terminal(state.terminals["t"], 64 * 1024)
    assert len(data) <= 64 * 1024 and lines.endswith(data) and data.startswith(b"line ")
    assert meta["trimmed"] == len(lines) - len(data) and meta["base"] == meta["trimmed"]
    small, blob = snapshot_of(state, cap=10**9)
    assert small["terminals"]["t"]["trimmed"] == 0 and blob == lines


def test_a_small_session_keeps_the_inline_form(recording):
    state = SessionState()
    state.apply(tool("c", content=[{"type": "terminal", "terminalId": "t"}]))
    state.apply(chunk("t", b"hi"))
    view, _, _ = make_view(state)
    assert view.pages == [] and view.snapshot["entries"]["tool_call:c"]["id"] == "c"
    assert view.snapshot["terminals"]["t"]["trimmed"] == 0


# -- the real JS (node) -----------------------------------------------------------------------------
NODE_SCRIPT = """
import { readFileSync } from "node:fs";
const { Channel } = await import(process.argv[2] + "/channel.js");
const { PageReader } = await import(process.argv[2] + "/pages.js");
const input = JSON.parse(readFileSync(0, "utf8"));
const u8 = (b64) => new Uint8Array(Buffer.from(b64, "base64"));
let gaps = 0;
const messages = [];
const comm = { on() {}, off() {}, send: (m) => (gaps += m.type === "resync") };
const channel = new Channel(comm, (msg) => messages.push(msg));
for (const { msg, buffers } of input.messages) channel.receive(msg, buffers.map(u8));
const model = {
  get: (name) => (name === "pages" ? input.refs : input.snapshot),
  widget_manager: { get_model: async (id) => ({ get: () => input.pages["IPY_MODEL_" + id] }) },
};
const got = await new PageReader(model).load(input.snapshot);
const bytes = Object.fromEntries([...got.bytes].map(([id, b]) => [id, Buffer.from(b).toString("base64")]));
const { order, entries, terminals } = got;
console.log(JSON.stringify({ gaps, messages, order, entries, terminals, bytes }));
"""


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_the_page_code_reassembles_parts_and_pages_exactly(recording, tmp_path):
    state = big_state(cards=300, terminals=3, per_terminal=600 * 1024)
    state.apply(
        {
            "sessionUpdate": "agent_message_chunk",
            "messageId": "m",
            "content": {"type": "text", "text": "ü" * MB},
        }
    )
    view, fake, _ = make_view(state)
    start = len(recording)
    state.apply(tool("c7", rawOutput=["y" * 700_000]))
    fake.advance(1)
    customs = [
        {"msg": d["content"], "buffers": [base64.b64encode(bytes(b)).decode() for b in bufs]}
        for cid, _, d, bufs in recording[start:]
        if cid == view.comm.comm_id and d.get("method") == "custom"
    ]
    assert any(m["msg"]["type"] == "part" for m in customs)
    pages = {k: base64.b64encode(v).decode() for k, v in page_bytes(recording).items()}  # as synced
    refs = [f"IPY_MODEL_{p.model_id}" for p in view.pages]
    script = tmp_path / "check.mjs"
    script.write_text(NODE_SCRIPT)
    payload = json.dumps({"messages": customs, "pages": pages, "refs": refs, "snapshot": view.snapshot})
    done = subprocess.run(
        ["node", str(script), JS_SRC.as_uri()], input=payload, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout)
    assert got["gaps"] == 0
    patched = {k: e for m in got["messages"] for k, e in m.get("entries", {}).items()}
    assert patched["tool_call:c7"]["raw_output"] == ["y" * 700_000]
    entries, terms = paged_snapshot(view, page_bytes(recording))
    assert got["order"] == view.entry_keys and got["entries"] == entries
    assert entries["message:m"]["markdown"] == "ü" * ENTRY_TEXT and entries["message:m"]["cut"]
    for tid, (meta, data) in terms.items():
        assert base64.b64decode(got["bytes"][tid]) == data == state.terminals[tid].output[-len(data) :]
        assert got["terminals"][tid] == meta and meta["trimmed"] > 0


def test_an_exported_page_keeps_the_same_capped_tail(tmp_path):
    from acp_notebook.export.html_export import export_html

    from .test_export import data_of

    state = SessionState()
    state.apply(tool("c", content=[{"type": "terminal", "terminalId": "t"}]))
    lines = b"".join(b"row %07d\r\n" % i for i in range(100_000))  # 1.2 MB
    state.apply(chunk("t", lines))
    data = data_of(export_html(state, tmp_path / "page.html", xray=False).read_text())
    meta = data["acp-export-snapshot"]["terminals"]["t"]
    saved = base64.b64decode(data["acp-export-bytes"])[meta["blob"][0] : sum(meta["blob"])]
    assert len(saved) <= SAVED_TERMINAL_BYTES and lines.endswith(saved) and saved.startswith(b"row ")
    assert meta["trimmed"] == len(lines) - len(saved) == meta["base"]
    small = data_of(export_html(state, tmp_path / "all.html", saved_terminal_bytes=2 * MB).read_text())
    assert small["acp-export-snapshot"]["terminals"]["t"]["trimmed"] == 0
