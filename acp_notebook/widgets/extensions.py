"""The registration point of a ``SessionView``'s features (STYLE 17): a feature above the views
(the X-ray, in ``acp_notebook.playback``) registers a factory by name; a view asked for it
(``SessionView(..., xray=True)``) calls the factory with the parts it hands out, never itself.

A feature answers the browser's messages of the kinds it lists in ``requests``, adds ``meta()``
to every patch and snapshot under its name, may make the view read-only or show another state
(``live_state``), and is closed with the view.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Any, Protocol

from ..protocol.state import SessionState


class ViewFeature(Protocol):
    """What a view needs of an attached feature."""

    requests: Collection[str]

    @property
    def read_only(self) -> bool: ...
    @property
    def live_state(self) -> SessionState | None: ...
    def handle(self, content: dict[str, Any]) -> None: ...
    def meta(self) -> dict[str, Any]: ...
    def close(self) -> None: ...


Factory = Callable[..., ViewFeature | None]
_factories: dict[str, Factory] = {}


def register(name: str, factory: Factory) -> None:
    """Make feature ``name`` available to views: ``factory(option, session, **parts)``."""
    _factories[name] = factory


def attach(name: str, option: Any, session: Any, **parts: Any) -> ViewFeature | None:
    """The feature ``name`` for a view asked for it with ``option`` (False: none)."""
    if option is False or option is None:
        return None
    factory = _factories.get(name)
    if factory is None:
        raise ValueError(f"the view feature {name!r} is not loaded: import acp_notebook.playback first")
    return factory(option, session, **parts)
