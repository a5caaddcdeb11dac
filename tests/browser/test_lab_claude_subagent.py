"""The real Claude agent's subagents, seen and answered in a real JupyterLab (issue 19, items 3, 6, 7).

``claude-agent-acp`` (pinned) runs against the scripted mock of ``test_lab_claude``. First the
prompt makes the model call the ``Agent`` tool in the foreground, which Claude runs as a child
session; the child runs ``touch child.txt`` with Bash, behind a permission request under its own
session id. The ``%%acp --wait`` cell's view must show the subagent's card with the child's own
tool call inside it, live, the request inside that tool call's card naming the subagent, the card
opened by itself and the start cell's header saying who waits; a click on "Yes" in the page
answers the child, the file appears, the turn ends, and the start cell's line counts one subagent.

Then a background subagent (the ``Agent`` tool's default): the turn ends while the child works,
and the child asks only after that. Its request must show in the whole-session view (``%acp
view``) and the header, never in the ended turn's cell (its card there says where to look); a
click there answers it, and the task notification the agent then starts is a turn of its own,
with its line ("agent · task notification") and its view under the start cell.

Needs the JS bundle, Chromium and the pinned agents (``npm ci`` in ``tests/real_agents``).
"""

from __future__ import annotations

import shlex
import threading
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
BG_MARKER, BG_CHILD_MARKER = "[lab-bg]", "[lab-bgchild] Create another file."
AGENT, CHILD_BASH, BG_AGENT, BG_BASH = (
    "toolu_lab_agent",
    "toolu_lab_child",
    "toolu_lab_bg",
    "toolu_lab_bgchild",
)
NOTIFIED = "The background subagent finished."
START_CELL, MODE_CELL, WAIT_CELL, PRINT_CELL, WHOLE_CELL, BG_CELL, BG_WAIT_CELL, BG_PRINT_CELL, STOP_CELL = (
    1, 2, 3, 4, 5, 6, 7, 8, 9,
)  # fmt: skip


@pytest.fixture(scope="module", autouse=True)
def _ready() -> None:
    if not (STATIC / "runtime.js").exists() or not Path(CHROMIUM).exists():
        pytest.skip("the JS bundle or Chromium is missing")
    harness.installed()


def script(later: threading.Event) -> Script:
    """The model: delegate to a foreground subagent, later to a background one (whose model
    answers only once ``later`` is set: after the turn that started it ended), then answer the
    task notification; each subagent touches a file with Bash."""
    foreground = {"description": "Make a file", "prompt": CHILD_MARKER, "subagent_type": "general-purpose",
                  "run_in_background": False}  # fmt: skip
    background = {
        "description": "Make another file",
        "prompt": BG_CHILD_MARKER,
        "subagent_type": "general-purpose",
    }
    return (
        Script()
        .prompt(MARKER, tool_use(AGENT, "Agent", foreground))
        .after(AGENT, text("The subagent made the file."))
        .prompt("[lab-child]", tool_use(CHILD_BASH, "Bash", {"command": "touch child.txt"}))
        .after(CHILD_BASH, text("Child done."))
        .prompt("<task-notification>", text(NOTIFIED))
        .prompt(BG_MARKER, tool_use(BG_AGENT, "Agent", background))
        .after(BG_AGENT, text("Started it."))
        .prompt("[lab-bgchild]", tool_use(BG_BASH, "Bash", {"command": "touch late.txt"}), hold=later)
        .after(BG_BASH, text("Background child done."))
    )


def write_notebook(root: Path, project: Path, env: dict[str, str]) -> None:
    pairs = " ".join(f"--env {shlex.quote(f'{k}={v}')}" for k, v in env.items())
    command = shlex.quote(harness.COMMANDS["claude"][0])
    cells = [
        "%load_ext acp_notebook",
        f"%acp start --name claude --cwd {shlex.quote(str(project))} --timeout 60 {pairs} {command}",
        "%acp mode --name claude default",  # Manual: the children's Bash asks
        f"%%acp --name claude --wait\n{MARKER} Have a subagent make a file.",
        "from pathlib import Path\n"
        "(child,) = claude.subagents.values()\n"
        "print('subagent:', child.title, child.run_state, sorted(child.state.tool_calls))\n"
        f"print('file:', Path({str(project / 'child.txt')!r}).exists())",
        "%acp view --name claude",  # the whole session
        f"%%acp --name claude --wait\n{BG_MARKER} Have a background subagent make another file.",
        "%acp wait --name claude --background",
        "print('origins:', [t.origin for t in claude.turns], claude.turns[-1].origin_label)\n"
        f"print('late file:', Path({str(project / 'late.txt')!r}).exists())",
        "%acp stop --name claude",
    ]
    write_code_notebook(root / NOTEBOOK, cells)


