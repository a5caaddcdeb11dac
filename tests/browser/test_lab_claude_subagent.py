"""The real Claude agent's subagent, seen and answered in a real JupyterLab (issue 19, item 7).

``claude-agent-acp`` (pinned) runs against the scripted mock of ``test_lab_claude``: the prompt
makes the model call the ``Agent`` tool (in the foreground), which Claude runs as a child session;
the child runs ``touch child.txt`` with Bash, behind a permission request under its own session
id. The ``%%acp --wait`` cell's view must show the subagent's card (its title, its state) with the
child's own tool call inside it, live, the request inside that tool call's card naming the
subagent, and the card opened by itself; a click on "Yes" in the page answers the child, the file
appears, the turn ends, and the start cell's line counts one subagent.

Needs the JS bundle, Chromium and the pinned agents (``npm ci`` in ``tests/real_agents``).
"""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from ..real_agents import harness
from ..real_agents.mock_anthropic import MockAnthropic, Script, text, tool_use
from ..real_agents.test_claude import claude_env
from .conftest import bad_view_text, write_code_notebook
from .test_lab_claude import CHROMIUM, STATIC, TIMEOUT, in_cell, output_text, wait_output
from .test_lab_demo import screenshot, wait_js

sync_api = pytest.importorskip("playwright.sync_api")

NOTEBOOK = "claude_subagent.ipynb"
MARKER, CHILD_MARKER = "[lab-sub]", "[lab-child] Create the file."
AGENT, CHILD_BASH = "toolu_lab_agent", "toolu_lab_child"
DESCRIPTION = "Make a file"
MODE_CELL, WAIT_CELL, PRINT_CELL, STOP_CELL = 2, 3, 4, 5


@pytest.fixture(scope="module", autouse=True)
def _ready() -> None:
    if not (STATIC / "runtime.js").exists() or not Path(CHROMIUM).exists():
        pytest.skip("the JS bundle or Chromium is missing")
    harness.installed()


def script() -> Script:
    """The model: delegate to a foreground subagent; the subagent: touch a file with Bash."""
    agent_input = {
        "description": DESCRIPTION,
        "prompt": CHILD_MARKER,
        "subagent_type": "general-purpose",
        "run_in_background": False,
    }
    return (
        Script()
        .prompt(MARKER, tool_use(AGENT, "Agent", agent_input))
        .after(AGENT, text("The subagent made the file."))
        .prompt("[lab-child]", tool_use(CHILD_BASH, "Bash", {"command": "touch child.txt"}))
        .after(CHILD_BASH, text("Child done."))
    )


def write_notebook(root: Path, project: Path, env: dict[str, str]) -> None:
    pairs = " ".join(f"--env {shlex.quote(f'{k}={v}')}" for k, v in env.items())
    command = shlex.quote(harness.COMMANDS["claude"][0])
    cells = [
        "%load_ext acp_notebook",
        f"%acp start --name claude --cwd {shlex.quote(str(project))} --timeout 60 {pairs} {command}",
        "%acp mode --name claude default",  # Manual: the child's Bash asks
        f"%%acp --name claude --wait\n{MARKER} Have a subagent make a file.",
        "from pathlib import Path\n"
        "(child,) = claude.subagents.values()\n"
        "print('subagent:', child.title, child.run_state, sorted(child.state.tool_calls))\n"
        f"print('file:', Path({str(project / 'child.txt')!r}).exists())",
        "%acp stop --name claude",
    ]
    write_code_notebook(root / NOTEBOOK, cells)


