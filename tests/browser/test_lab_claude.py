"""The real Claude agent (``claude-agent-acp``, pinned) driven from a real JupyterLab in Chromium.

The test serves a scripted mock of the Anthropic Messages API from its own process (127.0.0.1,
random port) and writes a notebook that loads the extension, starts the agent with
``%acp start --env ...`` pointed at the mock, switches it to Manual mode (``%acp mode default``:
Claude's default ``auto`` never asks), prompts it in an awaiting ``%%acp --wait`` cell,
prints the terminal bytes and the edited file, and stops the agent. The model reads a file, edits
it (Claude asks permission: a person clicks "Yes" in the card while the cell runs), runs
``printf 'caf\\xc3\\xa9\\n'`` with Bash and answers. The page must show the three cards, the diff's
old and new line, the answered permission, ``café`` in the Bash card's xterm and the final text;
the kernel, the edited file and the bytes; and no process of the agent's outlives ``%acp stop``.

Needs the JS bundle, Chromium at /usr/bin/chromium and the pinned agents (``npm ci`` in
``tests/real_agents``): skipped without them, failed in CI.
"""

from __future__ import annotations

import re
import shlex
import time
from pathlib import Path

import pytest

from ..real_agents import harness
from ..real_agents.mock_anthropic import MockAnthropic, Script, text, tool_use
from ..real_agents.test_claude import EDITED, ORIGINAL, claude_env
from ..support import until
from .conftest import CHROMIUM, unavailable, wait_value, write_code_notebook

nbformat = pytest.importorskip("nbformat")
sync_api = pytest.importorskip("playwright.sync_api")
pytest.importorskip("jupyterlab")

from .test_lab_demo import DIFF_JS, screenshot, wait_js  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
STATIC = ROOT / "acp_notebook" / "static"
if not (STATIC / "runtime.js").exists() or not (STATIC / "loader.js").exists():
    unavailable("JS bundle not built (cd js && npm install && npm run build)")
if not Path(CHROMIUM).exists():
    unavailable(f"Chromium not installed at {CHROMIUM}")

NOTEBOOK = "claude.ipynb"
TIMEOUT = 60_000  # ms, for each wait on the page (a node agent starting on a loaded 2-core machine)
MARKER = "[lab-claude]"
READ, EDIT, BASH = "toolu_lab_read", "toolu_lab_edit", "toolu_lab_bash"
COMMAND = "printf 'caf\\xc3\\xa9\\n'"
FINAL_TEXT = "Done: the greeting is updated."
MODE_CELL, WAIT_CELL, PRINT_CELL, STOP_CELL = 2, 3, 4, 5


@pytest.fixture(scope="module", autouse=True)
def _agents_installed() -> None:
    harness.installed()


def script(path: Path) -> Script:
    """Read ``path``, edit it (behind Claude's permission), print café with Bash, answer."""
    edit = {"file_path": str(path), "old_string": "hello world", "new_string": "hello café"}
    return (
        Script()
        .prompt(MARKER, text("Let me look."), tool_use(READ, "Read", {"file_path": str(path)}))
        .after(READ, tool_use(EDIT, "Edit", edit))
        .after(EDIT, tool_use(BASH, "Bash", {"command": COMMAND, "description": "Print café"}))
        .after(BASH, text(FINAL_TEXT))
    )


def write_notebook(root: Path, project: Path, env: dict[str, str]) -> None:
    path = project / "app.py"
    pairs = " ".join(f"--env {shlex.quote(f'{k}={v}')}" for k, v in env.items())
    command = shlex.quote(harness.COMMANDS["claude"][0])
    cells = [
        "%load_ext acp_notebook",
        f"%acp start --name claude --cwd {shlex.quote(str(project))} --timeout 60 {pairs} {command}",
        "%acp mode --name claude default",  # Manual: Claude 0.101's default `auto` never asks
        f"%%acp --name claude --wait\n{MARKER} Update the greeting, then print it.",
        "from pathlib import Path\n"
        "for tid, term in claude.state.terminals.items():\n"
        "    print('terminal', tid, repr(term.output), 'exit', term.exit_status.get('exitCode'))\n"
        f"print('file:', repr(Path({str(path)!r}).read_text()))",
        "%acp stop --name claude",
    ]
    write_code_notebook(root / NOTEBOOK, cells)


TURN_LINES_JS = """() => [...document.querySelectorAll('.acp-header-view .acp-turn-line')].map((l) => [
  l.dataset.turn, l.querySelector('.acp-turn-prompt').textContent, l.querySelector('.acp-badge').textContent,
  l.querySelector('.acp-turn-meta').textContent.split(' · ')[0]])"""


# -- page helpers -----------------------------------------------------------------------------------
def cell(page, index: int):
    return page.locator(".jp-Notebook .jp-Cell").nth(index)


