"""The registration point of a ``SessionView``'s features (STYLE 17): a feature above the views
(the X-ray, in ``acp_notebook.playback``) registers a factory by name; a view asked for it
(``SessionView(..., xray=True)``) calls the factory with the parts it hands out, never itself.

Every feature a view attaches (the X-ray, and the revert bar, made by the view itself) answers the
browser's messages of the kinds it lists in ``requests`` (the view's ``handler_table``) and is
closed with the view. A feature that may show another state (``ShowingFeature``: the X-ray) also
adds ``meta()`` to every patch and snapshot under its name, and may make the view read-only or show
another state (``live_state``).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from typing import Any, Protocol

from ..protocol.state import SessionState

Handler = Callable[[dict[str, Any]], None]


class ViewFeature(Protocol):
    """What a view needs of any attached feature: the messages it answers, and its end."""

    requests: Collection[str]

    def handle(self, content: dict[str, Any]) -> None: ...
    def close(self) -> None: ...


class ShowingFeature(ViewFeature, Protocol):
    """A feature that may show a past or replayed state (the X-ray)."""

    @property
    def read_only(self) -> bool: ...
    @property
    def live_state(self) -> SessionState | None: ...
    def meta(self) -> dict[str, Any]: ...


Factory = Callable[..., ShowingFeature | None]
_factories: dict[str, Factory] = {}


def register(name: str, factory: Factory) -> None:
    """Make feature ``name`` available to views: ``factory(option, session, **parts)``."""
    _factories[name] = factory


def attach(name: str, option: Any, session: Any, **parts: Any) -> ShowingFeature | None:
    """The feature ``name`` for a view asked for it with ``option`` (False: none)."""
    if option is False or option is None:
        return None
    factory = _factories.get(name)
    if factory is None:
        raise ValueError(f"the view feature {name!r} is not loaded: import acp_notebook.playback first")
    return factory(option, session, **parts)


def handler_table(features: Iterable[ViewFeature]) -> dict[str, Handler]:
    """Each browser message type the ``features`` answer, to the ``handle`` of the one answering it."""
    return {kind: feature.handle for feature in features for kind in feature.requests}
