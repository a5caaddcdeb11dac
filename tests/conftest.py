"""Test-wide setup: the per-turn checkpoints of every test session go to one temporary directory.

Sessions take a checkpoint of their cwd per turn (``client.checkpoints``) in shadow repositories
under the user's cache directory; during the tests (and in the kernels of the browser tests, which
inherit the environment) they go to a directory removed when the run ends.
"""

from __future__ import annotations

import os
import shutil
import tempfile

import pytest

CACHE_ENV = "ACP_NOTEBOOK_CHECKPOINTS"  # acp_notebook.client.checkpoints.shadow_git.CACHE_ENV


def pytest_configure(config: pytest.Config) -> None:
    """Point the shadow repositories at a fresh temporary directory (unless one is set)."""
    if not os.environ.get(CACHE_ENV):
        path = tempfile.mkdtemp(prefix="acp-checkpoints-")
        os.environ[CACHE_ENV] = path
        config.stash[_KEY] = path


def pytest_unconfigure(config: pytest.Config) -> None:
    """Remove the directory made for this run."""
    path = config.stash.get(_KEY, None)
    if path:
        shutil.rmtree(path, ignore_errors=True)


_KEY = pytest.StashKey[str]()