SUBAGENT_JS = """([index, tool]) => {
  const cell = document.querySelectorAll('.jp-Notebook .jp-Cell')[index];
  const card = [...(cell?.querySelectorAll('.acp-subagent') ?? [])].find((c) =>
    c.querySelector(`.acp-card[data-key$="/tool_call:${tool}"]`));
  const child = card?.querySelector(`.acp-sub-body .acp-card[data-key$="/tool_call:${tool}"]`);
  const perm = child?.querySelector('.acp-permission');
  const note = card?.querySelector(':scope > .acp-sub-body > .acp-sub-note');
  return card ? {open: card.classList.contains('acp-sub-open'), state: card.dataset.state,
          title: card.querySelector('.acp-sub-title').textContent,
          child: child ? child.dataset.status : null,
          asker: perm?.querySelector('.acp-perm-asker')?.textContent ?? null,
          perm: perm?.dataset.state ?? null, note: note && !note.hidden ? note.textContent : null} : null;
}"""


def card_of(page, index: int, tool: str) -> dict | None:
    return page.evaluate(SUBAGENT_JS, [index, tool])


def wait_card(page, index: int, tool: str, test: str, what: str) -> dict:
    """Wait until the card holding ``tool`` in cell ``index`` passes ``test`` (a JS predicate)."""
    try:
        page.wait_for_function(
            f"(a) => (({test}))(({SUBAGENT_JS})(a))", arg=[index, tool], timeout=TIMEOUT, polling=100
        )
    except sync_api.TimeoutError:
        pytest.fail(
            f"timed out waiting for {what}: {card_of(page, index, tool)!r}; {output_text(page, index)!r}"
        )
    return card_of(page, index, tool)


def foreground(page, project: Path) -> None:
    """Live: the card, the child's Bash in it, its request there naming it, the card open; a click."""
    seen = wait_card(
        page, WAIT_CELL, CHILD_BASH, "(s) => !!s && s.open && s.perm === 'open'", "the child asking"
    )
    assert seen["asker"] == f"asked by subagent {seen['title']}" and seen["state"] in (
        "running",
        "requires_action",
    )
    assert not (project / "child.txt").exists()
    waiting = page.locator(f"{in_cell(START_CELL, '.acp-header-waiting')}")
    assert waiting.text_content().startswith(f"waiting for you: {seen['title']} — ")
    block = page.locator(in_cell(WAIT_CELL, ".acp-subagent .acp-permission.acp-perm-open"))
    block.locator('button.acp-opt[data-option-id="allow-once"]').click()
    wait_output(page, WAIT_CELL, "turn ended (end_turn)", "the turn to end after the click")
    wait_card(
        page, WAIT_CELL, CHILD_BASH, "(s) => s.perm === 'answered' && s.child === 'completed'", "the answer"
    )
    wait_output(page, PRINT_CELL, "file:", "the cell printing the subagent and the file")
    printed = output_text(page, PRINT_CELL)
    assert f"'{CHILD_BASH}']" in printed and "file: True" in printed, printed
    line = ".acp-header-view .acp-turn-line[data-turn='1'] .acp-turn-meta"
    page.wait_for_function(f"() => document.querySelector(\"{line}\")?.textContent.includes('1 subagent')")
    assert page.locator(".acp-header-view .acp-header-waiting").count() == 0


