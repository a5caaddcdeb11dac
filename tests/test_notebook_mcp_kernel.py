"""The ``notebook`` MCP server inside a real kernel: ``%acp start --share --run-code``, code run
in the user's namespace, and a kernel interrupt still cancelling a turn while the server runs
(uvicorn would take SIGINT if we let it)."""

from __future__ import annotations

import pytest

from .test_kernel import DEMO, kernel  # noqa: F401  (the real-kernel fixture)

pytest.importorskip("pandas")
pytest.importorskip("matplotlib")


def test_an_interrupt_cancels_a_turn_while_the_notebook_server_runs(kernel):  # noqa: F811
    setup = (
        "import sys, signal\nimport pandas as pd\ndf = pd.DataFrame({'a': [1, 2, 3], 'b': [2.0, 4.0, 6.0]})"
    )
    kernel.ok(setup + "\nsigint = signal.getsignal(signal.SIGINT)")
    run = kernel.ok(f"%acp start --share df --run-code {{sys.executable}} -m {DEMO} --mcp --speed 0")
    assert "is acp" in run.stdout and len(run.widgets) == 1
    (view,) = kernel.ok("%acp view").widgets  # the whole session (the start cell shows its header)
    assert kernel.value("acp.notebook.entry['type']") == "http"
    assert kernel.value("signal.getsignal(signal.SIGINT) is sigint") is True  # the kernel keeps SIGINT

    cell = kernel.submit("%%acp --wait\nFix the failing test")  # waits on a permission: interrupt it
    kernel.until(lambda: kernel.shown(view, "permission:"), "a permission request")
    kernel.km.interrupt_kernel()
    kernel.wait(cell)
    assert [e["ename"] for e in cell.errors] == ["TurnInterrupted"], cell.errors
    assert kernel.value("acp.state.stop_reason") == "cancelled"

    kernel.ok("from acp_notebook.policies import allow\nacp.permission_handler = allow()")
    again = kernel.ok("%%acp --wait\nLook at my data and plot it")  # the server still serves
    assert "turn ended (end_turn)" in again.stdout, again.stdout
    assert kernel.value("[c.tool for c in acp.mcp_log]") == [
        "list_variables",
        "describe_variable",
        "run_code",
    ]
    assert kernel.value("means.to_dict()") == {"a": 2.0, "b": 4.0}  # it ran in the user's namespace
    shared = kernel.ok("%acp share")
    assert shared.stdout.strip() == "acp shares: df (run_code on)"
    kernel.ok("%acp share --stop df")
    assert kernel.value("list(acp.notebook.share.objects)") == []
