"""How each story step looks on the wire in ACP protocol v1 (closed enums, client terminals)."""

from __future__ import annotations

import asyncio
import contextlib

from .data import PERMISSION_OPTIONS, TERMINAL_OUTPUT, TEST_COMMAND, plain_text, shell_script
from .emitter import BaseEmitter, FileChange, terminal_item, text_item
from .wire import RpcError

META_KEY = "acpNotebookDemo"
V1_KINDS = frozenset(
    {"read", "edit", "delete", "move", "search", "execute", "think", "fetch", "switch_mode", "other"}
)
V1_STATUSES = frozenset({"pending", "in_progress", "completed", "failed"})
_FIELD_NAMES = {"raw_input": "rawInput", "raw_output": "rawOutput"}


def render_change(change: FileChange) -> dict:
    """A FileChange as a v1 `diff` item, or a text note when v1 cannot express it."""
    if change.file_type == "text" and change.operation in ("add", "modify") and change.new_text:
        return {"type": "diff", "path": change.path, "oldText": change.old_text, "newText": change.new_text}
    if change.operation == "move":
        return text_item(f"Moved {change.old_path} to {change.path}")
    return text_item(f"Updated {change.file_type} file {change.path} ({change.mime_type})")


def render_content(items: list[dict]) -> tuple[list[dict], list[dict]]:
    """Split neutral items into v1 content and custom items that only fit in `_meta`."""
    content, custom = [], []
    for item in items:
        if item.get("type") == "diff" and "files" in item:
            content.extend(render_change(change) for change in item["files"])
        elif item.get("type") in ("content", "diff", "terminal"):
            content.append(item)
        else:
            custom.append(item)
    return content, custom


