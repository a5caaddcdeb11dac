"""The real Claude agent on the user's data, through the ``notebook`` MCP server, offline.

claude-agent-acp advertises HTTP MCP servers, so the session hands it the kernel's endpoint with
a bearer token. The scripted model (``mock_anthropic``) lists the shared variables, describes the
shared DataFrame, tries an unshared name, then runs code on the frame that computes and plots;
the test checks what the agent received for each call (the mock's log of tool results), the
cards, the permission Claude asked before ``run_code`` in Manual mode (which the server then honours
instead of asking again), the image that came back, that nothing unshared was visible, and that the
wire equals the state.
"""

from __future__ import annotations

import asyncio
import json

import pytest

from acp_notebook.policies import allow
from tests.real_agents.mock_anthropic import text, tool_use
from tests.real_agents.test_claude import (  # noqa: F401
    TURN,
    Run,
    _agents_installed,
    assert_wire_equals_state,
    claude,
)

pd = pytest.importorskip("pandas")
pytest.importorskip("matplotlib")

CODE = (
    "means = df.select_dtypes('number').mean().round(2)\n"
    "import matplotlib.pyplot as plt\n"
    "fig, ax = plt.subplots()\n"
    "df.plot(x='day', y='sales', ax=ax)\n"
    "means.to_dict()"
)


NOTEBOOK_TOOLS = (
    "mcp__notebook__list_variables",
    "mcp__notebook__describe_variable",
    "mcp__notebook__run_code",
)


def _script(run: Run) -> None:
    # claude-agent-acp >= 0.95 defers MCP tools: the model loads their schemas with ToolSearch first
    query = "select:" + ",".join(NOTEBOOK_TOOLS)
    run.script.prompt(
        "[data]",
        text("Let me look."),
        tool_use("toolu_search", "ToolSearch", {"query": query, "max_results": 3}),
    )
    run.script.after("toolu_search", tool_use("toolu_list", "mcp__notebook__list_variables", {}))
    run.script.after("toolu_list", tool_use("toolu_desc", "mcp__notebook__describe_variable", {"name": "df"}))
    run.script.after(
        "toolu_desc", tool_use("toolu_secret", "mcp__notebook__describe_variable", {"name": "secret"})
    )
    run.script.after("toolu_secret", tool_use("toolu_run", "mcp__notebook__run_code", {"code": CODE}))
    run.script.after("toolu_run", text("Mean sales are 20."))


def _result_text(result: dict) -> str:
    content = result.get("content")
    if isinstance(content, str):
        return content
    return "\n".join(
        b.get("text", "") for b in content or [] if isinstance(b, dict) and b.get("type") == "text"
    )


async def test_claude_lists_describes_and_runs_code_on_a_shared_frame(claude: Run) -> None:  # noqa: F811
    df = pd.DataFrame({"day": [1, 2, 3], "sales": [10.0, 20.0, 30.0]})
    secret = {"token": "do not share"}  # noqa: F841  (in scope, never shared)
    _script(claude)
    session = await asyncio.wait_for(
        claude.agent.new_session(cwd=claude.project, share={"df": df}, run_code=True), TURN
    )
    assert session.notebook.entry["type"] == "http"
    await asyncio.wait_for(session.set_config_option("mode", "default"), TURN)  # Manual: Claude asks
    session.permission_handler = allow()
    assert await asyncio.wait_for(session.prompt("[data] What is in my data?"), TURN) == "end_turn"

    # deferred: named in the first request's reminder, offered (loaded) after the ToolSearch
    first, *later = claude.mock.main_requests()
    assert all(name in json.dumps(first.messages) for name in NOTEBOOK_TOOLS)
    assert set(NOTEBOOK_TOOLS) <= set(later[0].tool_names), later[0].tool_names
    results = {k: v for r in claude.mock.main_requests() for k, v in r.tool_results().items()}
    listed = json.loads(_result_text(results["toolu_list"]))
    assert [row["name"] for row in listed] == ["df"] and "token" not in _result_text(results["toolu_list"])
    described = _result_text(results["toolu_desc"])
    assert described.startswith("df: pandas.DataFrame\nshape: [3, 2]") and "sales: float64" in described
    assert results["toolu_secret"].get("is_error") and "no shared variable named 'secret'" in _result_text(
        results["toolu_secret"]
    )
    ran = results["toolu_run"]
    assert "[result]\n{'day': 2.0, 'sales': 20.0}" in _result_text(ran)
    images = [b for b in ran.get("content") or [] if isinstance(b, dict) and b.get("type") == "image"]
    assert len(images) == 1 and images[0]["source"]["media_type"] == "image/png"  # the agent can see its plot

    calls = session.state.tool_calls
    assert {"toolu_list", "toolu_desc", "toolu_secret", "toolu_run"} <= set(calls)
    assert calls["toolu_run"].status == "completed" and calls["toolu_secret"].status == "failed"
    [note] = calls["toolu_run"].notes
    assert (
        note["code"] == CODE and note["result"] == "{'day': 2.0, 'sales': 20.0}" and len(note["images"]) == 1
    )
    asked = [p for p in session.state.permissions.values() if p.tool_call_id == "toolu_run"]
    assert len(asked) == 1 and asked[0].decided_by == "policy"  # Claude asked; the server did not ask again
    assert note["approved_by"] == "agent request (policy)"
    log = [(c.tool, c.arguments.get("name"), c.error) for c in session.mcp_log]
    assert log == [("list_variables", None, None), ("describe_variable", "df", None),
                   ("describe_variable", "secret", "not shared"), ("run_code", None, None)]  # fmt: skip
    assert claude.mock.unmatched == [] and claude.script.unused() == []
    # the client marks the call whose code the kernel ran (`extra`, so it shows in `to_dict()`)
    assert_wire_equals_state(claude, session, client_added={"toolu_run": {"notebook_ran": True}})
    claude.figures(session)
    await claude.close_and_check()
