"""Fixtures for the real-JupyterLab browser tests: a lab server, Chromium pages, diagnostics.

- ``lab_server``: ``jupyter lab`` on 127.0.0.1 (free port, random token) rooted in a tmp dir, with
  its own settings/workspaces/runtime dirs, news and update checks off, and an ``overrides.json``
  turning on ``saveState`` of the widget manager (so saved notebooks carry widget state). At the
  end it is shut down through ``/api/shutdown`` and every process it started (kernels, the agents
  they spawned) is checked and, if still alive, killed by PID.
- ``lab_browser``: Debian's Chromium through Playwright.
- ``lab_pages``: a factory of pages that record requests, console messages, page errors and
  dialogs. When a test fails, the console, the page errors, the notebook outputs and the server
  log tail are appended to the report and a screenshot goes to ``test-artifacts/``.
- ``wait_value(page, js, want, what)``: the bounded wait on an element's state that tests use
  before asserting on it (polled in the page; on timeout it fails showing the last value).
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from ..support import until

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-dev-shm-usage",
]
LOCAL_HOSTS = {"127.0.0.1", "localhost", "::1", "[::1]"}

_FAILURE_HOOKS = pytest.StashKey[list]()


# -- failure reports --------------------------------------------------------------------------------
@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    """On a failure, let the fixtures add their diagnostics (console, server log...) to the report."""
    report = yield
    if report.failed and report.when in ("setup", "call"):
        for name, dump in item.stash.get(_FAILURE_HOOKS, []):
            try:
                text = dump()
            except Exception as exc:  # diagnostics must never hide the real failure
                text = f"(could not collect: {exc!r})"
            if text:
                report.sections.append((name, text))
    return report


def on_failure(request: pytest.FixtureRequest, name: str, dump: Callable[[], str]) -> None:
    """Register ``dump()`` to be appended to the report (section ``name``) if the test fails."""
    request.node.stash.setdefault(_FAILURE_HOOKS, []).append((name, dump))


# -- processes --------------------------------------------------------------------------------------
def _proc_table() -> dict[int, tuple[int, str]]:
    """pid -> (ppid, command line) for every process we can read in /proc."""
    table = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            cmdline = (
                Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            )
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        table[int(entry)] = (ppid, cmdline.strip())
    return table


def descendants(pid: int) -> dict[int, str]:
    """Every live descendant of ``pid``: pid -> command line."""
    table = _proc_table()
    children: dict[int, list[int]] = {}
    for child, (ppid, _) in table.items():
        children.setdefault(ppid, []).append(child)
    out, todo = {}, [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out[child] = table[child][1]
            todo.append(child)
    return out


def cmdline_of(pid: int) -> str | None:
    """The command line of a live process, or None once it is gone (zombies count as gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        if state == "Z":
            return None
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# -- the server -------------------------------------------------------------------------------------
class LabServer:
    """A running ``jupyter lab``: its URL, token, root dir and log, plus a few REST helpers."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.root = tmp / "root"
        self.log_path = tmp / "server.log"
        self.token = secrets.token_hex(24)
        self.port = 0
        self.proc: subprocess.Popen | None = None
        self.seen: dict[int, str] = {}  # every descendant ever seen: pid -> command line

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def notebook7_url(self, path: str) -> str:
        """The URL opening ``path`` in Notebook 7 (served by the same server)."""
        return f"{self.url}/notebooks/{path}?token={self.token}"

    def lab_url(self, path: str, reset: bool = True) -> str:
        """The URL opening ``path`` (relative to the root) in JupyterLab."""
        return f"{self.url}/lab/tree/{path}?{'reset&' if reset else ''}token={self.token}"

    def start(self) -> None:
        for name in ("root", "app-settings", "user-settings", "workspaces", "runtime", "config", "data"):
            (self.tmp / name).mkdir(exist_ok=True)
        overrides = {
            "@jupyter-widgets/jupyterlab-manager:plugin": {"saveState": True},
            "@jupyterlab/apputils-extension:notification": {"checkForUpdates": False, "fetchNews": "false"},
        }
        (self.tmp / "app-settings" / "overrides.json").write_text(json.dumps(overrides, indent=2))
        expose = json.dumps({"JupyterNotebookApp": {"expose_app_in_browser": True}})  # Notebook 7's
        (self.tmp / "config" / "jupyter_server_config.json").write_text(expose)
        env = {
            **os.environ,
            "JUPYTERLAB_SETTINGS_DIR": str(self.tmp / "user-settings"),
            "JUPYTERLAB_WORKSPACES_DIR": str(self.tmp / "workspaces"),
            "JUPYTER_RUNTIME_DIR": str(self.tmp / "runtime"),
            "JUPYTER_CONFIG_DIR": str(self.tmp / "config"),
            "JUPYTER_DATA_DIR": str(self.tmp / "data"),
            "IPYTHONDIR": str(self.tmp / "ipython"),
            "PYDEVD_DISABLE_FILE_VALIDATION": "1",
        }
        env.pop("JPY_SESSION_NAME", None)
        for attempt in range(3):
            self.port = _free_port()
            args = [
                sys.executable, "-m", "jupyterlab",
                "--no-browser", "--ip=127.0.0.1", f"--port={self.port}", "--port-retries=0",
                f"--IdentityProvider.token={self.token}", "--allow-root",
                f"--ServerApp.root_dir={self.root}",
                "--LabApp.expose_app_in_browser=True",
                "--LabApp.news_url=None",
                "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
                f"--LabApp.workspaces_dir={self.tmp / 'workspaces'}",
                f"--LabApp.user_settings_dir={self.tmp / 'user-settings'}",
                f"--LabApp.app_settings_dir={self.tmp / 'app-settings'}",
            ]  # fmt: skip
            with open(self.log_path, "ab") as log:
                log.write(f"\n=== start attempt {attempt + 1}: port {self.port}\n".encode())
                self.proc = subprocess.Popen(
                    args, cwd=self.root, env=env, stdin=subprocess.DEVNULL, stdout=log,
                    stderr=subprocess.STDOUT, start_new_session=True,
                )  # fmt: skip
            if self._wait_ready(60):
                return
            self._stop_process()
        raise RuntimeError(f"jupyter lab did not start:\n{self.log_tail()}")

    def _wait_ready(self, timeout: float) -> bool:
        """Wait until the server answers ``/api/status`` (True) or its process exits (False)."""

        def answered_or_exited() -> str | None:
            if self.proc.poll() is not None:
                return "exited"
            with contextlib.suppress(OSError, urllib.error.URLError):
                if self.api("GET", "/api/status") is not None:
                    return "ready"
            return None

        try:
            return until(answered_or_exited, timeout, interval=0.2) == "ready"
        except AssertionError:
            return False

    def api(self, method: str, path: str, body: object = None, timeout: float = 10) -> object:
        """A REST call with the token; the decoded JSON answer (None for an empty body)."""
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.url + path, data=data, method=method)
        req.add_header("Authorization", f"token {self.token}")
        if data is not None:
            req.add_header("Content-Type", "application/json")
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            raw = resp.read()
        return json.loads(raw) if raw else None

    def track(self) -> dict[int, str]:
        """Record the server's current descendants (kernels, agents); returns them."""
        if self.proc is not None and self.proc.poll() is None:
            now = descendants(self.proc.pid)
            self.seen.update(now)
            return now
        return {}

    @staticmethod
    def alive(pid: int, cmd: str) -> bool:
        """Is process ``pid`` still running command ``cmd`` (not a recycled pid)?"""
        return cmdline_of(pid) == cmd

    def sessions(self) -> list[dict]:
        return self.api("GET", "/api/sessions") or []

    def shutdown_kernel_of(self, path: str) -> list[str]:
        """Shut the session (and kernel) of notebook ``path`` down; returns the kernel ids."""
        self.track()
        ids = []
        for sess in self.sessions():
            if sess.get("path") == path:
                self.api("DELETE", f"/api/sessions/{sess['id']}")
                ids.append(sess["kernel"]["id"])
        return ids

    def log_tail(self, lines: int = 80) -> str:
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return "(no server log)"
        return "\n".join(text.splitlines()[-lines:])

    def _stop_process(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        for sig, wait in ((signal.SIGTERM, 10), (signal.SIGKILL, 5)):
            with contextlib.suppress(ProcessLookupError):
                self.proc.send_signal(sig)
            try:
                self.proc.wait(wait)
                return
            except subprocess.TimeoutExpired:
                continue

    def stop(self) -> list[str]:
        """Shut the server down (kernels first), then kill any process it left; returns leftovers."""
        self.track()
        if self.proc is not None and self.proc.poll() is None:
            with contextlib.suppress(OSError, urllib.error.URLError, ValueError):
                self.api("POST", "/api/shutdown", timeout=5)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self._stop_process()
        # kernels and agents exit on their own once their parent is gone; give them 5 s in all
        with contextlib.suppress(AssertionError):
            until(lambda: not self.still_alive(), 5, interval=0.1)
        leftovers = []
        for pid, cmd in self.still_alive().items():
            leftovers.append(f"{pid}: {cmd}")
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        return leftovers

    def still_alive(self) -> dict[int, str]:
        """The processes ever seen that still run their command line (same command: not a recycled pid)."""
        return {pid: cmd for pid, cmd in self.seen.items() if self.alive(pid, cmd)}


@pytest.fixture(scope="module")
def lab_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabServer]:
    """A JupyterLab server for the module; stopped (with its kernels) at the end."""
    server = LabServer(tmp_path_factory.mktemp("lab"))
    try:
        server.start()
        yield server
    finally:
        leftovers = server.stop()
        if leftovers:
            pytest.fail("processes outlived the lab server (now killed):\n  " + "\n  ".join(leftovers))


@pytest.fixture
def lab_log(request: pytest.FixtureRequest, lab_server: LabServer) -> LabServer:
    """The server, with its log tail added to the report of a failing test."""
    on_failure(request, "jupyter server log (tail)", lambda: lab_server.log_tail(120))
    return lab_server


def write_code_notebook(path: Path, sources: list[str]) -> Path:
    """A notebook of code cells ``sources`` on the python3 kernel, written to ``path``."""
    import nbformat

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(src) for src in sources])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, path)
    return path


