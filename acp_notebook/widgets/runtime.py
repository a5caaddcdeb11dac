"""The runtime carrier: one widget per kernel that ships the heavy browser code once.

Views carry only the small ``loader.js``; the renderer, xterm.js, markdown and diff code live in
``runtime.js``, synced once with this widget. Views reference it by a widget trait, so the page,
a reload and a saved notebook (with widget state) all have it.
"""

from __future__ import annotations

from pathlib import Path

import anywidget

STATIC = Path(__file__).resolve().parent.parent / "static"


def static_file(name: str) -> Path:
    """A built browser file; a clear error when the JS was not built."""
    path = STATIC / name
    if not path.is_file():
        raise FileNotFoundError(
            f"{path} is missing: the browser code is built by the package install "
            '(pip install -e ".[test]" runs `npm ci && npm run build` in js/)'
        )
    return path


class Runtime(anywidget.AnyWidget):
    """Hidden widget holding the browser runtime (one per kernel)."""

    _esm = static_file("runtime.js")


_runtime: Runtime | None = None


def get_runtime() -> Runtime:
    """The kernel's runtime widget, created on first use (again after ``Widget.close_all``)."""
    global _runtime
    if _runtime is None or _runtime.comm is None:
        _runtime = Runtime()
    return _runtime
