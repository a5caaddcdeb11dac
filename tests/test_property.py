"""Property tests: the reducer against a small reference model written from the seed's rules.

The model uses plain dicts and imports nothing from the core's internals: a tool call or terminal
is its wire dict; omitted keys are left alone, ``null`` clears (``kind`` → ``other``, ``status`` →
``pending``, arrays → ``[]``, the rest → absent), a value replaces; ``_meta`` patches by top-level
key; chunks append; a terminal snapshot replaces every byte; a terminal content item makes the
terminal exist.
"""

from __future__ import annotations

import base64
import itertools
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from acp_notebook.protocol import SessionState

TOOL_CALL_IDS = ["c1", "c2"]
TERMINAL_IDS = ["t1", "t2", "c1"]  # "c1" is also a tool call id: the two id spaces are independent
OMIT = object()

SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# -- strategies -----------------------------------------------------------------------------------
json_scalar = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.text(max_size=4))
json_value = st.recursive(
    json_scalar,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(["a", "b", "c"]), inner, max_size=3)
    ),
    max_leaves=6,
)
meta_patch = st.dictionaries(
    st.sampled_from(["a", "b"]),
    st.one_of(
        st.none(),
        st.integers(0, 3),
        st.sampled_from([{"x": 1}, {"y": 2}, {"x": 3, "y": 4}]),  # nested: replaced, never merged
    ),
    max_size=2,
)
content_item = st.one_of(
    st.builds(
        lambda t: {"type": "content", "content": {"type": "text", "text": t}},
        st.text(max_size=5),
    ),
    st.builds(lambda tid: {"type": "terminal", "terminalId": tid}, st.sampled_from([*TERMINAL_IDS, "t9"])),
    st.just({"type": "diff", "changes": [{"operation": "modify", "path": "/a.py"}]}),
    st.just({"type": "_custom", "payload": {"k": [1, 2]}}),
)
location = st.builds(
    lambda path, line: {"path": path} if line is None else {"path": path, "line": line},
    st.sampled_from(["/a.py", "/b/c.txt"]),
    st.one_of(st.none(), st.integers(1, 99)),
)
non_null = {
    "title": st.text(max_size=6),
    "name": st.sampled_from(["bash", "read_file", "edit"]),
    "kind": st.sampled_from(["read", "edit", "execute", "other", "switch_mode", "_custom", "teleport"]),
    "status": st.sampled_from(
        ["pending", "in_progress", "paused", "completed", "failed", "_queued", "weird"]
    ),
    "content": st.lists(content_item, max_size=3),
    "locations": st.lists(location, max_size=2),
    "rawInput": json_value.filter(lambda v: v is not None),
    "rawOutput": json_value.filter(lambda v: v is not None),
    "_meta": meta_patch,
}


def field(strategy: st.SearchStrategy) -> st.SearchStrategy:
    """A field that is omitted, null or a value."""
    return st.one_of(st.just(OMIT), st.none(), strategy)


def build(kind: str, ident_key: str, ident: str, fields: dict[str, Any]) -> dict[str, Any]:
    update = {"sessionUpdate": kind, ident_key: ident}
    update.update({k: v for k, v in fields.items() if v is not OMIT})
    return update


