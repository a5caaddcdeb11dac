"""An offline ACP demo agent: a real JSON-RPC peer on stdio with no model and no network.

Run it with ``python -m acp_notebook.demo_agent [--protocol 1|2] [--scenario NAME]
[--speed FLOAT]``. It is independent of the client package and uses the stdlib only.
"""

from .data import (
    ALLOW_ALWAYS,
    ALLOW_ONCE,
    APP_NEW,
    APP_OLD,
    PERMISSION_OPTIONS,
    REJECT_ONCE,
    TERMINAL_CHUNKS,
    TERMINAL_OUTPUT,
    TEST_COMMAND,
    UTIL_NEW,
    git_patch,
    shell_script,
)
from .scenarios import SCENARIOS

__all__ = [
    "ALLOW_ALWAYS",
    "ALLOW_ONCE",
    "APP_NEW",
    "APP_OLD",
    "PERMISSION_OPTIONS",
    "REJECT_ONCE",
    "SCENARIOS",
    "TERMINAL_CHUNKS",
    "TERMINAL_OUTPUT",
    "TEST_COMMAND",
    "UTIL_NEW",
    "git_patch",
    "shell_script",
]
