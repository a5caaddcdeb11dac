"""The extension in a real ipykernel (jupyter_client): background turns while other cells run, a
click reaching an awaiting ``%%acp --wait`` cell, interrupt → ``session/cancel``, the blocking
``prompt_sync``, and no agent process left after a kernel shutdown, restart or SIGKILL.

Clicks are sent as the browser sends them: a ``comm_msg`` to the turn view's comm carrying the
anywidget custom message ``{"type": "select", "key": ..., "option": ...}``.
"""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .support import running, unpack, until

jupyter_client = pytest.importorskip("jupyter_client")

ROOT = Path(__file__).resolve().parents[1]
DEMO = "acp_notebook.demo_agent"
WIDGET = "application/vnd.jupyter.widget-view+json"


def agent_pids(parent: int) -> list[int]:
    """Live demo-agent processes whose parent is ``parent``."""
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if int(stat[1]) == parent and stat[0] != "Z" and DEMO in cmdline:
            pids.append(int(entry))
    return pids


def survivors(pids: list[int]) -> list[int]:
    """The pids still running."""
    return [p for p in pids if running(p)]


def until_gone(pids: list[int], why: str, timeout: float = 10.0) -> None:
    """Wait until none of ``pids`` runs; AssertionError naming ``why`` and the survivors."""
    until(lambda: not survivors(pids), timeout, message=lambda: f"{why} (still running: {survivors(pids)})")


class Run:
    """What one execute request produced on iopub."""

    def __init__(self, msg_id: str) -> None:
        self.msg_id = msg_id
        self.messages: list[dict] = []
        self.busy = False
        self.done = False
        self.comm_during = 0  # comm messages (view updates) sent while this cell was executing

    @property
    def stdout(self) -> str:
        return "".join(m["content"]["text"] for m in self.messages if self._stream(m, "stdout"))

    @property
    def stderr(self) -> str:
        return "".join(m["content"]["text"] for m in self.messages if self._stream(m, "stderr"))

    @property
    def errors(self) -> list[dict]:
        return [m["content"] for m in self.messages if m["msg_type"] == "error"]

    @property
    def widgets(self) -> list[str]:
        """Model ids of the widgets the cell displayed, in order."""
        out = []
        for m in self.messages:
            if m["msg_type"] in ("display_data", "update_display_data") and WIDGET in m["content"]["data"]:
                out.append(m["content"]["data"][WIDGET]["model_id"])
        return out

    @staticmethod
    def _stream(m: dict, name: str) -> bool:
        return m["msg_type"] == "stream" and m["content"]["name"] == name


