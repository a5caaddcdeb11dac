"""The ``notebook`` MCP server (official ``mcp`` SDK): a session's shared objects, as tools.

``Share`` holds what the user chose: named objects (``share``/``unshare``), whether code may run,
how to ask approval for a run, and the log of every call. ``build_server(share)`` makes the
``MCPServer`` whose tools read only ``share.objects`` — never ``globals()``, never a file:

- ``list_variables()``: name, type, shape or length, a one-line summary of each shared object;
- ``describe_variable(name)``: dtypes, shape, head and ``describe()`` of a DataFrame, an array's
  values, other objects' repr (all capped);
- ``run_code(code)``, listed only while the user allows it (turned on later, it is added; agents
  that listed the tools before see it when they list them again): run in the user's namespace
  after an approval (``share.approve``), answered with its text and its images (PNG).
"""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ImageContent, TextContent

from .describe import describe, listing
from .execute import Outcome, run_code

NAME = "notebook"
LOG_KEPT = 1_000

Approve = Callable[[str], Awaitable["str | None"]]  # code -> who approved (None: refused)


@dataclass
class McpCall:
    """One call of a ``notebook`` tool: arguments, how long, how big the answer, who approved it."""

    tool: str
    arguments: dict[str, Any]
    started: float
    duration: float = 0.0
    result_size: int = 0
    approved_by: str | None = None
    error: str | None = None
    outcome: Outcome | None = None

    def to_dict(self) -> dict[str, Any]:
        """Plain data (no images)."""
        keys = ("tool", "arguments", "started", "duration", "result_size", "approved_by", "error")
        return {k: getattr(self, k) for k in keys}


class Share:
    """What one session shares: objects by name, run_code's switch and approval, the call log."""

    def __init__(
        self,
        objects: dict[str, Any] | None = None,
        *,
        run_code: bool = False,
        namespace: dict[str, Any] | None = None,
        approve: Approve | None = None,
        on_run: Callable[[McpCall], None] | None = None,
    ) -> None:
        self.objects: dict[str, Any] = dict(objects or {})
        self._run_code = run_code
        self.on_switch: Callable[[bool], None] | None = None  # the server adds run_code when turned on
        self.namespace = namespace  # the user's (IPython's user_ns); None: a private one
        self._private: dict[str, Any] = {}
        self.approve = approve
        self.on_run = on_run  # told after each run_code (the view adds it to the tool call's card)
        self.log: list[McpCall] = []

    @property
    def run_code(self) -> bool:
        """Whether the agent may run code (the ``run_code`` tool exists only while it may)."""
        return self._run_code

    @run_code.setter
    def run_code(self, allowed: bool) -> None:
        self._run_code = bool(allowed)
        if self.on_switch is not None:
            self.on_switch(self._run_code)

    def share(self, **objects: Any) -> None:
        """Share more objects (or replace them) by name."""
        self.objects.update(objects)

    def unshare(self, *names: str) -> None:
        """Stop sharing ``names`` (unknown names are ignored)."""
        for name in names:
            self.objects.pop(name, None)

    def run_namespace(self) -> dict[str, Any]:
        """Where ``run_code`` runs: the user's namespace (a shared object's name, when free there,
        is bound to it), else a private one holding the shared objects."""
        if self.namespace is None:
            self._private.update(self.objects)
            return self._private
        for name, obj in self.objects.items():
            self.namespace.setdefault(name, obj)  # the user's own variable of that name wins
        return self.namespace

    def record(self, call: McpCall) -> None:
        """Keep ``call`` in the log (the last ``LOG_KEPT``)."""
        self.log.append(call)
        del self.log[:-LOG_KEPT]


def build_server(share: Share) -> MCPServer:
    """The ``notebook`` server over ``share`` (its tools see only what is shared)."""
    server: MCPServer = MCPServer(NAME, instructions=INSTRUCTIONS, log_level="WARNING")
    tools = _Tools(share)
    server.add_tool(
        tools.list_variables, name="list_variables", description=LIST_DOC, structured_output=False
    )
    server.add_tool(
        tools.describe_variable, name="describe_variable", description=DESCRIBE_DOC, structured_output=False
    )
    offered = {"run_code": False}

    def switch(allowed: bool) -> None:  # the tool is listed only while allowed (calls check again)
        if allowed and not offered["run_code"]:
            server.add_tool(tools.run_code, name="run_code", description=RUN_DOC, structured_output=False)
        elif not allowed and offered["run_code"]:
            server.remove_tool("run_code")
        offered["run_code"] = allowed

    share.on_switch = switch
    switch(share.run_code)
    return server


INSTRUCTIONS = (
    "Objects the user shared from their live Jupyter kernel. list_variables shows what is shared; "
    "describe_variable describes one; run_code (when the user allows it) runs Python in the kernel."
)
LIST_DOC = "List the variables the user shared from the notebook: name, type, shape, summary."
DESCRIBE_DOC = "Describe one shared variable (a DataFrame's dtypes, shape, head and describe())."
RUN_DOC = (
    "Run Python code in the user's live notebook kernel (each call needs the user's approval); "
    "returns stdout, stderr, the last expression's value, errors, and figures as PNG images."
)


class _Tools:
    def __init__(self, share: Share) -> None:
        self.share = share

    def list_variables(self) -> str:
        started = time.time()
        rows = [listing(name, obj) for name, obj in self.share.objects.items()]
        text = json.dumps(rows, ensure_ascii=False, default=str)
        self._log("list_variables", {}, started, len(text))
        return text

    def describe_variable(self, name: str) -> str:
        started = time.time()
        if name not in self.share.objects:
            shared = ", ".join(self.share.objects) or "nothing"
            self._log("describe_variable", {"name": name}, started, 0, error="not shared")
            raise ToolError(f"no shared variable named {name!r} (shared: {shared})")
        text = describe(name, self.share.objects[name])
        self._log("describe_variable", {"name": name}, started, len(text))
        return text

    async def run_code(self, code: str) -> list[TextContent | ImageContent]:
        call = McpCall("run_code", {"code": code}, time.time())
        try:
            return await self._run(call, code)
        finally:
            call.duration = round(time.time() - call.started, 4)
            self.share.record(call)
            if self.share.on_run is not None:
                self.share.on_run(call)

    async def _run(self, call: McpCall, code: str) -> list[TextContent | ImageContent]:
        if not self.share.run_code:
            call.error = "run_code is off"
            raise ToolError("run_code is off: the user has not allowed running code in the notebook")
        who = await self.share.approve(code) if self.share.approve is not None else None
        if who is None:
            call.error = "not approved"
            raise ToolError("the user did not allow this code to run")
        call.approved_by = who
        outcome = await run_code(code, self.share.run_namespace())
        call.outcome = outcome
        text = outcome.text()
        blocks: list[TextContent | ImageContent] = [TextContent(type="text", text=text)]
        blocks += [_image(png) for png in outcome.images]
        call.result_size = len(text) + sum(len(png) for png in outcome.images)
        return blocks

    def _log(
        self, tool: str, args: dict[str, Any], started: float, size: int, error: str | None = None
    ) -> None:
        call = McpCall(tool, args, started, round(time.time() - started, 4), size, None, error)
        self.share.record(call)


def _image(png: bytes) -> ImageContent:
    return ImageContent(type="image", data=base64.b64encode(png).decode("ascii"), mime_type="image/png")
