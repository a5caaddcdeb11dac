"""A login's pieces in a real JupyterLab (Chromium): a SecretForm and an interactive terminal.

The notebook shows a ``SecretForm`` whose ``on_submit`` keeps the values in a kernel variable, and
a ``SessionView`` over a bare state whose actions object echoes every keystroke back into the
terminal. The test types like a user (JupyterLab's own shortcuts must not take the keys), checks
that the kernel got exactly what was typed, that the page and the saved notebook hold no secret,
and that the terminal's size reached the kernel.
"""

from __future__ import annotations

import hashlib
import json

import pytest

from ..support import until
from .conftest import wait_value, write_code_notebook
from .test_lab_demo import EXEC_JS, WIDGET_STATE, save, wait_js

nbformat = pytest.importorskip("nbformat")

NOTEBOOK = "login.ipynb"
SECRET = "sk-ab-dd-zz-0042"  # "a", "b", "d d", "z": JupyterLab command-mode shortcuts
CELLS = [
    "import base64\n"
    "from acp_notebook import SessionState\n"
    "from acp_notebook.widgets import SecretForm, SessionView\n"
    "got = {}\n"
    'fields = [{"name": "OPENAI_API_KEY", "label": "OpenAI API key"}, {"name": "ORG", "optional": True}]\n'
    'form = SecretForm(fields, "Log in", got.update)\n'
    "form",
    "state = SessionState()\n"
    'state.apply({"sessionUpdate": "tool_call_update", "toolCallId": "login", "title": "Log in",\n'
    '             "kind": "execute", "content": [{"type": "terminal", "terminalId": "t1"}]})\n'
    "class Echo:\n"
    "    def __init__(self):\n"
    "        self.typed, self.sizes = bytearray(), []\n"
    "    def terminal_input(self, terminal_id, data):\n"
    "        self.typed += data\n"
    '        out = base64.b64encode(data.replace(b"\\r", b"\\r\\n")).decode()\n'
    '        chunk = {"sessionUpdate": "terminal_output_chunk", "terminalId": terminal_id, "data": out}\n'
    "        state.apply(chunk)\n"
    "    def terminal_resize(self, terminal_id, cols, rows):\n"
    "        self.sizes.append((terminal_id, cols, rows))\n"
    "    def interactive_terminals(self):\n"
    '        return ["t1"]\n'
    "echo = Echo()\n"
    "view = SessionView(state, actions=echo)\n"
    "view",
]
PROBE = (
    "import hashlib, json\n"
    "print(json.dumps({'got': {k: hashlib.sha256(v.encode()).hexdigest() for k, v in got.items()},\n"
    "  'typed': echo.typed.decode(), 'sizes': echo.sizes, 'phase': form.phase}))"
)
TERM = '.acp-terminal[data-terminal-id="t1"]'
TERM_JS = """async () => {
  const api = (await globalThis.__acpNotebook).debug;
  const host = document.querySelector('.acp-terminal[data-terminal-id="t1"]');
  return {lines: await api.terminalLines(host), state: await api.termState(host)};
}"""


def probe(page) -> dict:
    out = page.evaluate(EXEC_JS, PROBE)
    return json.loads(out.strip().splitlines()[-1])


def cell_count(page) -> int:
    return page.evaluate("() => window.jupyterapp.shell.currentWidget.content.widgets.length")


def prompts_of(page) -> list[str]:
    return page.evaluate("() => [...document.querySelectorAll('.jp-InputPrompt')].map((p) => p.textContent)")


def test_secret_form_and_interactive_terminal_in_jupyterlab(lab_log, lab_pages):
    server = lab_log
    path = server.root / NOTEBOOK
    write_code_notebook(path, CELLS)
    page = lab_pages("login")
    page.goto(server.lab_url(NOTEBOOK), wait_until="domcontentloaded", timeout=60_000)
    idle = "() => window.jupyterapp?.shell.currentWidget?.sessionContext?.session?.kernel?.status === 'idle'"
    wait_js(page, idle, "the kernel to be idle", timeout=60_000)
    page.evaluate("() => void window.jupyterapp.commands.execute('notebook:run-all-cells')")
    wait_js(
        page,
        f"() => !!document.querySelector('.acp-secret-form') && !!document.querySelector('{TERM}')",
        "both",
    )
    wait_js(
        page,
        "() => [...document.querySelectorAll('.jp-InputPrompt')].every((p) => /\\d/.test(p.textContent))",
        "both cells done",
    )
    cells, prompts = cell_count(page), prompts_of(page)

    # the form: typed with the keyboard, sent once, gone from the page
    key = page.locator('.acp-sf-input[data-field="OPENAI_API_KEY"]')
    key.click()
    key.press_sequentially(SECRET)
    key.press("Shift+Enter")  # submits the form; must not also run the cell (a new, empty form)
    wait_value(
        page, "() => document.querySelector('.acp-sf-status').textContent", "submitted", "the form's status"
    )
    values = page.evaluate("() => [...document.querySelectorAll('.acp-sf-input')].map((i) => i.value)")
    assert values == ["", ""] and SECRET not in page.content()
    wait_value(
        page, "() => document.querySelector('.acp-secret-form').dataset.phase", "submitted", "the phase"
    )

    # the terminal: keys (shortcut keys among them) go to the kernel, which echoes them back
    page.locator(f"{TERM} .acp-term-screen").click()
    page.keyboard.type("abdd")
    page.keyboard.press("Escape")
    page.keyboard.type("m")
    page.keyboard.press("Shift+Enter")  # JupyterLab's "run cell": here, Enter for the terminal
    # the echo: ESC m is an escape sequence to xterm (not drawn); the kernel got every byte
    wait_value(page, f"async () => (await ({TERM_JS})()).lines?.[0] ?? null", "abdd", "the echo")
    until(
        lambda: probe(page)["typed"] == "abdd\x1bm\r",
        10,
        interval=0.2,
        message=lambda: f"the keys: {probe(page)}",
    )
    state = page.evaluate(TERM_JS)["state"]
    assert state["stdin"] and state["cols"] > 80 and state["rows"] == 24
    assert cell_count(page) == cells  # "a", "b", "d d" did not add or delete cells
    assert prompts_of(page) == prompts  # and Shift+Enter did not run the cell again
    kernel = probe(page)
    assert kernel["got"] == {"OPENAI_API_KEY": hashlib.sha256(SECRET.encode()).hexdigest()}
    assert kernel["typed"] == "abdd\x1bm\r" and kernel["phase"] == "submitted"
    assert kernel["sizes"] and kernel["sizes"][-1] == ["t1", state["cols"], state["rows"]]

    # saved: the form's widget state holds names, labels and status only
    page.evaluate("() => window.jupyterapp.shell.currentWidget.context.model.dirty = true")
    save(page)
    text = path.read_text()
    assert SECRET not in text
    forms = [m["state"] for m in json.loads(text)["metadata"]["widgets"][WIDGET_STATE]["state"].values()]
    forms = [s for s in forms if "fields" in s]
    assert [(s["phase"], s["status"], [f["name"] for f in s["fields"]]) for s in forms] == [
        ("submitted", "submitted", ["OPENAI_API_KEY", "ORG"])
    ]
    rec = lab_pages.recorder
    assert rec.external_requests() == [] and rec.errors == [] and rec.dialogs == []
