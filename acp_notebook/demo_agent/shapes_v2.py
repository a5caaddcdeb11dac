"""How each story step looks on the wire in ACP protocol v2."""

from __future__ import annotations

import asyncio
import base64

from .data import PERMISSION_OPTIONS, TERMINAL_CHUNKS, TEST_COMMAND
from .emitter import FINAL_STATUSES, BaseEmitter, FileChange, terminal_item

_FIELD_NAMES = {"raw_input": "rawInput", "raw_output": "rawOutput", "meta": "_meta"}


def _b64(data: bytes) -> str:
    """Standard RFC 4648 base64 text."""
    return base64.b64encode(data).decode("ascii")


def render_change(change: FileChange) -> dict:
    """A FileChange as a v2 DiffChange."""
    out = {"operation": change.operation, "path": change.path}
    if change.old_path:
        out["oldPath"] = change.old_path
    out["fileType"] = change.file_type
    if change.mime_type:
        out["mimeType"] = change.mime_type
    return out


def render_item(item: dict) -> dict:
    """A neutral tool-call content item in v2 shape (custom items pass through)."""
    if item.get("type") != "diff" or "files" not in item:
        return item
    out = {"type": "diff", "changes": [render_change(c) for c in item["files"]]}
    if item.get("patch"):
        out["patch"] = {"format": "git_patch", "text": item["patch"]}
    return out


