"""What a demo session remembers of its own tool calls, so follow-up prompts can talk about them.

The emitter feeds it the version-neutral fields it is about to send (never the wire shape), and
each permission answer; the recap and question replies read it back.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

EXIT_CODE = object()  # "no exit code reported" (None is a real value: killed by a signal)


@dataclass
class ToolRecord:
    """One tool call as the agent reported it, merged over all its updates."""

    call_id: str
    turn: int
    title: str | None = None
    kind: str | None = None
    status: str | None = None
    paths: list[str] = field(default_factory=list)
    command: str | None = None
    exit_code: Any = EXIT_CODE
    terminal_id: str | None = None
    error: str | None = None
    permission: str | None = None
    asked: bool = False

    @property
    def ran(self) -> bool:
        """Whether a command ran far enough to report an exit status."""
        return self.exit_code is not EXIT_CODE

    def merge(self, fields: dict) -> None:
        """Fold one tool-call patch (neutral field names) into the record."""
        for name in ("title", "kind", "status"):
            if isinstance(fields.get(name), str):
                setattr(self, name, fields[name])
        for location in fields.get("locations") or []:
            self.touch(location.get("path") if isinstance(location, dict) else None)
        self._inputs(fields.get("raw_input"))
        self._outputs(fields.get("raw_output"))
        for item in fields.get("content") or []:
            self._item(item)

    def touch(self, path: Any) -> None:
        """Add a file path (once)."""
        if isinstance(path, str) and path and path not in self.paths:
            self.paths.append(path)

    def _inputs(self, raw: Any) -> None:
        """The command and the files named by the call's input."""
        if not isinstance(raw, dict):
            return
        if isinstance(raw.get("command"), str):
            self.command = raw["command"]
        for path in raw.get("files") or []:
            self.touch(path)

    def _outputs(self, raw: Any) -> None:
        """The exit code or error reported by the call's output."""
        if not isinstance(raw, dict):
            return
        if "exitCode" in raw:
            self.exit_code = raw["exitCode"]
        if isinstance(raw.get("error"), str):
            self.error = raw["error"]

    def _item(self, item: Any) -> None:
        """Terminals shown and files changed by one content item."""
        if not isinstance(item, dict):
            return
        if item.get("type") == "terminal":
            self.terminal_id = item.get("terminalId")
        for change in item.get("files") or []:
            self.touch(getattr(change, "path", None))
            self.touch(getattr(change, "old_path", None))


class SessionMemory:
    """Every tool call of one session, in the order they were first reported."""

    def __init__(self) -> None:
        self.calls: dict[str, ToolRecord] = {}
        self.answers: dict[str, tuple[str | None, str | None]] = {}

    def record(self, call_id: str, turn: int, fields: dict) -> None:
        """Remember a tool call or a patch to one."""
        if call_id not in self.calls:
            self.calls[call_id] = ToolRecord(call_id, turn)
            self._apply(call_id)
        self.calls[call_id].merge(fields)

    def answered(self, call_id: str, option: str | None, command: str | None = None) -> None:
        """Remember a permission answer (v2 may ask about a command before reporting its call)."""
        self.answers[call_id] = (option, command)
        self._apply(call_id)

    def _apply(self, call_id: str) -> None:
        """Copy a permission answer onto its tool call once both are known."""
        record, answer = self.calls.get(call_id), self.answers.get(call_id)
        if record is not None and answer is not None:
            record.asked, record.permission = True, answer[0]
            record.command = record.command or answer[1]

    def records(self) -> list[ToolRecord]:
        """The tool calls, oldest first."""
        return list(self.calls.values())

    def last(self) -> ToolRecord | None:
        """The most recently reported tool call, if any."""
        return self.records()[-1] if self.calls else None

    def about(self, stems: set[str]) -> ToolRecord | None:
        """The latest tool call whose title, kind, status or command contains one of `stems`."""
        for record in reversed(self.records()):
            text = " ".join(filter(None, (record.title, record.kind, record.status, record.command)))
            if any(stem in text.lower() for stem in stems):
                return record
        return None