def unavailable(reason: str) -> None:
    """Skip on a developer machine without the browser or the bundle; in CI (CI=true) fail."""
    if os.environ.get("CI"):
        pytest.fail(f"{reason} — CI must install it (see .ci/run)", pytrace=False)
    pytest.skip(reason, allow_module_level=True)


# -- waiting on the page ---------------------------------------------------------------------------
_WAIT_VALUE_JS = """async ({arg, want}) => {
  const eq = (x, y) => x === y || (x !== null && y !== null && typeof x === 'object' && typeof y === 'object'
    && Array.isArray(x) === Array.isArray(y) && Object.keys(x).length === Object.keys(y).length
    && Object.keys(x).every((k) => eq(x[k], y[k])));
  return eq(await (__FN__)(arg), want);
}"""


def wait_value(page, js: str, want: object, what: str, arg: object = None, timeout: float = 30_000) -> None:
    """Wait until the JS function ``js(arg)`` (may be async) returns ``want`` (deep equality); else fail.

    Polled from here with ``page.evaluate``, which awaits a returned promise: Playwright's
    ``wait_for_function`` does not, and would take the promise itself as a truthy answer."""
    probe = _WAIT_VALUE_JS.replace("__FN__", js)
    deadline = time.monotonic() + timeout / 1000
    last: object = None
    while True:
        try:
            if page.evaluate(probe, {"arg": arg, "want": want}):
                return
            last = page.evaluate(js, arg)
        except Exception as exc:  # the page went away, or the function threw: show that
            last = f"(cannot read: {exc!r})"
        if time.monotonic() >= deadline:
            pytest.fail(f"timed out ({timeout / 1000:g}s) waiting for {what}\n got: {last!r}\nwant: {want!r}")
        page.wait_for_timeout(100)