tool_call_update = st.builds(
    lambda ident, fields: build("tool_call_update", "toolCallId", ident, fields),
    st.sampled_from(TOOL_CALL_IDS),
    st.fixed_dictionaries({k: field(s) for k, s in non_null.items()}),
)
content_chunk = st.builds(
    lambda ident, item, meta: build(
        "tool_call_content_chunk", "toolCallId", ident, {"content": item, "_meta": meta}
    ),
    st.sampled_from(TOOL_CALL_IDS),
    content_item,
    field(meta_patch),
)
raw_bytes = st.binary(max_size=12)
snapshot = st.builds(
    lambda data, meta: {"data": base64.b64encode(data).decode()} | ({} if meta is OMIT else {"_meta": meta}),
    raw_bytes,
    field(st.dictionaries(st.sampled_from(["s"]), st.integers(0, 3), max_size=1)),
)
exit_status = st.fixed_dictionaries(
    {},
    optional={
        "exitCode": st.one_of(st.none(), st.integers(-3, 3)),
        "signal": st.one_of(st.none(), st.sampled_from(["SIGTERM", "SIGINT"])),
    },
)
terminal_update = st.builds(
    lambda ident, fields: build("terminal_update", "terminalId", ident, fields),
    st.sampled_from(TERMINAL_IDS),
    st.fixed_dictionaries(
        {
            "command": field(st.sampled_from(["cargo test", "ls -la", "make"])),
            "cwd": field(st.sampled_from(["/home/user/project", "/tmp"])),
            "exitStatus": field(exit_status),
            "output": field(snapshot),
            "_meta": field(meta_patch),
        }
    ),
)
output_chunk = st.builds(
    lambda ident, data, meta: build(
        "terminal_output_chunk",
        "terminalId",
        ident,
        {"data": base64.b64encode(data).decode(), "_meta": meta},
    ),
    st.sampled_from(TERMINAL_IDS),
    raw_bytes,
    field(meta_patch),
)
any_update = st.one_of(tool_call_update, content_chunk, terminal_update, output_chunk)


# -- the reference model ------------------------------------------------------------------------------
def patch_meta(current: dict[str, Any] | None, patch: dict[str, Any] | None) -> dict[str, Any] | None:
    if patch is None:
        return None
    new = dict(current or {})
    for key, value in patch.items():
        if value is None:
            new.pop(key, None)
        else:
            new[key] = value  # nested objects replaced, never merged
    return new


CLEARED = {"kind": "other", "status": "pending", "content": [], "locations": []}


class Model:
    """What the seed says the state must be, kept as wire dicts."""

    def __init__(self) -> None:
        self.tool_calls: dict[str, dict[str, Any]] = {}
        self.terminals: dict[str, dict[str, Any]] = {}

    def apply(self, update: dict[str, Any]) -> None:
        kind = update["sessionUpdate"]
        getattr(self, kind)(update)

    def _tool_call(self, ident: str) -> dict[str, Any]:
        if ident not in self.tool_calls:
            self.tool_calls[ident] = {
                "toolCallId": ident,
                **{k: list(v) if isinstance(v, list) else v for k, v in CLEARED.items()},
            }
        return self.tool_calls[ident]

    def _terminal(self, ident: str) -> dict[str, Any]:
        if ident not in self.terminals:
            self.terminals[ident] = {"terminalId": ident, "bytes": b"", "outputMeta": None}
        return self.terminals[ident]

    def _reference_terminals(self, items: list[Any]) -> None:
        for item in items:
            if item.get("type") == "terminal":
                self._terminal(item["terminalId"])

    def tool_call_update(self, update: dict[str, Any]) -> None:
        tc = self._tool_call(update["toolCallId"])
        for key, value in update.items():
            if key in ("sessionUpdate", "toolCallId"):
                continue
            if key == "_meta":
                meta = patch_meta(tc.get("_meta"), value)
                tc.pop("_meta", None)
                if meta is not None:
                    tc["_meta"] = meta
            elif value is None:
                if key in CLEARED:
                    tc[key] = [] if isinstance(CLEARED[key], list) else CLEARED[key]
                else:
                    tc.pop(key, None)
            else:
                tc[key] = list(value) if key in ("content", "locations") else value
        if update.get("content"):
            self._reference_terminals(update["content"])

    def tool_call_content_chunk(self, update: dict[str, Any]) -> None:
        tc = self._tool_call(update["toolCallId"])
        tc["content"] = [*tc["content"], update["content"]]  # a chunk's _meta is chunk-scoped
        self._reference_terminals([update["content"]])

    def terminal_update(self, update: dict[str, Any]) -> None:
        term = self._terminal(update["terminalId"])
        for key, value in update.items():
            if key in ("sessionUpdate", "terminalId"):
                continue
            if key == "output":
                term["bytes"] = b"" if value is None else base64.b64decode(value["data"])
                term["outputMeta"] = None if value is None else value.get("_meta")
            elif key == "_meta":
                term[key] = patch_meta(term.get(key), value)
            elif value is None:
                term.pop(key, None)
            else:
                term[key] = value

    def terminal_output_chunk(self, update: dict[str, Any]) -> None:
        term = self._terminal(update["terminalId"])
        term["bytes"] += base64.b64decode(update["data"])  # decoded alone, then appended

    def terminal_dict(self, ident: str) -> dict[str, Any]:
        term = self.terminals[ident]
        output: dict[str, Any] = {"data": base64.b64encode(term["bytes"]).decode()}
        if term["outputMeta"] is not None:
            output["_meta"] = term["outputMeta"]
        out = {k: v for k, v in term.items() if k not in ("bytes", "outputMeta") and v is not None}
        return {**out, "output": output}


