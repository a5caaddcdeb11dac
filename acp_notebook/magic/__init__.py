"""The IPython extension: ``%load_ext acp_notebook`` registers ``%acp`` / ``%%acp``.

Loading adds the magics, the input transformer that makes ``%acp`` cells awaiting cells
(``transform``) and the cell hooks (``hooks``). Unloading removes them; agents keep running
(``%acp stop --all`` ends them; the kernel's exit always does).
"""

from __future__ import annotations

from typing import Any

from ..widgets import request_questions
from .errors import MagicError
from .hooks import CellHooks
from .magics import AcpMagics
from .transform import make_transformer

__all__ = ["AcpMagics", "MagicError", "load_ipython_extension", "unload_ipython_extension"]

_installed: dict[int, tuple[Any, Any, CellHooks]] = {}


def load_ipython_extension(shell: Any) -> None:
    """Register the magics, the awaiting transformer and the cell hooks on ``shell``."""
    if id(shell) in _installed:
        return
    request_questions.install()  # a question asked while our request waits: shown in that cell
    magics = AcpMagics(shell)
    shell.register_magics(magics)
    transformer = make_transformer(shell)
    shell.input_transformers_post.append(transformer)
    hooks = CellHooks(shell)
    shell.events.register("pre_run_cell", hooks.pre_run_cell)
    shell.events.register("post_run_cell", hooks.post_run_cell)
    _installed[id(shell)] = (magics, transformer, hooks)


def unload_ipython_extension(shell: Any) -> None:
    """Remove what ``load_ipython_extension`` added (running agents are left alone)."""
    installed = _installed.pop(id(shell), None)
    if installed is None:
        return
    _magics, transformer, hooks = installed
    if transformer in shell.input_transformers_post:
        shell.input_transformers_post.remove(transformer)
    shell.events.unregister("pre_run_cell", hooks.pre_run_cell)
    shell.events.unregister("post_run_cell", hooks.post_run_cell)
    for kind in ("line", "cell"):
        for name in ("acp", "acp_await"):
            shell.magics_manager.magics[kind].pop(name, None)
