"""The demo agent on the user's data: it calls the ``notebook`` MCP server the client handed it.

When a prompt asks about the data (``route``: "data", "dataframe", "variables", "plot", ...) and
``session/new`` gave an MCP server named ``notebook``, the demo connects with the official ``mcp``
SDK client (HTTP with the entry's headers, or the stdio command), then reports each call as a
tool call: ``list_variables``, ``describe_variable`` on the first DataFrame-like object, and — when
the server offers ``run_code`` — asks permission for a short computation with a plot and runs it.
No model, no key: the same every time, so tutorials and tests can run headless.
"""

from __future__ import annotations

import contextlib
import json
from typing import Any

from .emitter import text_item

ALLOWED = ("allow-once", "allow-always", "allow_once", "allow_always")


async def play(em: Any) -> None:
    """One turn on the shared data (or a message saying nothing is shared)."""
    entry = next(
        (s for s in em.session.mcp_servers if isinstance(s, dict) and s.get("name") == "notebook"), None
    )
    if entry is None:
        nothing = "No `notebook` MCP server was given to this session, so I cannot see your data. "
        how = "Start the session with `share={...}` (or `%acp start --share NAME`)."
        await em.stream("agent_message", [nothing, how])
        return
    async with _connect(entry) as client:
        tools = {t.name for t in (await client.list_tools()).tools}
        rows = json.loads(
            await _call(em, client, em.sfx("call_list"), "List the shared variables", "list_variables", {})
        )
        frame = next((r for r in rows if isinstance(r.get("shape"), list) and len(r["shape"]) == 2), None)
        if frame is None:
            names = ", ".join(r["name"] for r in rows) or "nothing"
            await em.stream(
                "agent_message", [f"You shared {names}; there is no table among them to look at."]
            )
            return
        name = frame["name"]
        await _call(
            em, client, em.sfx("call_describe"), f"Describe {name}", "describe_variable", {"name": name}
        )
        result = await _run(em, client, name) if "run_code" in tools else None
    rows_, cols = frame["shape"]
    said = f"`{name}` has {rows_} rows and {cols} columns."
    said += (
        f" I computed its column means and plotted it: {result}"
        if result
        else " (run_code is off, so I only looked.)"
    )
    await em.stream("agent_message", [said])


async def _run(em: Any, client: Any, name: str) -> str | None:
    code = (
        f"means = {name}.select_dtypes('number').mean().round(3)\n"
        "import matplotlib.pyplot as plt\n"
        f"ax = {name}.select_dtypes('number').plot(title='{name}')\n"
        "means.to_dict()"
    )
    call_id = em.sfx("call_run_code")
    em.tool(
        call_id,
        title=f"run_code: means and a plot of {name}",
        kind="execute",
        status="pending",
        raw_input={"code": code},
    )
    option = await em.ask_tool(
        call_id, "Run code in your notebook kernel?", f"Compute {name}'s means and plot it."
    )
    if option not in ALLOWED:
        em.tool(call_id, status="failed", content=[text_item("Not allowed.")])
        return None
    text = await _call(em, client, call_id, None, "run_code", {"code": code}, announce=False)
    return text.split("[result]\n", 1)[1].splitlines()[0] if "[result]\n" in text else text.splitlines()[0]


async def _call(
    em: Any, client: Any, call_id: str, title: str | None, tool: str, args: dict, announce: bool = True
) -> str:
    """One MCP call reported as a tool call: in progress, then its text (failed on an error)."""
    if announce:
        em.tool(call_id, title=title, kind="fetch", status="in_progress", raw_input={"tool": tool, **args})
    else:
        em.tool(call_id, status="in_progress")
    result = await client.call_tool(tool, args)
    text = "\n".join(getattr(c, "text", "") for c in result.content if getattr(c, "type", "") == "text")
    images = sum(1 for c in result.content if getattr(c, "type", "") == "image")
    shown = text + (f"\n({images} image{'s' if images != 1 else ''} returned)" if images else "")
    em.tool(call_id, status="failed" if result.is_error else "completed", content=[text_item(shown)])
    return text


@contextlib.asynccontextmanager
async def _connect(entry: dict[str, Any]):
    """A ready ``ClientSession`` to the server ``entry`` names (http or stdio)."""
    from mcp.client.session import ClientSession

    async with _streams(entry) as (read, write), ClientSession(read, write) as client:
        await client.initialize()
        yield client


@contextlib.asynccontextmanager
async def _streams(entry: dict[str, Any]):
    pairs = lambda items: {i["name"]: i["value"] for i in items or [] if isinstance(i, dict)}  # noqa: E731
    if entry.get("type") == "http":
        from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client

        headers = pairs(entry.get("headers"))
        async with (
            create_mcp_http_client(headers=headers) as http,
            streamable_http_client(entry["url"], http_client=http) as s,
        ):
            yield s[0], s[1]
        return
    import os

    from mcp.client.stdio import StdioServerParameters, stdio_client

    env = {**os.environ, **pairs(entry.get("env"))}
    params = StdioServerParameters(command=entry["command"], args=list(entry.get("args") or []), env=env)
    async with stdio_client(params) as streams:
        yield streams[0], streams[1]