EXPECTED_CODES = {"unknown-status", "unknown-kind"}  # "weird" and "teleport" are kept, with a diagnostic


@SETTINGS
@given(st.lists(any_update, min_size=5, max_size=30))
def test_reducer_matches_reference_model(updates: list[dict[str, Any]]) -> None:
    state, model = SessionState(), Model()
    for update in updates:
        state.apply(update)
        model.apply(update)
        assert list(state.tool_calls) == list(model.tool_calls)
        assert list(state.terminals) == list(model.terminals)
        for ident, expected in model.tool_calls.items():
            assert state.tool_calls[ident].to_dict() == expected
        for ident in model.terminals:
            assert state.terminals[ident].to_dict() == model.terminal_dict(ident)
            assert state.terminals[ident].output == model.terminals[ident]["bytes"]
    assert {d.code for d in state.diagnostics} <= EXPECTED_CODES


@SETTINGS
@given(st.lists(st.one_of(st.none(), meta_patch), min_size=1, max_size=8))
def test_meta_patches_match_reference_model(patches: list[dict[str, Any] | None]) -> None:
    state, model = SessionState(), Model()
    for patch in patches:
        for update in (
            {"sessionUpdate": "tool_call_update", "toolCallId": "c1", "_meta": patch},
            {"sessionUpdate": "terminal_update", "terminalId": "t1", "_meta": patch},
        ):
            state.apply(update)
            model.apply(update)
        assert state.tool_calls["c1"].to_dict() == model.tool_calls["c1"]
        assert state.terminals["t1"].to_dict() == model.terminal_dict("t1")


# -- Terminal.text -----------------------------------------------------------------------------------------
@st.composite
def chunked(draw: st.DrawFn, data: bytes) -> list[bytes]:
    cuts = sorted(draw(st.sets(st.integers(0, len(data)), max_size=8)))
    bounds = [0, *cuts, len(data)]
    return [data[a:b] for a, b in itertools.pairwise(bounds)]


def feed(state: SessionState, parts: list[bytes], reads: list[bool]) -> list[str]:
    seen = []
    for part, read in zip(parts, reads, strict=False):
        state.apply(
            {
                "sessionUpdate": "terminal_output_chunk",
                "terminalId": "t",
                "data": base64.b64encode(part).decode(),
            }
        )
        if read:
            seen.append(state.terminals["t"].text)
    return seen


@SETTINGS
@given(st.data(), st.text(max_size=40))
def test_text_equals_decoded_output_for_any_chunking(data: st.DataObject, text: str) -> None:
    raw = text.encode("utf-8")
    parts = [*data.draw(chunked(raw)), b""]
    reads = data.draw(st.lists(st.booleans(), min_size=len(parts), max_size=len(parts)))
    state = SessionState()
    seen = feed(state, parts, reads)
    term = state.terminals["t"]
    assert term.output == raw
    assert term.text == term.output.decode("utf-8", "replace") == text
    assert all(text.startswith(s) for s in seen)  # never a replacement character mid-stream


@SETTINGS
@given(st.data(), st.binary(max_size=40))
def test_text_of_arbitrary_bytes_matches_one_shot_decoding(data: st.DataObject, raw: bytes) -> None:
    raw += b"\n"  # a complete ending: nothing is held back waiting for more bytes
    parts = data.draw(chunked(raw))
    state = SessionState()
    feed(state, parts, data.draw(st.lists(st.booleans(), min_size=len(parts), max_size=len(parts))))
    assert state.terminals["t"].text == raw.decode("utf-8", "replace")
