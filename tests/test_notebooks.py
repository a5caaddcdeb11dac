"""The tutorial notebooks run top to bottom headless (nbclient), and say what they should.

The demo agent runs at ``ACP_DEMO_SPEED=0``. No view ever renders here (no frontend), so the
quickstart's ``when_headless`` policy cell answers its permission requests from code (a person
clicks instead); no environment variable is needed.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from .support import running, until

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
NAMES = [
    "quickstart.ipynb",
    "protocol-tour.ipynb",
    "inspect-tool-results.ipynb",
    "replay-and-xray.ipynb",
    "agent-on-your-data.ipynb",
    "subagents.ipynb",
    "elicitation.ipynb",
]
WIDGET = "application/vnd.jupyter.widget-view+json"


def run(name: str, tmp_path: Path, monkeypatch) -> list[dict]:
    """Execute a notebook in ``tmp_path``; returns per code cell {source, stdout, stderr, errors, widgets}."""
    monkeypatch.setenv("ACP_DEMO_SPEED", "0")
    monkeypatch.delenv("ACP_AUTO_ANSWER", raising=False)
    monkeypatch.setenv("PYTHONPATH", str(NOTEBOOKS.parent))  # the kernel imports this checkout
    monkeypatch.setenv("PYDEVD_DISABLE_FILE_VALIDATION", "1")
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    client = nbclient.NotebookClient(
        nb, timeout=60, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    )
    client.execute()
    return [summarise(cell) for cell in nb.cells if cell.cell_type == "code"]


def summarise(cell) -> dict:
    streams = {"stdout": "", "stderr": ""}
    errors, widgets = [], 0
    for out in cell.outputs:
        if out.output_type == "stream":
            streams[out.name] += out.text
        elif out.output_type == "error":
            errors.append(f"{out.ename}: {out.evalue}")
        elif WIDGET in out.get("data", {}):
            widgets += 1
    return {"source": cell.source, **streams, "errors": errors, "widgets": widgets}


def cell_of(cells: list[dict], start: str) -> dict:
    """The first code cell whose source starts with ``start``."""
    return next(c for c in cells if c["source"].startswith(start))


@pytest.mark.parametrize("name", NAMES)
def test_notebooks_are_committed_without_outputs(name):
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    nbformat.validate(nb)
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, cell.source[:40]
    assert "widgets" not in nb.metadata


def test_quickstart(tmp_path, monkeypatch):
    cells = run("quickstart.ipynb", tmp_path, monkeypatch)
    assert [c for c in cells if c["errors"]] == []
    started = cell_of(cells, "%acp start")
    assert re.search(r"Started ACP Notebook demo agent .* session sess_demo_1 is acp", started["stdout"])
    assert started["widgets"] == 1
    policy = cell_of(cells, "from acp_notebook.policies import")["stdout"]
    assert policy.strip() == (
        "headless runs answer with when_headless(allow(kinds=['edit']) | allow(commands=['pytest']))"
    )
    turn = cell_of(cells, "%%acp --wait")
    assert turn["stdout"].strip() == "acp: turn ended (end_turn)" and turn["widgets"] == 1
    table = cell_of(cells, "for tc in")["stdout"]
    rows = [line.split()[:3] for line in table.splitlines()]
    assert rows[0] == ["call_read", "read", "completed"] and len(rows) == 7
    assert ["call_fetch", "fetch", "failed"] in rows
    decisions = cell_of(cells, "for decision in")["stdout"].splitlines()
    assert decisions[:2] == ["perm_1 policy allow_once", "perm_2 policy allow_once"]
    assert all("waiting for permission" not in c["stdout"] for c in cells), "the policy answered"
    term = cell_of(cells, "term = ")["stdout"].splitlines()
    assert term[0] == "command: pytest -q | exit status: {'exitCode': 0, 'signal': None}"
    assert term[1].startswith("first bytes: b'\\x1b[1m") and term[2].startswith("3 passed")
    assert cell_of(cells, "%%acp\n")["widgets"] == 1
    assert "sessions:\n  acp: sess_demo_1" in cell_of(cells, "%acp status")["stdout"]
    assert "acp: idle (end_turn)" in cell_of(cells, "%acp wait")["stdout"]
    assert cell_of(cells, "print(acp.turns")["stdout"].startswith("end_turn - Done.")
    assert "exit code 0" in cell_of(cells, "%acp stop")["stdout"]
    pid = int(re.search(r"pid (\d+)", started["stdout"]).group(1))
    until(lambda: not running(pid), 10, message=f"the agent process {pid} to end")


def test_protocol_tour(tmp_path, monkeypatch):
    cells = run("protocol-tour.ipynb", tmp_path, monkeypatch)
    assert [c for c in cells if c["errors"]] == []
    assert cells[0]["widgets"] == 1, "the tour shows a live view of the hand-fed state"
    created, omitted, nulled = (json.loads(c["stdout"]) for c in cells[1:4])
    assert created["title"] == "Reading configuration file" and created["status"] == "pending"
    assert omitted == {**created, "status": "in_progress"}, "an omitted field is unchanged"
    assert nulled == {**omitted, "locations": []}, "null clears"
    assert cells[4]["stdout"].strip() == "['[project]']", "arrays are replaced whole"
    assert cells[5]["stdout"].strip() == "['[project]', 'name = \"demo\"']", "chunks append"
    assert cells[6]["stdout"].strip() == "{'vendor': {'step': 1}, 'vendor2': True}", "_meta by top-level key"
    output, text = cells[7]["stdout"].splitlines()
    assert output == "b'collected 3 items\\r\\ntest_app.py ... PASSED \\xe2\\x9c\\x93\\r\\n'", (
        "snapshot replaced"
    )
    assert text == "['collected 3 items', 'test_app.py ... PASSED ✓']", "a split UTF-8 character is whole"
    assert cells[8]["stdout"].strip() == "{'exitCode': 0, 'signal': None} completed"
    pending, outcome, refused = cells[9]["stdout"].splitlines()
    assert pending == "pending: ['perm_1']"
    assert outcome == "outcome: {'outcome': 'cancelled'} | pending: []"
    assert refused.startswith("refused: permission perm_1 was already answered")
    assert cells[10]["stdout"].splitlines() == ["Reading configuration file failed", "['invalid-field']"]


def test_inspect_tool_results(tmp_path, monkeypatch):
    cells = run("inspect-tool-results.ipynb", tmp_path, monkeypatch)
    assert [c for c in cells if c["errors"]] == []
    assert "acp: turn ended (end_turn)" in cell_of(cells, "%%acp --wait")["stdout"]
    assert cell_of(cells, "from collections")["stdout"].split() == ["completed", "6", "failed", "1"]
    assert cell_of(cells, "rows = ")["stdout"].startswith("7 tool calls; all finished: True")
    table = cell_of(cells, "calls = acp.state.frame")["stdout"].splitlines()
    assert table[0].split() == ["id", "status", "updates", "exit_code", "decision", "decided_by"]
    rows = {line.split()[0]: line.split()[1:] for line in table[1:-1]}
    assert len(rows) == 7 and rows["call_test"][2:] == ["0", "allow_once", "handler"]
    assert rows["call_read"][2:] == ["<NA>", "NaN", "NaN"] and rows["call_fetch"][0] == "failed"
    assert table[-1] == "files touched: 6 | permissions asked: 2"
    asked = cell_of(cells, 'for row in acp.state.records("permissions")')["stdout"].splitlines()
    assert [line.split(" | ")[0] for line in asked] == [
        "call_edit allow_once by handler",
        "call_test allow_once by handler",
    ]
    files = cell_of(cells, "import os")["stdout"].split()
    assert files == [
        "assets/logo.png",
        "docs/new.md",
        "docs/old.md",
        "pyproject.toml",
        "src/app.py",
        "src/util.py",
    ]
    assert cell_of(cells, "for term in")["stdout"].startswith(
        "'pytest -q' exited with 0; last line: '3 passed"
    )
    failed = cell_of(cells, "for tc in acp.state")["stdout"]
    assert (
        failed.strip()
        == "call_fetch - Fetch https://docs.invalid/api - {'error': 'network disabled: offline demo agent'}"
    )
    assert cell_of(cells, "changes = ")["stdout"].strip() == (
        "end_turn | tool_call changes: True | terminal changes: True"
    )


def test_replay_and_xray(tmp_path, monkeypatch):
    cells = run("replay-and-xray.ipynb", tmp_path, monkeypatch)
    assert [c for c in cells if c["errors"]] == []
    out = [c["stdout"].strip().splitlines() for c in cells]
    assert out[0] == ["75 entries; ['python', '-m', 'acp_notebook.demo_agent', '--speed', '0']"]
    assert cells[1]["widgets"] == 1 and cells[-1]["widgets"] == 1, "the scrubber + X-ray views"
    assert out[2] == ["#20 call_read known before: False", "Read pyproject.toml | read | pending"], "upsert"
    assert out[3] == ["#21 ['status']", "Read pyproject.toml | read | in_progress"], "omitted: unchanged"
    assert out[4] == ["before: {'cancel': {}}", "#51 sends capabilities: null -> None"], "null clears"
    assert out[5] == [
        "content before the chunks: 0",
        "after #54..#56: 3 items; the last: pyproject.toml:6: # TODO: pin the test dependencies",
        "#55 chunk _meta: {'acpNotebookDemo': {'match': 2}} | the call's _meta: None",
        "a later snapshot replaces them: 1",
    ], "chunks append, a chunk's _meta is its own, a snapshot replaces"
    assert out[6] == [
        "#46 ends with b'\\xe2\\x9c' and #47 starts with b'\\x93'",
        "369 bytes kept; '✓' whole: True | replacement characters: 0",
    ], "split UTF-8"
    assert out[7] == [
        "#26 'Apply edits to 4 files?' pending: True options: ['allow-once', 'allow-always', 'reject-once']",
        "#27 pending: False outcome: {'outcome': 'selected', 'optionId': 'allow-once'}",
    ], "permission request and answer"
    assert out[8] == [
        "before the cancel: running {'call_slow': 'in_progress'}",
        "at the end: idle cancelled {'call_slow': 'cancelled'}",
        "the doctor: []",
    ], "cancel"
    assert out[9][0].split() == ["in", "tool_call_update", "17"] and len(out[9]) == 6, "the traffic table"
    assert out[10] == [
        "v1 (Claude): ['tool_call', 'tool_call_update']",
        "v2 (demo):   ['tool_call_content_chunk', 'tool_call_update']",
        "{'toolu_a_read': ('read', 'completed'), 'toolu_a_edit': ('edit', 'completed'), "
        "'toolu_a_bash': ('execute', 'completed')}",
        "doctor: [] []",
    ], "v1 beside v2"


def test_agent_on_your_data(tmp_path, monkeypatch):
    cells = run("agent-on-your-data.ipynb", tmp_path, monkeypatch)
    assert [c for c in cells if c["errors"]] == []
    out = [c["stdout"].strip().splitlines() for c in cells]
    assert out[1] == ["http True"] and cells[1]["widgets"] == 1, "the server over HTTP, the view"
    assert out[3] == [
        "end_turn",
        "`sales` has 4 rows and 3 columns. I computed its column means and plotted it: "
        "{'day': 2.5, 'units': 15.0, 'price': 2.75}",
    ]
    assert [line.split()[0] for line in out[4]] == ["list_variables", "describe_variable", "run_code"]
    assert out[4][2].endswith("approved by agent request (policy)  error=None")
    means = "{'day': 2.5, 'units': 15.0, 'price': 2.75}"
    assert out[5] == [f"{means} | 1 figure | {means}"], "the card's note, and the code ran in the namespace"
    assert out[6] == ["You shared nothing; there is no table among them to look at.", "['list_variables']"]


def test_subagents(tmp_path, monkeypatch):
    cells = run("subagents.ipynb", tmp_path, monkeypatch)
    assert [c for c in cells if c["errors"]] == []
    out = [c["stdout"].strip().splitlines() for c in cells]
    assert out[0] == [
        "turns: [('user', 'human', 'end_turn'), ('agent', 'task-notification', 'end_turn')]",
        "child 'Create child.txt' (general-purpose): idle; cancel allowed: True",
        "child 'Write notes.txt' (general-purpose): idle; cancel allowed: True",
    ], "the real Claude's tree, and its task notification as a turn of the agent's"
    assert cells[1]["widgets"] == 1 and cells[6]["widgets"] == 1, "the replay's X-ray view, the live view"
    assert [line.split() for line in out[2][1:]] == [
        ["parent", "49", "0", "4", "3"],
        ["Create", "child.txt", "14", "1", "1", "1"],
        ["Write", "notes.txt", "14", "1", "1", "1"],
    ], "each session's own items: none of a child's in the parent"
    assert out[3] == [
        "parent, outgoing: '[child] Create the file.' -> recipient's view toolu_sub_fg",
        "child, incoming:  '[child] Create the file.' <- sender's view toolu_sub_fg",
    ], "one message, a view on each side, linked"
    assert out[4] == [
        "'Create child.txt' asked at #40: root requires_action, background []",
        "'Write notes.txt' asked at #78: root idle, background ['subagent']",
        "'touch child.txt' -> allow-once by the handler",
        "'touch notes.txt' -> allow-once by the handler",
    ], "asked in place, the background child after the turn ended"
    assert out[5] == [
        "announced: Review | Reads the code | running | cancel: True",
        "omitted keeps, null clears: Review | None",
        "state null: unknown",
        "_meta by key: {'a': 1, 'c': 3}",
        "capabilities null: cancel allowed: False",
        "cwd unset: /work/project | additionalDirectories []: []",
    ], "the patch rules"
    assert out[7] == [
        "the turn ended: end_turn",
        "'Fix average()' asked 'Let the reviewer edit src/app.py?': root requires_action, background []",
        "'Update CHANGELOG.md' asked 'Let the writer edit CHANGELOG.md?': root idle, background ['subagent']",
        "turns: [('user', 'end_turn'), ('agent', 'end_turn')]",
        "the agent's own turn said: The changelog writer finished: "
        "Added the `average()` fix to CHANGELOG.md.",
    ], "the live demo: in place, in the background, and the agent's own turn"
    assert out[8] == [
        "root: 0 tool calls of its own",
        "  Fix average() [idle] cwd=. cancel=True: call_review_read completed, call_review_edit completed",
        "    Lint src/ [idle] cwd=src cancel=False: call_lint completed",
        "  Update CHANGELOG.md [idle] cwd=. cancel=True: call_changelog_read completed, "
        "call_changelog_edit completed",
    ], "the tree, nested"
    assert out[9] == [
        "the linter: subagent 'sess_demo_1.reviewer.lint' does not advertise capabilities.cancel"
    ]
    assert out[10] == [
        "'Fix average()' asks 'Let the reviewer edit src/app.py?'; cancel allowed: True",
        "its request: {'outcome': 'cancelled'} | the parent's turn: end_turn",
        "the reviewer: cancelled {'call_review_read': 'completed', 'call_review_edit': 'cancelled'}",
        "turns: [('user', 'end_turn'), ('agent', 'end_turn'), ('user', 'end_turn'), ('agent', 'end_turn')]",
    ], "cancel where allowed: the child stops, the parent goes on"
    rows = [line.rsplit(maxsplit=2)[-2:] for line in out[11]]
    assert len(rows) == 9 and ["call_review_edit", "cancelled"] in rows and ["call_lint", "completed"] in rows


def test_elicitation(tmp_path, monkeypatch):
    """Headless, the click section's questions are cancelled by its ``when_headless`` policy; the
    code section's handler fills the release form (defaults fill the rest) and declines the rest; the
    request-scoped question at ``session/new`` is answered by the agent's handler."""
    cells = run("elicitation.ipynb", tmp_path, monkeypatch)
    assert [c for c in cells if c["errors"]] == []
    clicked = cell_of(cells, "%%acp --wait\nFill in a form for the release.")
    assert clicked["widgets"] == 1 and "turn ended (end_turn)" in clicked["stdout"]
    table = cell_of(cells, "for row in acp.state.records")["stdout"].splitlines()
    assert [line.split()[:4] for line in table if "How should" in line] == [
        ["elic_1", "form", "cancelled", "policy"],
        ["elic_5", "form", "accepted", "handler"],
    ]
    assert [line.split()[1:4] for line in table if "Sign in" in line] == [
        ["url", "cancelled", "policy"],
        ["url", "declined", "handler"],
    ]
    said = cell_of(cells, "print(next(m.text")["stdout"]
    assert said.startswith("Release **autumn** 1.2.3 with the aggressive strategy on linux, macos.")
    assert "Reviewers: Ada Lovelace." in said
    values = cell_of(cells, "release = next(")["stdout"]
    assert values.startswith("autumn 1.2.3 ['linux', 'macos'] 2\n")  # retries: the form's default
    assert "a version of 1.2 would be refused: {'version': " in values
    before = cell_of(cells, "import os")["stdout"]
    assert before.startswith("handler accept {'profile': 'quick', 'verbose': False}\n")
