"""Messages between sessions (issue 19, item 5): the ``session_message`` upsert and the
``session_message_chunk``, by the unstable schema's rules (``protocol/session_messages.py``)."""

from __future__ import annotations

from typing import Any

import pytest

from acp_notebook import SessionState
from acp_notebook.protocol.session_messages import SessionMessage, apply_session_message

MSG = "sm1"
TEXT = {"type": "text", "text": "look"}
MORE = {"type": "text", "text": " again"}
IDS = {"senderSessionId": "parent", "recipientSessionId": "child", "recipientMessageId": "in1"}


def upsert(**fields: Any) -> dict[str, Any]:
    """A ``session_message`` upsert of message ``MSG``."""
    return {"sessionUpdate": "session_message", "messageId": MSG, **fields}


def chunk(block: Any = TEXT, **fields: Any) -> dict[str, Any]:
    """A ``session_message_chunk`` of message ``MSG``."""
    return {"sessionUpdate": "session_message_chunk", "messageId": MSG, "content": block, **fields}


# (case, updates applied in order, what the message then reads: a subset of ``read``)
PATCH_TABLE: list[tuple[str, list[dict[str, Any]], dict[str, Any]]] = [
    ("only messageId is required", [upsert()], {"sender": None, "content": None, "meta": None}),
    (
        "the ids are set",
        [upsert(**IDS, senderMessageId="out0")],
        {"sender": "parent", "recipient": "child", "sender_msg": "out0", "recipient_msg": "in1"},
    ),
    ("an omitted id is unchanged", [upsert(**IDS), upsert(content=[TEXT])], {"sender": "parent"}),
    ("a null id clears it", [upsert(**IDS), upsert(recipientMessageId=None)], {"recipient_msg": None}),
    ("a value replaces an id", [upsert(**IDS), upsert(senderSessionId="other")], {"sender": "other"}),
    (
        "an id of the wrong type is noted and kept",
        [upsert(**IDS), upsert(recipientSessionId=7)],
        {"recipient": "child", "diagnostics": ["invalid-field"]},
    ),
    ("content replaces whole", [upsert(content=[TEXT, MORE]), upsert(content=[MORE])], {"content": [MORE]}),
    ("null content clears it", [upsert(content=[TEXT]), upsert(content=None)], {"content": None}),
    ("[] content empties it", [upsert(content=[TEXT]), upsert(content=[])], {"content": []}),
    ("omitted content is unchanged", [upsert(content=[TEXT]), upsert(**IDS)], {"content": [TEXT]}),
    (
        "invalid content items are skipped, each noted",
        [upsert(content=[TEXT, {"type": "text"}, 3, MORE])],
        {"content": [TEXT, MORE], "diagnostics": ["malformed-content", "malformed-content"]},
    ),
    (
        "content of the wrong type is noted and kept",
        [upsert(content=[TEXT]), upsert(content=TEXT)],
        {"content": [TEXT], "diagnostics": ["invalid-field"]},
    ),
    (
        "_meta patches by key",
        [upsert(_meta={"a": 1, "b": 2}), upsert(_meta={"b": None, "c": 3})],
        {"meta": {"a": 1, "c": 3}},
    ),
    ("_meta null clears it", [upsert(_meta={"a": 1}), upsert(_meta=None)], {"meta": None}),
    (
        "nested _meta is replaced, not merged",
        [upsert(_meta={"a": {"x": 1}}), upsert(_meta={"a": {"y": 2}})],
        {"meta": {"a": {"y": 2}}},
    ),
    (
        "_meta of the wrong type is noted and kept",
        [upsert(_meta={"a": 1}), upsert(_meta=[1])],
        {"meta": {"a": 1}, "diagnostics": ["invalid-field"]},
    ),
    ("an unknown field is kept", [upsert(_x={"y": 1})], {"extra": {"_x": {"y": 1}}}),
    (
        "a chunk appends one block",
        [upsert(content=[TEXT]), chunk(MORE)],
        {"content": [TEXT, MORE], "chunks": 1},
    ),
    (
        "a chunk may come before the upsert naming the participants",
        [chunk(TEXT), chunk(MORE), upsert(**IDS)],
        {"content": [TEXT, MORE], "sender": "parent", "chunks": 2, "updates": 1},
    ),
    (
        "an upsert's content replaces streamed chunks",
        [chunk(TEXT), upsert(content=[MORE])],
        {"content": [MORE]},
    ),
    (
        "a chunk's _meta is its own: it patches nothing",
        [upsert(_meta={"a": 1}), chunk(_meta={"a": 2, "b": 3})],
        {"meta": {"a": 1}},
    ),
    (
        "an invalid chunk appends nothing and is noted",
        [upsert(content=[TEXT]), chunk({"type": "image"}), chunk(None)],
        {"content": [TEXT], "chunks": 0, "diagnostics": ["malformed-content", "malformed-content"]},
    ),
    (
        "a chunk without content appends nothing and is noted",
        [upsert(content=[TEXT]), {"sessionUpdate": "session_message_chunk", "messageId": MSG}],
        {"content": [TEXT], "diagnostics": ["malformed-update"]},
    ),
]


