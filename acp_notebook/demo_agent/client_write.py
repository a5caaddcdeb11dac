"""The ``write`` scenario: edit ``notes.txt`` through the client (v1 ``fs/write_text_file``).

It reads the file through the client (``fs/read_text_file``; a missing file reads as empty),
turns every ``TODO`` into ``DONE``, appends one line, writes the result back through the client
and says what the client answered: written, or the error's code and message (also on stderr). A
client that offers no ``fs.writeTextFile`` gets a message saying so.
"""

from __future__ import annotations

import sys
from typing import Any

from .emitter import text_item
from .wire import RpcError

FILE = "notes.txt"
FOOTER = "Reviewed by the demo agent.\n"


def proposal(text: str) -> str:
    """What the scenario writes for ``text``: TODO → DONE, plus one line at the end."""
    if text and not text.endswith("\n"):
        text += "\n"
    return text.replace("TODO", "DONE") + FOOTER


async def play(em: Any) -> None:
    """Read, propose, write through the client; report the client's answer."""
    fs = em.client.get("fs") if isinstance(em.client.get("fs"), dict) else {}
    if fs.get("writeTextFile") is not True:
        await em.stream("agent_message", ["This client offers no fs/write_text_file: nothing to write."])
        return
    call_id, path = em.sfx("call_write"), em.path(FILE)
    em.tool(call_id, title=f"Edit {FILE}", kind="edit", status="in_progress", locations=[{"path": path}])
    sid = em.session.session_id
    try:
        old = (await em.call("fs/read_text_file", {"sessionId": sid, "path": path}) or {}).get("content", "")
    except RpcError:
        old = ""
    new = proposal(old if isinstance(old, str) else "")
    try:
        await em.call("fs/write_text_file", {"sessionId": sid, "path": path, "content": new})
    except RpcError as exc:
        said = f"fs/write_text_file error {exc.code}: {exc.message}"
        print(f"demo agent: {said}", file=sys.stderr, flush=True)
        em.tool(call_id, status="failed", content=[text_item(said)])
        await em.stream(
            "agent_message", [f"The client refused the write to {FILE}: {exc.message} (code {exc.code})."]
        )
        return
    em.tool(call_id, status="completed")
    await em.stream("agent_message", [f"Wrote {FILE} through the client."])