class V1Emitter(BaseEmitter):
    """Emits the story as ACP v1 messages."""

    version = 1

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.created: set[str] = set()
        self.streamed: dict[str, list[dict]] = {}
        self.open_terminals: set[str] = set()

    # -- lifecycle ----------------------------------------------------------------

    def accepted(self) -> None:
        """v1 has no user-message acknowledgement."""

    def begin(self) -> None:
        """v1 has no running state; the pending prompt request is the turn."""

    async def finish(self, stop_reason: str) -> dict:
        """Release client terminals left behind by a cancel; the prompt response."""
        for terminal_id in sorted(self.open_terminals):
            await self._release(terminal_id)
        return {"stopReason": stop_reason}

    async def _release(self, terminal_id: str) -> None:
        """Release (and so kill) a client terminal, waiting at most a second."""
        self.open_terminals.discard(terminal_id)
        params = {"sessionId": self.session.session_id, "terminalId": terminal_id}
        _, future = self.out.start_request("terminal/release", params)
        await asyncio.wait({future}, timeout=1.0)
        if future.done():
            with contextlib.suppress(Exception):
                future.result()
        else:
            future.cancel()

    # -- messages and plan --------------------------------------------------------

    async def stream(self, kind: str, chunks: list[str], delay: float = 0.08) -> None:
        """Stream one message as chunks (no messageId in v1)."""
        for chunk in chunks:
            await self.pause(delay)
            self.update({"sessionUpdate": f"{kind}_chunk", "content": {"type": "text", "text": chunk}})

    def plan(self, plan_id: str, entries: list[tuple[str, str, str]]) -> None:
        """Send the whole plan (v1 has one anonymous plan per session)."""
        fix = {"cancelled": "completed"}
        items = [{"content": c, "priority": p, "status": fix.get(s, s)} for c, p, s in entries]
        self.update({"sessionUpdate": "plan", "entries": items})

    # -- tool calls ---------------------------------------------------------------

    def shape(self, fields: dict) -> dict:
        """Neutral tool-call fields in v1 shape; custom values go to `_meta`."""
        fields, out, custom = dict(fields), {}, {}
        fields.pop("cancellable", None)
        kind, status = fields.pop("kind", None), fields.pop("status", None)
        if kind is not None:
            out["kind"] = kind if kind in V1_KINDS else "other"
            if kind not in V1_KINDS:
                custom["kind"] = kind
        if status is not None:
            out["status"] = {"cancelled": "failed"}.get(status, status)
            if out["status"] not in V1_STATUSES:
                custom["status"], out["status"] = status, "in_progress"
        if "content" in fields:
            out["content"], extra = render_content(fields.pop("content"))
            if extra:
                custom["content"] = extra
        meta = fields.pop("meta", None) or {}
        for name, value in fields.items():
            out[_FIELD_NAMES.get(name, name)] = value
        if custom:
            meta = {**meta, META_KEY: custom}
        if meta:
            out["_meta"] = meta
        return out

    def tool(self, call_id: str, **fields) -> None:
        """Report a tool call: `tool_call` the first time, `tool_call_update` after."""
        self.remember(call_id, fields)
        if "content" in fields:
            self.streamed[call_id] = list(fields["content"])
        update = {"toolCallId": call_id, **self.shape(fields)}
        if call_id in self.created:
            self.update({"sessionUpdate": "tool_call_update", **update})
            return
        self.created.add(call_id)
        update.setdefault("title", call_id)
        self.update({"sessionUpdate": "tool_call", **update})

    def tool_chunk(self, call_id: str, item: dict, meta: dict | None = None) -> None:
        """v1 cannot append: resend the accumulated content as a whole."""
        items = self.streamed.setdefault(call_id, [])
        items.append(item)
        shaped = self.shape({"content": items, "meta": meta})
        self.update({"sessionUpdate": "tool_call_update", "toolCallId": call_id, **shaped})

    async def ask_tool(self, call_id: str, title: str, description: str) -> str | None:
        """Ask permission for a reported tool call."""
        known = self.tools.get(call_id, {})
        fields = {k: known[k] for k in ("title", "kind", "status", "locations") if k in known}
        return await self._ask(call_id, fields, title, description)

    async def ask_command(
        self, call_id: str, terminal_id: str, title: str, description: str, tool_title: str
    ) -> str | None:
        """Report the pending command as a tool call, then ask permission for it."""
        raw_input = {"command": TEST_COMMAND, "cwd": self.cwd}
        fields = {"title": tool_title, "kind": "execute", "status": "pending", "raw_input": raw_input}
        self.tool(call_id, **fields)
        return await self._ask(call_id, fields, title, description)

    async def _ask(self, call_id: str, fields: dict, title: str, description: str) -> str | None:
        """v1 request: the prompt copy only fits in `_meta`."""
        tool_call = {"toolCallId": call_id, **self.shape(fields)}
        params = {"sessionId": self.session.session_id, "toolCall": tool_call}
        params["options"] = PERMISSION_OPTIONS
        params["_meta"] = {META_KEY: {"title": title, "description": description}}
        answer = await self.permission(params, call_id)
        self.check()
        return answer

    # -- running the tests --------------------------------------------------------

    async def run_command(self, call_id: str, terminal_id: str, title: str) -> str:
        """Run the tests in a client terminal if offered, else report the output as text."""
        if self.client.get("terminal") is True:
            with contextlib.suppress(RpcError):
                return await self._client_terminal(call_id, title)
        self.tool(call_id, title=title, kind="execute", status="in_progress")
        await self.pause(2.0)
        text = "$ " + TEST_COMMAND + "\n" + plain_text(TERMINAL_OUTPUT)
        self.tool(call_id, status="completed", content=[text_item(text)], raw_output={"exitCode": 0})
        return "passed"

    async def _client_terminal(self, call_id: str, title: str) -> str:
        """terminal/create → embed → wait_for_exit → output → release."""
        sid = self.session.session_id
        script = shell_script(0.2 * self.speed)
        params = {"sessionId": sid, "command": "sh", "args": ["-c", script], "cwd": self.cwd}
        terminal_id = (await self.call("terminal/create", params))["terminalId"]
        self.open_terminals.add(terminal_id)
        self.tool(
            call_id, title=title, kind="execute", status="in_progress", content=[terminal_item(terminal_id)]
        )
        ref = {"sessionId": sid, "terminalId": terminal_id}
        try:
            exit_status = await self.call("terminal/wait_for_exit", ref) or {}
            output = await self.call("terminal/output", ref) or {}
        finally:
            if not self.cancelled.is_set():
                await self._release(terminal_id)
        code = exit_status.get("exitCode")
        raw = {
            "exitCode": code,
            "signal": exit_status.get("signal"),
            "truncated": output.get("truncated", False),
        }
        self.tool(call_id, status="completed" if code == 0 else "failed", raw_output=raw)
        return "passed" if code == 0 else "failed"

    def start_terminal(self, call_id: str, terminal_id: str, title: str, command: str) -> None:
        """v1 has no agent-owned terminals: a running tool call whose text is the output."""
        raw_input = {"command": command, "cwd": self.cwd}
        self.tool(call_id, title=title, kind="execute", status="in_progress", raw_input=raw_input)

    def output(self, call_id: str, terminal_id: str, data: bytes) -> None:
        """Show the latest output as the tool call's text content."""
        self.tool(call_id, content=[text_item(plain_text(data))])

    def end_terminal(
        self, call_id: str, terminal_id: str, code: int | None, signal: str | None, status: str
    ) -> None:
        """The process exited: the final status goes on the tool call."""
        self.tool(call_id, status=status, raw_output={"exitCode": code, "signal": signal})

    # -- session-level extras -----------------------------------------------------

    def notice(self, severity: str, title: str, description: str) -> None:
        """v1 notices need the client's `session.notices` capability."""
        session_caps = self.client.get("session")
        if isinstance(session_caps, dict) and session_caps.get("notices") is not None:
            self.update(
                {"sessionUpdate": "notice", "severity": severity, "title": title, "description": description}
            )
