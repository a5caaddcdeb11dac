"""The ``notebook`` MCP server seen in JupyterLab: the demo agent (``--mcp``) lists, describes and
runs code on a shared DataFrame; its ``run_code`` card shows the code (highlighted), the result and
the figure the code drew, as an image decoded in the page — and nothing leaves localhost."""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import unavailable, wait_value
from .test_lab_demo import CHROMIUM, STATIC
from .test_lab_xray import run_notebook, write

pytest.importorskip("nbformat")
pytest.importorskip("pandas")
pytest.importorskip("matplotlib")
if not (STATIC / "runtime.js").exists() or not Path(CHROMIUM).exists():
    unavailable("JS bundle not built or Chromium missing")

NAME = "mcp.ipynb"
CARD = '.acp-card[data-key="tool_call:call_run_code"]'
NOTE = """() => {
  const n = document.querySelector('.acp-card[data-key="tool_call:call_run_code"] .acp-note-run');
  if (!n) return null;
  const img = n.querySelector('img.acp-note-img');
  return {
    head: n.querySelector('.acp-note-head').innerText,
    code: n.querySelector('.acp-note-code').innerText.split('\\n')[0],
    highlighted: n.querySelectorAll('.acp-note-code .hljs-string, .acp-note-code .hljs-keyword').length > 0,
    result: [...n.querySelectorAll('.acp-note-out pre')].map((p) => p.innerText).join('|'),
    image: img ? img.complete && img.naturalWidth > 100 : false,
  };
}"""


def test_the_run_code_card_shows_code_result_and_figure(lab_log, lab_pages):
    server = lab_log
    root = str(server.root)
    write(server.root, NAME, [
        "import sys\nimport pandas as pd\nimport acp_notebook\nfrom acp_notebook.policies import allow\n"
        "df = pd.DataFrame({'a': [1, 2, 3], 'b': [2.0, 4.0, 6.0]})",
        "demo = [sys.executable, '-m', 'acp_notebook.demo_agent', '--mcp', '--speed', '0']\n"
        f"agent = await acp_notebook.start_agent(demo, {root!r})\n"
        f"session = await agent.new_session({root!r}, share={{'df': df}}, run_code=True)\n"
        "session.permission_handler = allow()\n"
        "await session.prompt('Look at my data and plot it')\n"
        "acp_notebook.SessionView(session)",
    ])  # fmt: skip
    page = lab_pages("notebook-mcp", width=1300)
    run_notebook(page, server, NAME)
    page.locator(CARD).first.wait_for(state="attached", timeout=60_000)
    page.locator(CARD).scroll_into_view_if_needed()
    want = {
        "head": "Ran in the notebook kernel · approved by agent request (policy) · ",
        "code": "means = df.select_dtypes('number').mean().round(3)",
        "highlighted": True,
        "result": "{'a': 2.0, 'b': 4.0}",
        "image": True,
    }
    probe = NOTE.replace("innerText,\n    code", "innerText.replace(/[0-9.]+ s$/, ''),\n    code")
    wait_value(page, probe, want, "the run_code card's note")
    assert page.locator(f"{CARD}[data-status='completed']").count() == 1
    assert lab_pages.recorder.external_requests() == []
