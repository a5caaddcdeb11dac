"""Loaded by the browser tests' JupyterLab server (not by pytest), which serves every test module:
``lab.LabServer`` writes a ``jupyter_server_config.py`` that puts this directory on the server's
``sys.path`` and uses the two pieces below.

- ``FolderEnvSessionManager``, the session manager: each test module's folder gives the kernels of
  its notebooks an environment of their own. ``lab.LabFolder.kernel_env`` writes
  ``ENV_DIR/FOLDER.json`` (``{"NAME": "value"}`` sets a variable, ``{"NAME": null}`` removes it),
  read whenever a kernel starts for a notebook under ``FOLDER``.
- ``page_config_copy``, the ``page_config_hook``: a Lab page writes its own ``treePath``, ``mode``
  and ``workspace`` into the page config it is handed, which jupyterlab_server hands out from the
  server's shared ``page_config_data`` (the cause of jupyterlab_server#314's persisted
  ``notFoundUrl``), and every later Notebook 7 page starts from that: its tree resolver would
  "open" the last Lab page's notebook with a command Notebook 7's notebook page lacks (``Command
  'filebrowser:open-path' not registered``). A copy per page keeps each page's keys its own (the
  keys jupyterlab_server sets before the hook are the same for every page).

No pytest here.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from jupyter_server.services.sessions.sessionmanager import SessionManager
from traitlets import Unicode


class FolderEnvSessionManager(SessionManager):
    """jupyter_server's SessionManager, adding the environment of a notebook's top folder to its kernel's."""

    env_dir = Unicode("", config=True, help="The directory of FOLDER.json files (environment by folder).")

    def get_kernel_env(self, path, name=None):  # type: ignore[no-untyped-def]
        """The kernel's environment as jupyter_server makes it, changed by the folder's file."""
        env = super().get_kernel_env(path, name)
        for key, value in self.folder_env(path).items():
            if value is None:
                env.pop(key, None)
            else:
                env[key] = str(value)
        return env

    def folder_env(self, path: str | None) -> dict:
        """What ``ENV_DIR/FOLDER.json`` says for the notebook at ``path`` ({} if nothing)."""
        if not self.env_dir or not path:
            return {}
        if os.path.isabs(path):
            path = os.path.relpath(path, self.kernel_manager.root_dir)
        folder = path.replace("\\", "/").split("/", 1)[0]
        try:
            env = json.loads((Path(self.env_dir) / f"{folder}.json").read_text())
        except (OSError, ValueError):
            return {}
        return env if isinstance(env, dict) else {}


def page_config_copy(handler, page_config: dict) -> dict:
    """The page config for one page: a copy, so what the page writes in it stays in it."""
    return dict(page_config)
