"""Session settings the agent advertises: config options and modes (pure helpers).

``session/set_config_option`` answers with the complete list of options, which replaces
``state.config_options`` (``SessionSettings.options``); the call returns a one-line
``SettingChanged``. Modes are either a config option of category ``mode`` (v2, and v1
agents that offer one) or the ``modes`` object of ``session/new`` (v1), changed with
``session/set_mode``. These functions only read the advertised values.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..protocol.state import SessionState
from .wire import AgentConnection

TRUE, FALSE = ("true", "on", "1", "yes"), ("false", "off", "0", "no")


def find_option(options: Any, config_id: str) -> dict[str, Any] | None:
    """The advertised option ``config_id``, or None."""
    return next((o for o in _dicts(options) if o.get("configId") == config_id), None)


def mode_option(options: Any) -> dict[str, Any] | None:
    """The config option of category ``mode``, if the agent advertises one."""
    return next((o for o in _dicts(options) if o.get("category") == "mode"), None)


def available_modes(modes: Any) -> list[dict[str, Any]]:
    """The ``availableModes`` of a ``modes`` object from ``session/new`` (empty if none)."""
    return _dicts(modes.get("availableModes")) if isinstance(modes, dict) else []


def mode_ids(options: Any, modes: Any) -> list[Any]:
    """The ids of the modes one can switch to (config option values, else ``availableModes``)."""
    option = mode_option(options)
    if option is not None:
        return [v.get("value") for v in _dicts(option.get("options"))]
    return [m.get("id") for m in available_modes(modes)]


def current_mode(options: Any, current_mode_id: str | None) -> str | None:
    """The current mode id (the mode option's value, else the last ``current_mode_update``)."""
    option = mode_option(options)
    if option is None:
        return current_mode_id
    value = option.get("currentValue")
    return value if isinstance(value, str) else None


def parse_value(option: dict[str, Any] | None, text: str) -> str | bool:
    """A typed value from text: ``true``/``false`` for a boolean option, else the text."""
    if option is None or option.get("type") != "boolean":
        return text
    lowered = text.strip().lower()
    if lowered not in TRUE + FALSE:
        raise ValueError(f"{option.get('configId')!r} is a boolean option: use true or false")
    return lowered in TRUE


@dataclass(frozen=True, slots=True)
class SettingChanged:
    """What a setting call left: the option and its value as the agent now reports it (one line)."""

    config_id: str
    value: Any
    name: str | None = None

    def __repr__(self) -> str:
        named = f"  ({self.name})" if self.name else ""
        return f"{self.config_id} = {self.value!r}{named}"


def _dicts(value: Any) -> list[dict[str, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


class SessionSettings:
    """The config options and modes of one session, and the calls that change them."""

    def __init__(self, state: SessionState, conn: AgentConnection, session_id: str) -> None:
        self._state, self._conn, self._session_id = state, conn, session_id
        self._modes: Any = None  # the ``modes`` object of ``session/new`` (v1), if any

    def option(self, config_id: str) -> dict[str, Any] | None:
        """The advertised option ``config_id``, or None."""
        return find_option(self._state.config_options, config_id)

    @property
    def mode_option(self) -> dict[str, Any] | None:
        """The config option of category ``mode``, if advertised."""
        return mode_option(self._state.config_options)

    @property
    def modes(self) -> list[Any]:
        """The mode ids one can switch to."""
        return mode_ids(self._state.config_options, self._modes)

    @property
    def current_mode(self) -> str | None:
        """The current mode id."""
        return current_mode(self._state.config_options, self._state.current_mode_id)

    def adopt(self, result: dict[str, Any]) -> None:
        """What ``session/new`` (or a resume) answered: commands, config options, modes."""
        for key, kind in (
            ("availableCommands", "available_commands_update"),
            ("configOptions", "config_option_update"),
        ):
            if isinstance(result.get(key), list):
                self._state.apply({"sessionUpdate": kind, key: result[key]})
        modes = self._modes = result.get("modes")
        if isinstance(modes, dict) and isinstance(modes.get("currentModeId"), str):
            self._state.apply(
                {"sessionUpdate": "current_mode_update", "currentModeId": modes["currentModeId"]}
            )

    @property
    def options(self) -> list[Any]:
        """Every advertised config option, as the agent last listed them."""
        return list(self._state.config_options)

    async def set_config_option(self, config_id: str, value: str | bool) -> SettingChanged:
        """Send ``session/set_config_option``; the answer's complete list replaces the options."""
        result = await self._conn.set_config_option(self._session_id, config_id, value)
        options = result.get("configOptions") if isinstance(result, dict) else None
        if isinstance(options, list):
            self._state.apply({"sessionUpdate": "config_option_update", "configOptions": options})
        option = self.option(config_id) or {}
        name = option.get("name") if isinstance(option.get("name"), str) else None
        return SettingChanged(config_id, option.get("currentValue", value), name)

    async def set_mode(self, mode_id: str) -> str:
        """Switch mode: the ``mode`` config option if advertised, else ``session/set_mode``."""
        option = self.mode_option
        if option is not None and isinstance(option.get("configId"), str):
            await self.set_config_option(option["configId"], mode_id)
            return mode_id
        await self._conn.set_mode(self._session_id, mode_id)
        self._state.apply({"sessionUpdate": "current_mode_update", "currentModeId": mode_id})
        if isinstance(self._modes, dict):
            self._modes = {**self._modes, "currentModeId": mode_id}
        return mode_id