class Kernel:
    """A python3 kernel with the extension loaded and the demo agent at full speed."""

    def __init__(self, tmp: Path) -> None:
        env = {**os.environ, "ACP_DEMO_SPEED": "0", "PYDEVD_DISABLE_FILE_VALIDATION": "1"}
        env.pop("JPY_SESSION_NAME", None)
        self.km = jupyter_client.KernelManager(kernel_name="python3")
        self.km.start_kernel(env=env, cwd=str(tmp))
        self.kc = self.km.client()
        self.kc.start_channels()
        self.kc.wait_for_ready(timeout=60)
        self.runs: dict[str, Run] = {}
        self.comm_msgs: list[dict] = []
        self.ok("%load_ext acp_notebook")

    @property
    def pid(self) -> int:
        return self.km.provisioner.process.pid

    def submit(self, code: str) -> Run:
        """Send a cell without waiting for it."""
        run = Run(self.kc.execute(code))
        self.runs[run.msg_id] = run
        return run

    def pump(self, timeout: float = 0.2) -> None:
        """Read iopub messages for up to ``timeout`` seconds and file them by cell."""
        try:
            msg = self.kc.get_iopub_msg(timeout=timeout)
        except queue.Empty:
            return
        while msg is not None:
            self._file(msg)
            try:
                msg = self.kc.get_iopub_msg(timeout=0)
            except queue.Empty:
                msg = None

    def _file(self, msg: dict) -> None:
        if msg["msg_type"] == "comm_msg":
            self.comm_msgs.append(msg)
            for executing in self.runs.values():
                executing.comm_during += executing.busy and not executing.done
        run = self.runs.get(msg["parent_header"].get("msg_id"))
        if run is None:
            return
        if msg["msg_type"] == "status":
            run.busy = True
            run.done = msg["content"]["execution_state"] == "idle"
        else:
            run.messages.append(msg)

    def until(self, check, what: str, timeout: float = 30.0) -> None:
        """Pump iopub until ``check()`` is true; AssertionError with every cell's output after ``timeout``."""

        def pumped():
            if check():
                return True
            self.pump()  # blocks up to 0.2 s for the next message
            return check()

        until(pumped, timeout, interval=0, message=lambda: f"{what}; outputs: {self._outputs()}")

    def _outputs(self) -> dict:
        return {r.msg_id[:8]: (r.stdout, r.stderr, r.errors) for r in self.runs.values()}

    def wait(self, run: Run, timeout: float = 30.0) -> Run:
        self.until(lambda: run.done, "the cell to finish", timeout)
        return run

    def execute(self, code: str, timeout: float = 30.0) -> Run:
        return self.wait(self.submit(code), timeout)

    def ok(self, code: str, timeout: float = 30.0) -> Run:
        """Execute and check the cell raised nothing."""
        run = self.execute(code, timeout)
        assert not run.errors, f"{code!r} failed: {run.errors}\n{run.stderr}"
        return run

    def value(self, expr: str):
        """Evaluate ``expr`` in the kernel (printed with repr, read back with eval)."""
        return eval(self.ok(f"print(repr({expr}))").stdout.strip())

    def click(self, model_id: str, key: str, option: str) -> None:
        """Press a permission button as the browser would."""
        content = {"type": "select", "key": key, "option": option}
        data = {"method": "custom", "content": content}
        msg = self.kc.session.msg("comm_msg", {"comm_id": model_id, "data": data})
        self.kc.shell_channel.send(msg)

    def shown(self, model_id: str, prefix: str) -> str | None:
        """The first entry key starting with ``prefix`` that view ``model_id`` sent to the browser."""
        for msg in self.comm_msgs:
            if msg["content"].get("comm_id") != model_id:
                continue
            data = msg["content"].get("data", {})
            patch = unpack(data.get("content") or {}, msg.get("buffers") or [])[0]
            snapshot = (data.get("state") or {}).get("snapshot") or {}
            for key in [*(patch.get("entries") or {}), *(snapshot.get("entries") or {})]:
                if key.startswith(prefix):
                    return key
        return None

    def close(self) -> None:
        self.kc.stop_channels()
        if self.km.is_alive():
            self.km.shutdown_kernel(now=True)


@pytest.fixture
def kernel(tmp_path):
    k = Kernel(tmp_path)
    try:
        yield k
    finally:
        k.close()


def start(kernel: Kernel, scenario: str = "default", speed: float = 0, name: str = "acp") -> tuple[int, str]:
    """``%acp start`` the demo agent; returns its pid and the model id of the whole session's view
    (``%acp view``: the start cell shows the header and one line per turn, no entries)."""
    argv = f"{{sys.executable}} -m {DEMO} --scenario {scenario} --speed {speed}"
    run = kernel.ok(f"import sys\n%acp start --name {name} {argv}")
    assert f"is {name}." in run.stdout and len(run.widgets) == 1
    whole = kernel.ok(f"%acp view --name {name}")
    assert len(whole.widgets) == 1
    return kernel.value(f"__import__('acp_notebook').agent_of({name}).process.pid"), whole.widgets[0]