SUBAGENT_JS = """() => {
  const cell = document.querySelectorAll('.jp-Notebook .jp-Cell')[CELL];
  const card = cell?.querySelector('.acp-subagent');
  if (!card) return null;
  const child = card.querySelector('.acp-sub-body .acp-card[data-key$="/tool_call:TOOL"]');
  const perm = child?.querySelector('.acp-permission');
  return {open: card.classList.contains('acp-sub-open'), state: card.dataset.state,
          title: card.querySelector('.acp-sub-title').textContent,
          child: child ? child.dataset.status : null,
          asker: perm?.querySelector('.acp-perm-asker')?.textContent ?? null,
          perm: perm?.dataset.state ?? null};
}""".replace("CELL", str(WAIT_CELL)).replace("TOOL", CHILD_BASH)


def test_a_subagent_card_shows_its_tool_calls_live_and_its_request_is_answered_in_the_page(
    lab_log, lab_pages, tmp_path: Path
) -> None:
    server, rec = lab_log, lab_pages.recorder
    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    with MockAnthropic(script()) as mock:
        write_notebook(server.root, project, claude_env(home, mock.url))
        page = lab_pages("claude-subagent")
        page.goto(server.lab_url(NOTEBOOK), wait_until="domcontentloaded", timeout=60_000)
        idle = (
            "() => window.jupyterapp?.shell.currentWidget?.sessionContext?.session?.kernel?.status === 'idle'"
        )
        wait_js(page, idle, "the notebook's kernel to be idle", timeout=60_000)
        page.evaluate("() => void window.jupyterapp.commands.execute('notebook:run-all-cells')")
        wait_output(page, 1, "is `claude`", "the agent to start")
        wait_output(page, MODE_CELL, "mode: default", "the switch to Manual mode")

        # live: the card, the child's Bash inside it, its request waiting there, the card open
        asking = "(s) => !!s && s.open && s.perm === 'open' && s.child !== null"
        try:
            page.wait_for_function(f"() => ({asking})(({SUBAGENT_JS})())", timeout=TIMEOUT, polling=100)
        except sync_api.TimeoutError:
            pytest.fail(
                f"no subagent card asking: {page.evaluate(SUBAGENT_JS)!r}; {output_text(page, WAIT_CELL)!r}"
            )
        seen = page.evaluate(SUBAGENT_JS)
        assert seen["asker"].startswith("asked by subagent ") and seen["state"] in (
            "running",
            "requires_action",
        )
        title = seen["title"]
        assert not (Path(project) / "child.txt").exists()
        waiting = page.locator(".acp-header-view .acp-header-waiting")
        assert waiting.count() == 1 and waiting.text_content().startswith(f"waiting for you: {title}")
        block = page.locator(in_cell(WAIT_CELL, ".acp-subagent .acp-permission.acp-perm-open"))
        block.locator('button.acp-opt[data-option-id="allow-once"]').click()

        wait_output(page, WAIT_CELL, "turn ended (end_turn)", "the turn to end after the click")
        done = "(s) => !!s && s.perm === 'answered' && s.child === 'completed'"
        page.wait_for_function(f"() => ({done})(({SUBAGENT_JS})())", timeout=TIMEOUT, polling=100)
        wait_output(page, PRINT_CELL, "file:", "the cell printing the subagent and the file")
        printed = output_text(page, PRINT_CELL)
        assert f"'{CHILD_BASH}']" in printed and "file: True" in printed, printed
        assert (project / "child.txt").exists()
        meta = ".acp-header-view .acp-turn-line[data-turn='1'] .acp-turn-meta"
        page.wait_for_function(
            f"() => document.querySelector(\"{meta}\")?.textContent.includes('1 subagent')"
        )
        assert page.locator(".acp-header-view .acp-header-waiting").count() == 0
        assert bad_view_text(page) == []
        screenshot(page, in_cell(WAIT_CELL, ".acp-session"), "lab-claude-subagent.png")
        wait_output(page, STOP_CELL, "exit code 0", "`%acp stop` to close the agent")
        assert mock.unmatched == []
    assert rec.errors == [] and rec.external_requests() == [] and rec.dialogs == []
    view_errors = [e for e in rec.errors + rec.console if "acp_notebook" in e or "acp-" in e]
    assert view_errors == [], view_errors
