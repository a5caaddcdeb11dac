"""``acp_notebook.compare``: several agents on one prompt, side by side, each in its own copy.

``core`` (the ``Comparison`` object and ``compare`` / ``compare_sync``), ``runner`` (the
entrants and their concurrent turns), ``workspace`` (the copies: a ``git worktree`` or a tree
copy) and ``view`` (the grid of session views).
"""

from .core import Comparison, compare, compare_sync

__all__ = ["Comparison", "compare", "compare_sync"]