# -- background turns and clicks --------------------------------------------------------------------
def test_a_turn_runs_in_the_background_while_other_cells_run(kernel):
    start(kernel, "slow")
    began = time.monotonic()
    cell = kernel.ok("%%acp\nrun something slow")
    assert time.monotonic() - began < 5, "the %%acp cell should return at once"
    assert len(cell.widgets) == 1, "the cell shows the view of this turn"
    other = kernel.ok(  # this cell awaits (the shared helper, imported in the kernel) more output
        f"import sys; sys.path.insert(0, {str(ROOT)!r})\n"
        "from tests.support import until_async\n"
        "def out(): return sum(len(t.output) for t in acp.state.terminals.values())\n"
        "before = out()\n"
        "await until_async(lambda: out() > before, 10, message='more output from the turn')\n"
        "print(acp.running, out() > before)"
    )
    assert other.stdout.split() == ["True", "True"], "the turn kept producing output during the other cell"
    queued = kernel.ok("%%acp\nand then this")
    assert "queued" in queued.stdout
    cancelled = kernel.ok("%acp cancel")
    assert "cancelled the running turn; dropped 1 queued prompt(s)" in cancelled.stdout
    done = kernel.ok("%acp wait --timeout 20")
    assert "idle (cancelled)" in done.stdout
    assert kernel.value("len(acp.turns)") == 1, "the queued prompt was never sent"


def test_a_click_reaches_an_awaiting_wait_cell(kernel):
    start(kernel, "permission")
    cell = kernel.submit("%%acp --wait\nDelete the build directory")
    kernel.until(lambda: cell.widgets, "the turn's view")
    model_id = cell.widgets[0]
    kernel.until(lambda: kernel.shown(model_id, "permission:"), "the permission request in the view")
    assert not cell.done, "the cell is still waiting for the turn"
    key = kernel.shown(model_id, "permission:").split(":", 1)[1]
    kernel.click(model_id, key, "allow-once")
    kernel.wait(cell)
    assert not cell.errors, cell.errors
    assert "turn ended (end_turn)" in cell.stdout
    text = kernel.value("[m.text for m in acp.state.messages.values() if m.role == 'agent'][-1]")
    assert text == "Chosen: allow-once"


# -- interrupts ----------------------------------------------------------------------------------------
def test_interrupting_a_wait_cell_cancels_the_turn_and_keeps_the_agent(kernel):
    pid, view = start(kernel)
    cell = kernel.submit("%%acp --wait\nFix the failing test")
    kernel.until(lambda: kernel.shown(view, "permission:"), "a permission request")
    kernel.km.interrupt_kernel()
    kernel.wait(cell)
    assert [e["ename"] for e in cell.errors] == ["TurnInterrupted"], cell.errors
    assert len(cell.errors[0]["traceback"]) == 1, "one line, no traceback wall"
    outcomes = kernel.value("[p.outcome for p in acp.state.permissions.values()]")
    assert outcomes == [{"outcome": "cancelled"}]
    assert kernel.value("acp.state.stop_reason") == "cancelled"
    assert running(pid) and kernel.value("__import__('acp_notebook').agent_of(acp).returncode") is None
    kernel.ok("acp.permission_handler = lambda request: 'allow-once'")
    again = kernel.ok("%%acp --wait\nagain")
    assert "turn ended (end_turn)" in again.stdout, "the agent is still usable"


def test_interrupting_a_plain_await_cancels_the_turn(kernel):
    _, view = start(kernel)
    cell = kernel.submit("await acp.prompt('Fix the failing test')")
    kernel.until(lambda: kernel.shown(view, "permission:"), "a permission request")
    kernel.km.interrupt_kernel()
    kernel.wait(cell)
    assert [e["ename"] for e in cell.errors] == ["CancelledError"]
    assert "cancelling the turn of acp" in cell.stderr
    kernel.ok("%acp wait --timeout 10")
    assert kernel.value("acp.state.stop_reason") == "cancelled"
    assert kernel.value("[p.outcome['outcome'] for p in acp.state.permissions.values()]") == ["cancelled"]


