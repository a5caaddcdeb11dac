"""The ``notebook`` MCP server: tools over what is shared, the HTTP endpoint's guard, the stdio
bridge, and a session whose agent (the demo, v2 over HTTP and v1 over the bridge) uses them."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from typing import Any

import httpx
import pytest

import acp_notebook
from acp_notebook.notebook_mcp import describe
from acp_notebook.notebook_mcp.execute import run_code
from acp_notebook.notebook_mcp.http import HttpService
from acp_notebook.notebook_mcp.server import Share, build_server
from acp_notebook.policies import allow, reject

pd = pytest.importorskip("pandas")
pytest.importorskip("matplotlib")
from mcp.client.session import ClientSession  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEMO = [sys.executable, "-m", "acp_notebook.demo_agent", "--speed", "0"]
PROMPT = "Look at my data and plot it"


def frame():
    return pd.DataFrame({"a": [1, 2, 3], "b": [2.0, 4.0, 6.0], "c": list("xyz")})


async def allowed(code: str) -> str:
    return "test"


# -- what a shared object looks like --------------------------------------------------------------
def test_listing_and_description_are_capped_and_safe() -> None:
    df = frame()
    assert describe.listing("df", df) == {"name": "df", "type": "pandas.DataFrame", "shape": [3, 3],
                                          "summary": "DataFrame: columns a, b, c"}  # fmt: skip
    text = describe.describe("df", df)
    assert text.splitlines()[:6] == [
        "df: pandas.DataFrame",
        "shape: [3, 3]",
        "dtypes:",
        "  a: int64",
        "  b: float64",
        f"  c: {frame().dtypes['c']}",
    ]
    assert "head:" in text and "describe():" in text and "mean" in text
    assert describe.listing("xs", list(range(1000)))["shape"] == 1000
    assert len(describe.describe("big", "x" * 100_000)) < 4_200

    class Broken:
        def __repr__(self) -> str:
            raise RuntimeError("no")

    assert describe.summary(Broken()).startswith("<Broken instance at")  # reprlib's own fallback
    assert "<Broken: repr failed: RuntimeError>" in describe.describe("b", Broken())


async def test_run_code_collects_prints_results_errors_and_figures() -> None:
    ns: dict[str, Any] = {"x": 3}
    out = await run_code('print("hi")\ny = x * 2\ny + 1', ns)
    assert (out.stdout, out.result, out.error, ns["y"]) == ("hi\n", "7", None, 6)
    out = await run_code("def f():\n    return 1 / 0\nf()", ns)
    assert out.error.splitlines()[0] == "Traceback (most recent call last):"
    assert (
        out.error.splitlines()[-1] == "ZeroDivisionError: division by zero" and "execute.py" not in out.error
    )
    out = await run_code(
        "import matplotlib.pyplot as plt\nfig, ax = plt.subplots()\nax.plot([1, 2])\nNone", ns
    )
    assert (
        len(out.images) == 1
        and out.images[0].startswith(b"\x89PNG")
        and out.text().endswith("[images] 1 PNG")
    )
    import matplotlib.pyplot as plt

    assert plt.get_fignums() == []  # closed: the answer carries it, the user's cell does not
    out = await run_code("import asyncio\nawait asyncio.sleep(0)\n42", ns)
    assert out.result == "42"
    assert (await run_code("def (", ns)).error.endswith("SyntaxError: invalid syntax")


# -- the tools and their guard ---------------------------------------------------------------------
async def _tools(session: ClientSession) -> list[str]:
    return [t.name for t in (await session.list_tools()).tools]


async def test_http_tools_see_only_what_is_shared_and_refuse_strangers() -> None:
    share = Share({"df": frame()}, run_code=False, approve=allowed)
    secret = "not shared"  # noqa: F841  (a local the tools must not reach)
    service = HttpService(build_server(share))
    sigint = signal.getsignal(signal.SIGINT)
    url = await service.start()
    try:
        assert signal.getsignal(signal.SIGINT) is sigint  # uvicorn did not take SIGINT
        async with (
            create_mcp_http_client(headers=service.headers) as http,
            streamable_http_client(url, http_client=http) as streams,
            ClientSession(streams[0], streams[1]) as client,
        ):
            await client.initialize()
            assert await _tools(client) == ["list_variables", "describe_variable"]  # run_code is off
            rows = json.loads((await client.call_tool("list_variables", {})).content[0].text)
            assert [r["name"] for r in rows] == ["df"]
            hidden = await client.call_tool("describe_variable", {"name": "secret"})
            assert (
                hidden.is_error and "no shared variable named 'secret' (shared: df)" in hidden.content[0].text
            )
            off = await client.call_tool("run_code", {"code": "1"})
            assert off.is_error and "Unknown tool" in off.content[0].text, off.content[0].text
            share.run_code = True
            assert await _tools(client) == ["list_variables", "describe_variable", "run_code"]
            share.run_code = False
            assert "run_code" not in await _tools(client)
            share.unshare("df")
            gone = await client.call_tool("describe_variable", {"name": "df"})
            assert gone.is_error and "(shared: nothing)" in gone.content[0].text
        async with httpx.AsyncClient() as raw:
            body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
            wrong = await raw.post(url, json=body, headers={"Authorization": "Bearer nope"})
            foreign = await raw.post(
                url, json=body, headers={**service.headers, "Origin": "http://evil.example"}
            )
            nothing = await raw.post(url, json=body)
        assert (wrong.status_code, foreign.status_code, nothing.status_code) == (401, 403, 401)
        assert wrong.json()["error"]["message"].startswith("unauthorized")
        assert [c.tool for c in share.log] == ["list_variables", "describe_variable", "describe_variable"]
        assert share.log[1].error == "not shared"  # an unknown tool never reaches the log
    finally:
        await service.close()
    assert signal.getsignal(signal.SIGINT) is sigint


async def test_the_stdio_bridge_relays_to_the_same_server() -> None:
    share = Share({"xs": [1, 2, 3]}, run_code=True, approve=allowed)
    service = HttpService(build_server(share))
    url = await service.start()
    env = {
        **os.environ,
        "ACP_NOTEBOOK_MCP_URL": url,
        "ACP_NOTEBOOK_MCP_TOKEN": service.token,
        "PYTHONPATH": ROOT,
    }
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "acp_notebook.notebook_mcp.bridge"], env=env
    )
    try:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
            await client.initialize()
            ran = await client.call_tool("run_code", {"code": "sum(xs) * 2"})
            assert ran.content[0].text == "[result]\n12" and share.log[-1].approved_by == "test"
    finally:
        await service.close()
    bad = {**env, "ACP_NOTEBOOK_MCP_TOKEN": "wrong"}
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "acp_notebook.notebook_mcp.bridge", env=bad,
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
    )  # fmt: skip
    line = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "initialize", "params": {}}) + "\n"
    out, _ = await asyncio.wait_for(proc.communicate(line.encode()), 20)
    answer = json.loads(out.decode().splitlines()[0])
    assert answer["id"] == 7 and answer["error"]["code"] in (-32001, -32603)  # answered, never dropped


# -- a session whose agent uses them ----------------------------------------------------------------
@pytest.mark.parametrize(("version", "flags", "transport"), [(2, ["--mcp"], "http"), (1, [], "stdio")])
async def test_the_demo_agent_reads_computes_and_plots_the_shared_frame(
    version, flags, transport, tmp_path
) -> None:
    trace = tmp_path / "trace.jsonl"
    agent = await acp_notebook.start_agent(
        [*DEMO, *flags], str(tmp_path), protocol_version=version, record=trace
    )
    try:
        session = await agent.new_session(str(tmp_path), share={"df": frame()}, run_code=True)
        entry = session.notebook.entry
        assert session.notebook.service.token not in trace.read_text()  # the token never enters a trace
        assert "<redacted>" in trace.read_text()
        assert (entry.get("type") or "stdio") == transport and entry["name"] == "notebook"
        assert ("type" in entry) == (version == 2 or transport == "http")  # a v1 stdio entry has none
        session.permission_handler = allow()
        assert await asyncio.wait_for(session.prompt(PROMPT), 60) == "end_turn"
        calls = session.state.tool_calls
        done = [("call_list", "completed"), ("call_describe", "completed"), ("call_run_code", "completed")]
        assert [(k, t.status) for k, t in calls.items()] == done
        text = [m.text for m in session.state.messages.values() if m.role == "agent"][-1]
        said = (
            "`df` has 3 rows and 3 columns. I computed its column means and plotted it: {'a': 2.0, 'b': 4.0}"
        )
        assert text == said, calls["call_run_code"].notes
        [note] = calls["call_run_code"].notes
        assert note["approved_by"] == "agent request (policy)" and note["result"] == "{'a': 2.0, 'b': 4.0}"
        assert len(note["images"]) == 1
        log = [(c.tool, c.approved_by, c.error) for c in session.mcp_log]
        assert log == [("list_variables", None, None), ("describe_variable", None, None),
                       ("run_code", "agent request (policy)", None)]  # fmt: skip
        assert session.mcp_log[-1].result_size > 1000  # the PNG
    finally:
        await agent.close()


async def test_without_the_agents_permission_the_server_asks_and_a_refusal_is_an_error(tmp_path) -> None:
    agent = await acp_notebook.start_agent([*DEMO, "--mcp"], str(tmp_path))
    try:
        session = await agent.new_session(str(tmp_path), share={"df": frame()}, run_code=True)
        link = session.notebook
        session.permission_handler = reject()
        approve = asyncio.ensure_future(link.approve("df.a.sum()"))  # a call the agent never announced
        assert await asyncio.wait_for(approve, 10) is None  # the policy rejected it
        [asked] = session.state.permissions.values()
        assert asked.title == "Run code in the notebook kernel?" and asked.tool_call_id == "_notebook_run_1"
        assert asked.selected_option == "reject-once"
        assert session.state.tool_calls["_notebook_run_1"].raw_input == {"code": "df.a.sum()"}  # its own card
        session.permission_handler = None
        approve = asyncio.ensure_future(link.approve("df.b.sum()"))
        asked = await _until_pending(session)
        asked.select("allow-once", by="user")
        assert await asyncio.wait_for(approve, 10) == "user"
        assert [p.decided_by for p in session.state.permissions.values()] == ["policy", "user"]
    finally:
        await agent.close()


async def _until_pending(session: Any) -> Any:
    from .support import until_async

    await until_async(lambda: session.pending_permissions, 10, message="the server's question")
    return session.pending_permissions[0]


async def test_a_session_without_share_has_no_server_and_says_how(tmp_path) -> None:
    agent = await acp_notebook.start_agent(DEMO, str(tmp_path))
    try:
        session = await agent.new_session(str(tmp_path))
        assert session.notebook is None and session.mcp_log == []
        with pytest.raises(acp_notebook.AcpError, match=r"new_session\(cwd, share="):
            session.share(df=frame())
    finally:
        await agent.close()


async def test_a_v2_agent_without_mcp_transports_is_refused_clearly(tmp_path) -> None:
    agent = await acp_notebook.start_agent(DEMO, str(tmp_path))  # v2, no --mcp: no transport advertised
    try:
        with pytest.raises(acp_notebook.AcpError, match="does not take stdio MCP servers"):
            await agent.new_session(str(tmp_path), share={})
    finally:
        await agent.close()
