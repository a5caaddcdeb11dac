"""The real Codex (codex-acp 2.6) asks the user in JupyterLab (issue 20, "Done means"): in the Plan
collaboration mode the scripted model calls ``request_user_input``; codex turns the question into a
form elicitation, drawn in the running ``%%acp --wait`` cell; a person picks an answer and clicks
Accept; the answer reaches the model (the mock's log) as the tool's output, and the turn ends.

The model is ``tests/real_agents/mock_openai`` in this process (127.0.0.1, random port), scripted
as ``test_codex_elicitation`` scripts it. Needs the JS bundle, Chromium at /usr/bin/chromium and the
pinned agents (``npm ci`` in ``tests/real_agents``): skipped without them.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from ..real_agents import harness
from ..real_agents.mock_openai import MockOpenAI
from ..real_agents.test_codex import TITLE, codex_config, codex_env
from ..real_agents.test_codex_elicitation import ASK, CHOICES, QUESTION
from .conftest import CHROMIUM, unavailable, wait_value, write_code_notebook

nbformat = pytest.importorskip("nbformat")
sync_api = pytest.importorskip("playwright.sync_api")
pytest.importorskip("jupyterlab")

from ..real_agents.test_codex_elicitation import script as ask_one_question  # noqa: E402
from .test_lab_claude import cell, in_cell, output_text, wait_output  # noqa: E402
from .test_lab_demo import screenshot, wait_js  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
STATIC = ROOT / "acp_notebook" / "static"
if not (STATIC / "runtime.js").exists() or not (STATIC / "loader.js").exists():
    unavailable("JS bundle not built (cd js && npm install && npm run build)")
if not Path(CHROMIUM).exists():
    unavailable(f"Chromium not installed at {CHROMIUM}")

NOTEBOOK = "codex_elicitation.ipynb"
TIMEOUT = 90_000  # ms, for each wait on the page (codex and its app-server on a loaded 2-core machine)
START_CELL, PLAN_CELL, WAIT_CELL, STOP_CELL = 1, 2, 3, 4
FORM = '.acp-elicitation[data-state="open"]'


@pytest.fixture(scope="module", autouse=True)
def _agents_installed() -> None:
    harness.installed()


class _Script:
    """What ``test_codex_elicitation.script`` needs of a run: the mock."""

    def __init__(self, mock: MockOpenAI) -> None:
        self.mock = mock


def write_notebook(root: Path, project: Path, env: dict[str, str]) -> None:
    pairs = " ".join(f"--env {shlex.quote(f'{k}={v}')}" for k, v in env.items())
    command = shlex.quote(harness.COMMANDS["codex"][0])
    cells = [
        "%load_ext acp_notebook",
        f"%acp start --name codex --cwd {shlex.quote(str(project))} --timeout 90 {pairs} {command}",
        "await codex.set_config_option('collaboration_mode', 'plan')\nprint('collaboration mode: plan')",
        f"%%acp --name codex --wait\n{ASK}",
        "%acp stop --name codex",
    ]
    write_code_notebook(root / NOTEBOOK, cells)


FIELDS_JS = """(form) => [...form.querySelectorAll('.acp-el-field')].map((f) => [
  f.dataset.field, f.dataset.kind, f.querySelector('.acp-el-label').textContent,
  [...f.querySelectorAll('.acp-el-opt')].map((o) => o.dataset.value)])"""


def test_codex_request_user_input_answered_by_a_click_in_jupyterlab(
    lab_log, lab_pages, tmp_path: Path
) -> None:
    server, rec = lab_log, lab_pages.recorder
    project, home, codex_home = tmp_path / "project", tmp_path / "home", tmp_path / "codex-home"
    project.mkdir()
    mock = MockOpenAI(title=TITLE)
    try:
        ask_one_question(_Script(mock))
        rec.probes.append(("mock", lambda: [step.label for step in mock.pending]))
        write_notebook(server.root, project, codex_env(home, codex_home, codex_config(mock.base_url)))
        page = lab_pages("codex-elicitation")
        page.goto(server.lab_url(NOTEBOOK), wait_until="domcontentloaded", timeout=60_000)
        idle = (
            "() => window.jupyterapp?.shell.currentWidget?.sessionContext?.session?.kernel?.status === 'idle'"
        )
        wait_js(page, idle, "the notebook's kernel to be idle", timeout=60_000)
        page.evaluate("() => void window.jupyterapp.commands.execute('notebook:run-all-cells')")
        wait_output(page, START_CELL, "is codex", "the agent to start")
        wait_output(page, PLAN_CELL, "collaboration mode: plan", "the Plan collaboration mode")

        form = page.locator(in_cell(WAIT_CELL, FORM))
        try:
            form.wait_for(state="visible", timeout=TIMEOUT)
        except sync_api.TimeoutError:
            pytest.fail(f"no open form in the --wait cell: {output_text(page, WAIT_CELL)!r}")
        assert cell(page, WAIT_CELL).locator(".jp-InputPrompt").inner_text().strip() == "[*]:"
        fields = form.evaluate(FIELDS_JS)
        assert fields[0] == ["db_choice", "single_select", QUESTION["question"] + " *", CHOICES]
        assert [f[1] for f in fields[1:]] == ["string"]  # the optional note
        assert form.locator("a").count() == 0
        form.locator('.acp-el-opt[data-value="Postgres"]').check()
        form.locator('[data-field="db_choice_note"].acp-el-input').fill("on port 5433")
        form.locator(".acp-el-accept").click()

        wait_output(page, WAIT_CELL, "turn ended (end_turn)", "the turn to end after the click")
        answered = in_cell(WAIT_CELL, '.acp-elicitation[data-state="accepted"]')
        page.locator(answered).wait_for(state="visible", timeout=TIMEOUT)
        shown = "(c) => [...c.querySelectorAll('.acp-el-value-text')].map((d) => d.textContent)"
        cells = "document.querySelectorAll('.jp-Notebook .jp-Cell')"
        wait_value(
            page,
            f"() => (({shown}))({cells}[{WAIT_CELL}])",
            ["Postgres", "on port 5433"],
            "the answered card's values",
        )
        outputs = mock.model_requests()[-1].outputs("call_ask")
        assert [json.loads(o) for o in outputs] == [
            {"answers": {"db_choice": {"answers": ["Postgres", "user_note: on port 5433"]}}}
        ]
        shot = screenshot(page, in_cell(WAIT_CELL, ".acp-session"), "lab-codex-elicitation.png")
        wait_output(page, STOP_CELL, "exit code", "`%acp stop` to close the agent")
    finally:
        mock.close()
    stderr = page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']")
    assert stderr.count() == 0, stderr.all_text_contents()
    assert rec.external_requests() == [], rec.external_requests()
    view_errors = [e for e in rec.errors + rec.console if "acp_notebook" in e or "acp-" in e]
    assert view_errors == [], f"the view logged errors: {view_errors}"
    print("screenshot:", shot)