# -- the blocking path ------------------------------------------------------------------------------------
def test_prompt_sync_answers_permissions_by_policy_and_keeps_views_live(kernel):
    start(kernel, speed=0.2)
    blocked = kernel.execute("print(acp.prompt_sync('Fix the failing test'))", 60)
    assert blocked.comm_during > 3, "the view kept sending updates while the cell blocked"
    assert blocked.stdout.strip() == "cancelled", "no handler, no policy: the turn is cancelled"
    assert "cannot receive a click" in blocked.stderr
    allowed = kernel.ok("print(acp.prompt_sync('Fix it', permissions='allow-once'))", timeout=60)
    assert allowed.stdout.strip() == "end_turn"
    assert kernel.value("[p.selected_option for p in acp.state.permissions.values()][-2:]") == [
        "allow-once",
        "allow-once",
    ]
    rejected = kernel.ok("print(acp.prompt_sync('again', permissions='reject'))", timeout=60)
    assert rejected.stdout.strip() == "end_turn"
    assert kernel.value("[p.selected_option for p in acp.state.permissions.values()][-2:]") == [
        "reject-once",
        "reject-once",
    ]


def test_interrupting_prompt_sync_cancels_the_turn(kernel):
    pid, view = start(kernel, "slow")
    cell = kernel.submit("acp.prompt_sync('slow')")
    kernel.until(lambda: kernel.shown(view, "tool_call:"), "the slow command to start")
    kernel.km.interrupt_kernel()
    kernel.wait(cell)
    assert [e["ename"] for e in cell.errors] == ["TurnInterrupted"], cell.errors
    assert kernel.value("acp.state.stop_reason") == "cancelled"
    assert running(pid)


# -- processes --------------------------------------------------------------------------------------------
def test_the_agent_runs_in_its_own_process_group(kernel):
    pid, _ = start(kernel)
    assert os.getpgid(pid) == pid != os.getpgid(kernel.pid)


def test_kernel_shutdown_ends_its_agents(kernel):
    start(kernel, name="one")
    start(kernel, name="two")
    pids = agent_pids(kernel.pid)
    assert len(pids) == 2
    kernel.kc.stop_channels()
    kernel.km.shutdown_kernel(now=False)
    until_gone(pids, "the kernel's agents to end")


def test_kernel_restart_ends_its_agents(kernel):
    start(kernel)
    pids = agent_pids(kernel.pid)
    assert pids
    kernel.km.restart_kernel(now=False)
    until_gone(pids, "the kernel's agents to end")


def test_sigkill_of_the_kernel_ends_its_agents(kernel):
    start(kernel, "slow")
    kernel.ok("%%acp\nkeep busy")
    pids = agent_pids(kernel.pid)
    assert pids
    os.kill(kernel.pid, signal.SIGKILL)
    until_gone(pids, "PR_SET_PDEATHSIG should take the agents down with the kernel")


def test_the_plain_blocking_form_works_inside_the_kernel_loop(kernel):
    run = kernel.ok(
        f"import sys\nx = %acp start --name nested --no-view {{sys.executable}} -m {DEMO} --scenario echo\n"
        "y = %acp status --name nested\n"
        "print(type(nested).__name__, x, y)"
    )
    assert "is nested." in run.stdout and run.stdout.strip().endswith("Session None None")
    done = kernel.ok("print(nested.prompt_sync('hi'))")
    assert done.stdout.strip() == "end_turn"


def test_terminate_all_ends_each_agent_and_its_process_group(tmp_path):
    sleeper_file = tmp_path / "sleeper"
    command = ["sh", "-c", f"sleep 300 & echo $! > {sleeper_file}; exec {sys.executable} -m {DEMO}"]
    script = tmp_path / "leave.py"
    script.write_text(
        "import os\n"
        "from acp_notebook import start_agent_sync\n"
        "from acp_notebook.client.registry import registry\n"
        f"agent = start_agent_sync({command!r})\n"
        "print(agent.process.pid, flush=True)\n"
        "registry().terminate_all()\n"
        "print(agent.process.pid in registry().live_pids(), flush=True)\n"
        "os._exit(0)  # no atexit: terminate_all alone must have done it\n"
    )
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60)
    pid, still = out.stdout.split()
    assert still == "False" and not running(int(pid))
    sleeper = int(sleeper_file.read_text())
    until_gone([sleeper], "the agent's own children die with its process group", 5)