def read(state: SessionState) -> dict[str, Any]:
    """What the table's cases look at, for message ``MSG``."""
    msg = state.session_messages[MSG]
    return {
        "sender": msg.sender_session_id, "recipient": msg.recipient_session_id,
        "sender_msg": msg.sender_message_id, "recipient_msg": msg.recipient_message_id,
        "content": msg.content, "meta": msg.meta, "extra": msg.extra, "chunks": msg.chunks,
        "updates": msg.updates, "diagnostics": [d.code for d in state.diagnostics],
    }  # fmt: skip


@pytest.mark.parametrize(
    ("updates", "expected"), [c[1:] for c in PATCH_TABLE], ids=[c[0] for c in PATCH_TABLE]
)
def test_session_message_patch_table(updates: list[dict[str, Any]], expected: dict[str, Any]) -> None:
    state = SessionState()
    for item in updates:
        state.apply(item)
    got = read(state)
    assert {k: got[k] for k in expected} == expected
    if "diagnostics" not in expected:
        assert got["diagnostics"] == []
    again = SessionMessage(MSG)  # the message read back as one upsert is the same message
    apply_session_message(again, state.session_messages[MSG].to_dict(), state.diagnose)
    assert again.to_dict() == state.session_messages[MSG].to_dict()


def test_to_dict_states_the_message_as_one_upsert_and_is_a_copy() -> None:
    state = SessionState()
    state.apply(chunk(TEXT))
    state.apply(upsert(**IDS, _meta={"k": [1]}, _x=1))
    got = state.session_messages[MSG].to_dict()
    wire = {"sessionUpdate": "session_message", "messageId": MSG, **IDS, "content": [TEXT]}
    assert got == {**wire, "_x": 1, "_meta": {"k": [1]}}
    got["content"][0]["text"] = "changed"
    got["_meta"]["k"].append(2)
    assert state.session_messages[MSG].content == [TEXT] and state.session_messages[MSG].meta == {"k": [1]}
    assert state.session_messages[MSG].text == "look"


def test_the_reducer_never_mutates_what_it_is_given() -> None:
    state = SessionState()
    given = upsert(content=[{"type": "text", "text": "a"}], _meta={"a": {"b": 1}})
    state.apply(given)
    state.apply(chunk({"type": "text", "text": "b"}))
    state.session_messages[MSG].content[0]["text"] = "x"  # the stored copy is the state's own
    state.session_messages[MSG].meta["a"]["b"] = 2
    assert given == upsert(content=[{"type": "text", "text": "a"}], _meta={"a": {"b": 1}})


def test_observers_see_session_message_changes_and_the_raw_update_is_kept() -> None:
    state = SessionState()
    seen = []
    state.subscribe(lambda change: seen.append((change.kind, change.id, change.fields, change.created)))
    state.apply(chunk(TEXT))
    state.apply(upsert(**IDS))
    kinds = [(k, i, f, c) for k, i, f, c in seen if k == "session_message"]
    assert kinds == [
        ("session_message", MSG, ("content",), True),
        ("session_message", MSG, tuple(IDS), False),
    ]
    assert [u["sessionUpdate"] for u in state.other_updates] == ["session_message_chunk", "session_message"]
    assert state.timeline == [("other", 0), ("other", 1)]
    assert not any(d.code == "unknown-update" for d in state.diagnostics)


def test_an_update_without_a_string_message_id_is_noted_and_places_nothing() -> None:
    state = SessionState()
    state.apply({"sessionUpdate": "session_message", "messageId": 3, "senderSessionId": "p"})
    state.apply({"sessionUpdate": "session_message_chunk", "content": TEXT})
    assert state.session_messages == {}
    assert [d.code for d in state.diagnostics] == ["malformed-update", "malformed-update"]


def test_each_session_keeps_its_own_view_linked_by_ids() -> None:
    parent, child = SessionState(), SessionState()
    parent.apply(upsert(**IDS, content=[TEXT]))  # the outgoing view, on the sender's session
    child.apply(
        {"sessionUpdate": "session_message", "messageId": "in1", "senderSessionId": "parent",
         "recipientSessionId": "child", "senderMessageId": MSG, "content": [TEXT]}
    )  # fmt: skip
    assert list(parent.session_messages) == [MSG] and list(child.session_messages) == ["in1"]
    outgoing, incoming = parent.session_messages[MSG], child.session_messages["in1"]
    assert outgoing.recipient_message_id == incoming.message_id
    assert incoming.sender_message_id == outgoing.message_id


def test_session_messages_table(tmp_path: Any) -> None:
    clock = iter([1.0, 2.0, 3.0])
    state = SessionState(clock=lambda: next(clock))
    state.apply(chunk(TEXT))
    state.apply(chunk(MORE))
    state.apply(upsert(**IDS))
    assert state.records("session_messages") == [
        {
            "id": MSG, "sender_session_id": "parent", "recipient_session_id": "child",
            "sender_message_id": None, "recipient_message_id": "in1", "text": "look again",
            "blocks": 2, "chunks": 2, "first_seen": 1.0, "last_seen": 3.0,
        }
    ]  # fmt: skip
    pd = pytest.importorskip("pandas")
    df = state.frame("session_messages")
    assert list(df.columns)[:3] == ["id", "sender_session_id", "recipient_session_id"]
    assert df["chunks"].dtype == "Int64" and isinstance(df["first_seen"].dtype, pd.DatetimeTZDtype)
