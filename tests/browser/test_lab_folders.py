"""The shared lab server's folder per test module (``lab.LabFolder``), through REST alone: a
module's notebook gets its kernel in the module's folder with the module's environment; ``track``
and ``shutdown_kernel_of`` see that kernel and no other folder does; ``close()`` ends the folder's
kernels and puts back the Lab settings it changed; ``log_tail`` shows what was logged since a mark;
and a Lab page's tree path does not reach the Notebook 7 pages served after it.
"""

from __future__ import annotations

import json
import os
import re
import urllib.request
from pathlib import Path

import pytest

from ..support import until
from .conftest import write_code_notebook
from .lab import LabFolder

pytest.importorskip("jupyterlab")
nbformat = pytest.importorskip("nbformat")

TRACKER = "/lab/api/settings/@jupyterlab/notebook-extension:tracker"


def start_kernel(folder: LabFolder, name: str) -> tuple[str, int]:
    """A session (and kernel) for notebook ``name`` of ``folder``, as Lab opens one; (kernel id, pid)."""
    write_code_notebook(folder.root / name, ["1 + 1"])
    body = {"path": folder.path(name), "name": name, "type": "notebook", "kernel": {"name": "python3"}}
    kernel_id = folder.api("POST", "/api/sessions", body, timeout=60)["kernel"]["id"]

    def kernel_pid() -> int | None:
        return next((pid for pid, cmd in folder.track().items() if f"kernel-{kernel_id}.json" in cmd), None)

    return kernel_id, until(kernel_pid, 30, interval=0.1, message="the kernel's process")


def page_config(url: str) -> dict:
    """The page config (``jupyter-config-data``) of the HTML page at ``url``."""
    with urllib.request.urlopen(url, timeout=30) as resp:
        html = resp.read().decode()
    found = re.search(r'<script id="jupyter-config-data" type="application/json">(.*?)</script>', html, re.S)
    return json.loads(found.group(1))


def environ(pid: int) -> dict[str, str]:
    raw = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    return dict(item.decode(errors="replace").split("=", 1) for item in raw if b"=" in item)


def test_a_kernel_runs_in_its_module_folder_with_the_module_env(lab_log, tmp_path):
    folder = lab_log
    assert folder.root.parent == folder.server.root and folder.root.name == folder.folder
    folder.kernel_env({"ACP_FOLDER_PROBE": "yes", "PYDEVD_DISABLE_FILE_VALIDATION": None})
    mark = folder.server.log_size()
    kernel_id, pid = start_kernel(folder, "env.ipynb")
    env = environ(pid)
    assert env.get("ACP_FOLDER_PROBE") == "yes", env
    assert "PYDEVD_DISABLE_FILE_VALIDATION" not in env  # the server has it: the folder's file unset it
    assert os.readlink(f"/proc/{pid}/cwd") == str(folder.root)
    assert [s["path"] for s in folder.sessions()] == [folder.path("env.ipynb")]
    assert kernel_id in folder.log_tail(since=mark)  # "Kernel started: ID", logged since the mark

    other = LabFolder(folder.server, "test_lab_folders_other", tmp_path)
    assert other.sessions() == [] and other.track() == {} and other.close() == []
    assert other.shutdown_kernel_of("env.ipynb") == []
    assert pid in folder.seen and folder.still_alive()

    assert folder.shutdown_kernel_of("env.ipynb") == [kernel_id]
    until(lambda: not folder.still_alive(), 10, interval=0.1, message="the kernel's processes to exit")
    assert folder.sessions() == []


def test_close_ends_the_folder_kernels_and_puts_its_settings_back(lab_process, tmp_path):
    before = lab_process.api("GET", TRACKER)["raw"]
    folder = LabFolder(lab_process, "test_lab_folders_closing", tmp_path)
    folder.api("PUT", TRACKER, {"raw": json.dumps({"windowingMode": "full"})})
    assert json.loads(lab_process.api("GET", TRACKER)["raw"]) == {"windowingMode": "full"}
    _, pid = start_kernel(folder, "closing.ipynb")
    assert folder.close() == []  # nothing had to be killed
    assert folder.sessions() == [] and folder.still_alive() == {} and pid in folder.seen
    assert lab_process.api("GET", TRACKER)["raw"] == before


def test_a_lab_page_tree_path_stays_out_of_later_notebook7_pages(lab_server):
    write_code_notebook(lab_server.root / "page.ipynb", ["1"])
    lab = page_config(lab_server.lab_url("page.ipynb"))
    assert (lab["treePath"], lab["workspace"]) == (lab_server.path("page.ipynb"), "default")
    nb7 = page_config(lab_server.notebook7_url("page.ipynb"))
    assert nb7["appName"] == "Jupyter Notebook", nb7.get("appName")
    assert {"treePath", "workspace", "mode"}.isdisjoint(nb7), {
        k: nb7[k] for k in ("treePath", "mode") if k in nb7
    }