class V2Emitter(BaseEmitter):
    """Emits the story as ACP v2 messages."""

    version = 2

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.user_message_id = self.message_id("user")
        self.open_terminals: set[str] = set()
        self.last_plan: tuple[str, list[tuple[str, str, str]]] | None = None

    # -- lifecycle ----------------------------------------------------------------

    def state(self, state: str, stop_reason: str | None = None) -> None:
        """Send a `state_update` (with the session's `background` once it has reported any)."""
        update = {"sessionUpdate": "state_update", "state": state}
        if stop_reason:
            update["stopReason"] = stop_reason
        if self.session.background is not None:
            update["background"] = [dict(item) for item in self.session.background]
        self.update(update)

    def accepted(self) -> None:
        """Echo the user's prompt as the inserted `user_message`."""
        content = self.prompt or [{"type": "text", "text": ""}]
        self.update({"sessionUpdate": "user_message", "messageId": self.user_message_id, "content": content})

    def begin(self) -> None:
        """Foreground work starts."""
        self.state("running")

    async def finish(self, stop_reason: str) -> dict | None:
        """Close unfinished work, then report idle with the stop reason."""
        if stop_reason == "cancelled":
            for terminal_id in sorted(self.open_terminals):
                self.terminal_exit(terminal_id, None, "SIGINT")
            for call_id in self.unfinished_tools():
                self.tool(call_id, status="cancelled")
            if self.last_plan:
                plan_id, entries = self.last_plan
                done = {"completed", "cancelled"}
                self.plan(plan_id, [(c, p, s if s in done else "cancelled") for c, p, s in entries])
        self.state("idle", stop_reason)
        return None

    def abandoned(self, req_id: int, method: str) -> None:
        """Tell the client we stopped waiting for a request of the cancelled turn."""
        self.out.notify("$/cancel_request", {"requestId": req_id})

    # -- messages and plan --------------------------------------------------------

    async def stream(self, kind: str, chunks: list[str], delay: float = 0.08) -> None:
        """Stream one message ('agent_message' or 'agent_thought') chunk by chunk."""
        message_id = self.message_id("thought" if kind == "agent_thought" else "agent")
        for chunk in chunks:
            await self.pause(delay)
            content = {"type": "text", "text": chunk}
            self.update({"sessionUpdate": f"{kind}_chunk", "messageId": message_id, "content": content})

    def plan(self, plan_id: str, entries: list[tuple[str, str, str]]) -> None:
        """Send the whole plan with current statuses."""
        self.last_plan = (plan_id, entries)
        items = [{"content": c, "priority": p, "status": s} for c, p, s in entries]
        plan = {"type": "items", "planId": plan_id, "entries": items}
        self.update({"sessionUpdate": "plan_update", "plan": plan})

    # -- tool calls ---------------------------------------------------------------

    def tool(self, call_id: str, **fields) -> None:
        """Create or patch a tool call (`tool_call_update` upsert)."""
        cancellable = fields.pop("cancellable", None)
        if cancellable:
            self.tool_cancels.setdefault(call_id, asyncio.Event())
        update = {"sessionUpdate": "tool_call_update", "toolCallId": call_id}
        for name, value in fields.items():
            if name == "content":
                value = [render_item(i) for i in value]
            update[_FIELD_NAMES.get(name, name)] = value
        if cancellable:
            update["capabilities"] = {"cancel": {}}
        elif fields.get("status") in FINAL_STATUSES and self.tool_cancels.pop(call_id, None):
            update["capabilities"] = None
        self.remember(call_id, fields)
        self.update(update)

    def tool_chunk(self, call_id: str, item: dict, meta: dict | None = None) -> None:
        """Append one content item to a tool call."""
        update = {"sessionUpdate": "tool_call_content_chunk", "toolCallId": call_id}
        update["content"] = render_item(item)
        if meta is not None:
            update["_meta"] = meta
        self.update(update)

    async def ask_tool(self, call_id: str, title: str, description: str) -> str | None:
        """Ask permission for a reported tool call (subject `tool_call`)."""
        known = self.tools.get(call_id, {})
        tool_call = {"toolCallId": call_id}
        tool_call.update({k: known[k] for k in ("title", "kind", "status", "locations") if k in known})
        subject = {"type": "tool_call", "toolCall": tool_call}
        return await self._ask(call_id, title, description, subject)

    async def ask_command(
        self, call_id: str, terminal_id: str, title: str, description: str, tool_title: str
    ) -> str | None:
        """Ask permission to run the test command (subject `command`)."""
        subject = {"type": "command", "command": TEST_COMMAND, "cwd": self.cwd}
        subject.update({"toolCallId": call_id, "terminalId": terminal_id})
        return await self._ask(call_id, title, description, subject, TEST_COMMAND)

    async def _ask(
        self, call_id: str, title: str, description: str, subject: dict, command: str | None = None
    ) -> str | None:
        """Send the request, reporting `requires_action` while it is pending."""
        params = {"sessionId": self.session.session_id, "title": title}
        params.update({"description": description, "subject": subject})
        params["options"] = PERMISSION_OPTIONS
        self.state("requires_action")
        answer = await self.permission(params, call_id, command)
        self.check()
        self.state("running")
        return answer

    # -- terminals ----------------------------------------------------------------

    async def run_command(self, call_id: str, terminal_id: str, title: str) -> str:
        """Run the test command in an agent-owned display terminal: 'passed' or 'cancelled'."""
        self.start_terminal(call_id, terminal_id, title, TEST_COMMAND)
        for chunk in TERMINAL_CHUNKS:
            await self.pause(0.25)
            if self.tool_cancel_requested(call_id):
                self.end_terminal(call_id, terminal_id, None, "SIGINT", "cancelled")
                return "cancelled"
            self.output(call_id, terminal_id, chunk)
        self.end_terminal(call_id, terminal_id, 0, None, "completed")
        return "passed"

    def start_terminal(self, call_id: str, terminal_id: str, title: str, command: str) -> None:
        """A running, cancellable tool call showing a fresh terminal."""
        raw_input = {"command": command, "cwd": self.cwd}
        self.tool(
            call_id,
            title=title,
            kind="execute",
            status="in_progress",
            content=[terminal_item(terminal_id)],
            raw_input=raw_input,
            cancellable=True,
        )
        self.open_terminals.add(terminal_id)
        self.update(
            {
                "sessionUpdate": "terminal_update",
                "terminalId": terminal_id,
                "command": command,
                "cwd": self.cwd,
                "size": {"cols": 80, "rows": 24},
            }
        )

    def output(self, call_id: str, terminal_id: str, data: bytes) -> None:
        """Append bytes to a terminal (each chunk independently base64-encoded)."""
        self.update({"sessionUpdate": "terminal_output_chunk", "terminalId": terminal_id, "data": _b64(data)})

    def end_terminal(
        self, call_id: str, terminal_id: str, code: int | None, signal: str | None, status: str
    ) -> None:
        """The process exited: report the exit status, then the tool call's final status."""
        self.terminal_exit(terminal_id, code, signal)
        self.tool(call_id, status=status, raw_output={"exitCode": code, "signal": signal})

    def terminal_exit(self, terminal_id: str, code: int | None, signal: str | None) -> None:
        """Report that a terminal's process exited."""
        self.open_terminals.discard(terminal_id)
        self.update(
            {
                "sessionUpdate": "terminal_update",
                "terminalId": terminal_id,
                "exitStatus": {"exitCode": code, "signal": signal},
            }
        )

    # -- session-level extras -----------------------------------------------------

    def notice(self, severity: str, title: str, description: str) -> None:
        """Show a fire-and-forget notice."""
        self.update(
            {"sessionUpdate": "notice", "severity": severity, "title": title, "description": description}
        )