# -- the browser ------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def lab_browser():
    """Debian's Chromium, headless."""
    sync_api = pytest.importorskip("playwright.sync_api")
    if not Path(CHROMIUM).exists():
        unavailable(f"Chromium not installed at {CHROMIUM}")
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


class Recorder:
    """What every page of a test did: requests, console, page errors, dialogs."""

    def __init__(self) -> None:
        self.requests: list[str] = []
        self.console: list[str] = []
        self.errors: list[str] = []
        self.dialogs: list[str] = []
        self.pages: list = []
        self.probes: list[tuple[str, Callable[[], object]]] = []  # (label, fn) run on failure

    def attach(self, page, label: str) -> None:
        self.pages.append(page)
        page.on("request", lambda r: self.requests.append(r.url))
        page.on("console", lambda m: self.console.append(f"[{label}] {m.type}: {m.text}"))
        page.on("pageerror", lambda e: self.errors.append(f"[{label}] {e}"))
        page.on("dialog", lambda d: self._dialog(d, label))

    def _dialog(self, dialog, label: str) -> None:
        if dialog.type == "beforeunload":  # leaving a notebook page: not the agent's doing
            self.console.append(f"[{label}] (beforeunload dialog accepted)")
            dialog.accept()
            return
        self.dialogs.append(f"[{label}] {dialog.type}: {dialog.message}")
        dialog.dismiss()

    def external_requests(self) -> list[str]:
        """Requests whose host is not local (data: and blob: URLs are ignored)."""
        out = []
        for url in self.requests:
            parts = urlsplit(url)
            if parts.scheme in ("data", "blob"):
                continue
            if parts.scheme not in ("http", "https", "ws", "wss") or parts.hostname not in LOCAL_HOSTS:
                out.append(url)
        return out

    def dump(self) -> str:
        lines = ["-- console --", *self.console[-200:], "-- page errors --", *self.errors]
        lines += ["-- dialogs --", *self.dialogs]
        return "\n".join(lines)