def in_cell(index: int, selector: str) -> str:
    """A Playwright selector for ``selector`` inside cell ``index``."""
    return f".jp-Notebook .jp-Cell >> nth={index} >> {selector}"


def card(key: str) -> str:
    return f'.acp-card[data-key="tool_call:{key}"]'


def output_text(page, index: int) -> str:
    """The cell's output text (``textContent``: cells scrolled away are not rendered for innerText)."""
    return cell(page, index).locator(".jp-OutputArea").text_content() or ""


def wait_output(page, index: int, text_: str, what: str) -> None:
    js = """([i, text]) => {
      const cell = document.querySelectorAll('.jp-Notebook .jp-Cell')[i];
      return !!cell && (cell.querySelector('.jp-OutputArea')?.textContent || '').includes(text);
    }"""
    try:
        page.wait_for_function(js, arg=[index, text_], timeout=TIMEOUT, polling=100)
    except sync_api.TimeoutError:
        pytest.fail(f"timed out waiting for {what}; cell {index} shows: {output_text(page, index)!r}")


def in_wait_cell(fn: str) -> str:
    """A page function applying ``fn`` to the ``%%acp --wait`` cell (null while it is not there)."""
    cells = "document.querySelectorAll('.jp-Notebook .jp-Cell')"
    return f"() => ((c) => c ? ({fn})(c) : null)({cells}[{WAIT_CELL}])"


CARDS_JS = """(c) => [...c.querySelectorAll('.acp-card')].map((e) => [e.dataset.key, e.dataset.status,
  e.dataset.kind, e.querySelector('.acp-card-title')?.textContent ?? null])"""
PERMISSIONS_JS = """(c) => [...c.querySelectorAll('.acp-permission')].map((p) => [p.dataset.state,
  p.closest('.acp-card')?.dataset.key ?? null, p.querySelector('.acp-perm-outcome')?.textContent ?? null])"""
AGENT_TEXT_JS = "(c) => [...c.querySelectorAll('.acp-msg-agent')].map((m) => m.innerText.trim())"
XTERM_JS = """(c) => {
  const host = c.querySelector('.acp-card[data-key="tool_call:toolu_lab_bash"] .acp-terminal');
  const xterm = host?.querySelector('.acp-term-host')?.shadowRoot ?? host;  // its own shadow root
  return host ? [host.dataset.terminalId, !!xterm.querySelector('.xterm .xterm-rows'),
                 xterm.querySelector('.xterm-rows')?.textContent.includes('café') ?? false] : null;
}"""


def allow_edit(page, server) -> str:
    """Click "Yes" (``allow-once``) in the Edit card of the running ``--wait`` cell, like a person; its title.

    Before the click, while the agent waits for the answer, the server's processes are recorded
    (the adapter and Claude's native CLI among them) for the check after ``%acp stop``.
    """
    block = page.locator(in_cell(WAIT_CELL, f"{card(EDIT)} .acp-permission.acp-perm-open"))
    try:
        block.wait_for(state="visible", timeout=TIMEOUT)
    except sync_api.TimeoutError:
        pytest.fail(f"no open permission in the Edit card: {output_text(page, WAIT_CELL)!r}")
    prompt = cell(page, WAIT_CELL).locator(".jp-InputPrompt").inner_text().strip()
    assert prompt == "[*]:", "the %%acp --wait cell should still be running"
    title = block.locator(".acp-perm-title").inner_text()
    server.track()
    block.locator('button.acp-opt[data-option-id="allow-once"]').click()
    return title


def agent_processes(server, home: Path) -> dict[int, str]:
    """The agent's processes still alive: seen under the lab server running Claude, or with its HOME."""
    alive = {pid: cmd for pid, cmd in server.still_alive().items() if "claude" in cmd}
    for pid in harness.processes_with_env("HOME", str(home)):
        alive[pid] = harness.cmdline(pid)
    return alive