def background(page, project: Path, later: threading.Event) -> None:
    """After its turn ended the child asks: the whole-session view and the header show it, the
    ended cell does not; a click in the whole view answers; the task notification is a turn."""
    wait_output(page, BG_CELL, "turn ended (end_turn)", "the background subagent's turn to end")
    later.set()  # now the child's model answers: its Bash asks
    asking = "(s) => !!s && s.open && s.perm === 'open'"
    seen = wait_card(page, WHOLE_CELL, BG_BASH, asking, "the request in the whole-session view")
    assert page.locator(in_cell(BG_CELL, ".acp-permission")).count() == 0  # never in the ended cell
    assert card_of(page, BG_CELL, BG_BASH) is None  # the ended cell's card has not the child's later Bash
    note = in_cell(BG_CELL, ".acp-subagent > .acp-sub-body > .acp-sub-note:not([hidden])")
    page.locator(note).wait_for(timeout=TIMEOUT)
    assert "whole session's view (%acp view)" in page.locator(note).text_content()
    waiting = page.locator(in_cell(START_CELL, ".acp-header-waiting")).text_content()
    assert waiting.startswith(f"waiting for you: {seen['title']} — "), waiting
    block = page.locator(in_cell(WHOLE_CELL, ".acp-subagent .acp-permission.acp-perm-open"))
    block.locator('button.acp-opt[data-option-id="allow-once"]').click()
    wait_output(page, BG_PRINT_CELL, "late file:", "the cell after the background wait")
    printed = output_text(page, BG_PRINT_CELL)
    assert "origins: ['user', 'user', 'agent'] task notification" in printed and "late file: True" in printed
    lines = ".acp-header-view .acp-turn-line[data-turn='3'] .acp-turn-prompt"
    page.wait_for_function(
        f"() => document.querySelector(\"{lines}\")?.textContent === 'agent · task notification'"
    )
    agent_view = in_cell(START_CELL, ".acp-session:not(.acp-header-view)")
    page.wait_for_selector(f"{agent_view} >> text={NOTIFIED}", timeout=TIMEOUT)
    assert page.locator(in_cell(WAIT_CELL, f"text={NOTIFIED}")).count() == 0  # not in an earlier cell
    page.locator(".acp-header-view .acp-turn-line[data-turn='3'] .acp-turn-go").click()  # leads there
    flashed = in_cell(START_CELL, '[data-acp-anchor$="#3"].acp-anchor-flash')
    page.wait_for_selector(flashed, timeout=TIMEOUT)


def test_subagents_in_jupyterlab_foreground_then_background(lab_log, lab_pages, tmp_path: Path) -> None:
    server, rec = lab_log, lab_pages.recorder
    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    later = threading.Event()
    with MockAnthropic(script(later)) as mock:
        try:
            write_notebook(server.root, project, claude_env(home, mock.url))
            page = lab_pages("claude-subagent")
            page.goto(server.lab_url(NOTEBOOK), wait_until="domcontentloaded", timeout=60_000)
            idle = "() => window.jupyterapp?.shell.currentWidget?.sessionContext?.session?.kernel?.status"
            idle += " === 'idle'"
            wait_js(page, idle, "the notebook's kernel to be idle", timeout=60_000)
            page.evaluate("() => void window.jupyterapp.commands.execute('notebook:run-all-cells')")
            wait_output(page, START_CELL, "is claude", "the agent to start")
            wait_output(page, MODE_CELL, "mode: default", "the switch to Manual mode")
            foreground(page, project)
            screenshot(page, in_cell(WAIT_CELL, ".acp-session"), "lab-claude-subagent.png")
            background(page, project, later)
            screenshot(page, in_cell(WHOLE_CELL, ".acp-session"), "lab-claude-subagent-whole.png")
            screenshot(page, in_cell(START_CELL, ".jp-OutputArea"), "lab-claude-subagent-start.png")
            assert bad_view_text(page) == []
            wait_output(page, STOP_CELL, "exit code 0", "`%acp stop` to close the agent")
            assert mock.unmatched == [] and mock.script.unused() == []
        finally:
            later.set()
    assert rec.errors == [] and rec.external_requests() == [] and rec.dialogs == []
    view_errors = [e for e in rec.errors + rec.console if "acp_notebook" in e or "acp-" in e]
    assert view_errors == [], view_errors