@pytest.fixture
def lab_pages(request: pytest.FixtureRequest, lab_browser):
    """``new_page(label)`` -> a Playwright page in a fresh context, recorded in ``.recorder``."""
    recorder = Recorder()
    contexts = []

    def new_page(label: str, width: int = 1280, height: int = 1400):
        ctx = lab_browser.new_context(viewport={"width": width, "height": height}, device_scale_factor=1)
        contexts.append(ctx)
        page = ctx.new_page()
        recorder.attach(page, label)
        return page

    def failure_dump() -> str:
        ARTIFACTS.mkdir(exist_ok=True)
        shots = []
        for i, page in enumerate(recorder.pages):
            if page.is_closed():
                continue
            path = ARTIFACTS / f"failure-{request.node.name}-{i}.png"
            with contextlib.suppress(Exception):
                page.screenshot(path=str(path), timeout=5000)
                shots.append(str(path))
        outputs = []
        for page in recorder.pages:
            if page.is_closed():
                continue
            with contextlib.suppress(Exception):
                outputs.append(page.evaluate(_OUTPUTS_JS))
        probes = []
        for label, probe in recorder.probes:
            try:
                probes.append(f"{label}: {probe()}")
            except Exception as exc:
                probes.append(f"{label}: (failed: {exc!r})")
        sections = [recorder.dump(), "-- notebook outputs --", *outputs, "-- probes --", *probes]
        return "\n".join([*sections, "-- screenshots --", *shots])

    on_failure(request, "browser (console, errors, outputs)", failure_dump)
    new_page.recorder = recorder
    try:
        yield new_page
    finally:
        for ctx in contexts:
            with contextlib.suppress(Exception):
                ctx.close()


_OUTPUTS_JS = """() => [...document.querySelectorAll('.jp-Cell')].map((c, i) => {
  const out = c.querySelector('.jp-OutputArea');
  const text = out ? out.innerText.slice(0, 3000) : '';
  return `cell ${i}: ${text}`;
}).join('\\n')"""