# -- the test ---------------------------------------------------------------------------------------
def test_claude_turn_in_jupyterlab(lab_log, lab_pages, tmp_path: Path) -> None:
    server, rec = lab_log, lab_pages.recorder
    started = time.monotonic()
    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    path = project / "app.py"
    path.write_text(ORIGINAL)

    with MockAnthropic(script(path)) as mock:
        rec.probes.append(("mock", lambda: [(r.method, r.path, r.answer) for r in mock.requests]))
        write_notebook(server.root, project, claude_env(home, mock.url))
        page = lab_pages("claude")
        page.goto(server.lab_url(NOTEBOOK), wait_until="domcontentloaded", timeout=60_000)
        idle = (
            "() => window.jupyterapp?.shell.currentWidget?.sessionContext?.session?.kernel?.status === 'idle'"
        )
        wait_js(page, idle, "the notebook's kernel to be idle", timeout=60_000)
        page.evaluate("() => void window.jupyterapp.commands.execute('notebook:run-all-cells')")

        wait_output(page, 1, "is claude", "the agent to start")
        wait_output(page, MODE_CELL, "mode: default", "the switch to Manual mode")
        assert allow_edit(page, server) == "Edit app.py"
        wait_output(page, WAIT_CELL, "turn ended (end_turn)", "the turn to end after the click")

        # the view's last patch may come after the cell's text: wait on the cards themselves
        cards = [
            ["tool_call:" + READ, "completed", "read", "Read app.py"],
            ["tool_call:" + EDIT, "completed", "edit", "Edit app.py"],
            ["tool_call:" + BASH, "completed", "execute", COMMAND],
        ]
        wait_value(page, in_wait_cell(CARDS_JS), cards, "the Read, Edit and Bash cards, completed")
        answered = [["answered", "tool_call:" + EDIT, "Selected: Yes"]]
        wait_value(page, in_wait_cell(PERMISSIONS_JS), answered, "the permission answered in the Edit card")
        every_view = f"() => ({PERMISSIONS_JS})(document)"
        wait_value(page, every_view, answered, "the permission shown once: the start cell is the header")
        turn = ["1", f"{MARKER} Update the greeting, then print it.", "end turn", "3 tool calls"]
        wait_value(page, TURN_LINES_JS, [turn], "the start cell's line for the turn", timeout=10_000)
        wait_value(page, in_wait_cell(AGENT_TEXT_JS), ["Let me look.", FINAL_TEXT], "the agent's messages")

        diff = page.locator(in_cell(WAIT_CELL, f"{card(EDIT)} .acp-diff")).evaluate(DIFF_JS)
        want = [("modify", "app.py", ["greeting = 'hello world'"], ["greeting = 'hello café'"])]
        assert [(f["op"], f["path"], f["deleted"], f["added"]) for f in diff] == want, diff
        assert "+1" in diff[0]["head"] and "−1" in diff[0]["head"], diff[0]["head"]

        terminal = in_cell(WAIT_CELL, f"{card(BASH)} .acp-terminal")
        page.locator(terminal).scroll_into_view_if_needed()
        wait_value(page, in_wait_cell(XTERM_JS), [BASH, True, True], "café drawn in the Bash card's xterm")
        lines = page.locator(terminal).evaluate(
            "async (el) => (await globalThis.__acpNotebook).debug.terminalLines(el)"
        )
        assert lines == ["café"], lines

        # the kernel's side: the terminal's bytes and the file, then the stop
        wait_output(page, PRINT_CELL, "file:", "the cell printing the terminal and the file")
        printed = output_text(page, PRINT_CELL)
        assert f"terminal {BASH} b'caf\\xc3\\xa9' exit 0" in printed, printed
        assert f"file: {EDITED!r}" in printed, printed
        assert path.read_text() == EDITED
        wait_output(page, STOP_CELL, "exit code 0", "`%acp stop` to close the agent")

        agent_pid = int(re.search(r"pid (\d+)\)", output_text(page, STOP_CELL)).group(1))
        assert "claude-agent-acp" in server.seen.get(agent_pid, ""), (agent_pid, server.seen)
        seen = [cmd for cmd in server.seen.values() if "claude" in cmd]
        assert any("claude-agent-acp" in c for c in seen), server.seen  # node running the adapter
        assert any("claude-agent-sdk-linux" in c for c in seen), seen  # the native CLI
        until(
            lambda: not agent_processes(server, home),
            10,
            interval=0.1,
            message=lambda: f"the agent's processes to exit after %acp stop: {agent_processes(server, home)}",
        )
        assert mock.script.unused() == [] and mock.unmatched == []
        assert [r.answer for r in mock.main_requests()] == ["step 0", "step 1", "step 2", "step 3"]

        shots = [
            screenshot(page, in_cell(WAIT_CELL, ".acp-session"), "lab-claude-turn.png"),
            screenshot(page, in_cell(WAIT_CELL, f"{card(EDIT)} .acp-diff"), "lab-claude-diff.png"),
            screenshot(page, terminal, "lab-claude-terminal.png"),
            screenshot(page, in_cell(1, ".acp-session"), "lab-claude-session.png"),
        ]
    stderr = page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']")
    assert stderr.count() == 0, stderr.all_text_contents()
    assert rec.errors == [], rec.errors
    assert rec.external_requests() == [], rec.external_requests()
    assert rec.dialogs == [], rec.dialogs
    view_errors = [e for e in rec.errors + rec.console if "acp_notebook" in e or "acp-" in e]
    assert view_errors == [], f"the view logged errors: {view_errors}"
    print("screenshots:", *shots, sep="\n  ")
    print(f"scenario took {time.monotonic() - started:.1f}s")
