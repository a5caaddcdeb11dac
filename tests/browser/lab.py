"""The browser tests' JupyterLab: the server (``LabServer``), one folder of it per test module
(``LabFolder``), and the processes they run. No fixtures here (``conftest.py`` makes them).

- ``LabServer``: ``jupyter lab`` on 127.0.0.1 (free port, random token) rooted in a tmp dir, with
  its own settings/workspaces/runtime/config dirs, news and update checks off, an
  ``overrides.json`` turning on ``saveState`` of the widget manager (so saved notebooks carry
  widget state), Notebook 7's app exposed, a session manager giving each folder's kernels that
  folder's environment, and a page config of its own for every page (``lab_server_config.py``).
  ``stop()`` shuts it down through ``/api/shutdown`` and kills, by PID, any process it started
  that is still alive.
- ``LabFolder``: what a test module sees of the shared server — ``root`` is its folder (paths and
  URLs are relative to it), ``track``/``seen``/``still_alive`` cover the processes of its own
  kernels only, ``log_tail`` the log written since it began; ``close()`` shuts its kernels down,
  puts back the settings it changed and reports the processes that outlived them.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

from ..support import until

HERE = Path(__file__).resolve().parent
SERVER_CONFIG_PY = """# written by tests/browser/lab.py (see lab_server_config.py)
import sys
sys.path.append({here!r})
from lab_server_config import FolderEnvSessionManager, page_config_copy
c.ServerApp.session_manager_class = FolderEnvSessionManager
c.FolderEnvSessionManager.env_dir = {env_dir!r}
c.ServerApp.tornado_settings = {{"page_config_hook": page_config_copy}}
"""


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


def alive(pid: int, cmd: str) -> bool:
    """Is process ``pid`` still running command ``cmd`` (not a recycled pid)?"""
    return cmdline_of(pid) == cmd


def kill_left(processes: dict[int, str], grace: float) -> list[str]:
    """Wait up to ``grace`` s for ``processes`` to exit; kill those still alive; returns them."""
    with contextlib.suppress(AssertionError):
        until(lambda: not any(alive(p, c) for p, c in processes.items()), grace, interval=0.1)
    leftovers = []
    for pid, cmd in processes.items():
        if alive(pid, cmd):
            leftovers.append(f"{pid}: {cmd}")
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
    return leftovers


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
        self.env_dir = tmp / "kernel-env"  # FOLDER.json: the environment of FOLDER's kernels
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

    def running(self) -> bool:
        """Is the server process still running?"""
        return self.proc is not None and self.proc.poll() is None

    def _write_config(self) -> None:
        for name in ("root", "app-settings", "user-settings", "workspaces", "runtime", "config", "data"):
            (self.tmp / name).mkdir(exist_ok=True)
        self.env_dir.mkdir(exist_ok=True)
        overrides = {
            "@jupyter-widgets/jupyterlab-manager:plugin": {"saveState": True},
            "@jupyterlab/apputils-extension:notification": {"checkForUpdates": False, "fetchNews": "false"},
        }
        (self.tmp / "app-settings" / "overrides.json").write_text(json.dumps(overrides, indent=2))
        expose = json.dumps({"JupyterNotebookApp": {"expose_app_in_browser": True}})  # Notebook 7's
        (self.tmp / "config" / "jupyter_server_config.json").write_text(expose)
        config_py = SERVER_CONFIG_PY.format(here=str(HERE), env_dir=str(self.env_dir))
        (self.tmp / "config" / "jupyter_server_config.py").write_text(config_py)

    def _env(self) -> dict[str, str]:
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
        return env

    def _args(self) -> list[str]:
        return [
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

    def start(self) -> None:
        """Start the server (up to 3 tries on fresh ports); raise if it never answers."""
        self._write_config()
        env = self._env()
        for attempt in range(3):
            self.port = _free_port()
            with open(self.log_path, "ab") as log:
                log.write(f"\n=== start attempt {attempt + 1}: port {self.port}\n".encode())
                self.proc = subprocess.Popen(
                    self._args(), cwd=self.root, env=env, stdin=subprocess.DEVNULL, stdout=log,
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

    def delete(self, path: str) -> None:
        """DELETE session or kernel ``path`` (answered once the kernel is shut down); gone already is fine."""
        try:
            self.api("DELETE", path, timeout=30)
        except urllib.error.HTTPError as exc:
            if exc.code != 404:
                raise

    def track(self) -> dict[int, str]:
        """Record the server's current descendants (kernels, agents); returns them."""
        if self.running():
            now = descendants(self.proc.pid)
            self.seen.update(now)
            return now
        return {}

    def kernel_processes(self, kernel_ids: set[str]) -> dict[int, str]:
        """The live processes of these kernels (each kernel and its descendants); recorded in ``seen``."""
        files = tuple(f"kernel-{kid}.json" for kid in kernel_ids)
        kernels = [pid for pid, cmd in self.track().items() if any(f in cmd for f in files)]
        out = {}
        for pid in kernels:
            out[pid] = self.seen[pid]
            out.update(descendants(pid))
        self.seen.update(out)
        return out

    alive = staticmethod(alive)

    def sessions(self) -> list[dict]:
        return self.api("GET", "/api/sessions") or []

    def shutdown_kernel_of(self, path: str) -> list[str]:
        """Shut the session (and kernel) of notebook ``path`` down; returns the kernel ids."""
        self.track()
        ids = []
        for sess in self.sessions():
            if sess.get("path") == path:
                self.api("DELETE", f"/api/sessions/{sess['id']}", timeout=30)
                ids.append(sess["kernel"]["id"])
        return ids

    def log_size(self) -> int:
        """Where the log ends now (a mark for ``log_tail(since=...)``)."""
        try:
            return self.log_path.stat().st_size
        except OSError:
            return 0

    def log_tail(self, lines: int = 80, since: int = 0) -> str:
        """The last ``lines`` lines of the log written after byte ``since``."""
        try:
            with open(self.log_path, "rb") as log:
                log.seek(since)
                text = log.read().decode(errors="replace")
        except OSError:
            return "(no server log)"
        return "\n".join(text.splitlines()[-lines:]) or "(nothing logged)"

    def _stop_process(self) -> None:
        if not self.running():
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
        if self.running():
            with contextlib.suppress(OSError, urllib.error.URLError, ValueError):
                self.api("POST", "/api/shutdown", timeout=5)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self._stop_process()
        # kernels and agents exit on their own once their parent is gone; give them 5 s in all
        return kill_left(self.still_alive(), 5)

    def still_alive(self) -> dict[int, str]:
        """The processes ever seen that still run their command line (same command: not a recycled pid)."""
        return {pid: cmd for pid, cmd in self.seen.items() if alive(pid, cmd)}


# -- one test module's part of it -------------------------------------------------------------------
class LabFolder:
    """One test module's view of the shared ``LabServer``: a folder under its root and its kernels.

    Paths (``lab_url``, ``notebook7_url``, ``shutdown_kernel_of``) are relative to ``root``, the
    module's folder; the REST helpers, ``track``, ``seen`` and ``still_alive`` cover the sessions
    and kernels of notebooks in that folder (and the processes under those kernels) only.
    """

    def __init__(self, server: LabServer, folder: str, tmp: Path) -> None:
        self.server = server
        self.folder = folder  # relative to the server's root
        self.root = server.root / folder
        self.root.mkdir()
        self.tmp = tmp  # a scratch dir of the module's own, outside the server's root
        self.kernel_ids: set[str] = set()  # every kernel seen running one of the folder's notebooks
        self.seen: dict[int, str] = {}  # pid -> command line of every process seen under those kernels
        self.settings: dict[str, str] = {}  # plugin id -> its raw user settings before the module's PUT
        self.log_start = server.log_size()

    @property
    def url(self) -> str:
        return self.server.url

    @property
    def token(self) -> str:
        return self.server.token

    def path(self, path: str) -> str:
        """``path`` (relative to the folder) relative to the server's root."""
        return f"{self.folder}/{path}"

    def lab_url(self, path: str, reset: bool = True) -> str:
        """The URL opening ``path`` (in the folder) in JupyterLab; ``reset`` drops the saved layout."""
        return self.server.lab_url(self.path(path), reset)

    def notebook7_url(self, path: str) -> str:
        """The URL opening ``path`` (relative to the folder) in Notebook 7 (the same server)."""
        return self.server.notebook7_url(self.path(path))

    def api(self, method: str, path: str, body: object = None, timeout: float = 10) -> object:
        """A REST call (``LabServer.api``); user settings it changes are put back by ``close()``."""
        if method == "PUT" and path.startswith("/lab/api/settings/"):
            plugin = path.removeprefix("/lab/api/settings/")
            if plugin not in self.settings:
                self.settings[plugin] = self.server.api("GET", path)["raw"]
        return self.server.api(method, path, body, timeout)

    def kernel_env(self, env: dict[str, str | None]) -> None:
        """Kernels started from now on for the folder's notebooks get ``env`` (None: unset the name)."""
        (self.server.env_dir / f"{self.folder}.json").write_text(json.dumps(env))

    def sessions(self) -> list[dict]:
        """The server's sessions of notebooks in this folder."""
        return [s for s in self.server.sessions() if s.get("path", "").startswith(f"{self.folder}/")]

    def track(self) -> dict[int, str]:
        """Record the processes of the folder's kernels (kernels, agents) now; returns them."""
        self.kernel_ids.update(s["kernel"]["id"] for s in self.sessions() if s.get("kernel"))
        now = self.server.kernel_processes(self.kernel_ids)
        self.seen.update(now)
        return now

    alive = staticmethod(alive)

    def still_alive(self) -> dict[int, str]:
        """The processes ever seen under the folder's kernels that still run their command line."""
        return {pid: cmd for pid, cmd in self.seen.items() if alive(pid, cmd)}

    def shutdown_kernel_of(self, path: str) -> list[str]:
        """Shut the session (and kernel) of notebook ``path`` (in the folder) down; returns the kernel ids."""
        self.track()
        return self.server.shutdown_kernel_of(self.path(path))

    def log_tail(self, lines: int = 80, since: int | None = None) -> str:
        """The server log's last ``lines`` lines written since the module began (or byte ``since``)."""
        return self.server.log_tail(lines, self.log_start if since is None else since)

    def close(self) -> list[str]:
        """Shut the folder's kernels down, put its settings back; kill and return what outlived them."""
        if not self.server.running():
            return kill_left(self.still_alive(), 0)
        self.track()
        with concurrent.futures.ThreadPoolExecutor(4) as pool:  # each waits for its kernel to exit
            list(pool.map(self.server.delete, self._doomed()))
        for plugin, raw in self.settings.items():
            self.server.api("PUT", f"/lab/api/settings/{plugin}", {"raw": raw})
        (self.server.env_dir / f"{self.folder}.json").unlink(missing_ok=True)
        # agents exit on their own once their kernel is gone; give them 10 s in all
        return kill_left(self.still_alive(), 10)

    def _doomed(self) -> list[str]:
        """The REST paths to DELETE: the folder's sessions, and its kernels whose session went first."""
        sessions = self.sessions()
        with_session = {s["kernel"]["id"] for s in sessions if s.get("kernel")}
        running = {k["id"] for k in self.server.api("GET", "/api/kernels") or []}
        orphans = (running & self.kernel_ids) - with_session
        return [f"/api/sessions/{s['id']}" for s in sessions] + [f"/api/kernels/{k}" for k in orphans]
